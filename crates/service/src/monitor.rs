//! Who may look at and stop running commands: like `p4 monitor`, anyone may list what runs
//! (command names only); the arguments and details of every command (`-a`, `-l`) and
//! terminating one need a super user.

use crate::{Caller, Service, ServiceError};

/// What a monitor request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorAccess {
    /// The running commands' names, users and times.
    List,
    /// Also their arguments and details (`monitor show -a` / `-l`).
    Details,
    /// Terminating one.
    Terminate,
}

impl Service {
    /// Refuses `caller` what `access` needs when it is not allowed.
    pub fn may_monitor(&self, caller: &Caller, access: MonitorAccess) -> Result<(), ServiceError> {
        let what = match access {
            MonitorAccess::List => return Ok(()),
            MonitorAccess::Details => "monitor show -a/-l",
            MonitorAccess::Terminate => "monitor terminate",
        };
        if self.is_super(caller)? {
            Ok(())
        } else {
            Err(ServiceError::MonitorNeedsSuper {
                user: caller.user.clone(),
                what,
            })
        }
    }
}
