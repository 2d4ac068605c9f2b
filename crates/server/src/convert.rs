//! Translation between wire messages and service values; wire types stop here.

use keel_core::{
    ChangeNumber, ChangeStatus, DepotPath, Digest, FileAction, FileType, IntegEdge, IntegHow,
    TypeChange,
};
use keel_proto::v1 as pb;
use keel_service::{
    AccessError, AuthError, ChangeError, ChangeInfo, DepotError, DepotInfo, FileInfo, FileOutcome,
    IntegInfo, IntegrateError, IntegrateMode, LabelError, ObliterateError, OpenAction, OpenError,
    ResolveOutcome, ServiceError, ShelveError, SpecError, SpecKind, SubmitError, SyncAction,
    SyncMark, UploadError, WorkspaceSpec,
};
use prost::Message;
use tonic::{Code, Status};

/// A service error as the wire carries it: the gRPC code and the machine-readable
/// [`pb::ErrorDetail`]; the message is the error's `Display`. This is the one place where
/// service errors meet gRPC (SEMANTICS.md, "Errors").
pub(crate) trait WireError: std::fmt::Display + Send + 'static {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail);
    /// The consumer went away: nothing to report.
    fn is_cancelled(&self) -> bool;
}

/// Maps a service error to a gRPC status carrying its message and an encoded `ErrorDetail`.
pub(crate) fn status(e: impl WireError) -> Status {
    let (code, detail) = e.code_and_detail();
    let message = e.to_string();
    if code == Code::Internal {
        tracing::error!(error = %message, "internal error");
    }
    Status::with_details(code, message, detail.encode_to_vec().into())
}

fn detail(reason: pb::ErrorReason) -> pb::ErrorDetail {
    pb::ErrorDetail {
        reason: reason as i32,
        ..Default::default()
    }
}

fn on_path(reason: pb::ErrorReason, path: &str) -> pb::ErrorDetail {
    pb::ErrorDetail {
        path: path.to_string(),
        ..detail(reason)
    }
}

fn on_change(reason: pb::ErrorReason, change: Option<ChangeNumber>) -> pb::ErrorDetail {
    pb::ErrorDetail {
        change: change.map_or(0, |c| c.0),
        ..detail(reason)
    }
}

