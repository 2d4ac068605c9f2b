//! Refusals of shelve, shelve -d and unshelve.

use keel_core::{ChangeNumber, FileAction};

use super::{ServiceError, embeds_service_error};

/// Why files could not be shelved, deleted from a shelf or unshelved; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ShelveError {
    /// Shelving needs a numbered pending change (the client moves the default changelist into
    /// a new one first).
    #[error("shelve needs a numbered pending change, not the default changelist")]
    DefaultChangelist,
    /// The change stopped being a pending change of the workspace while the shelve ran.
    #[error("change {change} is no longer a pending change of workspace '{workspace}'")]
    NoLongerPending {
        change: ChangeNumber,
        workspace: String,
    },
    /// No opened file of the change matches (`patterns` empty when all were asked for).
    #[error(
        "No files to shelve: no opened files {}in change {change}.",
        in_patterns(patterns)
    )]
    NothingToShelve {
        change: ChangeNumber,
        patterns: String,
    },
    /// No shelved file of the change matches (`patterns` empty when all were asked for).
    #[error("No shelved files in change {change}{}.", matching(patterns))]
    NothingShelved {
        change: ChangeNumber,
        patterns: String,
    },
    /// Only pending changes have shelves.
    #[error("change {change} is submitted; only pending changes have shelves")]
    Submitted { change: ChangeNumber },
    /// A shelved file lies outside the workspace's view.
    #[error("{path} - file(s) not in client view of workspace '{workspace}'")]
    NotInView { path: String, workspace: String },
    /// The file is already opened in the workspace; nothing was unshelved.
    #[error(
        "{path} - can't unshelve: already opened for {action} in workspace '{workspace}'; \
         nothing was unshelved"
    )]
    AlreadyOpened {
        path: String,
        action: FileAction,
        workspace: String,
    },
    /// The shelved file or the file's open record changed between planning and writing.
    #[error("{path} - changed while the command ran")]
    Raced { path: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(ShelveError);

fn in_patterns(patterns: &str) -> String {
    if patterns.is_empty() {
        String::new()
    } else {
        format!("{patterns} ")
    }
}

fn matching(patterns: &str) -> String {
    if patterns.is_empty() {
        String::new()
    } else {
        format!(" matching {patterns}")
    }
}
