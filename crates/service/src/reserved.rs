//! The server's side of reserved file names: no command creates a depot file whose last
//! path component is one the client keeps for itself (`keel_core::RESERVED_FILE_NAMES`).

use crate::ServiceError;
use keel_core::reserved_name;

/// Refuses `path` (a depot path) when it ends in a reserved name.
pub(crate) fn check_reserved(path: &str) -> Result<(), ServiceError> {
    match reserved_name(path) {
        Some(name) => Err(ServiceError::ReservedName {
            path: path.to_string(),
            name,
        }),
        None => Ok(()),
    }
}