impl WireError for ServiceError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let invalid = |reason, path: &str| (Code::InvalidArgument, on_path(reason, path));
        let not_found = |reason, path: &str| (Code::NotFound, on_path(reason, path));
        match self {
            ServiceError::NoSuchChange { change } => {
                (Code::NotFound, on_change(R::NoSuchChange, Some(*change)))
            }
            ServiceError::ChangeSubmitted { change } => (
                Code::FailedPrecondition,
                on_change(R::ChangeSubmitted, Some(*change)),
            ),
            ServiceError::ChangeOfOtherWorkspace { change, owner, .. } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    workspace: owner.clone(),
                    ..on_change(R::ChangeOfOtherWorkspace, Some(*change))
                },
            ),
            ServiceError::ExclusivelyOpened {
                path,
                user,
                workspace,
            } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    user: user.clone(),
                    workspace: workspace.clone(),
                    ..on_path(R::ExclusivelyOpened, path)
                },
            ),
            ServiceError::NotOpened { patterns } => {
                (Code::NotFound, on_path(R::NotOpened, patterns))
            }
            ServiceError::LockedElsewhere {
                path,
                user,
                workspace,
            } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    user: user.clone(),
                    workspace: workspace.clone(),
                    ..on_path(R::LockedElsewhere, path)
                },
            ),
            ServiceError::NotLocked { patterns } => {
                (Code::NotFound, on_path(R::NotLocked, patterns))
            }
            ServiceError::ShelvedFilesExist { change } => (
                Code::FailedPrecondition,
                on_change(R::ShelvedFilesExist, Some(*change)),
            ),
            ServiceError::NoWorkspace => (Code::InvalidArgument, detail(R::NoWorkspace)),
            ServiceError::WorkspaceNotOwned { name, owner, .. } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    workspace: name.clone(),
                    user: owner.clone(),
                    ..detail(R::WorkspaceNotOwned)
                },
            ),
            ServiceError::WorkspaceLocked { name, owner } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    workspace: name.clone(),
                    user: owner.clone(),
                    ..detail(R::SpecLocked)
                },
            ),
            ServiceError::ChangeOfOtherUser { change, owner } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    user: owner.clone(),
                    ..on_change(R::ChangeOfOtherUser, Some(*change))
                },
            ),
            ServiceError::NoSuchWorkspace { name } => (
                Code::NotFound,
                pb::ErrorDetail {
                    workspace: name.clone(),
                    ..detail(R::NoSuchWorkspace)
                },
            ),
            ServiceError::BadWorkspace { name, .. } => (
                Code::InvalidArgument,
                pb::ErrorDetail {
                    workspace: name.clone(),
                    ..detail(R::BadWorkspace)
                },
            ),
            ServiceError::UnknownRoot { arg, .. } => (Code::NotFound, on_path(R::UnknownRoot, arg)),
            ServiceError::NoSuchLabel { arg, .. } => (Code::NotFound, on_path(R::NoSuchLabel, arg)),
            ServiceError::HaveNeedsWorkspace { arg } => {
                (Code::InvalidArgument, on_path(R::HaveNeedsWorkspace, arg))
            }
            ServiceError::ContentPurged { path, .. } => {
                (Code::FailedPrecondition, on_path(R::ContentPurged, path))
            }
            ServiceError::Upload(UploadError::Worker { .. }) => {
                (Code::Internal, detail(R::Internal))
            }
            ServiceError::Upload(e) => {
                (Code::InvalidArgument, on_path(R::BadUpload, upload_path(e)))
            }
            ServiceError::BadArgument { arg, .. } => invalid(R::BadArgument, arg),
            ServiceError::ReservedName { path, .. } => invalid(R::BadArgument, path),
            ServiceError::NoFileArguments { .. } => {
                (Code::InvalidArgument, detail(R::NoFileArguments))
            }
            ServiceError::NoSuchFiles { arg } => not_found(R::NoSuchFiles, arg),
            ServiceError::OneFilePerSide { arg } => invalid(R::OneFilePerSide, arg),
            ServiceError::UndoConflict { path, .. } | ServiceError::UndoNotSynced { path, .. } => {
                (Code::FailedPrecondition, on_path(R::BadArgument, path))
            }
            ServiceError::UndoAlreadyOpened { path } => {
                (Code::FailedPrecondition, on_path(R::BadArgument, path))
            }
            ServiceError::UndoNotInView { path, .. } => invalid(R::BadArgument, path),
            ServiceError::TooLargeToAnnotate { file, .. } => {
                (Code::FailedPrecondition, on_path(R::BadArgument, file))
            }
            ServiceError::DirsPattern { arg } => invalid(R::DirsPattern, arg),
            ServiceError::OpenedNeedsWorkspace => {
                (Code::InvalidArgument, detail(R::OpenedNeedsWorkspace))
            }
            ServiceError::SourceKeepsChanging { workspace } => (
                Code::Aborted,
                pb::ErrorDetail {
                    workspace: workspace.clone(),
                    ..detail(R::Unspecified)
                },
            ),
            ServiceError::BadLabel { name, .. } => invalid(R::BadLabel, name),
            ServiceError::DeletedRevision { path, rev } => (
                Code::NotFound,
                pb::ErrorDetail {
                    rev: *rev,
                    ..on_path(R::DeletedRevision, path)
                },
            ),
            ServiceError::ContentMissing { file, .. } => not_found(R::ContentMissing, file),
            ServiceError::NoSuchContent { digest } => {
                not_found(R::ContentMissing, &digest.to_hex())
            }
            ServiceError::ContentUnreadable { file, .. } => {
                (Code::Internal, on_path(R::ContentUnreadable, file))
            }
            ServiceError::NotShelvedRevision { arg } => invalid(R::NotShelvedRevision, arg),
            ServiceError::BadShelvedChange { arg, .. } => invalid(R::BadShelvedChange, arg),
            ServiceError::NoSuchShelvedFiles { arg } => not_found(R::NoSuchShelvedFiles, arg),
            ServiceError::TriggerFailed(failure) => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    change: failure.change.unwrap_or(0),
                    ..on_path(R::TriggerFailed, &failure.name)
                },
            ),
            ServiceError::TriggersNeedSuper => {
                (Code::PermissionDenied, detail(R::TriggersNeedSuper))
            }
            ServiceError::ResolveOnReplica { file, .. } => {
                (Code::FailedPrecondition, on_path(R::ReadOnlyReplica, file))
            }
            ServiceError::MonitorNeedsSuper { user, .. }
            | ServiceError::TypemapNeedsSuper { user } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    user: user.clone(),
                    ..detail(R::NotPermitted)
                },
            ),
            ServiceError::PermissionDenied { file, needed } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    action: needed.as_str().to_string(),
                    ..on_path(R::PermissionDenied, file)
                },
            ),
            ServiceError::ContentDenied { .. } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    action: "read".to_string(),
                    ..detail(R::PermissionDenied)
                },
            ),
            ServiceError::CommandDenied { needed, .. } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    action: needed.as_str().to_string(),
                    ..detail(R::PermissionDenied)
                },
            ),
            ServiceError::RequestTooLarge { limit, .. } => (
                Code::ResourceExhausted,
                pb::ErrorDetail {
                    action: limit.to_string(),
                    ..detail(R::RequestTooLarge)
                },
            ),
            ServiceError::OverLimit { what, knob, .. } => (
                Code::InvalidArgument,
                pb::ErrorDetail {
                    action: knob.to_string(),
                    ..on_path(R::BadArgument, what)
                },
            ),
            ServiceError::DiskFull(_) => (Code::ResourceExhausted, detail(R::DiskFull)),
            ServiceError::Cancelled => (Code::Cancelled, detail(R::Cancelled)),
            ServiceError::Store(keel_store::StoreError::Terminated) => {
                (Code::Aborted, detail(R::Cancelled))
            }
            ServiceError::Store(keel_store::StoreError::ReadOnly { .. }) => {
                (Code::FailedPrecondition, detail(R::ReadOnlyReplica))
            }
            // The replica answers; its primary did not send the content (the message says why).
            ServiceError::ContentNotFetched { file, .. } => (
                Code::FailedPrecondition,
                on_path(R::ContentNotFetched, file),
            ),
            // Content met outside a named file's read (the message names the primary).
            ServiceError::Blob(keel_blob::BlobError::Unavailable { .. }) => {
                (Code::FailedPrecondition, detail(R::ContentNotFetched))
            }
            ServiceError::Store(_) | ServiceError::Blob(_) => (Code::Internal, detail(R::Internal)),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, ServiceError::Cancelled)
    }
}

