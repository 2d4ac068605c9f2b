//! The proxy's tuning knobs in one place, with their defaults; `keel proxy --config FILE`
//! reads them from TOML and its flags override them.

use documented::DocumentedFields;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Every tuning knob of a caching proxy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, DocumentedFields)]
#[serde(default, deny_unknown_fields)]
pub struct ProxyConfig {
    /// Most stored bytes kept in the cache; least recently used content beyond it is evicted
    /// (bytes; default 10737418240, 10 GiB).
    pub cache_size_bytes: u64,
    /// Files of one Sync or Print whose content is fetched or verified ahead of the one being
    /// streamed (files; default 16).
    pub fetch_ahead: usize,
    /// Stored content up to this size is verified in memory and sent from there; larger
    /// content is verified in one pass over the file and streamed from it in a second
    /// (bytes; default 1048576).
    pub small_content_bytes: u64,
    /// Bytes of content per streamed chunk message (bytes; default 262144, as the server).
    pub content_chunk_bytes: usize,
    /// Largest gRPC message accepted or sent (bytes; default 67108864, as the server).
    pub max_message_bytes: usize,
    /// Messages queued towards one client before the proxy waits for it (messages;
    /// default 256).
    pub stream_buffer: usize,
    /// How long connecting to the target may take before a call fails (seconds; default 10).
    pub connect_timeout_secs: u64,
    /// The TLS certificate (PEM) presented with `--listen ssl:HOST:PORT`; a relative path is
    /// under the cache directory. Empty: `tls/cert.pem` there, generated (self-signed, with
    /// `tls/key.pem`) on the first start that needs it.
    pub tls_cert: PathBuf,
    /// The private key (PEM) of `tls_cert`. Set both or neither.
    pub tls_key: PathBuf,
    /// How long a client may take to finish its TLS handshake (milliseconds; default 10000).
    pub tls_handshake_timeout_ms: u64,
    /// `HOST:PORT` where Prometheus metrics are served over HTTP at `/metrics`. Empty: none.
    pub metrics_listen: String,
    /// Most client connections open at once on each listener (the proxy's port, its metrics
    /// port); one more is closed at once, counted and logged. Lowered at start to fit under
    /// the open-file limit (connections; default 4096).
    pub max_connections: usize,
    /// Most connections open at once from one client address (connections; default 256).
    pub max_connections_per_address: usize,
    /// A client connection with no request in flight for this long is closed (milliseconds;
    /// default 300000).
    pub idle_timeout_ms: u64,
    /// How often an HTTP/2 keepalive ping goes to a client connection that has sent nothing
    /// (milliseconds; default 60000).
    pub keepalive_interval_ms: u64,
    /// How long a keepalive ping may go unanswered before the connection is closed
    /// (milliseconds; default 20000).
    pub keepalive_timeout_ms: u64,
    /// Longest wait after a failed accept; it starts at 5 ms and doubles (milliseconds;
    /// default 1000).
    pub accept_backoff_max_ms: u64,
    /// After SIGTERM or Ctrl-C, how long calls in flight may take to finish before the proxy
    /// exits anyway, cancelling them (milliseconds; default 10000; 0 cancels at once).
    pub shutdown_grace_ms: u64,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            cache_size_bytes: 10 << 30,
            fetch_ahead: 16,
            small_content_bytes: 1 << 20,
            content_chunk_bytes: 256 * 1024,
            max_message_bytes: 64 << 20,
            stream_buffer: 256,
            connect_timeout_secs: 10,
            tls_cert: PathBuf::new(),
            tls_key: PathBuf::new(),
            tls_handshake_timeout_ms: 10_000,
            metrics_listen: String::new(),
            max_connections: 4096,
            max_connections_per_address: 256,
            idle_timeout_ms: 300_000,
            keepalive_interval_ms: 60_000,
            keepalive_timeout_ms: 20_000,
            accept_backoff_max_ms: 1000,
            shutdown_grace_ms: 10_000,
        }
    }
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProxyConfigError {
    // The cause is part of the message (not a `source`), so it is printed once.
    #[error("cannot read proxy configuration {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("proxy configuration {path}: {error}")]
    Parse {
        path: String,
        error: toml::de::Error,
    },
    #[error("proxy configuration {path}: {key} = {value} is not valid: it must be at least 1")]
    Invalid {
        path: String,
        key: &'static str,
        value: u64,
    },
}

