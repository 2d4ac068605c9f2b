//! The monitor RPCs: the running commands (`monitor show`) and terminating one (`monitor
//! terminate`), answered from the registry the observing layer keeps.

use crate::access::authorize;
use crate::identity::Peer;
use crate::monitor::{Registry, Running};
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{MonitorAccess, Service};
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub(crate) async fn show(
    service: &Arc<Service>,
    registry: &Registry,
    req: Request<pb::MonitorShowRequest>,
) -> Result<Response<pb::MonitorShowReply>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(service, &peer, req.caller, command::MONITOR_SHOW)?;
    let details = req.all || req.long;
    if details {
        service
            .may_monitor(&who, MonitorAccess::Details)
            .map_err(crate::convert::status)?;
    }
    let commands = registry
        .running()
        .iter()
        .map(|run| to_wire(run, req.all, req.long))
        .collect();
    Ok(Response::new(pb::MonitorShowReply { commands }))
}

pub(crate) async fn terminate(
    service: &Arc<Service>,
    registry: &Registry,
    req: Request<pb::MonitorTerminateRequest>,
) -> Result<Response<pb::RunningCommand>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(service, &peer, req.caller, command::MONITOR_TERMINATE)?;
    service
        .may_monitor(&who, MonitorAccess::Terminate)
        .map_err(crate::convert::status)?;
    let run = registry.terminate(req.id, &who.user).ok_or_else(|| {
        Status::not_found(format!(
            "no command {} is running (see monitor show)",
            req.id
        ))
    })?;
    tracing::info!(
        id = run.id,
        command = %run.command,
        by = %who.user,
        "command terminated"
    );
    Ok(Response::new(to_wire(&run, true, true)))
}

/// A running command as the wire shows it: arguments with `all`, details with `long`.
fn to_wire(run: &Running, all: bool, long: bool) -> pb::RunningCommand {
    let who = run.who.get().cloned().unwrap_or_default();
    let c = &run.counters;
    let mut out = pb::RunningCommand {
        id: run.id,
        user: who.user,
        command: run.command.clone(),
        elapsed_ms: run.elapsed().as_millis() as u64,
        state: c.state().name().to_string(),
        terminated: run.is_terminated(),
        ..Default::default()
    };
    if all || long {
        out.args = run.args();
    }
    if long {
        use std::sync::atomic::Ordering::Relaxed;
        out.workspace = who.workspace;
        out.host = who.host;
        out.address = run.address.get().map(|a| a.to_string()).unwrap_or_default();
        out.program = run.program.clone();
        out.writer_wait_ms = c.writer_wait().as_millis() as u64;
        out.writer_hold_ms = c.writer_hold().as_millis() as u64;
        out.bytes_sent = run.bytes_out.load(Relaxed);
        out.bytes_received = run.bytes_in.load(Relaxed);
    }
    out
}