/// The file an upload refusal concerns (empty when it is about the message order).
fn upload_path(e: &UploadError) -> &str {
    match e {
        UploadError::OutOfOrder { .. }
        | UploadError::SecondBegin { .. }
        | UploadError::Worker { .. } => "",
        UploadError::NotInChange { path }
        | UploadError::TakesNoContent { path, .. }
        | UploadError::BadDigest { path, .. }
        | UploadError::Damaged { path, .. }
        | UploadError::Unfinished { path }
        | UploadError::Missing { path } => path,
    }
}

impl WireError for OpenError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let precondition = |reason, path: &str| (Code::FailedPrecondition, on_path(reason, path));
        match self {
            OpenError::AlreadyOpened { path, current, .. } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    action: current.as_str().to_string(),
                    ..on_path(R::AlreadyOpened, path)
                },
            ),
            OpenError::AddNeedsFiles { arg } => {
                (Code::InvalidArgument, on_path(R::AddNeedsFiles, arg))
            }
            OpenError::MoveNeedsOneFile { arg } => {
                (Code::InvalidArgument, on_path(R::MoveNeedsOneFile, arg))
            }
            OpenError::NotInView { path } => (Code::InvalidArgument, on_path(R::NotInView, path)),
            OpenError::AddExisting { path, head_rev } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    rev: *head_rev,
                    ..on_path(R::AddExisting, path)
                },
            ),
            OpenError::NotOnClient { path } => precondition(R::NotOnClient, path),
            OpenError::NoSuchFiles { pattern } => {
                (Code::NotFound, on_path(R::NoSuchFiles, pattern))
            }
            OpenError::NothingToOpen { patterns, action } => (
                Code::NotFound,
                pb::ErrorDetail {
                    action: action.as_str().to_string(),
                    ..on_path(R::NothingToOpen, patterns)
                },
            ),
            OpenError::MoveNotOpened { path } => precondition(R::MoveNotOpened, path),
            OpenError::CannotMove { path, action } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    action: action.as_str().to_string(),
                    ..on_path(R::CannotMove, path)
                },
            ),
            OpenError::MoveOntoExisting { path } => precondition(R::MoveOntoExisting, path),
            OpenError::MoveTargetOpened { path } => precondition(R::MoveTargetOpened, path),
            OpenError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, OpenError::Service(e) if e.is_cancelled())
    }
}

/// A spec refusal's detail: a workspace's name in `workspace`, a branch's in `path`.
fn on_spec(reason: pb::ErrorReason, kind: SpecKind, name: &str) -> pb::ErrorDetail {
    match kind {
        SpecKind::Workspace => pb::ErrorDetail {
            workspace: name.to_string(),
            ..detail(reason)
        },
        SpecKind::Branch => on_path(reason, name),
    }
}

impl WireError for SpecError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        match self {
            SpecError::Invalid { kind, name, .. } => {
                (Code::InvalidArgument, on_spec(R::BadSpec, *kind, name))
            }
            SpecError::AlreadyExists { kind, name } => {
                (Code::AlreadyExists, on_spec(R::SpecExists, *kind, name))
            }
            SpecError::NameIsDepot { name } => (
                Code::AlreadyExists,
                on_spec(R::NameIsDepot, SpecKind::Workspace, name),
            ),
            SpecError::NoSuch { kind, name } => {
                (Code::NotFound, on_spec(R::NoSuchSpec, *kind, name))
            }
            SpecError::Locked { kind, name, owner } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    user: owner.clone(),
                    ..on_spec(R::SpecLocked, *kind, name)
                },
            ),
            SpecError::NotOwner { kind, name, owner } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    user: owner.clone(),
                    ..on_spec(R::WorkspaceNotOwned, *kind, name)
                },
            ),
            SpecError::OwnerNotCaller {
                kind, name, owner, ..
            } => (
                Code::PermissionDenied,
                pb::ErrorDetail {
                    user: owner.clone(),
                    ..on_spec(R::OwnerNotCaller, *kind, name)
                },
            ),
            SpecError::FilesOpened { name, path } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    workspace: name.clone(),
                    ..on_path(R::WorkspaceHasFiles, path)
                },
            ),
            SpecError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, SpecError::Service(e) if e.is_cancelled())
    }
}

impl WireError for ChangeError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        match self {
            ChangeError::DefaultChangelist => {
                (Code::InvalidArgument, detail(R::DeleteDefaultChangelist))
            }
            ChangeError::FilesOpened { change } => (
                Code::FailedPrecondition,
                on_change(R::ChangeHasFiles, Some(*change)),
            ),
            ChangeError::NoDescription => {
                (Code::InvalidArgument, detail(R::ChangeNeedsDescription))
            }
            ChangeError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, ChangeError::Service(e) if e.is_cancelled())
    }
}

