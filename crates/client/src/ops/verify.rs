//! `verify`: the server re-reads stored content, recomputes each revision's BLAKE3 digest and
//! reports damaged and missing files, with its running totals.

use keel_core::FileAction;
use keel_proto::v1 as pb;
use keel_proto::v1::verify_message::Body;

use super::records::{QueryError, Records};
use crate::actions;
use crate::connect::Connection;

/// What to verify.
#[derive(Clone, Debug, Default)]
pub struct VerifyQuery {
    /// Empty: every depot.
    pub paths: Vec<String>,
    /// Shelved files too.
    pub shelved: bool,
    /// Report only BAD and MISSING files.
    pub problems_only: bool,
}

/// How a file's stored content was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyStatus {
    Ok,
    /// Decodes to another digest and size.
    Mismatch {
        actual_digest: String,
        actual_size: u64,
    },
    /// The stored bytes are not a valid encoding (the decoder's message).
    Undecodable(String),
    /// The stored content cannot be read (the system's message).
    Unreadable(String),
    /// Damaged in a way this client does not know.
    Bad,
    Missing,
    /// A replica with on-demand content has not fetched it yet.
    NotFetched,
    /// A server that names no status.
    Unspecified,
}

/// One revision or shelved file checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedFile {
    pub depot_file: String,
    /// 0 for a shelved file.
    pub rev: u32,
    /// The pending change of a shelved file (`//path@=N`); 0 for a revision.
    pub shelved_in: u64,
    /// The change that submitted it (or holds the shelf).
    pub change: u64,
    pub action: Option<FileAction>,
    pub file_type: String,
    /// The BLAKE3 (hex) and size the metadata records.
    pub digest: String,
    pub size: u64,
    pub status: VerifyStatus,
}

/// Totals of a verify (so far, or at the end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyTotals {
    pub revisions: u64,
    pub shelved: u64,
    pub ok: u64,
    pub bad: u64,
    pub missing: u64,
    /// Content bytes checked (recorded sizes of the files found).
    pub bytes: u64,
    /// Distinct contents read (shared content once), and their stored bytes.
    pub contents_read: u64,
    pub stored_bytes_read: u64,
    pub not_fetched: u64,
}

/// What `verify` streams: files, progress now and then, the summary last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyItem {
    File(VerifiedFile),
    Progress(VerifyTotals),
    Summary(VerifyTotals),
}

fn totals(t: pb::VerifySummary) -> VerifyTotals {
    VerifyTotals {
        revisions: t.revisions,
        shelved: t.shelved,
        ok: t.ok,
        bad: t.bad,
        missing: t.missing,
        bytes: t.bytes,
        contents_read: t.contents_read,
        stored_bytes_read: t.stored_bytes_read,
        not_fetched: t.not_fetched,
    }
}

fn file(f: pb::VerifyRecord) -> VerifiedFile {
    let status = match (f.status(), f.damage()) {
        (pb::VerifyStatus::Ok, _) => VerifyStatus::Ok,
        (pb::VerifyStatus::Bad, pb::VerifyDamage::Mismatch) => VerifyStatus::Mismatch {
            actual_digest: f.actual_digest.clone(),
            actual_size: f.actual_size,
        },
        (pb::VerifyStatus::Bad, pb::VerifyDamage::Undecodable) => {
            VerifyStatus::Undecodable(f.reason.clone())
        }
        (pb::VerifyStatus::Bad, pb::VerifyDamage::Unreadable) => {
            VerifyStatus::Unreadable(f.reason.clone())
        }
        (pb::VerifyStatus::Bad, _) => VerifyStatus::Bad,
        (pb::VerifyStatus::Missing, _) => VerifyStatus::Missing,
        (pb::VerifyStatus::NotFetched, _) => VerifyStatus::NotFetched,
        (pb::VerifyStatus::Unspecified, _) => VerifyStatus::Unspecified,
    };
    VerifiedFile {
        action: actions::from_wire(f.action()),
        status,
        depot_file: f.depot_file,
        rev: f.rev,
        shelved_in: f.shelved_in,
        change: f.change,
        file_type: f.file_type,
        digest: f.digest,
        size: f.size,
    }
}

/// Verifies what `query` names, as the server streams its findings.
pub async fn verify(
    conn: &Connection,
    query: VerifyQuery,
) -> Result<Records<VerifyItem>, QueryError> {
    let stream = conn
        .reply(conn.client().verify(pb::VerifyRequest {
            caller: conn.caller(),
            files: query.paths,
            shelved: query.shelved,
            problems_only: query.problems_only,
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |m| {
        Some(match m.body? {
            Body::File(f) => VerifyItem::File(file(f)),
            Body::Progress(t) => VerifyItem::Progress(totals(t)),
            Body::Summary(t) => VerifyItem::Summary(totals(t)),
        })
    }))
}
