//! A read-only replica: a follower thread applies the primary's journal (content first, then
//! each record atomically), a gate in front of the API refuses or forwards every write RPC,
//! and a shared status answers `keel info`. With on-demand content the follower applies
//! metadata only and `OnDemandBlobs` fetches a blob the first time a client needs it.

mod content;
mod credentials;
mod follow;
pub(crate) mod gate;
mod on_demand;
mod status;

pub use credentials::BadTicket;
pub(crate) use credentials::Credentials;
pub(crate) use follow::{Follower, start_follower};
pub(crate) use on_demand::OnDemandBlobs;
pub(crate) use status::ReplicaStatus;

/// How to follow a primary.
#[derive(Clone, Debug)]
pub struct ReplicaOptions {
    /// The primary's `HOST:PORT`, or `ssl:HOST:PORT` for TLS.
    pub primary: String,
    /// Send write RPCs on to the primary unchanged instead of refusing them (each client's
    /// ticket goes with its request).
    pub forward_writes: bool,
    /// The trust file holding the fingerprint of an `ssl:` primary (that of the user running
    /// the replica); `None` trusts no TLS primary.
    pub trust_file: Option<std::path::PathBuf>,
    /// The service user the follower authenticates to the primary as (`--service-user`),
    /// with its ticket; without one it calls as `keel-replica` with no ticket, which a
    /// primary at security level 3 or higher refuses.
    pub service_user: Option<ServiceLogin>,
    /// When the replica fetches content.
    pub content: ContentMode,
}

/// When a replica fetches the content the primary's records name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContentMode {
    /// Before applying each record, so every revision it serves has its content at hand.
    #[default]
    All,
    /// The first time a client needs it (the replica holds only what was asked for).
    OnDemand,
}

/// A service user and its login ticket on the primary.
#[derive(Clone, Debug)]
pub struct ServiceLogin {
    pub user: String,
    pub ticket: String,
}

/// A dialer for the primary at `primary`, trusting what `trust_file` holds for it (read now,
/// so a `keel trust` run meanwhile counts at the next connection).
pub(crate) fn dialer(
    primary: &str,
    trust_file: Option<&std::path::Path>,
    connect_timeout: std::time::Duration,
) -> Result<keel_tls::Dialer, keel_tls::TrustFileError> {
    let addr = keel_tls::ServerAddr::parse(primary);
    let trust = match (addr.tls, trust_file) {
        (true, Some(path)) => keel_tls::TrustFile::load(path)?.mode(&addr.host_port),
        _ => keel_tls::TrustMode::Unknown,
    };
    Ok(keel_tls::Dialer::new(addr, trust, connect_timeout))
}

/// The user a replica names when it calls its primary.
pub(crate) const REPLICA_USER: &str = "keel-replica";
