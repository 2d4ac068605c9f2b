//! `typemap`: the table that gives files added without a type theirs, by depot path.

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;

/// One line of the typemap: files matching `pattern` get `file_type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypemapLine {
    /// A file type (`binary+l`), or modifiers alone (`+l`) over the detected type.
    pub file_type: String,
    /// A depot pattern; a leading `-` excludes files from the lines above.
    pub pattern: String,
}

fn from_wire(table: pb::TypemapTable) -> Vec<TypemapLine> {
    table
        .lines
        .into_iter()
        .map(|l| TypemapLine {
            file_type: l.r#type,
            pattern: l.pattern,
        })
        .collect()
}

/// The typemap, in table order (the last matching line decides).
pub async fn typemap(conn: &Connection) -> Result<Vec<TypemapLine>, QueryError> {
    let table = conn
        .reply(conn.client().get_typemap(pb::GetTypemapRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(from_wire(table))
}

/// Replaces the typemap (admins) with `lines` as a form holds them (`TYPE PATTERN`, a pattern
/// with spaces quoted); the server refuses the whole table over a bad line, naming it.
/// Returns the table as stored.
pub async fn save_typemap(
    conn: &Connection,
    lines: Vec<String>,
) -> Result<Vec<TypemapLine>, QueryError> {
    let table = conn
        .reply(conn.client().save_typemap(pb::SaveTypemapRequest {
            caller: conn.caller(),
            lines,
        }))
        .await?;
    Ok(from_wire(table))
}
