//! The job RPCs (`jobspec`, `job`, `jobs`, `fix`, `fixes`): requests to service calls, service
//! values and refusals to the wire.

use crate::access::authorize;
use crate::convert::WireError;
use crate::identity::Peer;
use crate::streams::{ResponseStream, Streams, blocking};
use keel_core::ChangeNumber;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{
    FixRow, FixesQuery, JobInfo, JobSpecInfo, JobsError, JobsQuery, Service, ServiceError,
};
use std::sync::Arc;
use tonic::{Code, Request, Response, Status};

type Reply<T> = Result<Response<T>, Status>;

fn spec_to_wire(s: JobSpecInfo) -> pb::JobSpecForm {
    pb::JobSpecForm {
        text: s.text,
        updated: s.updated.max(0) as u64,
    }
}

fn job_to_wire(j: JobInfo) -> pb::Job {
    pb::Job {
        name: j.name,
        fields: j
            .fields
            .into_iter()
            .map(|(name, value)| pb::JobField { name, value })
            .collect(),
        updated: j.updated.max(0) as u64,
        accessed: j.accessed.max(0) as u64,
        exists: j.exists,
    }
}

fn fix_to_wire(f: FixRow) -> pb::FixEntry {
    pb::FixEntry {
        job: f.job,
        change: f.change.0,
        user: f.user,
        workspace: f.workspace,
        date: f.date.max(0) as u64,
        status: f.status,
    }
}

impl WireError for JobsError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let on = |code, reason: R, path: &str| {
            (
                code,
                pb::ErrorDetail {
                    reason: reason as i32,
                    path: path.to_string(),
                    ..Default::default()
                },
            )
        };
        match self {
            JobsError::BadSpec(_) => on(Code::InvalidArgument, R::BadSpec, "jobspec"),
            JobsError::BadJob { name, .. } => on(Code::InvalidArgument, R::BadSpec, name),
            JobsError::BadExpression(_) | JobsError::BadStatus { .. } => {
                on(Code::InvalidArgument, R::BadArgument, "")
            }
            JobsError::NoSuch { name } => on(Code::NotFound, R::NoSuchSpec, name),
            JobsError::NoSuchFix { job, change } => (
                Code::NotFound,
                pb::ErrorDetail {
                    change: change.0,
                    ..on(Code::NotFound, R::NoSuchSpec, job).1
                },
            ),
            JobsError::HasFixes { name, change, .. } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    change: change.0,
                    ..on(Code::FailedPrecondition, R::BadSpec, name).1
                },
            ),
            JobsError::SpecNeedsSuper { .. } | JobsError::ForceNeedsAdmin { .. } => {
                on(Code::PermissionDenied, R::NotPermitted, "")
            }
            JobsError::NoFreeNumber { .. } => on(Code::FailedPrecondition, R::SpecExists, ""),
            JobsError::StoredSpec(_) => on(Code::Internal, R::Internal, ""),
            JobsError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, JobsError::Service(e) if e.is_cancelled())
    }
}

pub(crate) async fn get_job_spec(
    svc: &Arc<Service>,
    req: Request<pb::GetJobSpecRequest>,
) -> Reply<pb::JobSpecForm> {
    let who = authorize(
        svc,
        &Peer::of(&req),
        req.into_inner().caller,
        command::GET_JOB_SPEC,
    )?;
    let svc = svc.clone();
    let spec = blocking(move || svc.job_spec(&who)).await?;
    Ok(Response::new(spec_to_wire(spec)))
}

pub(crate) async fn save_job_spec(
    svc: &Arc<Service>,
    req: Request<pb::SaveJobSpecRequest>,
) -> Reply<pb::JobSpecForm> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::SAVE_JOB_SPEC)?;
    let svc = svc.clone();
    let spec = blocking(move || svc.save_job_spec(&who, &req.text)).await?;
    Ok(Response::new(spec_to_wire(spec)))
}

pub(crate) async fn get_job(svc: &Arc<Service>, req: Request<pb::GetJobRequest>) -> Reply<pb::Job> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::GET_JOB)?;
    let svc = svc.clone();
    let job = blocking(move || svc.get_job(&who, &req.name)).await?;
    Ok(Response::new(job_to_wire(job)))
}

pub(crate) async fn save_job(
    svc: &Arc<Service>,
    req: Request<pb::SaveJobRequest>,
) -> Reply<pb::Job> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::SAVE_JOB)?;
    let fields = req.fields.into_iter().map(|f| (f.name, f.value)).collect();
    let svc = svc.clone();
    let job = blocking(move || svc.save_job(&who, fields, req.force)).await?;
    Ok(Response::new(job_to_wire(job)))
}

pub(crate) async fn delete_job(
    svc: &Arc<Service>,
    req: Request<pb::DeleteJobRequest>,
) -> Reply<pb::DeleteJobReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::DELETE_JOB)?;
    let svc = svc.clone();
    blocking(move || svc.delete_job(&who, &req.name)).await?;
    Ok(Response::new(pb::DeleteJobReply {}))
}

pub(crate) fn list_jobs(
    svc: &Arc<Service>,
    streams: &Streams,
    req: Request<pb::ListJobsRequest>,
) -> Reply<ResponseStream<pb::Job>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::LIST_JOBS)?;
    let query = JobsQuery {
        expression: req.expression,
        max: req.max,
        reverse: req.reverse,
        files: req.files,
        include_integrated: req.include_integrated,
    };
    let svc = svc.clone();
    Ok(Response::new(streams.spawn(move |sink| {
        svc.jobs(&who, &query, &mut |j| sink.send(job_to_wire(j)))
    })))
}

pub(crate) async fn fix(svc: &Arc<Service>, req: Request<pb::FixRequest>) -> Reply<pb::FixReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::FIX)?;
    if req.change == 0 {
        return Err(crate::convert::status(ServiceError::BadArgument {
            arg: "-c".into(),
            reason: "fix needs a numbered change".into(),
        }));
    }
    let svc = svc.clone();
    let fixes = blocking(move || {
        svc.fix(
            &who,
            ChangeNumber(req.change),
            req.jobs,
            &req.status,
            req.delete,
        )
    })
    .await?;
    Ok(Response::new(pb::FixReply {
        fixes: fixes.into_iter().map(fix_to_wire).collect(),
    }))
}

pub(crate) fn list_fixes(
    svc: &Arc<Service>,
    streams: &Streams,
    req: Request<pb::ListFixesRequest>,
) -> Reply<ResponseStream<pb::FixEntry>> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(svc, &peer, req.caller, command::LIST_FIXES)?;
    let query = FixesQuery {
        job: req.job,
        change: req.change,
        files: req.files,
        max: req.max,
    };
    let svc = svc.clone();
    Ok(Response::new(streams.spawn(move |sink| {
        svc.fixes(&who, &query, &mut |f| sink.send(fix_to_wire(f)))
    })))
}
