//! The process's open-file limit: the soft `RLIMIT_NOFILE` raised to the hard one at start
//! (many systems start services at a soft 1,024 while allowing far more), and the connection
//! cap fitted under it so that accepting never runs the process out of descriptors.

use crate::limits::ConnLimits;

/// Descriptors kept for everything but connections (the stores, logs, content files being
/// read or written, the metrics listener's connections).
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// The soft open-file limit before and after [`raise_open_files_limit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFiles {
    pub before: Option<u64>,
    pub now: Option<u64>,
    pub hard: Option<u64>,
}

impl OpenFiles {
    /// A limit as the log writes it (`unlimited` for none).
    pub fn text(limit: Option<u64>) -> String {
        limit.map_or_else(|| "unlimited".to_string(), |n| n.to_string())
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (`None`: unlimited). A refusal leaves
/// the limit as it was; the answer says what is in force.
pub fn raise_open_files_limit() -> OpenFiles {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let old = getrlimit(Resource::Nofile);
        if old.current != old.maximum && old.maximum.is_some() {
            let raised = Rlimit {
                current: old.maximum,
                maximum: old.maximum,
            };
            let _ = setrlimit(Resource::Nofile, raised);
        }
        let new = getrlimit(Resource::Nofile);
        OpenFiles {
            before: old.current,
            now: new.current,
            hard: new.maximum,
        }
    }
    #[cfg(not(unix))]
    OpenFiles {
        before: None,
        now: None,
        hard: None,
    }
}

impl ConnLimits {
    /// These limits with `max_connections` lowered, when needed, to fit `listeners`
    /// listeners' connections and [`RESERVED_DESCRIPTORS`] under the open-file limit.
    pub fn fit_to(self, open_files: Option<u64>, listeners: u64) -> ConnLimits {
        let Some(limit) = open_files else {
            return self;
        };
        let room = limit.saturating_sub(RESERVED_DESCRIPTORS) / listeners.max(1);
        let max_connections = (self.max_connections as u64).min(room.max(1)) as usize;
        ConnLimits {
            max_connections,
            max_per_address: self.max_per_address.min(max_connections),
            ..self
        }
    }
}

/// Raises the soft open-file limit to the hard one and fits `configured` under it for
/// `listeners` listeners, logging the limits (and a warning when the cap had to be lowered):
/// the start-up step every Keel listener (server, proxy) shares.
pub fn fit_connection_limits(configured: crate::ConnLimits, listeners: u64) -> crate::ConnLimits {
    let open_files = raise_open_files_limit();
    let limits = configured.fit_to(open_files.now, listeners);
    tracing::info!(
        before = %OpenFiles::text(open_files.before),
        now = %OpenFiles::text(open_files.now),
        hard = %OpenFiles::text(open_files.hard),
        max_connections = limits.max_connections,
        max_connections_per_address = limits.max_per_address,
        "open-file limit"
    );
    if limits.max_connections < configured.max_connections {
        tracing::warn!(
            configured = configured.max_connections,
            used = limits.max_connections,
            "max_connections lowered to fit under the open-file limit"
        );
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A cap past what the descriptors allow comes down; one within stays.
    #[test]
    fn the_cap_fits_under_the_open_file_limit() {
        let limits = ConnLimits {
            max_connections: 4096,
            max_per_address: 256,
            idle_timeout: Duration::from_secs(1),
            accept_backoff_max: Duration::from_secs(1),
        };
        assert_eq!(limits.fit_to(Some(1024), 1).max_connections, 768);
        assert_eq!(limits.fit_to(Some(1 << 20), 2).max_connections, 4096);
        assert_eq!(limits.fit_to(None, 1), limits);
        assert_eq!(limits.fit_to(Some(300), 1).max_per_address, 44);
    }
}