impl WireError for IntegrateError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let invalid = |reason, path: &str| (Code::InvalidArgument, on_path(reason, path));
        let precondition = |reason, path: &str| (Code::FailedPrecondition, on_path(reason, path));
        match self {
            IntegrateError::NoMapping => (Code::InvalidArgument, detail(R::NoMapping)),
            IntegrateError::NoSuchBranch { name } => {
                (Code::NotFound, on_path(R::NoSuchBranch, name))
            }
            IntegrateError::BadBranchView { name, .. } => invalid(R::BadBranchView, name),
            IntegrateError::BadTarget { target, .. } => invalid(R::BadTarget, target),
            IntegrateError::BadMapping { from, to, .. } => {
                invalid(R::BadMapping, &format!("{from} {to}"))
            }
            IntegrateError::TargetRevision { target } => invalid(R::TargetRevision, target),
            IntegrateError::NotDepotSyntax { path, .. } => invalid(R::NotDepotSyntax, path),
            IntegrateError::NoSuchFiles { from } => {
                (Code::NotFound, on_path(R::NoSuchSource, from))
            }
            IntegrateError::AlreadyIntegrated { from, .. } => {
                precondition(R::AlreadyIntegrated, from)
            }
            IntegrateError::NotInView { path, workspace } => (
                Code::InvalidArgument,
                pb::ErrorDetail {
                    workspace: workspace.clone(),
                    ..on_path(R::TargetNotInView, path)
                },
            ),
            IntegrateError::AlreadyOpened { path, action } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    action: action.map(|a| a.as_str().to_string()).unwrap_or_default(),
                    ..on_path(R::TargetOpened, path)
                },
            ),
            IntegrateError::NotOnClient { path } => precondition(R::TargetNotOnClient, path),
            IntegrateError::NothingToResolve { patterns } => {
                (Code::NotFound, on_path(R::NothingToResolve, patterns))
            }
            IntegrateError::Ambiguous { pattern } => invalid(R::AmbiguousResolve, pattern),
            IntegrateError::NoLongerNeedsResolve { path } => {
                precondition(R::NoLongerNeedsResolve, path)
            }
            // Not AddExisting: its remedy (`edit`) is not populate's (`integrate`).
            IntegrateError::PopulateTargetExists { path, rev } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    rev: *rev,
                    ..on_path(R::BadArgument, path)
                },
            ),
            IntegrateError::SourceGone { path, rev } => (
                Code::NotFound,
                pb::ErrorDetail {
                    rev: *rev,
                    ..on_path(R::SourceGone, path)
                },
            ),
            IntegrateError::NoIntegrations { arg } => {
                (Code::NotFound, on_path(R::NoIntegrations, arg))
            }
            IntegrateError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, IntegrateError::Service(e) if e.is_cancelled())
    }
}

impl WireError for ShelveError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let precondition = |detail| (Code::FailedPrecondition, detail);
        match self {
            ShelveError::DefaultChangelist => {
                (Code::InvalidArgument, detail(R::ShelveDefaultChangelist))
            }
            ShelveError::NoLongerPending { change, workspace } => precondition(pb::ErrorDetail {
                workspace: workspace.clone(),
                ..on_change(R::NoLongerPending, Some(*change))
            }),
            ShelveError::NothingToShelve { change, patterns } => precondition(pb::ErrorDetail {
                path: patterns.clone(),
                ..on_change(R::NothingToShelve, Some(*change))
            }),
            ShelveError::NothingShelved { change, patterns } => (
                Code::NotFound,
                pb::ErrorDetail {
                    path: patterns.clone(),
                    ..on_change(R::NothingShelved, Some(*change))
                },
            ),
            ShelveError::Submitted { change } => {
                precondition(on_change(R::ShelfOfSubmitted, Some(*change)))
            }
            ShelveError::NotInView { path, workspace } => (
                Code::InvalidArgument,
                pb::ErrorDetail {
                    workspace: workspace.clone(),
                    ..on_path(R::ShelvedNotInView, path)
                },
            ),
            ShelveError::AlreadyOpened {
                path,
                action,
                workspace,
            } => precondition(pb::ErrorDetail {
                action: action.as_str().to_string(),
                workspace: workspace.clone(),
                ..on_path(R::UnshelveAlreadyOpened, path)
            }),
            ShelveError::Raced { path } => precondition(on_path(R::ShelveRaced, path)),
            ShelveError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, ShelveError::Service(e) if e.is_cancelled())
    }
}

impl WireError for SubmitError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let precondition = |reason, path: &str| (Code::FailedPrecondition, on_path(reason, path));
        match self {
            SubmitError::NothingToSubmit { change } => (
                Code::FailedPrecondition,
                on_change(R::NothingToSubmit, *change),
            ),
            SubmitError::NoDescription => (Code::InvalidArgument, detail(R::NoDescription)),
            SubmitError::MustResolve { path } => precondition(R::MustResolve, path),
            SubmitError::OutOfDate { path, head_rev, .. } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    rev: *head_rev,
                    ..on_path(R::OutOfDate, path)
                },
            ),
            SubmitError::AddExisting { path } => precondition(R::AddedSince, path),
            SubmitError::DeletedAtHead {
                path,
                deleted_at,
                action,
            } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    rev: *deleted_at,
                    action: action.as_str().to_string(),
                    ..on_path(R::DeletedAtHead, path)
                },
            ),
            SubmitError::ChangedDuringSubmit { change } => (
                Code::FailedPrecondition,
                on_change(R::ChangedDuringSubmit, *change),
            ),
            SubmitError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, SubmitError::Service(e) if e.is_cancelled())
    }
}

