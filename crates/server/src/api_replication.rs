//! The primary's side of replication: `Journal` streams committed journal records from a
//! position on (waiting for new ones, with heartbeats while idle), `Content` one blob's stored
//! bytes by digest.

use crate::convert::WireError;
use crate::streams::Sink;
use keel_proto::v1 as pb;
use keel_service::ServiceError;
use keel_store::journal::Journal;
use keel_store::journal::follow::{FollowError, FollowedRecord, Follower};
use keel_store::journal::format::Target;
use std::time::Duration;
use tonic::Code;

/// Why a journal stream ended.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JournalStreamError {
    #[error(transparent)]
    Follow(#[from] FollowError),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl WireError for JournalStreamError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        let reason = |r: pb::ErrorReason| pb::ErrorDetail {
            reason: r as i32,
            ..Default::default()
        };
        match self {
            JournalStreamError::Follow(FollowError::Journal(_)) => {
                (Code::Internal, reason(pb::ErrorReason::Internal))
            }
            JournalStreamError::Follow(_) => (
                Code::FailedPrecondition,
                reason(pb::ErrorReason::Unspecified),
            ),
            JournalStreamError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, JournalStreamError::Service(e) if e.is_cancelled())
    }
}

/// Streams the journal from `from` until the client goes away.
pub(crate) fn stream_journal(
    journal: Option<&Journal>,
    from: u64,
    batch: usize,
    heartbeat: Duration,
    sink: &Sink<pb::JournalMessage>,
) -> Result<(), JournalStreamError> {
    let journal = journal.ok_or(FollowError::NoJournal)?;
    let mut follower = Follower::start(journal, from.max(1))?;
    loop {
        let committed = journal.committed_position();
        let records = follower.read(committed, batch.max(1))?;
        if records.is_empty() {
            // A heartbeat also finds out when the replica went away (the send fails).
            sink.send(pb::JournalMessage {
                committed_position: committed,
                record: None,
            })?;
            journal.wait_committed_beyond(follower.next_position().saturating_sub(1), heartbeat);
            continue;
        }
        for record in records {
            sink.send(pb::JournalMessage {
                committed_position: committed,
                record: Some(wire_record(record)),
            })?;
        }
    }
}

fn wire_record(r: FollowedRecord) -> pb::JournalRecord {
    let (kind, database) = match r.target {
        Target::Main => (1, String::new()),
        Target::Have(ws) => (2, ws),
        Target::DropHave(ws) => (3, ws),
    };
    pb::JournalRecord {
        position: r.position,
        kind,
        database,
        schema: u32::from(r.schema),
        changeset: r.changeset,
    }
}
