//! Refusals of add/edit/delete, move, revert and reopen.

use keel_core::FileAction;

use super::{ServiceError, embeds_service_error};

/// Why files could not be opened, moved, reverted or reopened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file is already opened in this workspace for another action.
    #[error("{path} - can't {wanted}: already opened for {current}")]
    AlreadyOpened {
        path: String,
        wanted: FileAction,
        current: FileAction,
    },
    /// An add argument that is not one file in the view (a wildcard, or an unmapped path).
    #[error("{arg} - add needs files, not wildcards or unmapped paths")]
    AddNeedsFiles { arg: String },
    /// A move side that is not one file in the view.
    #[error("{arg} - move needs one file, in the view")]
    MoveNeedsOneFile { arg: String },
    /// The file, or a move's target, is outside the workspace view.
    #[error("{path} - file(s) not in client view")]
    NotInView { path: String },
    /// Add of a file that exists at head.
    #[error("{path} - can't add existing file (head #{head_rev})")]
    AddExisting { path: String, head_rev: u32 },
    /// Edit or delete of a file the workspace does not have.
    #[error("{path} - file(s) not on client")]
    NotOnClient { path: String },
    /// Nothing matched the arguments.
    #[error("{pattern} - no such file(s)")]
    NoSuchFiles { pattern: String },
    /// The arguments matched only files deleted at head or outside the view.
    #[error("{patterns} - no files to {action} (deleted at head or not in the view)")]
    NothingToOpen {
        patterns: String,
        action: FileAction,
    },
    /// Move of a file that is not opened.
    #[error("{path} - not opened")]
    MoveNotOpened { path: String },
    /// Move of a file opened for an action that cannot move.
    #[error("{path} - can't move a file opened for {action}")]
    CannotMove { path: String, action: FileAction },
    /// Move onto a file that exists at head.
    #[error("{path} - can't move onto an existing file")]
    MoveOntoExisting { path: String },
    /// Move onto a file already opened in this workspace.
    #[error("{path} - already opened")]
    MoveTargetOpened { path: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(OpenError);
