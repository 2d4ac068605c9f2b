//! Line-based 3-way text merge (classic diff3) with Perforce conflict markers.

use std::ops::Range;

use similar::algorithms::{Capture, diff};
use similar::{Algorithm, DiffTag};

/// Opens a conflict; the base lines follow.
pub const MARKER_ORIGINAL: &str = ">>>> ORIGINAL";
/// Separates the base lines from their lines.
pub const MARKER_THEIRS: &str = "==== THEIRS";
/// Separates their lines from your lines.
pub const MARKER_YOURS: &str = "==== YOURS";
/// Closes a conflict.
pub const MARKER_END: &str = "<<<<";

/// The result of [`merge3`]: the merged text and how many chunks fell in each category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The merged text; conflicting chunks are written between Perforce markers.
    pub merged: String,
    /// Chunks changed differently on both sides (written with markers).
    pub conflicts: usize,
    /// Chunks changed only in yours.
    pub yours_changed: usize,
    /// Chunks changed only in theirs.
    pub theirs_changed: usize,
    /// Chunks changed identically on both sides (applied once, not a conflict).
    pub both_changed: usize,
}

/// A changed region of one side relative to base: `base` lines became `side` lines.
#[derive(Debug, Clone)]
struct Hunk {
    base: Range<usize>,
    side: Range<usize>,
}

/// Splits text into lines that keep their terminator (`\n` or `\r\n`); a last line without
/// `\n` is kept as is.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The changed regions of `side` against `base`, adjacent non-equal edits coalesced.
///
/// Uses the raw Myers edit script: `similar`'s `capture_diff_slices` post-processes it
/// with `Compact`, which (in 2.7) can report a `Delete` at a wrong new-side index.
fn hunks(base: &[&str], side: &[&str]) -> Vec<Hunk> {
    let mut capture = Capture::new();
    let Ok(()) = diff(
        Algorithm::Myers,
        &mut capture,
        base,
        0..base.len(),
        side,
        0..side.len(),
    );
    let mut out: Vec<Hunk> = Vec::new();
    // Positions are tracked from op lengths alone, never from reported indices.
    let (mut b, mut s) = (0, 0);
    for op in capture.into_ops() {
        let (tag, old, new) = op.as_tag_tuple();
        let (b_end, s_end) = (b + old.len(), s + new.len());
        if tag != DiffTag::Equal {
            match out.last_mut() {
                Some(last) if last.base.end == b && last.side.end == s => {
                    last.base.end = b_end;
                    last.side.end = s_end;
                }
                _ => out.push(Hunk {
                    base: b..b_end,
                    side: s..s_end,
                }),
            }
        }
        (b, s) = (b_end, s_end);
    }
    out
}

/// The side's lines standing for base lines `block` given the side's hunks inside it
/// (outside its hunks a side equals base); `None` when the side did not change the block.
fn side_range(hunks: &[Hunk], block: &Range<usize>) -> Option<Range<usize>> {
    let first = hunks.first()?;
    let last = hunks.last()?;
    let start = first.side.start - (first.base.start - block.start);
    let end = last.side.end + (block.end - last.base.end);
    Some(start..end)
}

/// Writes a marker on its own line, terminating a preceding last line that lacks `\n`.
fn push_marker(out: &mut String, marker: &str) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(marker);
    out.push('\n');
}

/// What a piece of a merge is: which of base, theirs and yours hold its lines, and whether it
/// is part of a conflict. A merge is a sequence of pieces (see [`merge3_pieces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Lines base, theirs and yours share.
    Common,
    /// Base lines theirs changed and yours kept.
    BaseKeptByYours,
    /// What theirs made of them (in the result).
    Theirs,
    /// Base lines yours changed and theirs kept.
    BaseKeptByTheirs,
    /// What yours made of them (in the result).
    Yours,
    /// Base lines both sides changed alike.
    BaseChangedByBoth,
    /// What both made of them (in the result).
    Both,
    /// Base lines of a conflict.
    ConflictBase,
    /// Their lines of a conflict.
    ConflictTheirs,
    /// Your lines of a conflict.
    ConflictYours,
}

