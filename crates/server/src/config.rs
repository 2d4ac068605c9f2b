//! The server's tuning knobs in one tree: the server's own, and the store's, service's and
//! content store's, with their defaults and docs. `ROOT/keel.toml` overrides any of them.

use documented::DocumentedFields;
use keel_blob::BlobConfig;
use keel_service::ServiceConfig;
use keel_store::StoreConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Name of the configuration file under the server root.
pub const CONFIG_FILE_NAME: &str = "keel.toml";

/// Every tuning knob of a server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, DocumentedFields)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Async runtime worker threads. More workers than cores lets the kernel time-slice a
    /// submit's RPC against a long read's stream instead of queueing it behind it on a worker
    /// (threads; default twice the cores, at least 4).
    pub workers: usize,
    /// Largest gRPC message accepted or sent (bytes; default 67108864).
    pub max_message_bytes: usize,
    /// Bytes of file content per streamed chunk message (bytes; default 262144).
    pub content_chunk_bytes: usize,
    /// Most records a small read may produce on a runtime thread before it is rerun off the
    /// runtime (records; default 256).
    pub inline_max_records: usize,
    /// Most CPU time of its thread a small read may use on a runtime thread before it is
    /// rerun off the runtime (microseconds; default 2000).
    pub inline_cpu_micros: u64,
    /// Nice value of threads serving long reads (Linux; 0 to 19; default 10).
    pub long_read_nice: i32,
    /// Most long reads on low-priority threads of their own at once; more run on the
    /// blocking pool at normal priority (threads; default 64).
    pub long_read_threads: usize,
    /// Most records queued between a streaming producer and its response stream before the
    /// producer waits (records; default 2048).
    pub handover_max_records: usize,
    /// Most encoded bytes queued between a streaming producer and its response stream before
    /// the producer waits; one larger record still passes alone (bytes; default 2097152).
    pub handover_max_bytes: usize,
    /// How long a response stream whose records are flowing lets them gather before taking
    /// them (microseconds; default 1000, one tick of the runtime's timer).
    pub handover_pace_micros: u64,
    /// How long the allocator keeps memory that was freed before giving it back to the
    /// system (milliseconds; default 10; -1 never). Longer saves a little CPU when the same
    /// memory is soon needed again, at the cost of a larger resident size after big commands.
    pub allocator_purge_delay_ms: i64,
    /// A primary sends a replica that is caught up a heartbeat (its committed journal
    /// position) this often, so the replica's lag stays current and a client that went away
    /// is noticed (milliseconds; default 1000).
    pub journal_heartbeat_ms: u64,
    /// Most journal records a primary reads and sends in one batch (records; default 256).
    pub journal_batch_records: usize,
    /// Most changes a `watch` subscription reads from the store at once; a subscriber further
    /// behind is caught up batch by batch as it takes them (changes; default 64).
    pub watch_batch_changes: usize,
    /// Most matching files a `watch` subscription lists with one change; the message says
    /// when more matched (files; default 1000).
    pub watch_max_files: usize,
    /// Messages queued for one `watch` subscriber that reads slowly, before the server stops
    /// reading for it and waits (messages; default 16).
    pub watch_buffer_messages: usize,
    /// How long the server waits for a webhook's receiver to answer a POST before it counts
    /// the attempt as failed (milliseconds; default 10000).
    pub webhook_timeout_ms: u64,
    /// The wait before a failed webhook delivery is tried again; it doubles with each failure
    /// up to `webhook_retry_max_ms` (milliseconds; default 1000).
    pub webhook_retry_min_ms: u64,
    /// The longest wait between two attempts at one webhook delivery (milliseconds; default
    /// 300000).
    pub webhook_retry_max_ms: u64,
    /// Most files listed in one webhook payload; `moreFiles` says when the change has more
    /// (files; default 1000).
    pub webhook_max_files: usize,
    /// How long a replica waits before connecting to its primary again after losing it
    /// (milliseconds; default 500).
    pub replica_retry_ms: u64,
    /// After SIGTERM or Ctrl-C, how long running commands may take to finish before the server
    /// exits anyway, cancelling them; it stops accepting connections and ends replicas'
    /// journal streams at once (milliseconds; default 10000; 0 cancels at once).
    pub shutdown_grace_ms: u64,
    /// Threads of a replica with on-demand content that fetch content from the primary for
    /// the clients waiting for it (threads; default 2).
    pub replica_fetch_threads: usize,
    /// Blobs a replica's follower fetches from the primary at once for one journal record,
    /// so a change of many files does not wait for one round trip per file (blobs; default 8).
    pub replica_fetch_parallel: usize,
    /// The TLS certificate (PEM) a server started with `--listen ssl:HOST:PORT` presents; a
    /// relative path is under the root. Empty: `tls/cert.pem` under the root, generated
    /// (self-signed, with `tls/key.pem`) on the first start that needs it.
    pub tls_cert: PathBuf,
    /// The private key (PEM) of `tls_cert`; a relative path is under the root. Empty:
    /// `tls/key.pem` under the root. Set both or neither.
    pub tls_key: PathBuf,
    /// How long a client may take to finish its TLS handshake before the connection is
    /// dropped (milliseconds; default 10000).
    pub tls_handshake_timeout_ms: u64,
    /// Most connections open at once on each listener (the gRPC port, the metrics port); one
    /// more is closed at once, counted in the metrics and logged (at most one line per 10 s).
    /// Lowered at start, with a log line, to fit under the open-file limit (connections;
    /// default 4096).
    pub max_connections: usize,
    /// Most connections open at once from one client address on each listener; one more is
    /// closed at once like one past `max_connections`. Clients behind one NAT or proxy share
    /// an address: a `keel proxy` multiplexes its users over a few connections (connections;
    /// default 256).
    pub max_connections_per_address: usize,
    /// A connection with no request in flight for this long is closed, on every listener;
    /// a long call (a sync, a replica's journal stream, `monitor`) keeps its connection
    /// (milliseconds; default 300000).
    pub idle_timeout_ms: u64,
    /// How often the server sends an HTTP/2 keepalive ping on a gRPC connection that has
    /// sent nothing, to find peers that are gone (milliseconds; default 60000).
    pub keepalive_interval_ms: u64,
    /// How long a keepalive ping may go unanswered before the connection is closed
    /// (milliseconds; default 20000).
    pub keepalive_timeout_ms: u64,
    /// Longest wait after a failed accept (out of file descriptors and the like); the wait
    /// starts at 5 ms and doubles while accepts keep failing, so the accept loop never spins
    /// (milliseconds; default 1000).
    pub accept_backoff_max_ms: u64,
    /// File the audit log is appended to, one JSON line per file content access (sync, print,
    /// ...); a relative path is under the root. Empty: no audit log (default).
    pub audit_log: PathBuf,
    /// Most audit records waiting for the audit writer; when it falls this far behind, further
    /// records are dropped and counted, never waited for (records; default 65536).
    pub audit_queue_records: usize,
    /// How long audit records gather between two writes of the audit writer, so it writes
    /// batches instead of waking for each record (milliseconds; default 10).
    pub audit_batch_ms: u64,
    /// File each ended command's JSON line is appended to (see docs/guide/monitoring.md); a
    /// relative path is under the root. Empty: no command log (default
    /// `logs/commands.jsonl`).
    pub command_log: PathBuf,
    /// Most command records waiting for the command log's writer; when it falls this far
    /// behind, further records are dropped and counted, never waited for (records; default
    /// 65536).
    pub command_log_queue_records: usize,
    /// How long command records gather between two writes of the command log's writer, so it
    /// writes batches instead of waking for each command (milliseconds; default 10).
    pub command_log_batch_ms: u64,
    /// The command log is rotated before it grows past this size (bytes; default 67108864).
    pub command_log_rotate_bytes: u64,
    /// The command log is rotated once it is this old (seconds; default 86400).
    pub command_log_rotate_secs: u64,
    /// Most rotated command logs kept (`FILE.1` newest ... `FILE.N`); older ones are removed
    /// (files; default 10).
    pub command_log_keep: usize,
    /// Commands slower than this also go to the server's log (milliseconds; default 10000).
    pub slow_command_ms: u64,
    /// Most bytes of a command's arguments kept for `monitor show -a` and the command log
    /// (bytes; default 512).
    pub command_args_max_bytes: usize,
    /// `HOST:PORT` where Prometheus metrics are served over HTTP at `/metrics` (OpenMetrics
    /// text; see docs/guide/monitoring.md). Empty: no metrics endpoint and no per-call counting.
    pub metrics_listen: String,
    /// How often the content store's size and object count are recounted for the metrics, by
    /// walking `content/` at the lowest CPU priority (seconds; default 300).
    pub metrics_content_scan_secs: u64,
    /// `HOST:PORT`, or `ssl:HOST:PORT` for TLS with the server's certificate, where P4
    /// clients (the `p4` command line, P4Python, P4Java) connect; `--p4-listen` overrides it
    /// (see docs/guide/perforce-clients.md). Empty: no P4 listener (default).
    pub p4_listen: String,
    /// Largest message a P4 client may send; a larger one is refused with an error naming
    /// this limit and the connection is closed (bytes; default 16777216).
    pub p4_max_message_bytes: usize,
    /// Let P4 clients send passwords in the clear (`p4 login`, `p4 passwd`) over plain TCP
    /// from addresses other than loopback. Off: passwords travel only over `ssl:`, from
    /// loopback or over `--p4-stdio` (default false).
    pub p4_plain_passwords: bool,
    /// Keep, for each user, an MD5 verifier of the password (sealed with a key in
    /// `ROOT/p4/password.key`), so that P4 clients whose `P4PASSWD` holds the password itself
    /// (not a ticket) are let in. Recorded when a password is set or a login with it succeeds.
    /// Off: no verifier is kept (those stored are dropped at startup) and such clients must
    /// use tickets (default false).
    pub p4_password_digests: bool,
    /// How long `keel serve --p4-stdio` waits for the root while another process holds it
    /// (the previous connection of an `rsh:` port still exiting, or another connection being
    /// served), in milliseconds; 0 refuses at once (default 10000).
    pub p4_stdio_lock_wait_ms: u64,
    /// The metadata store.
    pub store: StoreConfig,
    /// The service layer.
    pub service: ServiceConfig,
    /// The content store.
    pub blob: BlobConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        ServerConfig {
            // More workers than cores: the kernel time-slices a submit's RPC against a long
            // read's stream instead of queueing it behind it (BENCHMARKS.md's Design choices at
            // commit c1af4eb).
            workers: (2 * cores).max(4),
            max_message_bytes: 64 << 20,
            content_chunk_bytes: 256 * 1024,
            inline_max_records: 256,
            inline_cpu_micros: 2000,
            long_read_nice: 10,
            long_read_threads: 64,
            handover_max_records: 2048,
            handover_max_bytes: 2 << 20,
            handover_pace_micros: 1000,
            // The allocator's own default (one second) let a 70,000-file branch's freed pages
            // pile up: see Design choices in BENCHMARKS.md at commit c1af4eb.
            allocator_purge_delay_ms: 10,
            journal_heartbeat_ms: 1000,
            journal_batch_records: 256,
            watch_batch_changes: 64,
            watch_max_files: 1000,
            watch_buffer_messages: 16,
            webhook_timeout_ms: 10_000,
            webhook_retry_min_ms: 1000,
            webhook_retry_max_ms: 300_000,
            webhook_max_files: 1000,
            replica_retry_ms: 500,
            shutdown_grace_ms: 10_000,
            replica_fetch_threads: 2,
            replica_fetch_parallel: 8,
            tls_cert: PathBuf::new(),
            tls_key: PathBuf::new(),
            tls_handshake_timeout_ms: 10_000,
            max_connections: 4096,
            max_connections_per_address: 256,
            idle_timeout_ms: 300_000,
            keepalive_interval_ms: 60_000,
            keepalive_timeout_ms: 20_000,
            accept_backoff_max_ms: 1000,
            audit_log: PathBuf::new(),
            audit_queue_records: 65536,
            audit_batch_ms: 10,
            command_log: PathBuf::from("logs/commands.jsonl"),
            command_log_queue_records: 65536,
            command_log_batch_ms: 10,
            command_log_rotate_bytes: 64 << 20,
            command_log_rotate_secs: 86_400,
            command_log_keep: 10,
            slow_command_ms: 10_000,
            command_args_max_bytes: 512,
            metrics_listen: String::new(),
            metrics_content_scan_secs: 300,
            p4_listen: String::new(),
            p4_max_message_bytes: 16 << 20,
            p4_plain_passwords: false,
            p4_password_digests: false,
            p4_stdio_lock_wait_ms: 10_000,
            store: StoreConfig::default(),
            service: ServiceConfig::default(),
            blob: BlobConfig::default(),
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("configuration file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("configuration file {path}: {knob}")]
    Invalid { path: PathBuf, knob: InvalidKnob },
    #[error("cannot print the configuration: {0}")]
    Render(String),
}

/// A knob whose value cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value} is not valid: it must be {expected}")]
pub struct InvalidKnob {
    /// The knob's key as in `keel.toml` (`section.name` for a nested one).
    pub key: &'static str,
    pub value: String,
    /// What the value must be.
    pub expected: &'static str,
}

/// The handover queue's knobs, as its code uses them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HandoverLimits {
    pub(crate) max_items: usize,
    pub(crate) max_bytes: usize,
    pub(crate) pace: Duration,
}

