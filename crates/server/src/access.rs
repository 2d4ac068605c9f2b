//! The command-level protections check for gRPC calls: each RPC is one command of the service's
//! table (`keel_service::command`), whose row says the lowest access level a caller must hold
//! somewhere for the server to run it at all, as p4 checks a command's level before it looks
//! at any file; the commands then check each file they touch (in the service). A test checks
//! the table covers every RPC in `keel.proto`, so a new RPC cannot be added unprotected.

use crate::convert;
use crate::identity::{Peer, caller};
use keel_core::Level;
use keel_proto::v1 as pb;
use keel_service::command::{self, Command};
use keel_service::{Caller, Service};
use tonic::Status;

/// The level `rpc` needs somewhere (`None`: none). An RPC missing from the table needs super,
/// so it is never unprotected.
pub fn required_level(rpc: &str) -> Option<Level> {
    command::find(rpc).map_or(Some(Level::Super), |c| c.level)
}

/// The request's caller, authenticated (`identity::caller`), once the protections give them
/// the level `command` needs somewhere; otherwise PERMISSION_DENIED naming the command and
/// the level.
pub(crate) fn authorize(
    svc: &Service,
    peer: &Peer,
    c: Option<pb::Caller>,
    command: &'static Command,
) -> Result<Caller, Status> {
    let who = caller(peer, c)?;
    svc.admit(&who, command).map_err(convert::status)?;
    Ok(who)
}

#[cfg(test)]
mod tests {
    use keel_service::command::{COMMANDS, find};

    /// Every RPC in the proto is a command of the table, and every command is an RPC: a new
    /// RPC cannot be served without its level, its kind (what a replica does with it) and its
    /// name in the monitor.
    #[test]
    fn every_rpc_is_one_command() {
        let rpcs = crate::proto_rpcs();
        assert!(rpcs.len() > 40, "{rpcs:?}");
        for rpc in &rpcs {
            assert!(
                find(rpc).is_some(),
                "{rpc} has no row in keel_service::command's table"
            );
        }
        for c in COMMANDS {
            assert!(rpcs.contains(&c.name), "{} is no RPC of keel.proto", c.name);
        }
        assert_eq!(rpcs.len(), COMMANDS.len(), "an RPC is declared twice");
    }
}
