//! Wire translation for `verify`: each checked file, progress, and the totals last.

use crate::convert::file_action;
use crate::streams::Sink;
use keel_proto::v1 as pb;
use keel_service::{
    Caller, Damage, Service, ServiceError, VerifiedFile, VerifyEvent, VerifyOptions, VerifyOutcome,
    VerifyTotals,
};

/// Streams a verify's records and progress, then its summary.
pub(crate) fn verify(
    svc: &Service,
    who: &Caller,
    req: &pb::VerifyRequest,
    sink: &Sink<pb::VerifyMessage>,
) -> Result<(), ServiceError> {
    use pb::verify_message::Body;
    let options = VerifyOptions {
        shelved: req.shelved,
        problems_only: req.problems_only,
    };
    let totals = svc.verify(who, &req.files, options, &mut |event| {
        let body = match event {
            VerifyEvent::File(f) => Body::File(record(f)),
            VerifyEvent::Progress(t) => Body::Progress(summary(&t)),
        };
        sink.send(pb::VerifyMessage { body: Some(body) })
    })?;
    sink.send(pb::VerifyMessage {
        body: Some(Body::Summary(summary(&totals))),
    })
}

fn record(verified: VerifiedFile) -> pb::VerifyRecord {
    let VerifiedFile { file, outcome } = verified;
    let mut out = pb::VerifyRecord {
        depot_file: file.depot_file.into_string(),
        rev: file.rev,
        shelved_in: file.shelved_in.map_or(0, |c| c.0),
        change: file.change.0,
        action: file_action(Some(file.action)) as i32,
        file_type: file.file_type.to_string(),
        digest: file.digest.to_hex(),
        size: file.size,
        ..pb::VerifyRecord::default()
    };
    let (status, damage) = match outcome {
        VerifyOutcome::Ok => (pb::VerifyStatus::Ok, pb::VerifyDamage::Unspecified),
        VerifyOutcome::Missing => (pb::VerifyStatus::Missing, pb::VerifyDamage::Unspecified),
        VerifyOutcome::NotFetched => (pb::VerifyStatus::NotFetched, pb::VerifyDamage::Unspecified),
        VerifyOutcome::Bad(Damage::Mismatch { actual, size }) => {
            out.actual_digest = actual.to_hex();
            out.actual_size = size;
            (pb::VerifyStatus::Bad, pb::VerifyDamage::Mismatch)
        }
        VerifyOutcome::Bad(Damage::Undecodable { reason }) => {
            out.reason = reason;
            (pb::VerifyStatus::Bad, pb::VerifyDamage::Undecodable)
        }
        VerifyOutcome::Bad(Damage::Unreadable { reason }) => {
            out.reason = reason;
            (pb::VerifyStatus::Bad, pb::VerifyDamage::Unreadable)
        }
    };
    out.status = status as i32;
    out.damage = damage as i32;
    out
}

fn summary(t: &VerifyTotals) -> pb::VerifySummary {
    pb::VerifySummary {
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