impl WireError for LabelError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let precondition = |reason, name: &str| (Code::FailedPrecondition, on_path(reason, name));
        let owned = |reason, name: &str, owner: &str| {
            (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    user: owner.to_string(),
                    ..on_path(reason, name)
                },
            )
        };
        match self {
            LabelError::NoSuch { name } => (Code::NotFound, on_path(R::NoSuchLabelSpec, name)),
            LabelError::Exists { name } => (Code::AlreadyExists, on_path(R::LabelExists, name)),
            LabelError::Invalid { name, .. } => {
                (Code::InvalidArgument, on_path(R::BadLabelSpec, name))
            }
            LabelError::NoSuchDepot { name, .. } => {
                (Code::InvalidArgument, on_path(R::LabelViewDepot, name))
            }
            LabelError::Locked { name, owner } => owned(R::LabelLocked, name, owner),
            LabelError::NotOwner { name, owner } => owned(R::LabelNotOwner, name, owner),
            LabelError::StaysLocked { name } => precondition(R::LabelStaysLocked, name),
            LabelError::ForceNeedsSuper { name } => {
                (Code::PermissionDenied, on_path(R::NotPermitted, name))
            }
            LabelError::Automatic { name, revision } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    change: revision.0,
                    ..on_path(R::AutomaticLabel, name)
                },
            ),
            LabelError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, LabelError::Service(e) if e.is_cancelled())
    }
}

impl WireError for AuthError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        let on_user = |code, reason, user: &str| {
            (
                code,
                pb::ErrorDetail {
                    user: user.to_string(),
                    ..detail(reason)
                },
            )
        };
        match self {
            AuthError::LoginRequired { user, .. } => {
                on_user(Code::Unauthenticated, R::LoginRequired, user)
            }
            AuthError::TicketInvalid { user, .. } | AuthError::P4DigestsOff { user } => {
                on_user(Code::Unauthenticated, R::TicketInvalid, user)
            }
            AuthError::TicketExpired { user, .. } => {
                on_user(Code::Unauthenticated, R::TicketExpired, user)
            }
            AuthError::PasswordInvalid { user } | AuthError::PasswordPredatesDigests { user } => {
                on_user(Code::Unauthenticated, R::PasswordInvalid, user)
            }
            AuthError::NoPassword { user } => {
                on_user(Code::FailedPrecondition, R::NoPassword, user)
            }
            AuthError::RateLimited { .. } => (Code::ResourceExhausted, detail(R::LoginRateLimited)),
            AuthError::Busy => (Code::ResourceExhausted, detail(R::PasswordChecksBusy)),
            AuthError::TicketWrongAddress { user, .. } => {
                on_user(Code::Unauthenticated, R::TicketWrongAddress, user)
            }
            AuthError::WeakPassword { user, .. }
            | AuthError::DigestStrengthUnknown { user, .. } => {
                on_user(Code::InvalidArgument, R::WeakPassword, user)
            }
            AuthError::PasswordRequired { user, .. } => {
                on_user(Code::InvalidArgument, R::PasswordRequired, user)
            }
            AuthError::NoSuchUser { user } => on_user(Code::NotFound, R::NoSuchUser, user),
            AuthError::BadUser { user, .. } => on_user(Code::InvalidArgument, R::BadUser, user),
            AuthError::UserCreationRefused { user, .. } => {
                on_user(Code::PermissionDenied, R::UserCreationRefused, user)
            }
            AuthError::OtherUser { user, .. }
            | AuthError::NotSuper { user, .. }
            | AuthError::PrivilegedField { user, .. } => {
                on_user(Code::PermissionDenied, R::NotPermitted, user)
            }
            AuthError::Setting(e) => {
                let name = match e {
                    keel_core::SettingError::Unknown { name }
                    | keel_core::SettingError::BadValue { name, .. } => name,
                };
                (Code::InvalidArgument, on_path(R::BadSetting, name))
            }
            AuthError::Internal { .. } => (Code::Internal, detail(R::Internal)),
            AuthError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, AuthError::Service(e) if e.is_cancelled())
    }
}

impl WireError for DepotError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        match self {
            DepotError::BadName { name, .. } => {
                (Code::InvalidArgument, on_path(R::BadDepotName, name))
            }
            DepotError::Exists { name } => (Code::AlreadyExists, on_path(R::DepotExists, name)),
            DepotError::NameIsWorkspace { name } => {
                (Code::AlreadyExists, on_path(R::NameIsWorkspace, name))
            }
            DepotError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, DepotError::Service(e) if e.is_cancelled())
    }
}

