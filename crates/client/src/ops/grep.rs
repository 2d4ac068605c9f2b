//! `grep`: search the content of depot revisions for lines matching patterns.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What a search lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GrepList {
    /// The selected lines.
    #[default]
    Lines,
    /// The revisions with a selected line.
    WithMatches,
    /// The revisions without one.
    WithoutMatch,
}

/// What to search and how.
#[derive(Clone, Debug, Default)]
pub struct GrepQuery {
    /// Each with a revision or a range (`file#3,#5`, `file@10,@20`).
    pub paths: Vec<String>,
    /// A line is selected when any matches.
    pub patterns: Vec<String>,
    /// Plain strings, not regular expressions.
    pub fixed_strings: bool,
    pub ignore_case: bool,
    /// Select the lines that do not match.
    pub invert: bool,
    pub list: GrepList,
    /// Every revision in the range, not only the highest.
    pub all_revisions: bool,
    /// Context lines before and after each selected line.
    pub before: u32,
    pub after: u32,
    /// Search binary files too.
    pub binary_as_text: bool,
}

/// What a hit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrepKind {
    /// A selected line.
    Match,
    /// Context before one.
    Before,
    /// Context after one.
    After,
    /// A revision listed (with [`GrepList::WithMatches`] or [`GrepList::WithoutMatch`]).
    File,
    /// A binary revision not searched.
    Binary,
    /// A revision larger than the server searches.
    TooLarge,
}

/// One hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepHit {
    pub depot_file: String,
    pub rev: u32,
    /// From 1; 0 when the hit is not a line.
    pub line: u64,
    pub kind: GrepKind,
    pub text: String,
}

/// Searches as `query` asks; the hits in batches as the server streams them.
pub async fn grep(
    conn: &Connection,
    query: GrepQuery,
) -> Result<Records<Vec<GrepHit>>, QueryError> {
    let list = match query.list {
        GrepList::Lines => pb::GrepList::Lines,
        GrepList::WithMatches => pb::GrepList::WithMatches,
        GrepList::WithoutMatch => pb::GrepList::WithoutMatch,
    };
    let stream = conn
        .reply(conn.client().grep(pb::GrepRequest {
            caller: conn.caller(),
            files: query.paths,
            patterns: query.patterns,
            fixed_strings: query.fixed_strings,
            ignore_case: query.ignore_case,
            invert: query.invert,
            list: list as i32,
            all_revisions: query.all_revisions,
            before: query.before,
            after: query.after,
            binary_as_text: query.binary_as_text,
        }))
        .await?;
    Ok(Records::new(conn, stream, |m: pb::GrepMessage| {
        Ok(m.hits
            .into_iter()
            .map(|hit| GrepHit {
                kind: match pb::GrepKind::try_from(hit.kind).unwrap_or(pb::GrepKind::Match) {
                    pb::GrepKind::Match => GrepKind::Match,
                    pb::GrepKind::Before => GrepKind::Before,
                    pb::GrepKind::After => GrepKind::After,
                    pb::GrepKind::File => GrepKind::File,
                    pb::GrepKind::Binary => GrepKind::Binary,
                    pb::GrepKind::TooLarge => GrepKind::TooLarge,
                },
                depot_file: hit.depot_file,
                rev: hit.rev,
                line: hit.line,
                text: hit.text,
            })
            .collect())
    }))
}
