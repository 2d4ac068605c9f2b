//! `obliterate`: permanently remove files' history and reclaim their content (or, without
//! `execute`, report what would go).

use keel_proto::v1 as pb;
use keel_proto::v1::obliterate_message::Body;

use super::records::{QueryError, Records, Revision};
use crate::connect::Connection;

/// What an obliterate removed (or would remove).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObliterateSummary {
    pub revisions: u64,
    pub integrations: u64,
    pub label_entries: u64,
    /// Stored contents deleted and their bytes.
    pub blobs_deleted: u64,
    pub bytes_reclaimed: u64,
    /// False in report mode: nothing was removed.
    pub executed: bool,
}

/// What `obliterate` streams: each revision selected, then the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObliterateItem {
    /// A revision removed (`purged`) or, in report mode, that would be.
    Revision {
        revision: Revision,
        purged: bool,
    },
    Summary(ObliterateSummary),
}

/// Obliterates the revisions `paths` name when `execute`, else reports what would go.
pub async fn obliterate(
    conn: &Connection,
    paths: Vec<String>,
    execute: bool,
) -> Result<Records<ObliterateItem>, QueryError> {
    let stream = conn
        .reply(conn.client().obliterate(pb::ObliterateRequest {
            caller: conn.caller(),
            files: paths,
            execute,
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |message| {
        Some(match message.body? {
            Body::Revision(rev) => ObliterateItem::Revision {
                purged: rev.outcome() == pb::FileOutcome::Purged,
                revision: Revision::head_of(&rev),
            },
            Body::Summary(sum) => ObliterateItem::Summary(ObliterateSummary {
                revisions: sum.revisions,
                integrations: sum.integrations,
                label_entries: sum.label_entries,
                blobs_deleted: sum.blobs_deleted,
                bytes_reclaimed: sum.bytes_reclaimed,
                executed: sum.executed,
            }),
        })
    }))
}
