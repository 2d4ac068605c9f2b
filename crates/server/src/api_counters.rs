//! The counter and key RPCs (`GetCounter`, `UpdateCounter`, `ListCounters`), the review
//! daemon's (`Review`, `Reviews`), `Interchanges`, `Cstat`, `Sizes`, and the wire form of
//! their refusals.

use crate::access::authorize;
use crate::convert::WireError;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Streams, blocking};
use keel_core::ChangeNumber;
use keel_core::CounterSpace;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{
    CounterOp, CounterOpError, CounterUpdate, IntegrateRequest, ReviewFrom, Service,
};
use std::sync::Arc;
use tonic::{Code, Request, Response, Status};

type Reply<T> = Result<Response<T>, Status>;

fn space(wire: i32) -> Result<CounterSpace, Status> {
    match pb::CounterSpace::try_from(wire) {
        Ok(pb::CounterSpace::Counter) => Ok(CounterSpace::Counter),
        Ok(pb::CounterSpace::Key) => Ok(CounterSpace::Key),
        Err(_) => Err(Status::invalid_argument(format!(
            "unknown counter space {wire} (0: counters, 1: keys)"
        ))),
    }
}

fn update_to_wire(u: CounterUpdate) -> pb::CounterValue {
    pb::CounterValue {
        name: u.name,
        deleted: u.value.is_none(),
        value: u.value.unwrap_or_else(|| "0".to_string()),
        previous: u.previous,
    }
}

pub(crate) async fn get(
    svc: Arc<Service>,
    req: Request<pb::GetCounterRequest>,
) -> Reply<pb::CounterValue> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::GET_COUNTER)?;
    let space = space(req.space)?;
    let value = blocking(move || {
        svc.get_counter(&who, space, &req.name)
            .map(|v| (req.name, v))
    })
    .await?;
    Ok(Response::new(pb::CounterValue {
        name: value.0,
        value: value.1,
        ..Default::default()
    }))
}

pub(crate) async fn update(
    svc: Arc<Service>,
    req: Request<pb::UpdateCounterRequest>,
) -> Reply<pb::CounterValue> {
    use pb::update_counter_request::Op;
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::UPDATE_COUNTER)?;
    let space = space(req.space)?;
    let op = match req.op {
        Some(Op::Set(value)) => CounterOp::Set(value),
        Some(Op::Delete(true)) => CounterOp::Delete,
        Some(Op::Increment(true)) => CounterOp::Increment,
        Some(Op::CompareAndSet(c)) => CounterOp::CompareAndSet {
            from: c.from,
            to: c.to,
        },
        Some(Op::Delete(false) | Op::Increment(false)) | None => {
            return Err(Status::invalid_argument(
                "UpdateCounter needs an operation: set, delete, increment or compare_and_set",
            ));
        }
    };
    let force = req.force;
    let name = req.name;
    let update = blocking(move || svc.update_counter(&who, space, &name, op, force)).await?;
    tracing::info!(counter = update.name, ?space, "counter updated");
    Ok(Response::new(update_to_wire(update)))
}

pub(crate) fn list(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::ListCountersRequest>,
) -> Reply<ResponseStream<pb::CounterValue>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::LIST_COUNTERS)?;
    let space = space(req.space)?;
    let filter = (!req.filter.is_empty()).then_some(req.filter);
    let max = usize::try_from(req.max).unwrap_or(usize::MAX);
    Ok(Response::new(streams.spawn(move |sink| {
        svc.list_counters(&who, space, filter.as_deref(), max, &mut |name, value| {
            sink.send(pb::CounterValue {
                name,
                value,
                ..Default::default()
            })
        })
    })))
}

