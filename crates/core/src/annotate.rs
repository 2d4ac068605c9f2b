//! Line origins for `annotate` (blame): which revision brought each line of a file.
//!
//! Revisions are pushed oldest first; each push runs one line diff (Myers) of the lines alive so
//! far against the new text, so a file with R revisions of N lines costs R diffs and R passes
//! over at most N lines (plus, with `keep_deleted`, the lines deleted on the way). Lines are
//! interned in a [`LineTable`], so the diffs compare integers. A revision that came from other
//! files (an integration) may name their annotations as sources: a line it adds that matches a
//! source's line takes that line's origin instead of the revision's own.

use std::collections::HashMap;
use std::rc::Rc;

use crate::LineCompare;
use similar::algorithms::{Capture, diff};
use similar::{Algorithm, DiffTag};

/// An interned line: an index into its [`LineTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineId(u32);

/// The distinct lines met while annotating; each is stored once.
#[derive(Debug, Default)]
pub struct LineTable {
    ids: HashMap<Rc<str>, LineId>,
    texts: Vec<Rc<str>>,
    compare: LineCompare,
}

impl LineTable {
    pub fn new() -> LineTable {
        LineTable::default()
    }

    /// A table in which lines equal under `compare` are one line (its text: the first met).
    pub fn comparing(compare: LineCompare) -> LineTable {
        LineTable {
            compare,
            ..LineTable::default()
        }
    }

    /// The text of a line, without its terminator.
    pub fn text(&self, id: LineId) -> &str {
        &self.texts[id.0 as usize]
    }

    /// Splits `text` into lines (without their `\n`; a `\r` stays) and interns each.
    pub fn split(&mut self, text: &str) -> Vec<LineId> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            return Vec::new();
        }
        body.split('\n').map(|line| self.intern(line)).collect()
    }

    fn intern(&mut self, line: &str) -> LineId {
        let key = self.compare.key(line);
        if let Some(id) = self.ids.get(key.as_ref()) {
            return *id;
        }
        let id = LineId(u32::try_from(self.texts.len()).expect("fewer than 2^32 distinct lines"));
        let text: Rc<str> = Rc::from(line);
        self.texts.push(text.clone());
        let key = match key {
            std::borrow::Cow::Borrowed(key) if key.len() == line.len() => text,
            key => Rc::from(key.as_ref()),
        };
        self.ids.insert(key, id);
        id
    }
}

/// One line of an annotation: where it came from and the last revision that still had it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnotatedLine<T> {
    pub line: LineId,
    /// The revision (or source revision) that added the line.
    pub lower: T,
    /// The newest revision holding the line (the last pushed, while it is alive).
    pub upper: T,
    /// Whether the last pushed revision holds the line.
    pub alive: bool,
}

/// The annotation of one file, built by pushing its revisions oldest first. `T` tags a
/// revision (the caller's index of it).
#[derive(Debug, Clone)]
pub struct Annotation<T> {
    lines: Vec<AnnotatedLine<T>>,
    keep_deleted: bool,
}

impl<T: Copy> Annotation<T> {
    /// An empty annotation; `keep_deleted` keeps lines later revisions removed (`annotate -a`).
    pub fn new(keep_deleted: bool) -> Annotation<T> {
        Annotation {
            lines: Vec::new(),
            keep_deleted,
        }
    }

    /// The lines in file order: the alive ones, and with `keep_deleted` the removed ones where
    /// they stood.
    pub fn lines(&self) -> &[AnnotatedLine<T>] {
        &self.lines
    }

    /// Alive lines only.
    pub fn alive(&self) -> impl Iterator<Item = &AnnotatedLine<T>> {
        self.lines.iter().filter(|l| l.alive)
    }

    /// Adds the next revision, `tag`, whose content is `lines` (a deleted revision: none).
    /// Lines equal to alive ones keep their origin; added lines take the origin of an equal
    /// line of the first source that has one (diffed in order), else `tag`.
    pub fn push(&mut self, tag: T, lines: &[LineId], sources: &[&Annotation<T>]) {
        let old: Vec<LineId> = self.alive().map(|l| l.line).collect();
        let ops = edit_script(&old, lines);
        // Origins of the added lines, by new-side index, from the sources.
        let mut origin: Vec<Option<T>> = vec![None; lines.len()];
        let mut pending = ops
            .iter()
            .any(|op| op.tag != DiffTag::Equal && op.new_len > 0);
        for source in sources {
            if !pending {
                break;
            }
            let theirs: Vec<&AnnotatedLine<T>> = source.alive().collect();
            let their_ids: Vec<LineId> = theirs.iter().map(|l| l.line).collect();
            for op in edit_script(&their_ids, lines) {
                if op.tag == DiffTag::Equal {
                    for k in 0..op.new_len {
                        origin[op.new_start + k].get_or_insert(theirs[op.old_start + k].lower);
                    }
                }
            }
            // Lines equal to our own alive lines keep ours; only added ones still want one.
            pending = false;
            for op in &ops {
                if op.tag != DiffTag::Equal
                    && (op.new_start..op.new_start + op.new_len).any(|j| origin[j].is_none())
                {
                    pending = true;
                }
            }
        }
        let mut out =
            Vec::with_capacity(lines.len() + if self.keep_deleted { old.len() } else { 0 });
        let mut kept = std::mem::take(&mut self.lines).into_iter();
        // Copies removed lines up to the next alive one and returns that alive one.
        let keep_deleted = self.keep_deleted;
        let mut next_alive = |out: &mut Vec<AnnotatedLine<T>>| {
            for line in kept.by_ref() {
                if line.alive {
                    return Some(line);
                }
                if keep_deleted {
                    out.push(line);
                }
            }
            None
        };
        // Within a changed block, removed lines come before the lines that replace them.
        let mut added: Vec<AnnotatedLine<T>> = Vec::new();
        for op in &ops {
            if op.tag == DiffTag::Equal {
                out.append(&mut added);
            }
            for _ in 0..op.old_len {
                let Some(mut line) = next_alive(&mut out) else {
                    break;
                };
                if op.tag == DiffTag::Equal {
                    line.upper = tag;
                    out.push(line);
                } else if keep_deleted {
                    line.alive = false;
                    out.push(line);
                }
            }
            if op.tag != DiffTag::Equal {
                for j in op.new_start..op.new_start + op.new_len {
                    added.push(AnnotatedLine {
                        line: lines[j],
                        lower: origin[j].unwrap_or(tag),
                        upper: tag,
                        alive: true,
                    });
                }
            }
        }
        // Removed lines after the last alive one, then what the last block added.
        while next_alive(&mut out).is_some() {}
        out.append(&mut added);
        self.lines = out;
    }
}

