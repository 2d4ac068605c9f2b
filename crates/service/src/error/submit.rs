//! Refusals of submit.

use keel_core::{ChangeNumber, FileAction};

use super::{ServiceError, embeds_service_error};

/// Why a change could not be submitted; nothing was submitted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The changelist has no opened files (`change` is `None` for the default changelist).
    #[error("No files to submit from {}.", match change { Some(c) => format!("change {c}"), None => "the default changelist".to_string() })]
    NothingToSubmit { change: Option<ChangeNumber> },
    /// A submit needs a description and neither the request nor the change has one.
    #[error("submit needs a description")]
    NoDescription,
    /// A file still needs a resolve.
    #[error("{path} - must resolve before submitting")]
    MustResolve { path: String },
    /// A file was opened at an older revision than the head.
    #[error("{path} - must sync/resolve #{head_rev} before submitting (opened at #{opened_at})")]
    OutOfDate {
        path: String,
        head_rev: u32,
        opened_at: u32,
    },
    /// An add of a file someone else added first.
    #[error("{path} - can't add existing file")]
    AddExisting { path: String },
    /// An edit or delete of a file deleted at head.
    #[error("{path} - was deleted at #{deleted_at}; can't {action}")]
    DeletedAtHead {
        path: String,
        deleted_at: u32,
        action: FileAction,
    },
    /// The change's open files changed between the start of the submit and its commit.
    #[error("the files of {} changed while it was being submitted", match change { Some(c) => format!("change {c}"), None => "the default changelist".to_string() })]
    ChangedDuringSubmit { change: Option<ChangeNumber> },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(SubmitError);
