//! The `Undo` RPC: the service's undo, one file record per file it opens.

use crate::access::authorize;
use crate::convert::file;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Sink, Streams};
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{Service, UndoRequest};
use std::sync::Arc;
use tonic::Status;

pub(crate) fn undo(
    svc: Arc<Service>,
    streams: &Streams,
    peer: &Peer,
    req: pb::UndoRequest,
) -> Result<ResponseStream<pb::FileRecord>, Status> {
    let who = authorize(&svc, peer, req.caller.clone(), command::UNDO)?;
    let request = UndoRequest {
        files: req.files,
        preview: req.preview,
        change: req.change,
    };
    Ok(streams.spawn(move |sink: &Sink<pb::FileRecord>| {
        // The files are opened before the first record is sent: a client that stops reading
        // does not stop the undo part way.
        let mut listening = true;
        svc.undo(&who, &request, &mut |f| {
            listening = listening && sink.send(file(f)).is_ok();
            Ok(())
        })
    }))
}
