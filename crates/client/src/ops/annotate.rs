//! `annotate`: each line of files with the revision and change that added it.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records, Revision};
use crate::connect::Connection;

/// Whose history annotate follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnnotateFollow {
    /// The file's own revisions.
    #[default]
    None,
    /// Into the files it was branched, copied or moved from.
    Branches,
    /// Into every integration source, merges too.
    All,
}

/// Which differences between lines are not changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Whitespace {
    /// Every byte counts.
    #[default]
    Exact,
    /// Not a trailing CR.
    LineEndings,
    /// Not the amount of whitespace.
    Changes,
    /// Not any whitespace.
    All,
}

/// What to annotate.
#[derive(Clone, Debug, Default)]
pub struct AnnotateQuery {
    /// A file, a revision or a range (`#a,#b`, `@a,@b`) each.
    pub paths: Vec<String>,
    /// Also the lines later revisions removed, each with the range that held it.
    pub all: bool,
    pub follow: AnnotateFollow,
    /// Binary files too.
    pub binary_as_text: bool,
    pub whitespace: Whitespace,
}

/// A line and the revisions that held it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotatedLine {
    /// Without its line terminator.
    pub text: String,
    /// The file whose revision added it (another file when following history).
    pub lower_file: String,
    pub lower_rev: u32,
    pub lower_change: u64,
    /// The newest revision holding it (with `all`).
    pub upper_rev: u32,
    pub upper_change: u64,
    /// The adding change's user, and when it was submitted.
    pub user: String,
    pub time: u64,
}

/// One part of the reply: a file's header (at its start), then its lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotateChunk {
    /// The file the lines below (and in later chunks) belong to, and whether it is binary
    /// (its lines then left out unless `binary_as_text`).
    pub file: Option<(Revision, bool)>,
    pub lines: Vec<AnnotatedLine>,
}

/// Annotates the files `query` names, as the server streams them.
pub async fn annotate(
    conn: &Connection,
    query: AnnotateQuery,
) -> Result<Records<AnnotateChunk>, QueryError> {
    let follow = match query.follow {
        AnnotateFollow::None => pb::AnnotateFollow::None,
        AnnotateFollow::Branches => pb::AnnotateFollow::Branches,
        AnnotateFollow::All => pb::AnnotateFollow::All,
    };
    let whitespace = match query.whitespace {
        Whitespace::Exact => pb::AnnotateWhitespace::Exact,
        Whitespace::LineEndings => pb::AnnotateWhitespace::LineEndings,
        Whitespace::Changes => pb::AnnotateWhitespace::Changes,
        Whitespace::All => pb::AnnotateWhitespace::All,
    };
    let stream = conn
        .reply(conn.client().annotate(pb::AnnotateRequest {
            caller: conn.caller(),
            files: query.paths,
            all: query.all,
            follow: follow as i32,
            binary_as_text: query.binary_as_text,
            whitespace: whitespace as i32,
        }))
        .await?;
    Ok(Records::new(conn, stream, |m| {
        Ok(AnnotateChunk {
            file: m.file.as_ref().map(|f| (Revision::head_of(f), m.binary)),
            lines: m
                .lines
                .into_iter()
                .map(|l| AnnotatedLine {
                    text: l.text,
                    lower_file: l.lower_file,
                    lower_rev: l.lower_rev,
                    lower_change: l.lower_change,
                    upper_rev: l.upper_rev,
                    upper_change: l.upper_change,
                    user: l.user,
                    time: l.time,
                })
                .collect(),
        })
    }))
}
