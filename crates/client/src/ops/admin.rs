//! `info`, `depots` and `depot create`: what the server says about itself (version, root,
//! uptime, security, a replica's lag, a proxy's cache) and its depots.

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;

/// The server, and the caller as it sees them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerInfo {
    pub server_version: String,
    pub server_root: String,
    pub server_address: String,
    pub uptime_seconds: u64,
    /// The caller's user and workspace (empty: none) as the server knows them.
    pub user: String,
    pub workspace: String,
    pub workspace_root: String,
    /// The server's clock, seconds since the epoch.
    pub server_time: u64,
    /// Stored content bytes this server has sent since it started.
    pub content_bytes_sent: u64,
    /// Set when a caching proxy stands between the client and the server.
    pub proxy: Option<ProxyState>,
    /// Set when the server is a read-only replica.
    pub replica: Option<ReplicaState>,
    /// The security level (0-4).
    pub security: u32,
    /// SHA-256 of the server's TLS certificate (colon hex) when it speaks TLS, else empty.
    pub tls_fingerprint: String,
}

/// A replica's state: whom it follows and how far behind it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplicaState {
    /// The primary, `HOST:PORT`.
    pub primary: String,
    /// Following the primary's journal now.
    pub connected: bool,
    /// The newest journal position applied.
    pub applied_position: u64,
    /// The primary's committed position, as last heard.
    pub primary_position: u64,
    pub lag_records: u64,
    /// 0 when caught up, else the time since it last was.
    pub lag_seconds: f64,
    pub forward_writes: bool,
    /// Why it last lost or could not reach the primary.
    pub last_error: String,
}

/// A caching proxy's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyState {
    pub address: String,
    pub target: String,
    pub cache_dir: String,
    pub cache_files: u64,
    pub cache_bytes: u64,
    pub cache_limit_bytes: u64,
    /// Content served from the cache.
    pub hits: u64,
    /// Requests that found no cached copy and waited for a fetch.
    pub misses: u64,
    pub bytes_from_target: u64,
    pub bytes_served: u64,
    /// Cache files that failed verification and were dropped.
    pub dropped_corrupt: u64,
}

/// A depot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Depot {
    pub name: String,
    /// `local`, ...
    pub kind: String,
    /// Seconds since the epoch.
    pub created: u64,
    pub owner: String,
    pub description: String,
}

impl Depot {
    fn from_wire(d: pb::Depot) -> Depot {
        Depot {
            name: d.name,
            kind: d.kind,
            created: d.created,
            owner: d.owner,
            description: d.description,
        }
    }
}

/// What the server says about itself and the caller.
pub async fn info(conn: &Connection) -> Result<ServerInfo, QueryError> {
    let r = conn
        .reply(conn.client().info(pb::InfoRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(ServerInfo {
        server_version: r.server_version,
        server_root: r.server_root,
        server_address: r.server_address,
        uptime_seconds: r.uptime_seconds,
        user: r.user,
        workspace: r.workspace,
        workspace_root: r.workspace_root,
        server_time: r.server_time,
        content_bytes_sent: r.content_bytes_sent,
        proxy: r.proxy.map(|p| ProxyState {
            address: p.address,
            target: p.target,
            cache_dir: p.cache_dir,
            cache_files: p.cache_files,
            cache_bytes: p.cache_bytes,
            cache_limit_bytes: p.cache_limit_bytes,
            hits: p.hits,
            misses: p.misses,
            bytes_from_target: p.bytes_from_target,
            bytes_served: p.bytes_served,
            dropped_corrupt: p.dropped_corrupt,
        }),
        replica: r.replica.map(|r| ReplicaState {
            primary: r.primary,
            connected: r.connected,
            applied_position: r.applied_position,
            primary_position: r.primary_position,
            lag_records: r.lag_records,
            lag_seconds: r.lag_seconds,
            forward_writes: r.forward_writes,
            last_error: r.last_error,
        }),
        security: r.security,
        tls_fingerprint: r.tls_fingerprint,
    })
}

/// Every depot, in name order.
pub async fn depots(conn: &Connection) -> Result<Vec<Depot>, QueryError> {
    let reply = conn
        .reply(conn.client().list_depots(pb::ListDepotsRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(reply.depots.into_iter().map(Depot::from_wire).collect())
}

/// Creates depot `name` (super users) and returns it.
pub async fn create_depot(
    conn: &Connection,
    name: &str,
    description: &str,
) -> Result<Depot, QueryError> {
    let depot = conn
        .reply(conn.client().create_depot(pb::CreateDepotRequest {
            caller: conn.caller(),
            name: name.to_string(),
            description: description.to_string(),
        }))
        .await?;
    Ok(Depot::from_wire(depot))
}
