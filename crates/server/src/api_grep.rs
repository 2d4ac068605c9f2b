//! The `Grep` RPC: the service's grep stream, hits batched into messages.

use crate::access::authorize;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Sink, Streams};
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{
    GrepLineKind, GrepList, GrepOptions, GrepPart, GrepSkip, Service, ServiceError,
};
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// Most hits sent per message.
const HITS_PER_MESSAGE: usize = 512;
/// A message is sent once its hits hold this many bytes of text.
const BYTES_PER_MESSAGE: usize = 256 << 10;

pub(crate) fn grep(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::GrepRequest>,
) -> Result<Response<ResponseStream<pb::GrepMessage>>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller.clone(), command::GREP)?;
    let list = match pb::GrepList::try_from(req.list) {
        Ok(pb::GrepList::Lines) => GrepList::Lines,
        Ok(pb::GrepList::WithMatches) => GrepList::WithMatches,
        Ok(pb::GrepList::WithoutMatch) => GrepList::WithoutMatch,
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "unknown grep list mode {} (0: lines, 1: -l, 2: -L)",
                req.list
            )));
        }
    };
    let opts = GrepOptions {
        patterns: req.patterns,
        fixed_strings: req.fixed_strings,
        ignore_case: req.ignore_case,
        invert: req.invert,
        list,
        all_revisions: req.all_revisions,
        before: req.before,
        after: req.after,
        binary_as_text: req.binary_as_text,
    };
    let files = req.files;
    Ok(Response::new(streams.spawn(
        move |sink: &Sink<pb::GrepMessage>| {
            let mut pending = pb::GrepMessage::default();
            let mut bytes = 0;
            svc.grep(&who, &files, &opts, &mut |part| {
                let hit = hit(part);
                bytes += hit.text.len() + hit.depot_file.len();
                pending.hits.push(hit);
                if pending.hits.len() >= HITS_PER_MESSAGE || bytes >= BYTES_PER_MESSAGE {
                    bytes = 0;
                    sink.send(std::mem::take(&mut pending))?;
                }
                Ok::<(), ServiceError>(())
            })?;
            if !pending.hits.is_empty() {
                sink.send(pending)?;
            }
            Ok::<(), ServiceError>(())
        },
    )))
}

fn hit(part: GrepPart) -> pb::GrepHit {
    match part {
        GrepPart::Line {
            path,
            rev,
            line,
            kind,
            text,
        } => pb::GrepHit {
            depot_file: path,
            rev,
            line,
            kind: match kind {
                GrepLineKind::Match => pb::GrepKind::Match,
                GrepLineKind::Before => pb::GrepKind::Before,
                GrepLineKind::After => pb::GrepKind::After,
            } as i32,
            text,
        },
        GrepPart::File { path, rev } => pb::GrepHit {
            depot_file: path,
            rev,
            kind: pb::GrepKind::File as i32,
            ..Default::default()
        },
        GrepPart::Skipped { path, rev, why } => pb::GrepHit {
            depot_file: path,
            rev,
            kind: match why {
                GrepSkip::Binary => pb::GrepKind::Binary,
                GrepSkip::TooLarge => pb::GrepKind::TooLarge,
            } as i32,
            ..Default::default()
        },
    }
}
