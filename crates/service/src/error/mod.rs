//! Errors of the service layer: per command family an enum whose variants carry what a caller
//! needs ([`OpenError`], [`SubmitError`]), each embedding [`ServiceError`], the failures every
//! command shares. Messages name the file, change or value concerned and never a CLI command.

mod access;
mod auth;
mod change;
mod counter;
mod depot;
mod integrate;
mod job;
mod label;
mod obliterate;
mod open;
mod prune;
mod shelve;
mod spec;
mod submit;
mod trigger;
mod upload;

pub use access::AccessError;
pub use auth::AuthError;
pub use change::ChangeError;
pub use counter::CounterOpError;
pub use depot::DepotError;
pub use integrate::IntegrateError;
pub use job::JobsError;
pub use label::LabelError;
pub use obliterate::ObliterateError;
pub use open::OpenError;
pub use prune::PruneError;
pub use shelve::ShelveError;
pub use spec::{SpecError, SpecKind};
pub use submit::SubmitError;
pub use trigger::{TriggerFailure, TriggerFailureReason};
pub use upload::UploadError;

use keel_blob::BlobError;
use keel_core::{ChangeNumber, Digest, PathError, Right};
use keel_store::StoreError;

/// Failures any command can meet: shared refusals (arguments, workspaces, changes, the files
/// and content a read asks for) and store and content failures.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A numbered change that does not exist.
    #[error("change {change} does not exist")]
    NoSuchChange { change: ChangeNumber },
    /// A change named as pending is already submitted.
    #[error("change {change} is already submitted")]
    ChangeSubmitted { change: ChangeNumber },
    /// A pending change of another workspace.
    #[error("change {change} belongs to workspace '{owner}', not '{workspace}'")]
    ChangeOfOtherWorkspace {
        change: ChangeNumber,
        owner: String,
        workspace: String,
    },
    /// Another workspace holds the file open, and it or this open is exclusive (+l).
    #[error("{path} - locked by {user}@{workspace} (exclusive open, +l)")]
    ExclusivelyOpened {
        path: String,
        user: String,
        workspace: String,
    },
    /// Another workspace holds the file locked (`lock`): it cannot be locked or submitted
    /// here until that lock goes.
    #[error(
        "{path} - locked by {user}@{workspace}; it can't be locked or submitted here until they submit, revert or unlock it"
    )]
    LockedElsewhere {
        path: String,
        user: String,
        workspace: String,
    },
    /// `unlock -f` arguments name no locked file.
    #[error("{patterns} - file(s) not locked")]
    NotLocked { patterns: String },
    /// The arguments name no file opened in this workspace (revert, reopen, resolve).
    #[error("{patterns} - file(s) not opened on this client")]
    NotOpened { patterns: String },
    /// The caller's workspace belongs to another user, and the caller is not its owner (nor a
    /// super user overriding); nothing was read or changed through it.
    #[error(
        "workspace '{name}' belongs to {owner}: only its owner may use it, edit or delete it (user {user} is not its owner; a super user may override)"
    )]
    WorkspaceNotOwned {
        name: String,
        owner: String,
        user: String,
    },
    /// A locked workspace used by someone other than its owner, super users included.
    #[error(
        "workspace '{name}' is locked: only its owner {owner} may use it (a super user may edit its Options to unlock it first)"
    )]
    WorkspaceLocked { name: String, owner: String },
    /// A pending change of another user (its owner), touched without a super user's override.
    #[error(
        "change {change} belongs to user {owner}: only its owner may edit, submit, shelve or delete it (a super user may override)"
    )]
    ChangeOfOtherUser { change: ChangeNumber, owner: String },
    /// The command needs the caller's workspace and none was named.
    #[error("this command needs a workspace")]
    NoWorkspace,
    /// A named workspace does not exist.
    #[error("workspace '{name}' does not exist")]
    NoSuchWorkspace { name: String },
    /// A stored workspace spec can no longer be used (its view or options).
    #[error("workspace {name}: {reason}")]
    BadWorkspace { name: String, reason: String },
    /// A file argument starts with a name that is neither a depot nor a workspace.
    #[error("{arg} - '{name}' is neither a depot nor a workspace")]
    UnknownRoot { arg: String, name: String },
    /// A revision argument names a label that does not exist.
    #[error("{arg} - label '{name}' does not exist")]
    NoSuchLabel { arg: String, name: String },
    /// `#have` without a workspace to have it in.
    #[error("{arg} - #have needs a workspace")]
    HaveNeedsWorkspace { arg: String },
    /// Content a command meant to reference was purged by obliterate while it ran; nothing
    /// was changed and the command may be repeated.
    #[error(
        "{path} - content {digest} was removed from the server (obliterate) while this command ran; nothing was changed"
    )]
    ContentPurged { path: String, digest: String },
    /// The client's content upload broke the protocol or arrived damaged.
    #[error(transparent)]
    Upload(#[from] UploadError),
    /// A pending change still has shelved files, so it cannot be submitted or deleted.
    #[error("change {change} - shelved files must be deleted first")]
    ShelvedFilesExist { change: ChangeNumber },
    /// A file whose last path component is a name Keel reserves for its client's own files
    /// (`keel_core::RESERVED_FILE_NAMES`): it is never added, branched, moved or submitted.
    #[error(
        "{path} - '{name}' is a file name Keel reserves for its client's own files; such a \
         file cannot be added to the depot"
    )]
    ReservedName { path: String, name: &'static str },
    /// An argument a core parser refused (a path, file spec, name or type); `reason` is the
    /// parser's message, which names the argument.
    #[error("{reason}")]
    BadArgument { arg: String, reason: String },
    /// A command that takes file arguments got none (`command` names it when it is not a
    /// listing).
    #[error("{} (try //depot/...)", needs_files(command))]
    NoFileArguments { command: Option<&'static str> },
    /// A file argument matched no file.
    #[error("{arg} - no such file(s)")]
    NoSuchFiles { arg: String },
    /// A revision larger than the largest text `annotate` diffs (`max_diff_bytes`).
    #[error("{file} - {size} bytes is too large to annotate (the limit is {limit} bytes)")]
    TooLargeToAnnotate { file: String, size: u64, limit: u64 },
    /// `undo` of revisions a later revision changed again where no merge can invert them
    /// (a side is deleted or not text).
    #[error(
        "{path} - revision #{later_rev} (change {later_change}) changed it after {undone}, and \
         a deleted or binary revision cannot be merged: undo that revision too, or edit the \
         file by hand"
    )]
    UndoConflict {
        path: String,
        undone: String,
        later_rev: u32,
        later_change: ChangeNumber,
    },
    /// `undo` of a file the workspace already has open.
    #[error("{path} - already opened in this workspace; submit or revert it first")]
    UndoAlreadyOpened { path: String },
    /// `undo` of a file outside the workspace view.
    #[error("{path} - not in the view of workspace '{workspace}'")]
    UndoNotInView { path: String, workspace: String },
    /// `undo` of a file the workspace does not have at its head revision.
    #[error("{path} - the workspace has #{have}, not the head #{head}; sync it first")]
    UndoNotSynced { path: String, have: u32, head: u32 },
    /// A `diff2` side matched more than one file.
    #[error("{arg} - diff2 needs exactly one file per side")]
    OneFilePerSide { arg: String },
    /// A `dirs` argument that is not a directory pattern (`//path/*`).
    #[error("{arg} - dirs takes a pattern ending in /*")]
    DirsPattern { arg: String },
    /// `opened` of one workspace without a workspace.
    #[error("opened needs a workspace")]
    OpenedNeedsWorkspace,
    /// A `workspace clone` whose source was synced during every copy of its have list.
    #[error(
        "workspace '{workspace}' was synced while its have list was being cloned; clone it again"
    )]
    SourceKeepsChanging { workspace: String },
    /// A stored label spec can no longer be used (its View or Revision).
    #[error("label {name}: {reason}")]
    BadLabel { name: String, reason: String },
    /// The content of a deleted revision (or of one a `+S` type purged) was asked for.
    #[error(
        "{path}#{rev} - has no content: the revision deletes the file, or its content was purged \
         (only the newest revisions of a +S file keep theirs)"
    )]
    DeletedRevision { path: String, rev: u32 },
    /// A revision's or shelved file's content is not in the content store (`file` is the path
    /// with `#REV` or `@=CHANGE`).
    #[error("{file} - content {digest} is missing from the content store")]
    ContentMissing { file: String, digest: Digest },
    /// A replica fetching content on demand could not get it from its primary: the primary
    /// is down, refused the replica's service user, or no longer holds the content. `file` is
    /// the path with `#REV` or `@=CHANGE` (the digest for `Content`); `primary` its address.
    #[error(
        "{file} - content {digest} is not on this replica yet and its primary {primary} did not send it: {reason}"
    )]
    ContentNotFetched {
        file: String,
        digest: String,
        primary: String,
        reason: String,
    },
    /// Content asked for by digest (`Content`) is not in the content store.
    #[error("content {digest} is not in the content store")]
    NoSuchContent { digest: Digest },
    /// Stored content could not be read (`file` is the path, with `#REV` when known).
    #[error("{file} - reading stored content: {reason}")]
    ContentUnreadable { file: String, reason: String },
    /// A `print` argument with `@=` that is not `//path@=CHANGE`.
    #[error("{arg} - expected a shelved revision //path@=CHANGE")]
    NotShelvedRevision { arg: String },
    /// The change of a `//path@=CHANGE` argument is not a number.
    #[error("{arg} - '@={change}' is not a change number")]
    BadShelvedChange { arg: String, change: String },
    /// A `//path@=CHANGE` argument matched no shelved file.
    #[error("{arg} - no such shelved file(s)")]
    NoSuchShelvedFiles { arg: String },
    /// A trigger refused the command (a pre-commit or form-save trigger failed, or a form-out
    /// trigger left a bad form); nothing was changed.
    #[error("{0}")]
    TriggerFailed(Box<TriggerFailure>),
    /// The caller may not edit the triggers table.
    #[error("You don't have permission for this operation: editing the triggers table needs super")]
    TriggersNeedSuper,
    /// The caller may not edit the typemap.
    #[error(
        "You don't have permission for this operation: editing the typemap needs super (user {user})"
    )]
    TypemapNeedsSuper { user: String },
    /// A sync on a read-only replica would schedule a resolve (an opened file's head moved),
    /// which writes the primary's metadata: nothing was synced.
    #[error(
        "{file} - opened for edit and has a newer revision; scheduling its resolve ({count} \
         file(s) in all) writes the primary's metadata: run this sync against the primary \
         {primary}"
    )]
    ResolveOnReplica {
        file: String,
        count: usize,
        primary: String,
    },
    /// `monitor show -a/-l` or `monitor terminate` by a user who is not a super user.
    #[error("You don't have permission for this operation: {what} needs super (user {user})")]
    MonitorNeedsSuper { user: String, what: &'static str },
    /// The protections table does not give the caller `needed` on `file`; nothing was changed.
    #[error("{file} - You don't have permission for this operation (needs {needed} access)")]
    PermissionDenied { file: String, needed: Right },
    /// Content by digest that is the content of no revision or shelved file the caller may
    /// read (or of none they named).
    #[error(
        "content {digest} - You don't have permission for this operation (needs read access to a revision or shelved file with this content)"
    )]
    ContentDenied { digest: Digest },
    /// A command that needs a level on the server as a whole (admin, super), or somewhere,
    /// that no protections line gives the caller.
    #[error("You don't have permission for this operation: {command} needs {needed} access")]
    CommandDenied {
        command: &'static str,
        needed: Right,
    },
    /// A group limit (the most permissive of the caller's groups) stopped the command before
    /// it changed anything; `limit` is its name (`maxresults`, `maxscanrows`, `maxlocktime`,
    /// `maxopenfiles`).
    #[error("{}", too_large(limit, *max))]
    RequestTooLarge { limit: &'static str, max: u64 },
    /// A description, form field, form or table past the server's size limit (`knob`, under
    /// `[service]` in keel.toml); nothing was saved.
    #[error(
        "{what} is {size} {unit}, over the server's limit of {limit} {unit} (service.{knob}); nothing was saved"
    )]
    OverLimit {
        what: String,
        size: usize,
        limit: usize,
        unit: &'static str,
        knob: &'static str,
    },
    /// The store or the content store has no room left.
    #[error("the server's disk is full: {0}")]
    DiskFull(String),
    /// The consumer of a streamed result went away.
    #[error("request cancelled")]
    Cancelled,
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Blob(BlobError),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        if e.is_disk_full() {
            ServiceError::DiskFull(e.to_string())
        } else {
            ServiceError::Store(e)
        }
    }
}

