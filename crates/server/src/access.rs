//! The RPC-level protections check: for every RPC, the lowest access level a caller must hold
//! somewhere (on some path) for the server to run it at all, as p4 checks a command's level
//! before it looks at any file. The commands then check each file they touch (in the
//! service). A test checks the list covers every RPC in `keel.proto`, so a new RPC cannot be
//! added unprotected.

use crate::convert;
use crate::identity::{Peer, caller};
use keel_core::Level;
use keel_proto::v1 as pb;
use keel_service::{Caller, Service, ServiceError};
use tonic::Status;

/// Every RPC and the level it needs somewhere.
pub(crate) const RPC_ACCESS: &[(&str, Level)] = &[
    ("Info", Level::List),
    ("ListDepots", Level::List),
    ("CreateDepot", Level::Super),
    ("SaveWorkspace", Level::List),
    ("GetWorkspace", Level::List),
    ("ListWorkspaces", Level::List),
    ("DeleteWorkspace", Level::List),
    ("Open", Level::Open),
    ("Move", Level::Open),
    ("Revert", Level::Open),
    ("Reopen", Level::Open),
    ("Opened", Level::List),
    ("SaveChange", Level::Open),
    ("Submit", Level::Write),
    ("Integrate", Level::Open),
    ("ResolveList", Level::Open),
    ("ResolveDone", Level::Open),
    ("Resolved", Level::Open),
    ("Integrated", Level::List),
    ("Sync", Level::Read),
    ("UpdateHave", Level::Read),
    ("Have", Level::List),
    ("Files", Level::List),
    ("Fstat", Level::List),
    ("Dirs", Level::List),
    ("Filelog", Level::List),
    ("Changes", Level::List),
    ("Describe", Level::List),
    ("Print", Level::Read),
    ("Diff2", Level::Read),
    ("Shelve", Level::Open),
    ("DeleteShelved", Level::Open),
    ("Unshelve", Level::Open),
    ("Obliterate", Level::Admin),
    ("SaveLabel", Level::Open),
    ("GetLabel", Level::List),
    ("ListLabels", Level::List),
    ("DeleteLabel", Level::Open),
    ("Tag", Level::List),
    ("Labelsync", Level::List),
    ("SaveBranch", Level::Open),
    ("GetBranch", Level::List),
    ("ListBranches", Level::List),
    ("DeleteBranch", Level::Open),
    ("Checkpoint", Level::Super),
    ("Verify", Level::Admin),
    ("Journal", Level::Super),
    ("Content", Level::Read),
    ("GetGroup", Level::List),
    // A group's owners may edit it without being super users; the service checks which.
    ("SaveGroup", Level::List),
    ("DeleteGroup", Level::List),
    ("ListGroups", Level::List),
    ("GetProtections", Level::Super),
    ("SaveProtections", Level::Super),
    ("Protects", Level::List),
];

/// The level `rpc` needs somewhere; an RPC missing from the list needs super (never
/// unprotected).
pub fn required_level(rpc: &str) -> Level {
    RPC_ACCESS
        .iter()
        .find(|(name, _)| *name == rpc)
        .map_or(Level::Super, |(_, level)| *level)
}

/// The request's caller (see `identity.rs`), once the protections give them the level `rpc`
/// needs somewhere; otherwise PERMISSION_DENIED naming the RPC and the level.
pub(crate) fn authorize(
    svc: &Service,
    peer: &Peer,
    c: Option<pb::Caller>,
    rpc: &'static str,
) -> Result<Caller, Status> {
    let who = caller(peer, c)?;
    let level = required_level(rpc);
    let access = svc.user_access(&who).map_err(convert::status)?;
    if !access.allows_anywhere(level.right()) {
        tracing::info!(user = %who.user, address = ?who.address, rpc, %level, "refused by protections");
        return Err(convert::status(ServiceError::CommandDenied {
            command: rpc,
            needed: level.right(),
        }));
    }
    Ok(who)
}

#[cfg(test)]
mod tests {
    use super::RPC_ACCESS;

    /// Every RPC in the proto has a level, exactly once, and nothing else is listed.
    #[test]
    fn every_rpc_has_a_level() {
        let proto = include_str!("../../proto/proto/keel.proto");
        let rpcs: Vec<&str> = proto
            .lines()
            .filter_map(|l| l.trim().strip_prefix("rpc "))
            .filter_map(|l| l.split('(').next())
            .map(str::trim)
            .collect();
        assert!(rpcs.len() > 40, "{rpcs:?}");
        for rpc in &rpcs {
            let n = RPC_ACCESS.iter().filter(|(name, _)| name == rpc).count();
            assert_eq!(n, 1, "{rpc} must be listed exactly once in RPC_ACCESS");
        }
        for (listed, _) in RPC_ACCESS {
            assert!(rpcs.contains(listed), "{listed} is no RPC of keel.proto");
        }
    }
}
