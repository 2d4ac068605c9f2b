//! `sizes`: revision sizes from the server's metadata, per revision or summed per path.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What `sizes` measures.
#[derive(Clone, Debug, Default)]
pub struct SizesQuery {
    pub paths: Vec<String>,
    /// Every revision in the range, not only the newest.
    pub all_revisions: bool,
    /// One total per path rather than one line per revision.
    pub summary: bool,
    /// Also count blocks of this many bytes (`None`: no blocks).
    pub block_size: Option<u64>,
    /// Count each stored content once (lazy copies add nothing).
    pub once: bool,
}

/// One revision's size, or one path's total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Size {
    /// The revision's file, or (a summary) the path asked.
    pub path: String,
    /// 0 in a summary.
    pub rev: u32,
    pub files: u64,
    pub bytes: u64,
    /// With a block size: how many blocks.
    pub blocks: u64,
}

/// The sizes `query` asks for, as the server streams them.
pub async fn sizes(conn: &Connection, query: SizesQuery) -> Result<Records<Size>, QueryError> {
    let stream = conn
        .reply(conn.client().sizes(pb::SizesRequest {
            caller: conn.caller(),
            files: query.paths,
            all_revisions: query.all_revisions,
            summary: query.summary,
            block_size: query.block_size.unwrap_or(0),
            once: query.once,
        }))
        .await?;
    Ok(Records::new(conn, stream, |e| {
        Ok(Size {
            path: e.path,
            rev: e.rev,
            files: e.files,
            bytes: e.bytes,
            blocks: e.blocks,
        })
    }))
}
