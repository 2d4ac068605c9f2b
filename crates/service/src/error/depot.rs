//! Refusals of creating a depot.

use super::{ServiceError, embeds_service_error};

/// Why a depot could not be created; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum DepotError {
    /// The name is not a valid depot name (`reason` is the parser's message, naming it).
    #[error("{reason}")]
    BadName { name: String, reason: String },
    /// A depot of that name exists.
    #[error("depot '{name}' already exists")]
    Exists { name: String },
    /// A workspace has the name (`//NAME/...` would be ambiguous).
    #[error("'{name}' is already the name of a workspace")]
    NameIsWorkspace { name: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(DepotError);