impl WireError for ObliterateError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        match self {
            ObliterateError::NoFiles => (Code::InvalidArgument, detail(R::ObliterateNeedsFiles)),
            ObliterateError::RevisionGiven { arg } => {
                (Code::InvalidArgument, on_path(R::ObliterateRevision, arg))
            }
            ObliterateError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, ObliterateError::Service(e) if e.is_cancelled())
    }
}

impl WireError for keel_service::PruneError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use keel_service::PruneError as E;
        use pb::ErrorReason as R;
        match self {
            E::NoFiles => (Code::InvalidArgument, detail(R::ObliterateNeedsFiles)),
            E::RevisionGiven { arg } => {
                (Code::InvalidArgument, on_path(R::ObliterateRevision, arg))
            }
            E::Opened { path, .. } => (Code::FailedPrecondition, on_path(R::Unspecified, path)),
            E::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, keel_service::PruneError::Service(e) if e.is_cancelled())
    }
}

/// A clone's have entry on the wire: what the client fills the new root with (the depot and
/// client file, the have revision and its digest), none of `Have`'s other fields, so the
/// stream of a large workspace is a third as long.
pub(crate) fn clone_entry(f: FileInfo) -> pb::FileRecord {
    pb::FileRecord {
        depot_file: f.depot_file.into_string(),
        client_file: f.client_file.unwrap_or_default(),
        have_rev: f.have_rev,
        head_digest: hex(f.head_digest),
        ..Default::default()
    }
}

pub(crate) fn file(f: FileInfo) -> pb::FileRecord {
    let (resolve_how, resolve_outcome) = match f.outcome {
        Some(FileOutcome::Resolved { how, outcome }) => {
            (integ_how(how), resolve_outcome_to_wire(outcome))
        }
        _ => (pb::IntegHow::Unspecified, pb::ResolveOutcome::Unspecified),
    };
    pb::FileRecord {
        depot_file: f.depot_file.into_string(),
        client_file: f.client_file.unwrap_or_default(),
        head_rev: f.head_rev,
        head_change: f.head_change.map_or(0, |c| c.0),
        head_action: file_action(f.head_action) as i32,
        head_type: f.head_type.map(|t| t.to_string()).unwrap_or_default(),
        head_time: f.head_time.max(0) as u64,
        head_mod_time: f.head_mod_time,
        head_size: f.head_size,
        head_digest: hex(f.head_digest),
        head_md5: f.head_md5,
        have_rev: f.have_rev,
        action: file_action(f.action) as i32,
        change: f.change.number(),
        file_type: f.file_type.map(|t| t.to_string()).unwrap_or_default(),
        user: f.user,
        workspace: f.workspace,
        move_file: text(f.move_file),
        description: f.description,
        exclusive_held: f.exclusive_held,
        others_open: f
            .others_open
            .into_iter()
            .map(|o| pb::OpenedElsewhere {
                user: o.user,
                workspace: o.workspace,
                action: file_action(Some(o.action)) as i32,
            })
            .collect(),
        outcome: f.outcome.map_or(pb::FileOutcome::Unspecified, outcome) as i32,
        resolve_how: resolve_how as i32,
        resolve_outcome: resolve_outcome as i32,
        integrations: f.integrations.into_iter().map(integration).collect(),
        source_file: text(f.source_file),
        source_start: f.source_start,
        source_end: f.source_end,
        base_file: text(f.base_file),
        base_rev: f.base_rev,
        base_digest: hex(f.base_digest),
        lazy_digest: hex(f.lazy_digest),
        unresolved: f.unresolved,
        locked: f.locked,
    }
}

pub(crate) fn sync_action(a: SyncAction) -> pb::SyncAction {
    match a {
        SyncAction::Added => pb::SyncAction::Added,
        SyncAction::Updated => pb::SyncAction::Updated,
        SyncAction::Refreshed => pb::SyncAction::Refreshed,
        SyncAction::Deleted => pb::SyncAction::Deleted,
        SyncAction::Resolve => pb::SyncAction::Resolve,
    }
}

pub(crate) fn sync_mark_to_pb(m: SyncMark) -> pb::SyncMark {
    pb::SyncMark {
        change: m.change,
        removed: m.removed,
        view: m.view,
        writes: m.writes,
    }
}

pub(crate) fn sync_mark_from_pb(m: pb::SyncMark) -> SyncMark {
    SyncMark {
        change: m.change,
        removed: m.removed,
        view: m.view,
        writes: m.writes,
    }
}

pub(crate) fn file_action(a: Option<FileAction>) -> pb::FileAction {
    match a {
        None => pb::FileAction::Unspecified,
        Some(FileAction::Add) => pb::FileAction::Add,
        Some(FileAction::Edit) => pb::FileAction::Edit,
        Some(FileAction::Delete) => pb::FileAction::Delete,
        Some(FileAction::Branch) => pb::FileAction::Branch,
        Some(FileAction::Integrate) => pb::FileAction::Integrate,
        Some(FileAction::MoveAdd) => pb::FileAction::MoveAdd,
        Some(FileAction::MoveDelete) => pb::FileAction::MoveDelete,
    }
}

/// A digest as the wire carries it: lower-case hex, empty when there is none.
/// A path's text on the wire; empty for none.
fn text(path: Option<DepotPath>) -> String {
    path.map(DepotPath::into_string).unwrap_or_default()
}

