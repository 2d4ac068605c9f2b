//! `admin checkpoint`: the server writes a checkpoint of its metadata (online) and rotates its
//! journal, reporting progress as it goes.

use keel_proto::v1 as pb;
use keel_proto::v1::checkpoint_message::Body;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What a finished checkpoint wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointDone {
    /// The checkpoint file on the server.
    pub path: String,
    /// N of `checkpoint.N`; later records start in `journal.N`.
    pub number: u64,
    pub databases: u64,
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// The journal file the rotation closed (empty: the journal is off).
    pub journal_closed: String,
    pub journal_position: u64,
    /// BLAKE3 of the file before its trailer, hex.
    pub digest: String,
}

/// What a checkpoint streams: progress reports, then (when it succeeded) what it wrote.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckpointEvent {
    Progress {
        rows: u64,
        bytes: u64,
        /// `main` or `have:WORKSPACE`.
        database: String,
    },
    Done(CheckpointDone),
}

/// Starts a checkpoint (super users); its events arrive as it runs.
pub async fn checkpoint(conn: &Connection) -> Result<Records<CheckpointEvent>, QueryError> {
    let stream = conn
        .reply(conn.client().checkpoint(pb::CheckpointRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |m| match m.body? {
        Body::Progress(p) => Some(CheckpointEvent::Progress {
            rows: p.rows,
            bytes: p.bytes,
            database: p.database,
        }),
        Body::Done(d) => Some(CheckpointEvent::Done(CheckpointDone {
            path: d.path,
            number: d.number,
            databases: d.databases,
            rows: d.rows,
            bytes: d.bytes,
            seconds: d.seconds,
            journal_closed: d.journal_closed,
            journal_position: d.journal_position,
            digest: d.digest,
        })),
    }))
}
