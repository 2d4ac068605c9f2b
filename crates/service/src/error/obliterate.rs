//! Refusals of obliterate.

use super::{ServiceError, embeds_service_error};

/// Why an obliterate did not start; nothing was removed.
#[derive(Debug, thiserror::Error)]
pub enum ObliterateError {
    /// Obliterate needs file arguments (it never means "everything").
    #[error("obliterate needs file arguments (e.g. //depot/old/...)")]
    NoFiles,
    /// An argument with a revision: obliterate removes whole files.
    #[error("{arg} - obliterate removes whole files; revision ranges are not supported")]
    RevisionGiven { arg: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(ObliterateError);
