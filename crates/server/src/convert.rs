//! Translation between wire messages and service values; wire types stop here.

use keel_proto::v1 as pb;
use keel_service::{Caller, ChangeInfo, DepotInfo, FileInfo, ServiceError, WorkspaceSpec};
use tonic::Status;

/// Maps a service error to a gRPC status carrying its message.
pub(crate) fn status(e: ServiceError) -> Status {
    let message = e.to_string();
    match e {
        ServiceError::NotFound(_) => Status::not_found(message),
        ServiceError::Invalid(_) => Status::invalid_argument(message),
        ServiceError::Precondition(_) => Status::failed_precondition(message),
        ServiceError::AlreadyExists(_) => Status::already_exists(message),
        ServiceError::DiskFull(_) => Status::resource_exhausted(message),
        ServiceError::Cancelled => Status::cancelled(message),
        ServiceError::Store(_) | ServiceError::Blob(_) => {
            tracing::error!(error = %message, "internal error");
            Status::internal(message)
        }
    }
}

pub(crate) fn caller(c: Option<pb::Caller>) -> Result<Caller, Status> {
    let c = c.ok_or_else(|| Status::invalid_argument("request has no caller (user, workspace)"))?;
    if c.user.is_empty() {
        return Err(Status::invalid_argument("request has no user"));
    }
    Ok(Caller {
        user: c.user,
        workspace: c.workspace,
        host: c.host,
    })
}

pub(crate) fn file(f: FileInfo) -> pb::FileRecord {
    pb::FileRecord {
        depot_file: f.depot_file,
        client_file: f.client_file,
        head_rev: f.head_rev,
        head_change: f.head_change,
        head_action: f.head_action,
        head_type: f.head_type,
        head_time: f.head_time.max(0) as u64,
        head_size: f.head_size,
        head_digest: f.head_digest,
        head_md5: f.head_md5,
        have_rev: f.have_rev,
        action: f.action,
        change: f.change,
        file_type: f.file_type,
        user: f.user,
        workspace: f.workspace,
        move_file: f.move_file,
        description: f.description,
        exclusive_held: f.exclusive_held,
        other_open: f.other_open,
        message: f.message,
        source_file: f.source_file,
        source_start: f.source_start,
        source_end: f.source_end,
        base_file: f.base_file,
        base_rev: f.base_rev,
        base_digest: f.base_digest,
        lazy_digest: f.lazy_digest,
        unresolved: f.unresolved,
    }
}

pub(crate) fn change(c: ChangeInfo) -> pb::Change {
    pb::Change {
        change: c.change,
        status: c.status,
        user: c.user,
        workspace: c.workspace,
        description: c.description,
        time: c.time.max(0) as u64,
    }
}

pub(crate) fn depot(d: DepotInfo) -> pb::Depot {
    pb::Depot {
        name: d.name,
        kind: d.kind,
        created: d.created.max(0) as u64,
        owner: d.owner,
        description: d.description,
    }
}

pub(crate) fn workspace_to_wire(w: WorkspaceSpec) -> pb::Workspace {
    pb::Workspace {
        name: w.name,
        owner: w.owner,
        host: w.host,
        root: w.root,
        description: w.description,
        options: w.options,
        view: w.view,
        updated: w.updated.max(0) as u64,
        accessed: w.accessed.max(0) as u64,
    }
}

pub(crate) fn workspace_from_wire(w: pb::Workspace) -> WorkspaceSpec {
    WorkspaceSpec {
        name: w.name,
        owner: w.owner,
        host: w.host,
        root: w.root,
        description: w.description,
        options: w.options,
        view: w.view,
        updated: 0,
        accessed: 0,
    }
}
