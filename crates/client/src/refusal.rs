//! Why the server refused a request, decoded from the `ErrorDetail` every error status carries.

use keel_proto::v1::{ErrorDetail, ErrorReason};
use prost::Message;

/// A refusal the server described in machine-readable form; front ends use it to suggest
/// what to do next. Reasons the library has no use for stay [`Refusal::Other`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another workspace holds `path` open exclusively (+l).
    ExclusivelyOpened {
        path: String,
        user: String,
        workspace: String,
    },
    /// The change still has shelved files.
    ShelvedFilesExist { change: u64 },
    /// `path` needs a resolve before the change can be submitted.
    MustResolve { path: String },
    /// `path` exists at head (revision `head_rev`), so it cannot be added.
    AddExisting { path: String, head_rev: u32 },
    /// `path` (a file to open, or an integration's target) is not in the workspace's have list.
    NotOnClient { path: String },
    /// An integration target is already opened in the workspace.
    TargetOpened { path: String },
    /// A move of `path`, which is not opened.
    MoveNotOpened { path: String },
    /// The change's files changed while the submit was under way; nothing was submitted.
    ChangedDuringSubmit { change: u64 },
    /// A submit with no description.
    NoDescription,
    /// Creating a branch spec whose name is taken (`name` is the branch's).
    BranchExists { name: String },
    /// Creating a label whose name is taken (`name` is the label's).
    LabelExists { name: String },
    /// A workspace to delete still has opened files.
    WorkspaceHasFiles { workspace: String },
    /// A pending change to delete still has opened files.
    ChangeHasFiles { change: u64 },
    /// The command needs a workspace and none was named.
    NoWorkspace,
    /// `opened` of one workspace, and none was named.
    OpenedNeedsWorkspace,
    /// Content the command referenced was purged meanwhile; nothing was changed.
    ContentPurged { path: String },
    /// Deleting shelved files (or shelving) needs a numbered change.
    NeedsNumberedChange,
    /// `path` changed while a shelve or unshelve ran; nothing was changed.
    Raced { path: String },
    /// A trigger refused a submit of `change` (0 when the refusal is not about a change).
    TriggerFailed { change: u64 },
    /// `user` needs a (new) login ticket: none was sent, or it was unknown or expired.
    LoginRequired { user: String },
    /// Any other reason (or none).
    Other(ErrorReason),
}

impl Refusal {
    /// Decodes a status's details; `None` when there are none or they are not an `ErrorDetail`.
    pub fn from_details(details: &[u8]) -> Option<Refusal> {
        if details.is_empty() {
            return None;
        }
        let d = ErrorDetail::decode(details).ok()?;
        let reason = ErrorReason::try_from(d.reason).unwrap_or(ErrorReason::Unspecified);
        Some(match reason {
            ErrorReason::ExclusivelyOpened => Refusal::ExclusivelyOpened {
                path: d.path,
                user: d.user,
                workspace: d.workspace,
            },
            ErrorReason::ShelvedFilesExist => Refusal::ShelvedFilesExist { change: d.change },
            ErrorReason::MustResolve => Refusal::MustResolve { path: d.path },
            ErrorReason::AddExisting => Refusal::AddExisting {
                path: d.path,
                head_rev: d.rev,
            },
            ErrorReason::NotOnClient | ErrorReason::TargetNotOnClient => {
                Refusal::NotOnClient { path: d.path }
            }
            ErrorReason::TargetOpened => Refusal::TargetOpened { path: d.path },
            ErrorReason::MoveNotOpened => Refusal::MoveNotOpened { path: d.path },
            ErrorReason::ChangedDuringSubmit => Refusal::ChangedDuringSubmit { change: d.change },
            ErrorReason::NoDescription => Refusal::NoDescription,
            ErrorReason::NoWorkspace => Refusal::NoWorkspace,
            ErrorReason::OpenedNeedsWorkspace => Refusal::OpenedNeedsWorkspace,
            ErrorReason::LabelExists => Refusal::LabelExists { name: d.path },
            ErrorReason::SpecExists if d.workspace.is_empty() => {
                Refusal::BranchExists { name: d.path }
            }
            ErrorReason::WorkspaceHasFiles => Refusal::WorkspaceHasFiles {
                workspace: d.workspace,
            },
            ErrorReason::ChangeHasFiles => Refusal::ChangeHasFiles { change: d.change },
            ErrorReason::ContentPurged => Refusal::ContentPurged { path: d.path },
            ErrorReason::ShelveDefaultChangelist => Refusal::NeedsNumberedChange,
            ErrorReason::ShelveRaced => Refusal::Raced { path: d.path },
            ErrorReason::TriggerFailed => Refusal::TriggerFailed { change: d.change },
            ErrorReason::LoginRequired
            | ErrorReason::TicketInvalid
            | ErrorReason::TicketExpired => Refusal::LoginRequired { user: d.user },
            other => Refusal::Other(other),
        })
    }
}
