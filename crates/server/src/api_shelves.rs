//! Wire translation for shelves and obliterate, and the streamed upload step that Submit and
//! Shelve share.

use crate::convert::{file, status};
use crate::identity::Peer;
use crate::streams::{Sink, blocking};
use keel_core::ChangeRef;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{
    Caller, ObliterateError, Service, ServiceError, ShelveSession, UploadError, Uploads,
};
use std::sync::Arc;
use tonic::{Status, Streaming};

/// One message of a streamed upload, whichever RPC carries it.
pub(crate) enum UploadStep {
    Begin,
    File(String),
    Chunk(Vec<u8>),
    FileEnd {
        digest: String,
        size: u64,
        mod_time: i64,
    },
    Commit,
}

pub(crate) fn submit_step(msg: pb::SubmitMessage) -> Option<UploadStep> {
    use pb::submit_message::Body;
    Some(match msg.body? {
        Body::Begin(_) => UploadStep::Begin,
        Body::File(f) => UploadStep::File(f.depot_file),
        Body::Chunk(data) => UploadStep::Chunk(data),
        Body::FileEnd(end) => UploadStep::FileEnd {
            digest: end.digest,
            size: end.size,
            mod_time: end.mod_time,
        },
        Body::Commit(_) => UploadStep::Commit,
    })
}

fn shelve_step(msg: pb::ShelveMessage) -> Option<UploadStep> {
    use pb::shelve_message::Body;
    Some(match msg.body? {
        Body::Begin(_) => UploadStep::Begin,
        Body::File(f) => UploadStep::File(f.depot_file),
        Body::Chunk(data) => UploadStep::Chunk(data),
        Body::FileEnd(end) => UploadStep::FileEnd {
            digest: end.digest,
            size: end.size,
            mod_time: end.mod_time,
        },
        Body::Commit(_) => UploadStep::Commit,
    })
}

/// Feeds file/chunk/file_end messages into `session`'s uploads until `commit`, and hands the
/// stream and session back.
///
/// The loop runs on one blocking thread, waiting there for each message: every step may write
/// to the content store, and small files are hashed and compressed on the upload's own
/// threads (`keel_service::Uploads`), so no step holds an async worker.
pub(crate) async fn receive_uploads<M, S>(
    mut stream: Streaming<M>,
    mut session: S,
    uploads: fn(&mut S) -> &mut Uploads,
    svc: Arc<Service>,
    step: fn(M) -> Option<UploadStep>,
    what: &'static str,
) -> Result<(Streaming<M>, S), Status>
where
    M: Send + 'static,
    S: Send + 'static,
{
    let runtime = tokio::runtime::Handle::current();
    let counters = crate::monitor::current_counters();
    let faults = keel_store::mapped_read_faults();
    let (received, stream, session) = tokio::task::spawn_blocking(move || {
        let _command = keel_store::command::enter(counters.clone());
        let received = receive(
            &mut stream,
            uploads(&mut session),
            &svc,
            step,
            what,
            &runtime,
            &counters,
        );
        (received, stream, session)
    })
    .await
    .map_err(|e| Status::internal(format!("server task failed: {e}")))?;
    received?;
    // A snapshot read through the mapping (an open record looked up) may have hit an I/O error.
    if keel_store::mapped_read_faults() != faults {
        return Err(status(ServiceError::Store(
            keel_store::StoreError::MappedReadFault,
        )));
    }
    Ok((stream, session))
}

/// The receive loop of [`receive_uploads`], on its blocking thread.
fn receive<M>(
    stream: &mut Streaming<M>,
    uploads: &mut Uploads,
    svc: &Service,
    step: fn(M) -> Option<UploadStep>,
    what: &'static str,
    runtime: &tokio::runtime::Handle,
    counters: &Option<Arc<keel_store::command::CommandCounters>>,
) -> Result<(), Status> {
    loop {
        let msg = runtime.block_on(stream.message())?.ok_or_else(|| {
            Status::aborted(format!(
                "{what} stream ended before commit; nothing was changed"
            ))
        })?;
        let step = step(msg)
            .ok_or_else(|| Status::invalid_argument(format!("{what} message without a body")))?;
        let result = match step {
            UploadStep::Begin => Err(ServiceError::from(UploadError::SecondBegin {
                command: what,
            })),
            UploadStep::File(path) => uploads.begin_file(svc, &path),
            UploadStep::Chunk(data) => uploads.write_chunk(svc, &data),
            UploadStep::FileEnd {
                digest,
                size,
                mod_time,
            } => {
                if let Some(c) = counters {
                    c.add_file_received();
                }
                uploads.end_file_at(svc, &digest, size, mod_time)
            }
            UploadStep::Commit => return Ok(()),
        };
        result.map_err(status)?;
    }
}

/// The Shelve RPC: begin, uploads, commit.
pub(crate) async fn shelve(
    svc: Arc<Service>,
    peer: &Peer,
    mut stream: Streaming<pb::ShelveMessage>,
) -> Result<pb::ShelveReply, Status> {
    let first = stream
        .message()
        .await?
        .ok_or_else(|| Status::invalid_argument("empty shelve stream"))?;
    let Some(pb::shelve_message::Body::Begin(begin)) = first.body else {
        return Err(Status::invalid_argument("a shelve must start with `begin`"));
    };
    let who = crate::access::authorize(&svc, peer, begin.caller, command::SHELVE)?;
    let session = {
        let svc = svc.clone();
        blocking(move || {
            svc.shelve_begin(
                &who,
                ChangeRef::from_number(begin.change),
                &begin.files,
                begin.replace,
            )
        })
        .await?
    };
    let (_stream, session) = receive_uploads(
        stream,
        session,
        ShelveSession::uploads,
        svc.clone(),
        shelve_step,
        "shelve",
    )
    .await?;
    let (change, files) = blocking(move || session.commit(&svc)).await?;
    Ok(pb::ShelveReply {
        change: change.0,
        files: files.into_iter().map(file).collect(),
    })
}

/// Streams an obliterate's revision records, then its summary.
pub(crate) fn obliterate(
    svc: &Service,
    who: &Caller,
    req: &pb::ObliterateRequest,
    sink: &Sink<pb::ObliterateMessage>,
) -> Result<(), ObliterateError> {
    use pb::obliterate_message::Body;
    let totals = svc.obliterate(who, &req.files, req.execute, &mut |f| {
        sink.send(pb::ObliterateMessage {
            body: Some(Body::Revision(file(f))),
        })
    })?;
    sink.send(pb::ObliterateMessage {
        body: Some(Body::Summary(pb::ObliterateSummary {
            revisions: totals.revisions,
            integrations: totals.integrations,
            label_entries: totals.label_entries,
            blobs_deleted: totals.blobs_deleted,
            bytes_reclaimed: totals.bytes_reclaimed,
            executed: totals.executed,
        })),
    })?;
    Ok(())
}
