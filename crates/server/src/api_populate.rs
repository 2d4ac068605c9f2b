//! The `Populate` RPC: branch files into the depot as one submitted change.

use crate::access::authorize;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Streams};
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{IntegrateError, PopulateRequest, Service, ServiceError};
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub(crate) fn populate(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::PopulateRequest>,
) -> Result<Response<ResponseStream<pb::PopulatedFile>>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller.clone(), command::POPULATE)?;
    let request = PopulateRequest {
        from: req.from,
        to: req.to,
        branch: req.branch,
        reverse: req.reverse,
        files: req.files,
        description: req.description,
        preview: req.preview,
        force: req.force,
        max: None,
    };
    Ok(Response::new(streams.spawn(move |sink| {
        // The files are reported once the change is durable, each naming it.
        let mut files = Vec::new();
        let done = svc.populate(&who, &request, &mut |f| {
            files.push(f);
            Ok::<(), ServiceError>(())
        })?;
        let change = done.change.map_or(0, |c| c.0);
        for f in files {
            sink.send(pb::PopulatedFile {
                depot_file: f.target.to_string(),
                rev: f.target_rev,
                from_file: f.source.to_string(),
                from_rev: f.source_rev,
                action: f.action.to_string(),
                change,
            })?;
        }
        Ok::<(), IntegrateError>(())
    })))
}
