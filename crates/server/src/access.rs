//! The RPC-level protections check: for every RPC, the lowest access level a caller must hold
//! somewhere (on some path) for the server to run it at all, as p4 checks a command's level
//! before it looks at any file. The commands then check each file they touch (in the
//! service). A test checks the list covers every RPC in `keel.proto`, so a new RPC cannot be
//! added unprotected; the few that need no level (as `p4 info`, `login` and `logout` need none)
//! say so in the list.

use crate::convert;
use crate::identity::{Peer, caller};
use keel_core::Level;
use keel_proto::v1 as pb;
use keel_service::{Caller, Service, ServiceError};
use tonic::Status;

/// Every RPC and the level it needs somewhere; `None`: no level, as p4 asks none for `info`,
/// `login` and `logout` (a user without protections can still see the server and end their
/// tickets).
pub(crate) const RPC_ACCESS: &[(&str, Option<Level>)] = &[
    ("Info", None),
    ("ListDepots", Some(Level::List)),
    ("CreateDepot", Some(Level::Super)),
    ("SaveWorkspace", Some(Level::List)),
    ("GetWorkspace", Some(Level::List)),
    ("ListWorkspaces", Some(Level::List)),
    ("DeleteWorkspace", Some(Level::List)),
    ("Open", Some(Level::Open)),
    ("Move", Some(Level::Open)),
    ("Revert", Some(Level::Open)),
    ("Reopen", Some(Level::Open)),
    ("Opened", Some(Level::List)),
    ("SaveChange", Some(Level::Open)),
    ("Submit", Some(Level::Write)),
    ("Integrate", Some(Level::Open)),
    ("ResolveList", Some(Level::Open)),
    ("ResolveDone", Some(Level::Open)),
    ("Resolved", Some(Level::Open)),
    ("Integrated", Some(Level::List)),
    ("Sync", Some(Level::Read)),
    ("UpdateHave", Some(Level::Read)),
    ("Have", Some(Level::List)),
    ("HaveIfChanged", Some(Level::List)),
    ("Files", Some(Level::List)),
    ("Fstat", Some(Level::List)),
    ("Dirs", Some(Level::List)),
    ("Filelog", Some(Level::List)),
    ("Changes", Some(Level::List)),
    ("Describe", Some(Level::List)),
    ("Print", Some(Level::Read)),
    ("Diff2", Some(Level::Read)),
    ("Shelve", Some(Level::Open)),
    ("DeleteShelved", Some(Level::Open)),
    ("Unshelve", Some(Level::Open)),
    ("Obliterate", Some(Level::Admin)),
    ("SaveLabel", Some(Level::Open)),
    ("GetLabel", Some(Level::List)),
    ("ListLabels", Some(Level::List)),
    ("DeleteLabel", Some(Level::Open)),
    ("Tag", Some(Level::List)),
    ("Labelsync", Some(Level::List)),
    ("SaveBranch", Some(Level::Open)),
    ("GetBranch", Some(Level::List)),
    ("ListBranches", Some(Level::List)),
    ("DeleteBranch", Some(Level::Open)),
    ("Checkpoint", Some(Level::Super)),
    ("Verify", Some(Level::Admin)),
    ("Journal", Some(Level::Super)),
    ("Content", Some(Level::Read)),
    ("GetGroup", Some(Level::List)),
    // A group's owners may edit it without being super users; the service checks which.
    ("SaveGroup", Some(Level::List)),
    ("DeleteGroup", Some(Level::List)),
    ("ListGroups", Some(Level::List)),
    ("GetProtections", Some(Level::Super)),
    ("SaveProtections", Some(Level::Super)),
    ("Protects", Some(Level::List)),
    ("GetTriggers", Some(Level::Super)),
    ("SaveTriggers", Some(Level::Super)),
    ("Login", None),
    ("LoginStatus", None),
    ("Logout", None),
    // One's own password and user spec need list; another user's needs super, which the
    // service checks (`Service::is_super`).
    ("SetPassword", Some(Level::List)),
    ("GetUser", Some(Level::List)),
    ("SaveUser", Some(Level::List)),
    ("DeleteUser", Some(Level::List)),
    ("ListUsers", Some(Level::List)),
    ("Configure", Some(Level::Super)),
    ("ListSettings", Some(Level::Super)),
    // Anyone with list may see the commands running (their own; `-a`/`-l` and terminating
    // one need super, which the service checks), as `p4 monitor show` asks list.
    ("MonitorShow", Some(Level::List)),
    ("MonitorTerminate", Some(Level::Super)),
    ("ReportProbe", Some(Level::List)),
    // Keys may need admin (`keys.hide`), and reserved counters super; the service checks.
    ("GetCounter", Some(Level::List)),
    ("UpdateCounter", Some(Level::Review)),
    ("ListCounters", Some(Level::List)),
    ("Review", Some(Level::Review)),
    ("Reviews", Some(Level::List)),
    ("Interchanges", Some(Level::List)),
    ("Cstat", Some(Level::List)),
    ("Sizes", Some(Level::List)),
];

/// The level `rpc` needs somewhere (`None`: none). An RPC missing from the list needs super,
/// so it is never unprotected.
pub fn required_level(rpc: &str) -> Option<Level> {
    RPC_ACCESS
        .iter()
        .find(|(name, _)| *name == rpc)
        .map_or(Some(Level::Super), |(_, level)| *level)
}

/// The request's caller, authenticated (`identity::caller`), once the protections give them
/// the level `rpc` needs somewhere; otherwise PERMISSION_DENIED naming the RPC and the level.
pub(crate) fn authorize(
    svc: &Service,
    peer: &Peer,
    c: Option<pb::Caller>,
    rpc: &'static str,
) -> Result<Caller, Status> {
    let who = caller(peer, c)?;
    let Some(level) = required_level(rpc) else {
        return Ok(who);
    };
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
        let rpcs = crate::proto_rpcs();
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
