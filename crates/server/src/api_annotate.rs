//! The `Annotate` RPC: the service's annotation stream, lines batched into messages.

use crate::access::authorize;
use crate::convert::file;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Sink, Streams};
use keel_core::LineCompare;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{AnnotateFollow, AnnotateOptions, AnnotatePart, Service, ServiceError};
use std::sync::Arc;
use tonic::Status;

/// Most lines sent per message.
const LINES_PER_MESSAGE: usize = 512;
/// A message is sent once its lines hold this many bytes of text (long lines stay well under
/// the wire's message size limit).
const BYTES_PER_MESSAGE: usize = 256 << 10;

pub(crate) fn annotate(
    svc: Arc<Service>,
    streams: &Streams,
    peer: &Peer,
    req: pb::AnnotateRequest,
) -> Result<ResponseStream<pb::AnnotateMessage>, Status> {
    let who = authorize(&svc, peer, req.caller.clone(), command::ANNOTATE)?;
    let opts = AnnotateOptions {
        all: req.all,
        follow: match req.follow() {
            pb::AnnotateFollow::None => AnnotateFollow::None,
            pb::AnnotateFollow::Branches => AnnotateFollow::Branches,
            pb::AnnotateFollow::All => AnnotateFollow::All,
        },
        binary_as_text: req.binary_as_text,
        compare: match req.whitespace() {
            pb::AnnotateWhitespace::Exact => LineCompare::Exact,
            pb::AnnotateWhitespace::LineEndings => LineCompare::LineEndings,
            pb::AnnotateWhitespace::Changes => LineCompare::WhitespaceChanges,
            pb::AnnotateWhitespace::All => LineCompare::AllWhitespace,
        },
    };
    Ok(streams.spawn(move |sink: &Sink<pb::AnnotateMessage>| {
        let mut pending = pb::AnnotateMessage::default();
        let mut bytes = 0;
        let flush =
            |pending: &mut pb::AnnotateMessage, bytes: &mut usize| -> Result<(), ServiceError> {
                *bytes = 0;
                if pending.file.is_none() && pending.lines.is_empty() {
                    return Ok(());
                }
                sink.send(std::mem::take(pending))
            };
        svc.annotate(&who, &req.files, opts, &mut |part| match part {
            AnnotatePart::File { info, binary } => {
                flush(&mut pending, &mut bytes)?;
                pending.file = Some(file(*info));
                pending.binary = binary;
                Ok(())
            }
            AnnotatePart::Line(line) => {
                bytes += line.text.len();
                pending.lines.push(pb::AnnotateLine {
                    text: line.text,
                    lower_file: line.lower.path.to_string(),
                    lower_rev: line.lower.rev,
                    lower_change: line.lower.change.0,
                    upper_rev: line.upper.rev,
                    upper_change: line.upper.change.0,
                    user: line.lower.user.clone(),
                    time: line.lower.time.max(0) as u64,
                });
                if pending.lines.len() >= LINES_PER_MESSAGE || bytes >= BYTES_PER_MESSAGE {
                    flush(&mut pending, &mut bytes)?;
                }
                Ok(())
            }
        })?;
        flush(&mut pending, &mut bytes)
    }))
}