fn hex(digest: Option<Digest>) -> String {
    digest.map(|d| d.to_hex()).unwrap_or_default()
}

fn outcome(o: FileOutcome) -> pb::FileOutcome {
    match o {
        FileOutcome::Opened => pb::FileOutcome::Opened,
        FileOutcome::AlreadyOpened => pb::FileOutcome::AlreadyOpened,
        FileOutcome::MovedFrom => pb::FileOutcome::MovedFrom,
        FileOutcome::MovedTo => pb::FileOutcome::MovedTo,
        FileOutcome::Reverted => pb::FileOutcome::Reverted,
        FileOutcome::Reopened => pb::FileOutcome::Reopened,
        FileOutcome::Integrated => pb::FileOutcome::Integrated,
        FileOutcome::Resolved { .. } => pb::FileOutcome::Resolved,
        FileOutcome::Purged => pb::FileOutcome::Purged,
        FileOutcome::WouldBePurged => pb::FileOutcome::WouldBePurged,
        FileOutcome::Shelved => pb::FileOutcome::Shelved,
        FileOutcome::ShelvedDeleted => pb::FileOutcome::ShelvedDeleted,
        FileOutcome::Unshelved => pb::FileOutcome::Unshelved,
    }
}

fn resolve_outcome_to_wire(o: ResolveOutcome) -> pb::ResolveOutcome {
    match o {
        ResolveOutcome::Theirs => pb::ResolveOutcome::Theirs,
        ResolveOutcome::Yours => pb::ResolveOutcome::Yours,
        ResolveOutcome::Merged => pb::ResolveOutcome::Merged,
        ResolveOutcome::Edited => pb::ResolveOutcome::Edited,
    }
}

/// The `changes` status filter: unspecified lists both; an unknown value is refused.
pub(crate) fn change_status_filter(wire: i32) -> Result<Option<ChangeStatus>, Status> {
    match pb::ChangeStatus::try_from(wire) {
        Ok(pb::ChangeStatus::Pending) => Ok(Some(ChangeStatus::Pending)),
        Ok(pb::ChangeStatus::Submitted) => Ok(Some(ChangeStatus::Submitted)),
        Ok(pb::ChangeStatus::Unspecified) => Ok(None),
        Err(_) => Err(Status::invalid_argument(format!(
            "unknown change status {wire} (expected pending or submitted)"
        ))),
    }
}

/// The open action a client asked for; an unknown or missing value is refused.
/// `-t`'s value, if any (an unknown type is a bad argument naming it).
pub(crate) fn type_change(text: &str) -> Result<Option<TypeChange>, Status> {
    if text.is_empty() {
        return Ok(None);
    }
    TypeChange::parse(text)
        .map(Some)
        .map_err(|e| bad_type(text, e))
}

/// The types a client detected for the files it adds (empty: none detected).
pub(crate) fn detected_types(texts: &[String]) -> Result<Vec<Option<FileType>>, Status> {
    texts
        .iter()
        .map(|t| {
            if t.is_empty() {
                Ok(None)
            } else {
                FileType::parse(t).map(Some).map_err(|e| bad_type(t, e))
            }
        })
        .collect()
}

fn bad_type(text: &str, e: keel_core::FileTypeError) -> Status {
    status(ServiceError::BadArgument {
        arg: text.to_string(),
        reason: e.to_string(),
    })
}

pub(crate) fn open_action(wire: i32) -> Result<OpenAction, Status> {
    match pb::OpenAction::try_from(wire) {
        Ok(pb::OpenAction::Add) => Ok(OpenAction::Add),
        Ok(pb::OpenAction::Edit) => Ok(OpenAction::Edit),
        Ok(pb::OpenAction::Delete) => Ok(OpenAction::Delete),
        Ok(pb::OpenAction::Unspecified) | Err(_) => Err(Status::invalid_argument(format!(
            "unknown open action {wire} (expected add, edit or delete)"
        ))),
    }
}

/// The integrate mode a client asked for; an unknown value is refused.
pub(crate) fn integrate_mode(wire: i32) -> Result<IntegrateMode, Status> {
    match pb::IntegrateMode::try_from(wire) {
        Ok(pb::IntegrateMode::Integrate) => Ok(IntegrateMode::Integrate),
        Ok(pb::IntegrateMode::Copy) => Ok(IntegrateMode::Copy),
        Err(_) => Err(Status::invalid_argument(format!(
            "unknown integrate mode {wire} (expected integrate or copy)"
        ))),
    }
}

/// Whether a submit's reply lists the submitted files (`SubmitBegin.reply_files`); an unknown
/// value is refused.
pub(crate) fn submit_reply_files(wire: i32) -> Result<bool, Status> {
    match pb::SubmitReplyFiles::try_from(wire) {
        Ok(pb::SubmitReplyFiles::All) => Ok(true),
        Ok(pb::SubmitReplyFiles::None) => Ok(false),
        Err(_) => Err(Status::invalid_argument(format!(
            "unknown submit reply_files {wire} (expected all or none)"
        ))),
    }
}

