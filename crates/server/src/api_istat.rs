//! The `Istat` RPC (what needs merging between a source and a target, both ways) and the
//! `Prune` RPC (removing unmodified branched files).

use crate::access::authorize;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Streams, blocking};
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{IstatRequest, PendingFlow, PruneError, Service};
use std::sync::Arc;
use tonic::{Request, Response, Status};

fn flow(f: PendingFlow) -> pb::PendingFlow {
    pb::PendingFlow {
        changes: f.changes,
        newest_change: f.newest.map_or(0, |c| c.0),
    }
}

pub(crate) async fn istat(
    svc: Arc<Service>,
    req: Request<pb::IstatRequest>,
) -> Result<Response<pb::IstatReply>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::ISTAT)?;
    let query = IstatRequest {
        from: req.from,
        to: req.to,
        branch: req.branch,
        reverse: req.reverse,
    };
    let status = blocking(move || svc.istat(&who, &query)).await?;
    Ok(Response::new(pb::IstatReply {
        source: status.source,
        target: status.target,
        from_source: Some(flow(status.from_source)),
        to_source: Some(flow(status.to_source)),
    }))
}

pub(crate) fn prune(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::PruneRequest>,
) -> Result<Response<ResponseStream<pb::PruneMessage>>, Status> {
    use pb::prune_message::Body;
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::PRUNE)?;
    Ok(Response::new(streams.spawn(move |sink| {
        let totals = svc.prune(&who, &req.files, req.execute, &mut |f| {
            sink.send(pb::PruneMessage {
                body: Some(Body::File(pb::PrunedFile {
                    depot_file: f.path.to_string(),
                    rev: f.rev,
                    revisions: f.revisions,
                    from_file: f.from.to_string(),
                    from_rev: f.from_rev,
                })),
            })
        })?;
        sink.send(pb::PruneMessage {
            body: Some(Body::Summary(pb::ObliterateSummary {
                revisions: totals.revisions,
                integrations: totals.integrations,
                label_entries: totals.label_entries,
                blobs_deleted: totals.blobs_deleted,
                bytes_reclaimed: totals.bytes_reclaimed,
                executed: totals.executed,
            })),
        })?;
        Ok::<(), PruneError>(())
    })))
}