/// One piece of a merge: its kind and its lines (possibly none: a side that deleted lines has
/// an empty piece where its lines would be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergePiece {
    pub piece: Piece,
    pub text: String,
}

/// The merge of `theirs` and `yours` (both derived from `base`) as pieces in file order: each
/// region is `Common`; or a base piece followed by the side(s) that changed it (`Theirs`,
/// `Yours`, `Both`); or a conflict's `ConflictBase`, `ConflictTheirs`, `ConflictYours`. The
/// result is the concatenation of the `Common`, `Theirs`, `Yours` and `Both` pieces (with
/// conflicts between markers, as [`merge3`] writes them); theirs is the `Common`, theirs-side
/// and kept-by-theirs pieces, and likewise yours.
pub fn merge3_pieces(base: &str, theirs: &str, yours: &str) -> Vec<MergePiece> {
    let base_lines = lines(base);
    let their_lines = lines(theirs);
    let your_lines = lines(yours);
    let their_hunks = hunks(&base_lines, &their_lines);
    let your_hunks = hunks(&base_lines, &your_lines);
    let mut out = Vec::new();
    let mut push = |piece: Piece, lines: &[&str]| {
        out.push(MergePiece {
            piece,
            text: lines.concat(),
        })
    };
    let (mut ti, mut yi, mut pos) = (0, 0, 0);
    loop {
        let start = match (their_hunks.get(ti), your_hunks.get(yi)) {
            (None, None) => break,
            (Some(t), None) => t.base.start,
            (None, Some(y)) => y.base.start,
            (Some(t), Some(y)) => t.base.start.min(y.base.start),
        };
        if start > pos {
            push(Piece::Common, &base_lines[pos..start]);
        }

        // Grow the chunk while a hunk of either side overlaps or touches it.
        let (t0, y0) = (ti, yi);
        let mut end = start;
        loop {
            let mut grew = false;
            if let Some(t) = their_hunks.get(ti).filter(|t| t.base.start <= end) {
                end = end.max(t.base.end);
                ti += 1;
                grew = true;
            }
            if let Some(y) = your_hunks.get(yi).filter(|y| y.base.start <= end) {
                end = end.max(y.base.end);
                yi += 1;
                grew = true;
            }
            if !grew {
                break;
            }
        }
        let block = start..end;
        let base_block = &base_lines[block.clone()];
        let theirs_block = side_range(&their_hunks[t0..ti], &block).map(|r| &their_lines[r]);
        let yours_block = side_range(&your_hunks[y0..yi], &block).map(|r| &your_lines[r]);
        match (theirs_block, yours_block) {
            (Some(t), None) => {
                push(Piece::BaseKeptByYours, base_block);
                push(Piece::Theirs, t);
            }
            (None, Some(y)) => {
                push(Piece::BaseKeptByTheirs, base_block);
                push(Piece::Yours, y);
            }
            (Some(t), Some(y)) if t == y => {
                push(Piece::BaseChangedByBoth, base_block);
                push(Piece::Both, t);
            }
            (Some(t), Some(y)) => {
                push(Piece::ConflictBase, base_block);
                push(Piece::ConflictTheirs, t);
                push(Piece::ConflictYours, y);
            }
            // Unreachable: the chunk starts at a hunk of at least one side.
            (None, None) => push(Piece::Common, base_block),
        }
        pos = end;
    }
    if pos < base_lines.len() {
        push(Piece::Common, &base_lines[pos..]);
    }
    out
}

