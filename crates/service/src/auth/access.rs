//! Who may administer the server: the one question the auth commands ask before changing
//! settings or another user.

use crate::{Caller, Service, ServiceError};
use keel_core::Right;

impl Service {
    /// Whether `caller` is a super user (may change settings, set other users' passwords,
    /// edit or delete other users with `-f`, and edit the triggers table).
    ///
    /// Answered by the protections table, through the same compiled copy every command checks
    /// its files against: until a table exists every user is a super user, as in Perforce.
    /// Every super-only rule of the service calls this one function.
    pub fn is_super(&self, caller: &Caller) -> Result<bool, ServiceError> {
        Ok(self.user_access(caller)?.allows_anywhere(Right::Super))
    }
}
