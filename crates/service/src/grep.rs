//! `grep`: the lines of stored file revisions that match a regular expression, searched on the
//! server (text files only unless asked), with context lines, or only the names of the
//! revisions that match (or do not).
//!
//! Each revision searched counts against the caller's MaxScanRows and each file argument's
//! files against MaxResults (through [`Service::for_each_selected`]); a revision larger than
//! `max_diff_bytes` is reported as skipped, never read whole.

use regex::{Regex, RegexBuilder};

use crate::args::FileArg;
use crate::rev_range::RangeArg;
use crate::{Caller, Service, ServiceError};
use keel_core::{BaseType, Right};
use keel_store::RevisionRow;

/// What `grep` reports of each revision searched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GrepList {
    /// The selected lines (with their context).
    #[default]
    Lines,
    /// `-l`: the revisions with a selected line.
    WithMatches,
    /// `-L`: the revisions without one.
    WithoutMatch,
}

/// Options of `grep`.
#[derive(Clone, Debug, Default)]
pub struct GrepOptions {
    /// `-e`: the patterns; a line is selected when any matches (regular expressions).
    pub patterns: Vec<String>,
    /// `-F`: the patterns are plain strings.
    pub fixed_strings: bool,
    /// `-i`: letters match either case.
    pub ignore_case: bool,
    /// `-v`: select the lines that do not match.
    pub invert: bool,
    pub list: GrepList,
    /// `-a`: every revision in each argument's range, not only the highest.
    pub all_revisions: bool,
    /// `-B`: lines of context before each selected line.
    pub before: u32,
    /// `-A`: lines of context after each selected line.
    pub after: u32,
    /// `-t`: search binary files as text too.
    pub binary_as_text: bool,
}

/// Why a revision's lines are a selected line or context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrepLineKind {
    Match,
    Before,
    After,
}

/// Why a revision was not searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrepSkip {
    /// A binary file (searched with `-t`).
    Binary,
    /// Larger than the server's `max_diff_bytes`.
    TooLarge,
}

/// What `grep` streams, revision by revision in path order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrepPart {
    /// A selected line or a context line; `line` counts from 1.
    Line {
        path: String,
        rev: u32,
        line: u64,
        kind: GrepLineKind,
        text: String,
    },
    /// `-l`/`-L`: a revision listed.
    File { path: String, rev: u32 },
    /// A revision not searched.
    Skipped {
        path: String,
        rev: u32,
        why: GrepSkip,
    },
}

/// The compiled patterns: one alternation, so a line is scanned once.
fn compile(opts: &GrepOptions) -> Result<Regex, ServiceError> {
    if opts.patterns.is_empty() || opts.patterns.iter().all(|p| p.is_empty()) {
        return Err(ServiceError::BadArgument {
            arg: String::new(),
            reason: "grep needs a pattern (-e PATTERN)".into(),
        });
    }
    let mut parts = Vec::with_capacity(opts.patterns.len());
    for pattern in &opts.patterns {
        let part = if opts.fixed_strings {
            regex::escape(pattern)
        } else {
            // Each pattern alone first, so an error names the one that is wrong.
            Regex::new(pattern).map_err(|e| bad_pattern(pattern, &e))?;
            pattern.clone()
        };
        parts.push(format!("(?:{part})"));
    }
    let joined = parts.join("|");
    RegexBuilder::new(&joined)
        .case_insensitive(opts.ignore_case)
        .build()
        .map_err(|e| bad_pattern(&joined, &e))
}

fn bad_pattern(pattern: &str, e: &regex::Error) -> ServiceError {
    let detail = e.to_string();
    let last = detail.lines().last().unwrap_or_default().trim();
    let last = last.strip_prefix("error:").unwrap_or(last).trim();
    ServiceError::BadArgument {
        arg: pattern.to_string(),
        reason: format!("grep: bad pattern '{pattern}': {last}"),
    }
}

/// The lines of `text` to report: each selected line (or each not matching, with `invert`)
/// and up to `before`/`after` lines around it, each once, in order.
pub(crate) fn select_lines<'t>(
    text: &'t str,
    re: &Regex,
    invert: bool,
    before: u32,
    after: u32,
) -> Vec<(u64, GrepLineKind, &'t str)> {
    let lines: Vec<&str> = text.lines().collect();
    let selected: Vec<bool> = lines.iter().map(|l| re.is_match(l) != invert).collect();
    let mut out = Vec::new();
    // The first line not yet reported, and how many lines after the last selected one are
    // still context.
    let mut next = 0usize;
    let mut trailing = 0usize;
    for (i, line) in lines.iter().enumerate() {
        if selected[i] {
            let from = i.saturating_sub(before as usize).max(next);
            for (j, context) in lines.iter().enumerate().take(i).skip(from) {
                out.push((j as u64 + 1, GrepLineKind::Before, *context));
            }
            out.push((i as u64 + 1, GrepLineKind::Match, *line));
            next = i + 1;
            trailing = after as usize;
        } else if trailing > 0 && i >= next {
            out.push((i as u64 + 1, GrepLineKind::After, *line));
            next = i + 1;
            trailing -= 1;
        }
    }
    out
}