impl ServerConfig {
    /// The configuration of the server at `root`: `ROOT/keel.toml` when it exists, else the
    /// defaults.
    pub fn load(root: &Path) -> Result<ServerConfig, ConfigError> {
        let path = root.join(CONFIG_FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => ServerConfig::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ServerConfig::default()),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }

    /// The configuration in `path`, which must exist (a file an admin named).
    pub fn load_file(path: &Path) -> Result<ServerConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        ServerConfig::parse(&text, path)
    }

    /// Parses and checks a configuration file's text (`path` names it in errors). Keys it
    /// leaves out keep their defaults; an unknown key is an error.
    pub fn parse(text: &str, path: &Path) -> Result<ServerConfig, ConfigError> {
        let config: ServerConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        if let Some(knob) = config.invalid_knob() {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                knob,
            });
        }
        Ok(config)
    }

    /// The first knob whose value cannot work.
    pub fn invalid_knob(&self) -> Option<InvalidKnob> {
        self.first_unusable()
            .map(|(key, value, expected)| InvalidKnob {
                key,
                value,
                expected,
            })
    }

    /// The first knob whose value cannot work: its key, its value and what it must be.
    fn first_unusable(&self) -> Option<(&'static str, String, &'static str)> {
        let (store, service, blob) = (&self.store, &self.service, &self.blob);
        let at_least_one: [(&'static str, usize); 51] = [
            ("service.listing_page_bytes", service.listing_page_bytes),
            ("p4_max_message_bytes", self.p4_max_message_bytes),
            ("max_connections", self.max_connections),
            (
                "max_connections_per_address",
                self.max_connections_per_address,
            ),
            ("idle_timeout_ms", self.idle_timeout_ms as usize),
            ("keepalive_interval_ms", self.keepalive_interval_ms as usize),
            ("keepalive_timeout_ms", self.keepalive_timeout_ms as usize),
            ("accept_backoff_max_ms", self.accept_backoff_max_ms as usize),
            (
                "service.max_description_bytes",
                service.max_description_bytes,
            ),
            ("service.max_form_field_bytes", service.max_form_field_bytes),
            ("service.max_form_bytes", service.max_form_bytes),
            ("service.max_view_lines", service.max_view_lines),
            ("service.max_table_lines", service.max_table_lines),
            ("command_log_queue_records", self.command_log_queue_records),
            (
                "command_log_rotate_bytes",
                self.command_log_rotate_bytes.min(usize::MAX as u64) as usize,
            ),
            (
                "command_log_rotate_secs",
                self.command_log_rotate_secs.min(usize::MAX as u64) as usize,
            ),
            (
                "metrics_content_scan_secs",
                self.metrics_content_scan_secs as usize,
            ),
            (
                "tls_handshake_timeout_ms",
                self.tls_handshake_timeout_ms as usize,
            ),
            ("audit_queue_records", self.audit_queue_records),
            ("workers", self.workers),
            ("max_message_bytes", self.max_message_bytes),
            ("content_chunk_bytes", self.content_chunk_bytes),
            ("service.submit_batch", service.submit_batch),
            ("service.integrate_batch", service.integrate_batch),
            ("handover_max_records", self.handover_max_records),
            ("handover_max_bytes", self.handover_max_bytes),
            ("journal_batch_records", self.journal_batch_records),
            ("watch_batch_changes", self.watch_batch_changes),
            ("watch_max_files", self.watch_max_files),
            ("watch_buffer_messages", self.watch_buffer_messages),
            ("webhook_timeout_ms", self.webhook_timeout_ms as usize),
            ("webhook_retry_min_ms", self.webhook_retry_min_ms as usize),
            ("webhook_retry_max_ms", self.webhook_retry_max_ms as usize),
            ("webhook_max_files", self.webhook_max_files),
            ("journal_heartbeat_ms", self.journal_heartbeat_ms as usize),
            ("replica_fetch_threads", self.replica_fetch_threads),
            ("replica_fetch_parallel", self.replica_fetch_parallel),
            ("store.reader_pool_size", store.reader_pool_size),
            ("store.max_group", store.max_group),
            ("store.statement_cache", store.statement_cache),
            ("store.max_open_have_lists", store.max_open_have_lists),
            ("service.page_size", service.page_size),
            ("service.obliterate_batch", service.obliterate_batch),
            ("service.label_batch", service.label_batch),
            ("service.shelf_page", service.shelf_page),
            ("service.max_follow", service.max_follow),
            ("service.verify_threads", service.verify_threads),
            ("service.verify_read_bytes", service.verify_read_bytes),
            ("service.upload_threads", service.upload_threads),
            ("service.upload_batch_bytes", service.upload_batch_bytes),
            (
                "blob.compression_sample_bytes",
                blob.compression_sample_bytes,
            ),
        ];
        if let Some((key, value)) = at_least_one.iter().find(|(_, v)| *v == 0) {
            return Some((key, value.to_string(), "at least 1"));
        }
        let logins: [(&'static str, u64); 5] = [
            (
                "service.password_check_threads",
                service.password_check_threads as u64,
            ),
            (
                "service.login_failures_per_user",
                u64::from(service.login_failures_per_user),
            ),
            (
                "service.login_failures_per_address",
                u64::from(service.login_failures_per_address),
            ),
            (
                "service.login_failure_window_secs",
                service.login_failure_window_secs,
            ),
            (
                "service.login_backoff_max_secs",
                service.login_backoff_max_secs,
            ),
        ];
        if let Some((key, value)) = logins.iter().find(|(_, v)| *v == 0) {
            return Some((key, value.to_string(), "at least 1"));
        }
        let nice = [
            ("long_read_nice", self.long_read_nice),
            ("store.checkpoint_nice", store.checkpoint_nice),
            ("service.verify_nice", service.verify_nice),
        ];
        if let Some((key, value)) = nice.iter().find(|(_, v)| !(0..=19).contains(v)) {
            return Some((key, value.to_string(), "from 0 to 19"));
        }
        let page = store.page_size;
        if !(512..=65536).contains(&page) || !page.is_power_of_two() {
            let expected = "a power of two from 512 to 65536";
            return Some(("store.page_size", page.to_string(), expected));
        }
        if store.reader_mmap_bytes < 0 {
            let value = store.reader_mmap_bytes.to_string();
            return Some(("store.reader_mmap_bytes", value, "0 or more"));
        }
        if self.allocator_purge_delay_ms < -1 {
            let value = self.allocator_purge_delay_ms.to_string();
            return Some(("allocator_purge_delay_ms", value, "-1 (never) or more"));
        }
        if store.cache_kib < 0 {
            return Some(("store.cache_kib", store.cache_kib.to_string(), "0 or more"));
        }
        if store.reader_cache_kib < 0 {
            let value = store.reader_cache_kib.to_string();
            return Some(("store.reader_cache_kib", value, "0 or more"));
        }
        if !(1..=22).contains(&blob.compression_level) {
            let value = blob.compression_level.to_string();
            return Some(("blob.compression_level", value, "from 1 to 22"));
        }
        if !(0.0..=1.0).contains(&blob.compression_max_ratio) {
            let value = blob.compression_max_ratio.to_string();
            return Some(("blob.compression_max_ratio", value, "from 0 to 1"));
        }
        None
    }

    /// The configuration as a `keel.toml`, every knob preceded by its documentation.
    pub fn to_documented_toml(&self) -> Result<String, ConfigError> {
        let mut out = format!(
            "# Keel server configuration: ROOT/{CONFIG_FILE_NAME}. Every knob is optional; \
             these are the values in effect.\n"
        );
        let top = table(self)?;
        write_fields::<ServerConfig>(&mut out, &top);
        for name in ServerConfig::FIELD_NAMES {
            let Some(section) = top.get(*name).and_then(toml::Value::as_table) else {
                continue;
            };
            out.push('\n');
            push_doc(&mut out, ServerConfig::get_field_docs(name).unwrap_or(""));
            out.push_str(&format!("[{name}]\n"));
            match *name {
                "store" => write_fields::<StoreConfig>(&mut out, section),
                "service" => write_fields::<ServiceConfig>(&mut out, section),
                _ => write_fields::<BlobConfig>(&mut out, section),
            }
        }
        Ok(out)
    }

    /// Where the TLS certificate and key are, for the server at `root`.
    pub fn tls_paths(&self, root: &Path) -> keel_tls::CertPaths {
        let given = !self.tls_cert.as_os_str().is_empty() || !self.tls_key.as_os_str().is_empty();
        let pick = |path: &Path, default: &str| match path.as_os_str().is_empty() {
            true => root.join("tls").join(default),
            false => root.join(path),
        };
        keel_tls::CertPaths {
            cert: pick(&self.tls_cert, "cert.pem"),
            key: pick(&self.tls_key, "key.pem"),
            generate: !given,
        }
    }

    /// The command log's file under `root`, when it is on.
    pub fn command_log_path(&self, root: &Path) -> Option<PathBuf> {
        (!self.command_log.as_os_str().is_empty()).then(|| root.join(&self.command_log))
    }

    /// The audit log's file under `root`, when it is on.
    pub fn audit_path(&self, root: &Path) -> Option<PathBuf> {
        (!self.audit_log.as_os_str().is_empty()).then(|| root.join(&self.audit_log))
    }

    /// The connection limits of each listener, before fitting them to the open-file limit.
    pub fn connection_limits(&self) -> keel_tls::ConnLimits {
        keel_tls::ConnLimits {
            max_connections: self.max_connections,
            max_per_address: self.max_connections_per_address,
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            accept_backoff_max: Duration::from_millis(self.accept_backoff_max_ms),
        }
    }

    /// The hand-over queue's knobs.
    pub(crate) fn handover(&self) -> HandoverLimits {
        HandoverLimits {
            max_items: self.handover_max_records,
            max_bytes: self.handover_max_bytes,
            pace: Duration::from_micros(self.handover_pace_micros),
        }
    }
}

fn table(config: &ServerConfig) -> Result<toml::Table, ConfigError> {
    toml::Table::try_from(config).map_err(|e| ConfigError::Render(e.to_string()))
}

/// Writes the plain (non-table) values of `section` in `T`'s field order, each after its doc.
fn write_fields<T: DocumentedFields>(out: &mut String, section: &toml::Table) {
    for name in T::FIELD_NAMES {
        let Some(value) = section.get(*name).filter(|v| !v.is_table()) else {
            continue;
        };
        push_doc(out, T::get_field_docs(name).unwrap_or(""));
        out.push_str(&format!("{name} = {value}\n"));
    }
}

fn push_doc(out: &mut String, doc: &str) {
    for line in doc.lines().map(str::trim) {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            out.push_str(&format!("# {line}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--print-config` prints reads back as the same configuration.
    #[test]
    fn printed_configuration_reads_back() {
        let mut config = ServerConfig::default();
        config.store.reader_pool_size = 3;
        config.blob.compression_max_ratio = 0.5;
        let text = config.to_documented_toml().expect("renders");
        assert!(
            text.contains("# Idle reader connections kept open"),
            "{text}"
        );
        let back = ServerConfig::parse(&text, Path::new("keel.toml")).expect("parses");
        assert_eq!(back, config);
    }

    /// An empty file is the defaults; keys left out keep theirs.
    #[test]
    fn missing_keys_keep_their_defaults() {
        let path = Path::new("keel.toml");
        assert_eq!(
            ServerConfig::parse("", path).expect("parses"),
            ServerConfig::default()
        );
        let config = ServerConfig::parse("[service]\nlabel_batch = 7\n", path).expect("parses");
        assert_eq!(config.service.label_batch, 7);
        assert_eq!(
            config.service.shelf_page,
            ServiceConfig::default().shelf_page
        );
    }

    /// A value of the right type that cannot work is refused with its key and value.
    #[test]
    fn unusable_values_are_refused_by_key() {
        let err = ServerConfig::parse("[store]\npage_size = 1000\n", Path::new("/r/keel.toml"))
            .expect_err("not a power of two");
        let message = err.to_string();
        assert!(message.contains("/r/keel.toml"), "{message}");
        assert!(message.contains("store.page_size = 1000"), "{message}");
    }
}
