//! Refusals of prune.

use super::{ObliterateError, ServiceError, embeds_service_error};

/// Why a prune did not start; nothing was removed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// Prune needs file arguments (it never means "everything").
    #[error("prune needs file arguments (e.g. //depot/rel/...)")]
    NoFiles,
    /// An argument with a revision: prune removes whole files.
    #[error("{arg} - prune removes whole files; revisions are not supported")]
    RevisionGiven { arg: String },
    /// A file that would be pruned is opened somewhere.
    #[error("{path} - can't prune: opened by {user}@{workspace}; submit or revert it first")]
    Opened {
        path: String,
        user: String,
        workspace: String,
    },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(PruneError);

impl From<ObliterateError> for PruneError {
    fn from(e: ObliterateError) -> Self {
        match e {
            ObliterateError::NoFiles => PruneError::NoFiles,
            ObliterateError::RevisionGiven { arg } => PruneError::RevisionGiven { arg },
            ObliterateError::Service(e) => PruneError::Service(e),
        }
    }
}
