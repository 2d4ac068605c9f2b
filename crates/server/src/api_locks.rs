//! The `Lock` and `Unlock` RPCs: locking opened files (`p4 lock`, `unlock`).

use crate::access::authorize;
use crate::identity::Peer;
use crate::streams::blocking;
use keel_core::ChangeRef;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{FileInfo, Service};
use std::sync::Arc;
use tonic::Status;

pub(crate) async fn lock(
    service: &Arc<Service>,
    peer: &Peer,
    req: pb::LockRequest,
) -> Result<Vec<FileInfo>, Status> {
    let who = authorize(service, peer, req.caller, command::LOCK)?;
    let svc = service.clone();
    let change = req
        .filter_change
        .then_some(ChangeRef::from_number(req.change));
    blocking(move || svc.lock(&who, &req.files, change)).await
}

pub(crate) async fn unlock(
    service: &Arc<Service>,
    peer: &Peer,
    req: pb::UnlockRequest,
) -> Result<Vec<FileInfo>, Status> {
    let who = authorize(service, peer, req.caller, command::UNLOCK)?;
    let svc = service.clone();
    let change = req
        .filter_change
        .then_some(ChangeRef::from_number(req.change));
    if req.orphaned {
        return blocking(move || svc.unlock_orphaned(&who, &req.files)).await;
    }
    blocking(move || svc.unlock(&who, &req.files, change, req.force)).await
}
