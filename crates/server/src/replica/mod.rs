//! A read-only replica: a follower thread applies the primary's journal (content first, then
//! each record atomically), a gate in front of the API refuses or forwards every write RPC,
//! and a shared status answers `keel info`.

mod follow;
pub(crate) mod gate;
mod status;

pub(crate) use follow::{Follower, start_follower};
pub(crate) use status::ReplicaStatus;

/// How to follow a primary.
#[derive(Clone, Debug)]
pub struct ReplicaOptions {
    /// The primary's `HOST:PORT`.
    pub primary: String,
    /// Send write RPCs on to the primary unchanged instead of refusing them (each client's
    /// ticket goes with its request).
    pub forward_writes: bool,
    /// The service user the follower authenticates to the primary as (`--service-user`),
    /// with its ticket; without one it calls as `keel-replica` with no ticket, which a
    /// primary at security level 3 or higher refuses.
    pub service_user: Option<ServiceLogin>,
}

/// A service user and its login ticket on the primary.
#[derive(Clone, Debug)]
pub struct ServiceLogin {
    pub user: String,
    pub ticket: String,
}

/// The user a replica names when it calls its primary.
pub(crate) const REPLICA_USER: &str = "keel-replica";