/// The resolve outcome a client reported; an unknown or missing value is refused.
pub(crate) fn resolve_outcome(wire: i32) -> Result<ResolveOutcome, Status> {
    match pb::ResolveOutcome::try_from(wire) {
        Ok(pb::ResolveOutcome::Theirs) => Ok(ResolveOutcome::Theirs),
        Ok(pb::ResolveOutcome::Yours) => Ok(ResolveOutcome::Yours),
        Ok(pb::ResolveOutcome::Merged) => Ok(ResolveOutcome::Merged),
        Ok(pb::ResolveOutcome::Edited) => Ok(ResolveOutcome::Edited),
        Ok(pb::ResolveOutcome::Unspecified) | Err(_) => Err(Status::invalid_argument(format!(
            "unknown resolve outcome {wire} (expected theirs, yours, merged or edited)"
        ))),
    }
}

fn integration(e: IntegEdge) -> pb::IntegRecord {
    pb::IntegRecord {
        to_file: e.to_path,
        to_rev: e.to_rev,
        from_file: e.from_path,
        start_from_rev: e.from_start + 1,
        end_from_rev: e.from_end,
        how: integ_how(Some(e.how)) as i32,
        reverse: false,
        change: 0,
    }
}

pub(crate) fn integ_info(i: IntegInfo) -> pb::IntegRecord {
    pb::IntegRecord {
        to_file: i.to_file.into_string(),
        to_rev: i.to_rev,
        from_file: i.from_file.into_string(),
        start_from_rev: i.start_from_rev,
        end_from_rev: i.end_from_rev,
        how: integ_how(Some(i.how)) as i32,
        reverse: i.reverse,
        change: i.change.0,
    }
}

fn integ_how(how: Option<IntegHow>) -> pb::IntegHow {
    match how {
        None => pb::IntegHow::Unspecified,
        Some(IntegHow::BranchFrom) => pb::IntegHow::BranchFrom,
        Some(IntegHow::CopyFrom) => pb::IntegHow::CopyFrom,
        Some(IntegHow::MergeFrom) => pb::IntegHow::MergeFrom,
        Some(IntegHow::EditFrom) => pb::IntegHow::EditFrom,
        Some(IntegHow::Ignored) => pb::IntegHow::Ignored,
        Some(IntegHow::DeleteFrom) => pb::IntegHow::DeleteFrom,
        Some(IntegHow::MovedFrom) => pb::IntegHow::MovedFrom,
        Some(IntegHow::Undid) => pb::IntegHow::Undid,
    }
}

pub(crate) fn change(c: ChangeInfo) -> pb::Change {
    pb::Change {
        change: c.change.0,
        status: match c.status {
            ChangeStatus::Pending => pb::ChangeStatus::Pending,
            ChangeStatus::Submitted => pb::ChangeStatus::Submitted,
        } as i32,
        user: c.user,
        workspace: c.workspace,
        description: c.description,
        time: c.time.max(0) as u64,
        since_index: 0,
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

impl WireError for keel_store::backup::CheckpointError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use keel_store::backup::CheckpointError as E;
        use pb::ErrorReason as R;
        let full = match self {
            E::Write { source, .. } => source.kind() == std::io::ErrorKind::StorageFull,
            E::Read { source, .. } => source.is_disk_full(),
            E::Journal(keel_store::journal::JournalError::Io { source, .. }) => {
                source.kind() == std::io::ErrorKind::StorageFull
            }
            E::Journal(_) => false,
        };
        if full {
            (Code::ResourceExhausted, detail(R::DiskFull))
        } else {
            (Code::Internal, detail(R::Internal))
        }
    }

    fn is_cancelled(&self) -> bool {
        false
    }
}

/// A probe timing the server cannot keep (`ReportProbe`): INVALID_ARGUMENT, BAD_ARGUMENT,
/// with the command it names as the path.
pub(crate) fn probe_status(e: crate::metrics::probe::ProbeReportError) -> Status {
    use crate::metrics::probe::ProbeReportError as E;
    let command = match &e {
        E::UnknownCommand(command) | E::BadSeconds { command, .. } => command.clone(),
    };
    let detail = on_path(pb::ErrorReason::BadArgument, &command);
    Status::with_details(
        Code::InvalidArgument,
        e.to_string(),
        detail.encode_to_vec().into(),
    )
}

impl WireError for AccessError {
    fn code_and_detail(&self) -> (Code, pb::ErrorDetail) {
        use pb::ErrorReason as R;
        match self {
            AccessError::NoSuchGroup { name } => (Code::NotFound, on_path(R::NoSuchGroup, name)),
            AccessError::BadGroup { name, .. } => {
                (Code::InvalidArgument, on_path(R::BadGroup, name))
            }
            AccessError::PrivilegedField { name, .. } => {
                (Code::PermissionDenied, on_path(R::NotPermitted, name))
            }
            AccessError::BadProtections(_) => (Code::InvalidArgument, detail(R::BadProtections)),
            AccessError::LastSuper { user, .. } => (
                Code::FailedPrecondition,
                pb::ErrorDetail {
                    user: user.clone(),
                    ..detail(R::LastSuper)
                },
            ),
            AccessError::Service(e) => e.code_and_detail(),
        }
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, AccessError::Service(e) if e.is_cancelled())
    }
}
