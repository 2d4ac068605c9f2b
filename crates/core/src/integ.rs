//! Integration history: Perforce's "how" records, which source revisions still need
//! integrating, and the merge base (the closest common ancestor) chosen from the history.

use std::collections::{HashMap, HashSet};

/// How a target revision took content from a source (the forward record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegHow {
    BranchFrom,
    CopyFrom,
    MergeFrom,
    EditFrom,
    Ignored,
    DeleteFrom,
    MovedFrom,
    /// `undo`: the revision restores the file as it was before `(from_start, from_end]` of
    /// itself (seen from those revisions: `undone by`).
    Undid,
}

impl IntegHow {
    const ALL: [IntegHow; 8] = [
        IntegHow::BranchFrom,
        IntegHow::CopyFrom,
        IntegHow::MergeFrom,
        IntegHow::EditFrom,
        IntegHow::Ignored,
        IntegHow::DeleteFrom,
        IntegHow::MovedFrom,
        IntegHow::Undid,
    ];

    /// The record as seen from the target (`branch from`, ..., `ignored`).
    pub fn as_str(self) -> &'static str {
        match self {
            IntegHow::BranchFrom => "branch from",
            IntegHow::CopyFrom => "copy from",
            IntegHow::MergeFrom => "merge from",
            IntegHow::EditFrom => "edit from",
            IntegHow::Ignored => "ignored",
            IntegHow::DeleteFrom => "delete from",
            IntegHow::MovedFrom => "moved from",
            IntegHow::Undid => "undid",
        }
    }

    /// The same record as seen from the source (`branch into`, ..., `ignored by`).
    pub fn reverse_str(self) -> &'static str {
        match self {
            IntegHow::BranchFrom => "branch into",
            IntegHow::CopyFrom => "copy into",
            IntegHow::MergeFrom => "merge into",
            IntegHow::EditFrom => "edit into",
            IntegHow::Ignored => "ignored by",
            IntegHow::DeleteFrom => "delete into",
            IntegHow::MovedFrom => "moved into",
            IntegHow::Undid => "undone by",
        }
    }

    pub fn parse(text: &str) -> Option<IntegHow> {
        IntegHow::ALL.into_iter().find(|h| h.as_str() == text)
    }
}

/// One integration record: `to_path#to_rev` took `from_path` revisions `(from_start, from_end]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegEdge {
    pub to_path: String,
    pub to_rev: u32,
    pub from_path: String,
    pub from_start: u32,
    pub from_end: u32,
    pub how: IntegHow,
}

/// The source revisions `(start, end]` still to integrate into a target, given the records into
/// the target (`into_target`). `None` when every revision up to `source_head` is integrated.
pub fn pending_range(
    source: &str,
    source_head: u32,
    into_target: &[IntegEdge],
) -> Option<(u32, u32)> {
    let done = into_target
        .iter()
        .filter(|e| e.from_path == source && e.how != IntegHow::MovedFrom)
        .map(|e| e.from_end)
        .max()
        .unwrap_or(0);
    (source_head > done).then_some((done, source_head))
}

/// Whether revision `rev` of a file took its whole state from `other` (a `branch from`,
/// `copy from` or `delete from` record among `into_file`, the records into the file): such a
/// revision is already in `other`, so integrating it back would bring nothing.
pub fn taken_whole_from(into_file: &[IntegEdge], rev: u32, other: &str) -> bool {
    into_file.iter().any(|e| {
        e.to_rev == rev
            && e.from_path == other
            && matches!(
                e.how,
                IntegHow::BranchFrom | IntegHow::CopyFrom | IntegHow::DeleteFrom
            )
    })
}

/// Ancestry of a revision: for each path, the highest revision that is an ancestor (every
/// earlier revision of that path is one too). `history` maps a path to the records into it.
pub fn ancestors(
    path: &str,
    rev: u32,
    history: &HashMap<String, Vec<IntegEdge>>,
) -> HashMap<String, u32> {
    let mut out: HashMap<String, u32> = HashMap::new();
    let mut seen: HashSet<(String, u32)> = HashSet::new();
    let mut stack = vec![(path.to_string(), rev)];
    while let Some((p, r)) = stack.pop() {
        if r == 0 || !seen.insert((p.clone(), r)) {
            continue;
        }
        let best = out.entry(p.clone()).or_insert(0);
        *best = (*best).max(r);
        for edge in history.get(&p).into_iter().flatten() {
            if edge.to_rev <= r && edge.from_end > 0 {
                stack.push((edge.from_path.clone(), edge.from_end));
            }
        }
    }
    out
}