impl ServiceError {
    /// A content store error met while opening the content of `file` (the path with `#REV` or
    /// `@=CHANGE`, or the digest): an on-demand replica's failed fetch then names the file.
    pub(crate) fn opening(file: impl FnOnce() -> String) -> impl FnOnce(BlobError) -> Self {
        move |e| match e {
            BlobError::Unavailable {
                digest,
                from,
                reason,
            } => ServiceError::ContentNotFetched {
                file: file(),
                digest,
                primary: from,
                reason,
            },
            other => ServiceError::from(other),
        }
    }
}

impl From<BlobError> for ServiceError {
    fn from(e: BlobError) -> Self {
        match e {
            BlobError::DiskFull { .. } => ServiceError::DiskFull(e.to_string()),
            other => ServiceError::Blob(other),
        }
    }
}

/// Gives a per-family error enum the conversions `?` needs from the store, the blob store and
/// [`ServiceError`] (whose disk-full mapping it reuses).
macro_rules! embeds_service_error {
    ($family:ty) => {
        impl From<keel_store::StoreError> for $family {
            fn from(e: keel_store::StoreError) -> Self {
                Self::Service(ServiceError::from(e))
            }
        }
        impl From<keel_blob::BlobError> for $family {
            fn from(e: keel_blob::BlobError) -> Self {
                Self::Service(ServiceError::from(e))
            }
        }
        impl From<ServiceError> for $family {
            fn from(e: ServiceError) -> Self {
                Self::Service(e)
            }
        }
    };
}
use embeds_service_error;

/// A depot or client path the path parser refused; the argument is the path it names.
pub(crate) fn bad_path(e: PathError) -> ServiceError {
    ServiceError::BadArgument {
        arg: e.path().to_string(),
        reason: e.to_string(),
    }
}

/// An argument a core parser refused, with the parser's message.
pub(crate) fn bad_argument(arg: &str, e: impl std::fmt::Display) -> ServiceError {
    ServiceError::BadArgument {
        arg: arg.to_string(),
        reason: e.to_string(),
    }
}

fn needs_files(command: &Option<&'static str>) -> String {
    match command {
        Some(command) => format!("{command} needs file arguments"),
        None => "no file arguments given".to_string(),
    }
}

fn too_large(limit: &str, max: u64) -> String {
    let what = match limit {
        "maxscanrows" => format!("Too many rows scanned (over {max})"),
        "maxlocktime" => format!("Operation took too long (over {max} ms holding the writer)"),
        "maxopenfiles" => format!("Opening too many files (over {max})"),
        _ => format!("Request too large (over {max})"),
    };
    format!("{what}; see 'keel help {limit}'.")
}
