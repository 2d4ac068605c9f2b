//! Per-file listings of the commands that can touch many files (add, edit, delete, reconcile,
//! submit, sync, integrate, revert, shelve, unshelve).
//!
//! The rule: `--json` prints every record; `-q` prints no per-file line; otherwise up to
//! [`MAX_LISTED_LINES`] lines print as they are, and a longer listing prints one summary line
//! instead (`70000 files opened for add.`), unless `-v` asks for every line. Errors are not
//! part of a listing: they always go to stderr.

use crate::output::{Out, Record};

/// Per-file lines a command prints in text mode before it prints a summary line instead.
pub const MAX_LISTED_LINES: usize = 100;

/// The per-file lines of one command, held until it is known whether they fit.
pub struct Listing {
    out: Out,
    held: Vec<String>,
    /// Files were counted without their lines ([`Listing::count`]): the listing ends in its
    /// summary line whatever the total.
    counted: bool,
    /// Files per kind (`opened for add`, `updated`, ...), in the order kinds first appeared.
    counts: Vec<(String, usize)>,
    total: usize,
}

impl Listing {
    pub fn new(out: Out) -> Listing {
        Listing {
            out,
            held: Vec::new(),
            counted: false,
            counts: Vec::new(),
            total: 0,
        }
    }

    /// One file: `kind` completes "N files ..." in the summary (`opened for add`), `record` is
    /// its JSON line (printed at once) and `text` its text line.
    pub fn item(&mut self, kind: &str, record: Record, text: impl Into<String>) {
        self.item_with(kind, || record, || text.into());
    }

    /// [`Listing::item`] for long listings: the record and the text line are made only when
    /// they will be printed or held, so a file counted into the summary costs no formatting.
    pub fn item_with(
        &mut self,
        kind: &str,
        record: impl FnOnce() -> Record,
        text: impl FnOnce() -> String,
    ) {
        self.add(kind, 1);
        if self.out.json {
            self.out.emit(record(), "");
            return;
        }
        if self.out.quiet {
            return;
        }
        if self.out.verbose {
            self.out.text(text());
        } else if self.total <= MAX_LISTED_LINES {
            self.held.push(text());
        } else if !self.held.is_empty() {
            self.held = Vec::new();
        }
    }

    /// `n` files of one kind, counted without their lines: for a caller that knows the
    /// listing will be a summary (text mode, more than [`MAX_LISTED_LINES`] files, no `-v`), or
    /// prints nothing (`-q`). `--json` output needs every record through [`Listing::item`].
    pub fn count(&mut self, kind: &str, n: usize) {
        if n > 0 {
            self.counted = true;
            self.held = Vec::new();
            self.add(kind, n);
        }
    }

    fn add(&mut self, kind: &str, n: usize) {
        self.total += n;
        match self.counts.iter_mut().find(|(k, _)| k == kind) {
            Some((_, count)) => *count += n,
            None => self.counts.push((kind.to_string(), n)),
        }
    }

    /// Whether a listing of `files` files prints no per-file text or JSON line: `-q`, or a
    /// text listing too long to print without `-v`.
    pub fn summarizes(out: Out, files: u64) -> bool {
        !out.json && (out.quiet || (!out.verbose && files > MAX_LISTED_LINES as u64))
    }

    /// Files listed so far.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Prints the held lines, or the summary line when there were too many.
    pub fn finish(self) {
        if self.out.json || self.out.quiet || self.out.verbose {
            return;
        }
        if self.total <= MAX_LISTED_LINES && !self.counted {
            for line in &self.held {
                self.out.text(line);
            }
            return;
        }
        self.out.text(summary(&self.counts));
    }
}

/// `70000 files opened for add.` / `3 files opened for add, 120 files opened for edit.`
fn summary(counts: &[(String, usize)]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .map(|(kind, n)| {
            let noun = if *n == 1 { "file" } else { "files" };
            format!("{n} {noun} {kind}")
        })
        .collect();
    format!("{}.", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines() {
        let one = [("opened for add".to_string(), 70_000)];
        assert_eq!(summary(&one), "70000 files opened for add.");
        let two = [("updated".to_string(), 150), ("deleted".to_string(), 1)];
        assert_eq!(summary(&two), "150 files updated, 1 file deleted.");
    }

    #[test]
    fn which_listings_are_summaries() {
        let out = |json, quiet, verbose| Out {
            json,
            quiet,
            verbose,
        };
        let many = MAX_LISTED_LINES as u64 + 1;
        assert!(Listing::summarizes(out(false, false, false), many));
        assert!(!Listing::summarizes(out(false, false, false), 3));
        assert!(Listing::summarizes(out(false, true, false), 3));
        assert!(!Listing::summarizes(out(false, false, true), many));
        assert!(!Listing::summarizes(out(true, true, false), many));
    }
}