pub(crate) fn review(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::ReviewRequest>,
) -> Reply<ResponseStream<pb::ReviewChange>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::REVIEW)?;
    let from = match (req.change, req.counter.is_empty()) {
        (0, true) => ReviewFrom::All,
        (n, true) => ReviewFrom::Change(ChangeNumber(n)),
        (0, false) => ReviewFrom::Counter(req.counter),
        (_, false) => {
            return Err(Status::invalid_argument(
                "Review takes a change or a counter, not both (set the counter with UpdateCounter)",
            ));
        }
    };
    Ok(Response::new(streams.spawn(move |sink| {
        svc.review_changes(&who, from, &mut |c| {
            sink.send(pb::ReviewChange {
                change: c.change.0,
                user: c.user,
                email: c.email,
                full_name: c.full_name,
            })
        })
    })))
}

pub(crate) fn reviews(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::ReviewsRequest>,
) -> Reply<ResponseStream<pb::User>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::REVIEWS)?;
    let change = (req.change != 0).then_some(ChangeNumber(req.change));
    Ok(Response::new(streams.spawn(move |sink| {
        svc.reviewers(&who, change, &req.files, &mut |u| {
            sink.send(pb::User {
                name: u.name,
                email: u.email,
                full_name: u.full_name,
                r#type: u.user_type.as_str().to_string(),
                updated: u.updated,
                accessed: u.accessed,
                // As `users` shows it: never whether a password is set, nor the field.
                has_password: false,
                reviews: Vec::new(),
            })
        })
    })))
}

pub(crate) fn interchanges(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::InterchangesRequest>,
) -> Reply<ResponseStream<pb::Interchange>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::INTERCHANGES)?;
    let with_files = req.with_files;
    let query = IntegrateRequest {
        from: req.from,
        to: req.to,
        branch: req.branch,
        reverse: req.reverse,
        files: req.files,
        preview: true,
        change: 0,
    };
    Ok(Response::new(streams.spawn(move |sink| {
        svc.interchanges(&who, &query, with_files, &mut |i| {
            sink.send(pb::Interchange {
                change: Some(crate::convert::change(i.change)),
                files: i
                    .files
                    .into_iter()
                    .map(|(path, rev)| format!("{path}#{rev}"))
                    .collect(),
            })
        })
    })))
}

pub(crate) fn cstat(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::CstatRequest>,
) -> Reply<ResponseStream<pb::ChangeSyncState>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::CSTAT)?;
    Ok(Response::new(streams.spawn(move |sink| {
        svc.cstat(&who, &req.files, &mut |change, state| {
            sink.send(pb::ChangeSyncState {
                change: change.0,
                status: state.as_str().to_string(),
            })
        })
    })))
}

pub(crate) fn sizes(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::SizesRequest>,
) -> Reply<ResponseStream<pb::SizeEntry>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::SIZES)?;
    let options = keel_service::SizesOptions {
        all_revisions: req.all_revisions,
        summary: req.summary,
        block_size: req.block_size,
        once: req.once,
    };
    Ok(Response::new(streams.spawn(move |sink| {
        svc.sizes(&who, &req.files, options, &mut |e| {
            sink.send(pb::SizeEntry {
                path: e.path,
                rev: e.rev,
                files: e.files,
                bytes: e.bytes,
                blocks: e.blocks,
            })
        })
    })))
}

impl WireError for CounterOpError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let on = |reason: R, name: &str| pb::ErrorDetail {
            reason: reason as i32,
            path: name.to_string(),
            ..Default::default()
        };
        match self {
            CounterOpError::Invalid(_) => (Code::InvalidArgument, on(R::BadCounter, "")),
            CounterOpError::ChangeCounter => {
                (Code::FailedPrecondition, on(R::CounterProtected, "change"))
            }
            CounterOpError::Protected { name } => {
                (Code::FailedPrecondition, on(R::CounterProtected, name))
            }
            CounterOpError::ForceNeedsSuper { name } => {
                (Code::PermissionDenied, on(R::NotPermitted, name))
            }
            CounterOpError::Denied { needed, .. } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    action: needed.to_string(),
                    ..on(R::PermissionDenied, "")
                },
            ),
            CounterOpError::NotExpected { name, .. } => {
                (Code::FailedPrecondition, on(R::CounterNotExpected, name))
            }
            CounterOpError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, CounterOpError::Service(e) if e.is_cancelled())
    }
}