/// Merges `theirs` and `yours`, both derived from `base`, line by line (Perforce semantics).
///
/// Changes of each side are found with a Myers diff against `base`. Changes whose base
/// ranges overlap *or touch* (including insertions at the same point, and edits of adjacent
/// lines) form one chunk: applied if only one side changed it or both changed it to the
/// same lines, otherwise written as a conflict:
///
/// ```text
/// >>>> ORIGINAL
/// <base lines>
/// ==== THEIRS
/// <their lines>
/// ==== YOURS
/// <your lines>
/// <<<<
/// ```
///
/// Line terminators of the inputs are kept (`\r\n` stays `\r\n`); markers end with `\n`.
/// A last line without `\n` stays so unless a marker follows it, which then gets a `\n`.
pub fn merge3(base: &str, theirs: &str, yours: &str) -> MergeOutcome {
    let mut outcome = MergeOutcome {
        merged: String::with_capacity(base.len().max(theirs.len()).max(yours.len())),
        conflicts: 0,
        yours_changed: 0,
        theirs_changed: 0,
        both_changed: 0,
    };
    let out = &mut outcome.merged;
    for p in merge3_pieces(base, theirs, yours) {
        match p.piece {
            Piece::Common => out.push_str(&p.text),
            Piece::Theirs => {
                outcome.theirs_changed += 1;
                out.push_str(&p.text);
            }
            Piece::Yours => {
                outcome.yours_changed += 1;
                out.push_str(&p.text);
            }
            Piece::Both => {
                outcome.both_changed += 1;
                out.push_str(&p.text);
            }
            Piece::BaseKeptByYours | Piece::BaseKeptByTheirs | Piece::BaseChangedByBoth => {}
            Piece::ConflictBase => {
                outcome.conflicts += 1;
                push_marker(out, MARKER_ORIGINAL);
                out.push_str(&p.text);
            }
            Piece::ConflictTheirs => {
                push_marker(out, MARKER_THEIRS);
                out.push_str(&p.text);
            }
            Piece::ConflictYours => {
                push_marker(out, MARKER_YOURS);
                out.push_str(&p.text);
                push_marker(out, MARKER_END);
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        name: &'static str,
        base: &'static str,
        theirs: &'static str,
        yours: &'static str,
        merged: &'static str,
        /// conflicts, yours_changed, theirs_changed, both_changed
        counts: (usize, usize, usize, usize),
    }

    const CASES: &[Case] = &[
        Case {
            name: "no changes",
            base: "a\nb\nc\n",
            theirs: "a\nb\nc\n",
            yours: "a\nb\nc\n",
            merged: "a\nb\nc\n",
            counts: (0, 0, 0, 0),
        },
        Case {
            name: "all empty",
            base: "",
            theirs: "",
            yours: "",
            merged: "",
            counts: (0, 0, 0, 0),
        },
        Case {
            name: "only theirs changed",
            base: "a\nb\nc\n",
            theirs: "a\nB\nc\n",
            yours: "a\nb\nc\n",
            merged: "a\nB\nc\n",
            counts: (0, 0, 1, 0),
        },
        Case {
            name: "only yours changed",
            base: "a\nb\nc\n",
            theirs: "a\nb\nc\n",
            yours: "a\nb\nC\nd\n",
            merged: "a\nb\nC\nd\n",
            counts: (0, 1, 0, 0),
        },
        Case {
            name: "both changed different non-adjacent regions",
            base: "1\n2\n3\n4\n5\n",
            theirs: "1\nTWO\n3\n4\n5\n",
            yours: "1\n2\n3\nFOUR\n5\n",
            merged: "1\nTWO\n3\nFOUR\n5\n",
            counts: (0, 1, 1, 0),
        },
        Case {
            name: "several chunks per side",
            base: "1\n2\n3\n4\n5\n6\n7\n",
            theirs: "ONE\n2\n3\n4\nFIVE\n6\n7\n",
            yours: "1\n2\nTHREE\n4\n5\n6\n",
            merged: "ONE\n2\nTHREE\n4\nFIVE\n6\n",
            counts: (0, 2, 2, 0),
        },
        Case {
            name: "same change on both sides",
            base: "a\nb\nc\n",
            theirs: "a\nX\nc\n",
            yours: "a\nX\nc\n",
            merged: "a\nX\nc\n",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "conflicting edits of the same line",
            base: "a\nb\nc\n",
            theirs: "a\nT\nc\n",
            yours: "a\nY\nc\n",
            merged: "a\n>>>> ORIGINAL\nb\n==== THEIRS\nT\n==== YOURS\nY\n<<<<\nc\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "edits of adjacent lines conflict",
            base: "1\n2\n3\n",
            theirs: "1\nTWO\n3\n",
            yours: "1\n2\nTHREE\n",
            merged: "1\n>>>> ORIGINAL\n2\n3\n==== THEIRS\nTWO\n3\n==== YOURS\n2\nTHREE\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "one conflict and one clean change",
            base: "1\n2\n3\n4\n5\n6\n7\n",
            theirs: "1\nT2\n3\n4\n5\nT6\n7\n",
            yours: "1\nY2\n3\n4\n5\n6\n7\n",
            merged: "1\n>>>> ORIGINAL\n2\n==== THEIRS\nT2\n==== YOURS\nY2\n<<<<\n3\n4\n5\nT6\n7\n",
            counts: (1, 0, 1, 0),
        },
        Case {
            name: "different insertions at the same point",
            base: "a\nb\n",
            theirs: "a\nt\nb\n",
            yours: "a\ny\nb\n",
            merged: "a\n>>>> ORIGINAL\n==== THEIRS\nt\n==== YOURS\ny\n<<<<\nb\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "identical insertions at the same point",
            base: "a\nb\n",
            theirs: "a\nx\nb\n",
            yours: "a\nx\nb\n",
            merged: "a\nx\nb\n",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "insertions at the end",
            base: "a\n",
            theirs: "a\nt\n",
            yours: "a\ny\n",
            merged: "a\n>>>> ORIGINAL\n==== THEIRS\nt\n==== YOURS\ny\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "theirs delete vs yours edit of the same line",
            base: "a\nb\nc\n",
            theirs: "a\nc\n",
            yours: "a\nB\nc\n",
            merged: "a\n>>>> ORIGINAL\nb\n==== THEIRS\n==== YOURS\nB\n<<<<\nc\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "yours delete vs theirs edit of the same line",
            base: "a\nb\nc\n",
            theirs: "a\nB\nc\n",
            yours: "a\nc\n",
            merged: "a\n>>>> ORIGINAL\nb\n==== THEIRS\nB\n==== YOURS\n<<<<\nc\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "same delete on both sides",
            base: "a\nb\nc\n",
            theirs: "a\nc\n",
            yours: "a\nc\n",
            merged: "a\nc\n",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "different non-adjacent deletes",
            base: "1\n2\n3\n4\n5\n",
            theirs: "1\n3\n4\n5\n",
            yours: "1\n2\n3\n5\n",
            merged: "1\n3\n5\n",
            counts: (0, 1, 1, 0),
        },
        Case {
            name: "overlapping different deletes",
            base: "a\nb\nc\nd\n",
            theirs: "a\nd\n",
            yours: "a\nb\nd\n",
            merged: "a\n>>>> ORIGINAL\nb\nc\n==== THEIRS\n==== YOURS\nb\n<<<<\nd\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "everything deleted on both sides",
            base: "a\nb\n",
            theirs: "",
            yours: "",
            merged: "",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "empty base, different content added",
            base: "",
            theirs: "t\n",
            yours: "y\n",
            merged: ">>>> ORIGINAL\n==== THEIRS\nt\n==== YOURS\ny\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "empty base, same content added",
            base: "",
            theirs: "x\ny\n",
            yours: "x\ny\n",
            merged: "x\ny\n",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "empty base, only theirs added",
            base: "",
            theirs: "x\n",
            yours: "",
            merged: "x\n",
            counts: (0, 0, 1, 0),
        },
        Case {
            name: "no final newline kept when a clean change precedes it",
            base: "a\nb",
            theirs: "A\nb",
            yours: "a\nb",
            merged: "A\nb",
            counts: (0, 0, 1, 0),
        },
        Case {
            name: "yours adds the final newline",
            base: "a\nb",
            theirs: "a\nb",
            yours: "a\nb\n",
            merged: "a\nb\n",
            counts: (0, 1, 0, 0),
        },
        Case {
            name: "yours drops the final newline, theirs edits elsewhere",
            base: "a\nb\nc\n",
            theirs: "A\nb\nc\n",
            yours: "a\nb\nc",
            merged: "A\nb\nc",
            counts: (0, 1, 1, 0),
        },
        Case {
            name: "both drop the final newline",
            base: "a\nb\n",
            theirs: "a\nb",
            yours: "a\nb",
            merged: "a\nb",
            counts: (0, 0, 0, 1),
        },
        Case {
            name: "conflict on last lines without newline gets newlines before markers",
            base: "a\nb",
            theirs: "a\nc",
            yours: "a\nd",
            merged: "a\n>>>> ORIGINAL\nb\n==== THEIRS\nc\n==== YOURS\nd\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "newline-only difference on the last line conflicts with an edit",
            base: "a\nb",
            theirs: "a\nb\n",
            yours: "a\nB",
            merged: "a\n>>>> ORIGINAL\nb\n==== THEIRS\nb\n==== YOURS\nB\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
        Case {
            name: "fuzz regression: delete before an equal line, insert after it",
            base: "x\n\n",
            theirs: "x\n\n",
            yours: "\nq\n\nz",
            merged: "\nq\n\nz",
            counts: (0, 2, 0, 0),
        },
        Case {
            name: "crlf line endings preserved",
            base: "a\r\nb\r\nc\r\nd\r\n",
            theirs: "A\r\nb\r\nc\r\nd\r\n",
            yours: "a\r\nb\r\nc\r\nD\r\n",
            merged: "A\r\nb\r\nc\r\nD\r\n",
            counts: (0, 1, 1, 0),
        },
        Case {
            name: "crlf conflict keeps input endings, markers end with lf",
            base: "a\r\nb\r\n",
            theirs: "a\r\nT\r\n",
            yours: "a\r\nY\r\n",
            merged: "a\r\n>>>> ORIGINAL\nb\r\n==== THEIRS\nT\r\n==== YOURS\nY\r\n<<<<\n",
            counts: (1, 0, 0, 0),
        },
    ];

    #[test]
    fn merge3_table() {
        for case in CASES {
            let got = merge3(case.base, case.theirs, case.yours);
            let (conflicts, yours_changed, theirs_changed, both_changed) = case.counts;
            let want = MergeOutcome {
                merged: case.merged.to_string(),
                conflicts,
                yours_changed,
                theirs_changed,
                both_changed,
            };
            assert_eq!(got, want, "case: {}", case.name);
        }
    }

    #[test]
    fn pieces_rebuild_each_side() {
        for case in CASES {
            let pieces = merge3_pieces(case.base, case.theirs, case.yours);
            let side = |keep: &[Piece]| -> String {
                pieces
                    .iter()
                    .filter(|p| keep.contains(&p.piece))
                    .map(|p| p.text.as_str())
                    .collect()
            };
            use Piece::*;
            let base = side(&[
                Common,
                BaseKeptByYours,
                BaseKeptByTheirs,
                BaseChangedByBoth,
                ConflictBase,
            ]);
            let theirs = side(&[Common, Theirs, BaseKeptByTheirs, Both, ConflictTheirs]);
            let yours = side(&[Common, BaseKeptByYours, Yours, Both, ConflictYours]);
            assert_eq!(
                (base.as_str(), theirs.as_str(), yours.as_str()),
                (case.base, case.theirs, case.yours),
                "case: {}",
                case.name
            );
        }
    }

    #[test]
    fn one_sided_and_identical_merges_are_exact() {
        for case in CASES {
            let (b, t, y) = (case.base, case.theirs, case.yours);
            assert_eq!(merge3(b, b, y).merged, y, "case: {}", case.name);
            assert_eq!(merge3(b, t, b).merged, t, "case: {}", case.name);
            let same = merge3(b, t, t);
            assert_eq!(
                (same.merged.as_str(), same.conflicts),
                (t, 0),
                "case: {}",
                case.name
            );
        }
    }
}
