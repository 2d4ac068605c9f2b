//! Refusals of creating, editing and deleting pending changes.

use keel_core::ChangeNumber;

use super::{ServiceError, embeds_service_error};

/// Why a pending change could not be saved or deleted; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// Only numbered changes can be deleted.
    #[error("the default changelist can't be deleted")]
    DefaultChangelist,
    /// A change that still has opened files cannot be deleted.
    #[error("change {change} has files opened")]
    FilesOpened { change: ChangeNumber },
    /// A numbered change needs a description.
    #[error("a changelist needs a description")]
    NoDescription,
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(ChangeError);