impl Service {
    /// `grep -e PATTERN... FILE[REVRANGE]...`: streams the matching lines of the revisions
    /// each argument selects (with `all_revisions`, of every revision in its range), or with
    /// [`GrepList`] only the revisions that match (or do not). A pattern that does not compile
    /// is refused before any file is read, naming the pattern.
    pub fn grep(
        &self,
        caller: &Caller,
        files: &[String],
        opts: &GrepOptions,
        sink: &mut dyn FnMut(GrepPart) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let re = compile(opts)?;
        if files.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("grep"),
            });
        }
        let ranges = files
            .iter()
            .map(|f| RangeArg::parse(f))
            .collect::<Result<Vec<_>, _>>()?;
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        for range in ranges {
            let arg = FileArg::parse(&range.upper, snap.as_ref(), ws.as_ref())?;
            let mut in_range = 0;
            let selected = self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |head| {
                    who.require(Right::Read, head.path.as_str())?;
                    let revisions = if opts.all_revisions || range.lower.is_some() {
                        let mut revs = snap.file_revisions(&head.path)?;
                        revs.reverse();
                        revs.retain(|r| r.rev <= head.rev);
                        let Some(first) = range.first_rev(&revs, head.rev)? else {
                            return Ok(());
                        };
                        if opts.all_revisions {
                            revs.retain(|r| r.rev >= first);
                            revs.reverse();
                            revs
                        } else {
                            vec![head]
                        }
                    } else {
                        vec![head]
                    };
                    in_range += 1;
                    for rev in revisions.iter().filter(|r| !r.action.is_delete()) {
                        who.scan()?;
                        self.grep_revision(rev, &re, opts, sink)?;
                    }
                    Ok(())
                },
            )?;
            if selected == 0 {
                return Err(ServiceError::NoSuchFiles { arg: range.text });
            }
            if in_range == 0 {
                return Err(ServiceError::BadArgument {
                    arg: range.text.clone(),
                    reason: format!("{} - no revision(s) in that range", range.text),
                });
            }
        }
        Ok(())
    }

    /// Searches one revision, newest first within a file as P4 lists them.
    fn grep_revision(
        &self,
        rev: &RevisionRow,
        re: &Regex,
        opts: &GrepOptions,
        sink: &mut dyn FnMut(GrepPart) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let path = rev.path.to_string();
        if rev.file_type.base == BaseType::Binary && !opts.binary_as_text {
            return sink(GrepPart::Skipped {
                path,
                rev: rev.rev,
                why: GrepSkip::Binary,
            });
        }
        let Some(text) = self.revision_text(Some(rev))? else {
            return sink(GrepPart::Skipped {
                path,
                rev: rev.rev,
                why: GrepSkip::TooLarge,
            });
        };
        match opts.list {
            GrepList::Lines => {
                for (line, kind, text) in
                    select_lines(&text, re, opts.invert, opts.before, opts.after)
                {
                    sink(GrepPart::Line {
                        path: path.clone(),
                        rev: rev.rev,
                        line,
                        kind,
                        text: text.to_string(),
                    })?;
                }
                Ok(())
            }
            GrepList::WithMatches | GrepList::WithoutMatch => {
                let any = text.lines().any(|l| re.is_match(l) != opts.invert);
                if any == (opts.list == GrepList::WithMatches) {
                    sink(GrepPart::File { path, rev: rev.rev })?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(patterns: &[&str]) -> GrepOptions {
        GrepOptions {
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
            ..GrepOptions::default()
        }
    }

    fn kinds(text: &str, re: &str, invert: bool, b: u32, a: u32) -> Vec<(u64, GrepLineKind)> {
        let re = compile(&opts(&[re])).expect("test pattern compiles");
        select_lines(text, &re, invert, b, a)
            .into_iter()
            .map(|(n, k, _)| (n, k))
            .collect()
    }

    #[test]
    fn context_lines_are_reported_once() {
        use GrepLineKind::*;
        let text = "a\nx1\nb\nc\nx2\nd\ne\nf\nx3\n";
        assert_eq!(
            kinds(text, "x", false, 1, 1),
            vec![
                (1, Before),
                (2, Match),
                (3, After),
                (4, Before),
                (5, Match),
                (6, After),
                (8, Before),
                (9, Match),
            ]
        );
        assert_eq!(
            kinds(text, "x", false, 0, 0),
            vec![(2, Match), (5, Match), (9, Match)]
        );
        assert_eq!(kinds("x\ny\n", "x", true, 0, 0), vec![(2, Match)]);
    }

    #[test]
    fn bad_patterns_are_named() {
        let err = compile(&opts(&["ok", "a(b"])).expect_err("unclosed group");
        let text = err.to_string();
        assert!(text.contains("'a(b'"), "{text}");
        assert!(compile(&opts(&[])).is_err());
        let fixed = GrepOptions {
            fixed_strings: true,
            ..opts(&["a(b"])
        };
        assert!(compile(&fixed).expect("escaped").is_match("xa(by"));
        let folded = GrepOptions {
            ignore_case: true,
            ..opts(&["HELLO"])
        };
        assert!(compile(&folded).expect("compiles").is_match("say hello"));
    }
}