impl ProxyConfig {
    /// Where the TLS certificate and key are, for a proxy caching in `cache_dir`.
    pub fn tls_paths(&self, cache_dir: &Path) -> keel_tls::CertPaths {
        let given = !self.tls_cert.as_os_str().is_empty() || !self.tls_key.as_os_str().is_empty();
        let pick = |path: &Path, default: &str| match path.as_os_str().is_empty() {
            true => cache_dir.join("tls").join(default),
            false => cache_dir.join(path),
        };
        keel_tls::CertPaths {
            cert: pick(&self.tls_cert, "cert.pem"),
            key: pick(&self.tls_key, "key.pem"),
            generate: !given,
        }
    }

    /// Reads a TOML file; keys left out keep their defaults, unknown keys are refused.
    pub fn load(path: &Path) -> Result<ProxyConfig, ProxyConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ProxyConfigError::Read {
            path: path.display().to_string(),
            error,
        })?;
        let config: ProxyConfig =
            toml::from_str(&text).map_err(|error| ProxyConfigError::Parse {
                path: path.display().to_string(),
                error,
            })?;
        match config.zero_knob() {
            Some((key, value)) => Err(ProxyConfigError::Invalid {
                path: path.display().to_string(),
                key,
                value,
            }),
            None => Ok(config),
        }
    }

    /// The first knob that must be at least 1 and is not.
    pub fn zero_knob(&self) -> Option<(&'static str, u64)> {
        [
            ("max_connections", self.max_connections as u64),
            (
                "max_connections_per_address",
                self.max_connections_per_address as u64,
            ),
            ("idle_timeout_ms", self.idle_timeout_ms),
            ("keepalive_interval_ms", self.keepalive_interval_ms),
            ("keepalive_timeout_ms", self.keepalive_timeout_ms),
            ("accept_backoff_max_ms", self.accept_backoff_max_ms),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0)
    }

    /// The connection limits of each listener, before fitting them to the open-file limit.
    pub fn connection_limits(&self) -> keel_tls::ConnLimits {
        keel_tls::ConnLimits {
            max_connections: self.max_connections,
            max_per_address: self.max_connections_per_address,
            idle_timeout: std::time::Duration::from_millis(self.idle_timeout_ms),
            accept_backoff_max: std::time::Duration::from_millis(self.accept_backoff_max_ms),
        }
    }
}

impl ProxyConfig {
    /// The configuration as TOML, loadable with [`ProxyConfig::load`].
    pub fn to_toml(&self) -> String {
        let table = toml::Table::try_from(self).expect("a struct of numbers serializes");
        let mut out = String::from(
            "# Keel proxy configuration (`keel proxy --config FILE`). Every knob is optional; \
             these are the values in effect.\n",
        );
        for name in ProxyConfig::FIELD_NAMES {
            let Some(value) = table.get(*name) else {
                continue;
            };
            for line in ProxyConfig::get_field_docs(name).unwrap_or("").lines() {
                out.push_str(&format!("# {}\n", line.trim()));
            }
            out.push_str(&format!("{name} = {value}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--print-config` prints documents every knob and reads back as the same configuration.
    #[test]
    fn printed_configuration_is_documented_and_reads_back() {
        let config = ProxyConfig {
            fetch_ahead: 3,
            ..ProxyConfig::default()
        };
        let text = config.to_toml();
        assert!(
            text.contains("# Most stored bytes kept in the cache"),
            "{text}"
        );
        let back: ProxyConfig = toml::from_str(&text).expect("parses");
        assert_eq!(back, config);
    }
}
