//! Who may administer the server: the one question the auth commands ask before changing
//! settings or another user.

use crate::{Caller, Service, ServiceError};

impl Service {
    /// Whether `caller` is a super user (may change settings, set other users' passwords and
    /// edit or delete other users with `-f`).
    ///
    /// Until a protections table exists every user is a super user, as in Perforce; the
    /// protections evaluation answers here once it does. Every super-only rule of the service
    /// calls this one function.
    pub fn is_super(&self, caller: &Caller) -> Result<bool, ServiceError> {
        let _ = caller;
        Ok(true)
    }
}
