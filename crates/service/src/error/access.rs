//! Refusals of the group and protections commands.

use super::{ServiceError, embeds_service_error};
use keel_core::protect::ProtectError;

/// Why a group or the protections table could not be saved or shown; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// No group of that name.
    #[error("group '{name}' does not exist")]
    NoSuchGroup { name: String },
    /// A group spec that cannot be saved (`reason` names the field and value).
    #[error("group {name}: {reason}")]
    BadGroup { name: String, reason: String },
    /// A group owner who is not a super user changed a field that widens rights (a limit).
    #[error(
        "group {name}: only a super user may change {field}; an owner changes Users, \
         Subgroups and Owners; nothing was saved"
    )]
    PrivilegedField { name: String, field: &'static str },
    /// A protections line that does not parse (the error names the line).
    #[error(transparent)]
    BadProtections(#[from] ProtectError),
    /// The new table would leave the user saving it without super access from where they
    /// are, so no one could change it again.
    #[error(
        "the new protections table leaves {user} without super access from {address}; keep a super line for yourself"
    )]
    LastSuper { user: String, address: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(AccessError);
