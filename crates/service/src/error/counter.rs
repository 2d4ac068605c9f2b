//! Refusals of `counter` and `key` (set, delete, increment, compare-and-set).

use keel_core::{CounterError, CounterSpace};

use super::{ServiceError, embeds_service_error};

/// Why a counter or key was not read or changed; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum CounterOpError {
    /// A name or value the rules refuse (see [`keel_core::counter`]).
    #[error(transparent)]
    Invalid(#[from] CounterError),
    /// The `change` counter is the change numbering itself.
    #[error("counter 'change' is the number of the newest change; it cannot be set or deleted")]
    ChangeCounter,
    /// A counter the server reserves, changed without `-f`.
    #[error("counter '{name}' is reserved by the server; setting or deleting it needs -f")]
    Protected { name: String },
    /// `-f` given by a user without super access.
    #[error("counter '{name}': -f needs super access")]
    ForceNeedsSuper { name: String },
    /// Reading or setting the namespace needs more than the caller holds.
    #[error("You don't have permission for this operation: {what} {space}s needs {needed} access")]
    Denied {
        space: CounterSpace,
        what: &'static str,
        needed: keel_core::Right,
    },
    /// `--from OLD --to NEW` when the stored value is not OLD.
    #[error("{space} '{name}' holds '{actual}', not '{expected}'; it was not changed")]
    NotExpected {
        space: CounterSpace,
        name: String,
        expected: String,
        actual: String,
    },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(CounterOpError);