/// One run of the edit script, with positions counted from run lengths.
#[derive(Debug, Clone, Copy)]
struct Run {
    tag: DiffTag,
    old_start: usize,
    old_len: usize,
    new_start: usize,
    new_len: usize,
}

/// The raw Myers edit script of `old` → `new` (positions tracked from run lengths, as
/// [`crate::merge`] does, never from reported indices).
fn edit_script(old: &[LineId], new: &[LineId]) -> Vec<Run> {
    let mut capture = Capture::new();
    let Ok(()) = diff(
        Algorithm::Myers,
        &mut capture,
        old,
        0..old.len(),
        new,
        0..new.len(),
    );
    let (mut o, mut n) = (0, 0);
    let mut runs = Vec::new();
    for op in capture.into_ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let run = Run {
            tag,
            old_start: o,
            old_len: old_range.len(),
            new_start: n,
            new_len: new_range.len(),
        };
        o += run.old_len;
        n += run.new_len;
        runs.push(run);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Annotates `revs` (tagged 1, 2, ...) and renders `lower-upper: text` lines (only `lower`
    /// when `all` is false).
    fn annotate(revs: &[&str], all: bool) -> Vec<String> {
        let mut table = LineTable::new();
        let mut ann = Annotation::new(all);
        for (i, text) in revs.iter().enumerate() {
            let lines = table.split(text);
            ann.push(i + 1, &lines, &[]);
        }
        ann.lines()
            .iter()
            .map(|l| {
                let text = table.text(l.line);
                if all {
                    format!("{}-{}: {text}", l.lower, l.upper)
                } else {
                    format!("{}: {text}", l.lower)
                }
            })
            .collect()
    }

    #[test]
    fn origins_follow_edits() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["a\nb\n"], &["1: a", "1: b"]),
            (&["a\nb\n", "a\nB\n"], &["1: a", "2: B"]),
            (&["a\n", "a\nb\n", "x\na\nb\n"], &["3: x", "1: a", "2: b"]),
            (
                &["a\nb\nc\n", "a\nc\n", "a\nb\nc\n"],
                &["1: a", "3: b", "1: c"],
            ),
            (&["a\n", "", "a\n"], &["3: a"]),
            (&["", "x"], &["2: x"]),
            (&["a\nb", "a\nb\n"], &["1: a", "1: b"]),
        ];
        for (revs, want) in cases {
            assert_eq!(annotate(revs, false), *want, "{revs:?}");
        }
    }

    #[test]
    fn all_keeps_removed_lines_in_place() {
        let got = annotate(&["a\nb\nc\n", "a\nc\n", "a\nc\nd\n"], true);
        assert_eq!(got, ["1-3: a", "1-1: b", "1-3: c", "3-3: d"]);
        let got = annotate(&["a\nb\nc\n", "a\nB\nc\n"], true);
        assert_eq!(got, ["1-2: a", "1-1: b", "2-2: B", "1-2: c"]);
    }

    #[test]
    fn added_lines_take_a_sources_origin() {
        let mut table = LineTable::new();
        let mut main = Annotation::new(false);
        main.push(10, &table.split("a\nb\n"), &[]);
        main.push(11, &table.split("a\nb\nc\n"), &[]);
        // A branch of main (tag 20), then a local edit (21) and a merge of a later main (22).
        let mut branch = Annotation::new(false);
        branch.push(20, &table.split("a\nb\nc\n"), &[&main]);
        branch.push(21, &table.split("a\nb\nc\nmine\n"), &[]);
        main.push(12, &table.split("a\ntheirs\nb\nc\n"), &[]);
        branch.push(22, &table.split("a\ntheirs\nb\nc\nmine\n"), &[&main]);
        let got: Vec<(usize, &str)> = branch
            .alive()
            .map(|l| (l.lower, table.text(l.line)))
            .collect();
        assert_eq!(
            got,
            [
                (10, "a"),
                (12, "theirs"),
                (10, "b"),
                (11, "c"),
                (21, "mine")
            ]
        );
    }

    #[test]
    fn long_history_is_one_diff_per_revision() {
        let mut table = LineTable::new();
        let mut ann = Annotation::new(false);
        let mut lines: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
        for rev in 0..300usize {
            lines[(rev * 7) % 200] = format!("line changed in {rev}");
            let text = lines.join("\n") + "\n";
            ann.push(rev, &table.split(&text), &[]);
        }
        let alive: Vec<_> = ann.alive().collect();
        assert_eq!(alive.len(), 200);
        for (i, l) in alive.iter().enumerate() {
            let text = table.text(l.line);
            match text.strip_prefix("line changed in ") {
                Some(rev) => assert_eq!(rev.parse::<usize>().unwrap(), l.lower, "{i}"),
                None => assert_eq!(l.lower, 0, "{i}"),
            }
        }
    }
}