/// The merge base for integrating `source#source_rev` into `target#target_rev`: the closest
/// common ancestor in the integration history, or `None` when they share none.
///
/// Common ancestors are the revisions both sides descend from; among them the ones that are not
/// themselves ancestors of another common ancestor are closest. If several remain, the target's
/// own revision wins (its content already holds the rest), then the source's, then the highest.
pub fn select_base(
    source: &str,
    source_rev: u32,
    target: &str,
    target_rev: u32,
    history: &HashMap<String, Vec<IntegEdge>>,
) -> Option<(String, u32)> {
    let from_source = ancestors(source, source_rev, history);
    let from_target = ancestors(target, target_rev, history);
    let common: Vec<(String, u32)> = from_source
        .iter()
        .filter_map(|(p, &r)| from_target.get(p).map(|&t| (p.clone(), r.min(t))))
        .collect();
    let closest: Vec<&(String, u32)> = common
        .iter()
        .filter(|(p, r)| {
            !common.iter().any(|(q, s)| {
                (q, s) != (p, r) && ancestors(q, *s, history).get(p).is_some_and(|&k| k >= *r)
            })
        })
        .collect();
    let rank = |(p, r): &&(String, u32)| (p == target, p == source, *r);
    closest.into_iter().max_by_key(rank).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(to: &str, to_rev: u32, from: &str, start: u32, end: u32, how: IntegHow) -> IntegEdge {
        IntegEdge {
            to_path: to.into(),
            to_rev,
            from_path: from.into(),
            from_start: start,
            from_end: end,
            how,
        }
    }

    /// (name, records, source head, expected pending range)
    type RangeCase = (&'static str, Vec<IntegEdge>, u32, Option<(u32, u32)>);
    /// (name, records, source#rev, target#rev, expected base)
    type BaseCase = (
        &'static str,
        Vec<IntegEdge>,
        (&'static str, u32),
        (&'static str, u32),
        Option<(&'static str, u32)>,
    );

    fn history(edges: &[IntegEdge]) -> HashMap<String, Vec<IntegEdge>> {
        let mut map: HashMap<String, Vec<IntegEdge>> = HashMap::new();
        for e in edges {
            map.entry(e.to_path.clone()).or_default().push(e.clone());
        }
        map
    }

    #[test]
    fn how_round_trips_and_reverses() {
        for how in IntegHow::ALL {
            assert_eq!(IntegHow::parse(how.as_str()), Some(how));
        }
        assert_eq!(IntegHow::Ignored.reverse_str(), "ignored by");
        assert_eq!(IntegHow::BranchFrom.reverse_str(), "branch into");
        assert_eq!(IntegHow::parse("merged from"), None);
    }

    #[test]
    fn pending_ranges() {
        use IntegHow::*;
        let cases: Vec<RangeCase> = vec![
            ("never integrated", vec![], 3, Some((0, 3))),
            (
                "branched at #3, nothing new",
                vec![edge("T", 1, "S", 0, 3, BranchFrom)],
                3,
                None,
            ),
            (
                "branched at #3, source at #5",
                vec![edge("T", 1, "S", 0, 3, BranchFrom)],
                5,
                Some((3, 5)),
            ),
            (
                "merged up to #5 after the branch",
                vec![
                    edge("T", 1, "S", 0, 3, BranchFrom),
                    edge("T", 2, "S", 3, 5, MergeFrom),
                ],
                5,
                None,
            ),
            (
                "ignored revisions count as done",
                vec![edge("T", 2, "S", 0, 4, Ignored)],
                4,
                None,
            ),
            (
                "records from another source do not count",
                vec![edge("T", 1, "R", 0, 9, BranchFrom)],
                2,
                Some((0, 2)),
            ),
            (
                "a rename is not an integration",
                vec![edge("T", 1, "S", 0, 2, MovedFrom)],
                2,
                Some((0, 2)),
            ),
        ];
        for (name, edges, head, want) in cases {
            assert_eq!(pending_range("S", head, &edges), want, "{name}");
        }
    }

    #[test]
    fn revisions_taken_whole_from_another_file() {
        use IntegHow::*;
        let edges = vec![
            edge("T", 1, "S", 0, 1, BranchFrom),
            edge("T", 2, "S", 1, 3, MergeFrom),
            edge("T", 3, "S", 3, 4, CopyFrom),
            edge("T", 4, "U", 0, 1, BranchFrom),
        ];
        let cases: [(&str, u32, &str, bool); 5] = [
            ("branched from S", 1, "S", true),
            ("a merge holds its own work", 2, "S", false),
            ("copied from S", 3, "S", true),
            ("from another file", 4, "S", false),
            ("no record at all", 5, "S", false),
        ];
        for (name, rev, other, want) in cases {
            assert_eq!(taken_whole_from(&edges, rev, other), want, "{name}");
        }
    }

    #[test]
    fn base_selection() {
        use IntegHow::*;
        let cases: Vec<BaseCase> = vec![
            (
                "unrelated files share nothing",
                vec![],
                ("S", 4),
                ("T", 2),
                None,
            ),
            (
                "first merge after a branch uses the branch point",
                vec![edge("T", 1, "S", 0, 3, BranchFrom)],
                ("S", 5),
                ("T", 2),
                Some(("S", 3)),
            ),
            (
                "a repeated merge uses the last merged revision",
                vec![
                    edge("T", 1, "S", 0, 3, BranchFrom),
                    edge("T", 2, "S", 3, 5, MergeFrom),
                ],
                ("S", 7),
                ("T", 3),
                Some(("S", 5)),
            ),
            (
                "integrating back uses what the branch last took",
                vec![
                    edge("T", 1, "S", 0, 3, BranchFrom),
                    edge("T", 2, "S", 3, 5, MergeFrom),
                ],
                ("T", 3),
                ("S", 6),
                Some(("S", 5)),
            ),
            (
                "after integrating back, the next merge uses the target's own revision",
                vec![
                    edge("T", 1, "S", 0, 3, BranchFrom),
                    edge("T", 2, "S", 3, 5, MergeFrom),
                    edge("S", 7, "T", 0, 3, MergeFrom),
                ],
                ("S", 8),
                ("T", 3),
                Some(("T", 3)),
            ),
            (
                "a copy counts like a merge",
                vec![
                    edge("T", 1, "S", 0, 2, BranchFrom),
                    edge("T", 4, "S", 2, 6, CopyFrom),
                ],
                ("S", 9),
                ("T", 5),
                Some(("S", 6)),
            ),
            (
                "history through a rename",
                vec![
                    edge("S2", 1, "S", 0, 4, MovedFrom),
                    edge("T", 1, "S", 0, 2, BranchFrom),
                ],
                ("S2", 3),
                ("T", 2),
                Some(("S", 2)),
            ),
            (
                "sibling branches meet at their common parent",
                vec![
                    edge("A", 1, "M", 0, 2, BranchFrom),
                    edge("B", 1, "M", 0, 4, BranchFrom),
                ],
                ("A", 3),
                ("B", 2),
                Some(("M", 2)),
            ),
        ];
        for (name, edges, (s, sr), (t, tr), want) in cases {
            let got = select_base(s, sr, t, tr, &history(&edges));
            assert_eq!(got, want.map(|(p, r)| (p.to_string(), r)), "{name}");
        }
    }

    #[test]
    fn cycles_terminate() {
        use IntegHow::*;
        let edges = vec![
            edge("A", 2, "B", 0, 2, MergeFrom),
            edge("B", 2, "A", 0, 2, MergeFrom),
        ];
        let anc = ancestors("A", 2, &history(&edges));
        assert_eq!(anc.get("A"), Some(&2));
        assert_eq!(anc.get("B"), Some(&2));
    }
}
