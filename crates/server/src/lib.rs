//! Keel's gRPC front end: opens the stores under a root directory, guards it with a lock file,
//! and serves the wire API by translating each call to `keel-service`.

mod access;
mod api;
mod api_access;
mod api_annotate;
mod api_auth;
mod api_backup;
mod api_counters;
mod api_grep;
mod api_istat;
mod api_jobs;
mod api_labels;
mod api_locks;
mod api_monitor;
mod api_populate;
mod api_probe;
mod api_replication;
mod api_shelves;
mod api_triggers;
mod api_typemap;
mod api_undo;
mod api_verify;
mod api_watch;
mod api_webhooks;
mod audit;
mod command_gate;
mod config;
mod convert;
mod handover;
mod identity;
mod line_log;
mod lock;
mod metrics;
mod monitor;
mod p4_front;
mod replica;
mod stopping;
mod streams;
mod webhooks;

pub use access::required_level;
pub use command_gate::ServerGate;
pub use config::{CONFIG_FILE_NAME, ConfigError, InvalidKnob, ServerConfig};
pub use keel_service::failpoints;
pub use keel_store::backup::{RestoreError, RestoreProgress, RestoreReport, restore};
pub use keel_tls::Fingerprint;
pub use p4_front::P4Listening;
pub use replica::{BadTicket, ContentMode, ReplicaOptions, ServiceLogin};
pub use stopping::stop_requested;

use keel_blob::FsBlobStore;
use keel_metrics::wrap::Wrapped;
use keel_service::{Service, system_clock};
use keel_store::open_root;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Where and how to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Directory holding all server state (created when missing).
    pub root: PathBuf,
    /// `HOST:PORT` (plain TCP) or `ssl:HOST:PORT` (TLS) to listen on; port 0 picks a free
    /// one.
    pub listen: String,
    /// The tuning knobs (see [`ServerConfig::load`] for `ROOT/keel.toml`).
    pub config: ServerConfig,
    /// Serve as a read-only replica of this primary.
    pub replica: Option<ReplicaOptions>,
    /// Set the `security` level (0-4) at start (stored, like `keel configure set`).
    pub security: Option<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot create server root {path}: {source}")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Locked(String),
    #[error(transparent)]
    Store(#[from] keel_store::StoreError),
    #[error(transparent)]
    Blob(#[from] keel_blob::BlobError),
    #[error("cannot read the security level: {0}")]
    Settings(#[from] keel_service::ServiceError),
    #[error("cannot finish queued content purges: {0}")]
    Recover(keel_service::ServiceError),
    #[error("cannot listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the replica's follower or content fetching threads: {0}")]
    Follower(std::io::Error),
    #[error("the primary's address {primary} is not usable: {source}")]
    Primary {
        primary: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error(transparent)]
    Ticket(#[from] replica::BadTicket),
    #[error("cannot set the security level: {0}")]
    Security(keel_service::AuthError),
    #[error("a replica takes its security level from its primary; set it there")]
    ReplicaSecurity,
    #[error("server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error(transparent)]
    Trust(#[from] keel_tls::TrustFileError),
    #[error(transparent)]
    Log(#[from] line_log::LogOpenError),
    #[error("cannot serve TLS: {0}")]
    Certificate(#[from] keel_tls::CertError),
    #[error(transparent)]
    Metrics(#[from] keel_metrics::EndpointError),
    #[error("cannot start the metrics' content counting thread: {0}")]
    MetricsThread(std::io::Error),
    #[error(transparent)]
    P4Key(#[from] keel_p4::KeyError),
    #[error("cannot apply p4_password_digests: {0}")]
    P4Digests(keel_service::AuthError),
}

/// Where a started server listens, as `serve`'s `ready` callback is told.
#[derive(Clone, Debug)]
pub struct Listening {
    /// The bound address.
    pub addr: SocketAddr,
    /// The certificate's fingerprint when the server speaks TLS.
    pub tls: Option<keel_tls::Fingerprint>,
    /// Whether this start generated the certificate.
    pub generated_certificate: bool,
    /// Where Prometheus metrics are served (`http://ADDR/metrics`), when they are.
    pub metrics: Option<SocketAddr>,
    /// Where P4 clients connect, when the P4 listener is on (`p4_listen`).
    pub p4: Option<P4Listening>,
}

impl Listening {
    /// The address as clients write it (`ssl:` for TLS).
    pub fn client_address(&self) -> String {
        match self.tls {
            Some(_) => format!("ssl:{}", self.addr),
            None => self.addr.to_string(),
        }
    }
}

/// Opens the stores under `root` and serves until Ctrl-C / SIGTERM, then stops as
/// `stopping.rs` says (within `ServerConfig::shutdown_grace_ms`). `ready` is called with the
/// bound address (and certificate fingerprint) once the server accepts connections.
pub async fn serve(
    opts: ServeOptions,
    ready: impl FnOnce(&Listening) + Send,
) -> Result<(), ServeError> {
    // The ports first: a port another program holds stops the server before it creates or
    // opens anything under its root, so a failed start leaves no new root behind.
    let listen = keel_tls::ServerAddr::parse(&opts.listen);
    let listener = tokio::net::TcpListener::bind(&listen.host_port)
        .await
        .map_err(|source| ServeError::Listen {
            addr: opts.listen.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: opts.listen.clone(),
        source,
    })?;
    let p4_listen = match opts.config.p4_listen.is_empty() {
        true => None,
        false => {
            let at = keel_tls::ServerAddr::parse(&opts.config.p4_listen);
            let bound = tokio::net::TcpListener::bind(&at.host_port)
                .await
                .map_err(|source| ServeError::Listen {
                    addr: opts.config.p4_listen.clone(),
                    source,
                })?;
            Some((bound, at.tls))
        }
    };
    let metrics_endpoint = match opts.config.metrics_listen.is_empty() {
        true => None,
        false => Some(keel_metrics::MetricsEndpoint::bind(&opts.config.metrics_listen).await?),
    };
    std::fs::create_dir_all(&opts.root).map_err(|source| ServeError::Root {
        path: opts.root.clone(),
        source,
    })?;
    let root = opts
        .root
        .canonicalize()
        .map_err(|source| ServeError::Root {
            path: opts.root.clone(),
            source,
        })?;
    let _lock = lock::RootLock::acquire(&root)?;
    let mut config = opts.config.clone();
    if opts.replica.is_some() {
        // A replica's metadata changes only by the primary's journal records; it keeps no
        // journal of its own (back up the primary).
        config.store.journal = false;
    }
    let config = &config;
    // The journal is recovered first: a record whose commit never happened is cut off.
    let stores = open_root(&root, &config.store)?;
    let meta = Arc::new(stores.meta);
    let backup = api_backup::Backup {
        meta: meta.clone(),
        have_dir: stores.have.dir().to_path_buf(),
        journal: stores.journal.clone(),
        root: root.clone(),
        config: config.store.clone(),
    };
    let blobs: Arc<dyn keel_blob::BlobStore> =
        Arc::new(FsBlobStore::open_with(root.join("content"), &config.blob)?);
    // A replica calls its primary through one dialer (plain or TLS) as one identity.
    let primary = match &opts.replica {
        Some(r) => {
            let timeout = std::time::Duration::from_millis(config.replica_retry_ms.max(1000));
            let dialer = replica::dialer(&r.primary, r.trust_file.as_deref(), timeout)?;
            let endpoint = dialer.endpoint().map_err(|source| ServeError::Primary {
                primary: r.primary.clone(),
                source,
            })?;
            let credentials = replica::Credentials::new(r.service_user.as_ref())?;
            Some((dialer, endpoint, credentials))
        }
        None => None,
    };
    // A replica with on-demand content serves through a store that fetches what it lacks.
    let service_blobs: Arc<dyn keel_blob::BlobStore> = match (&opts.replica, &primary) {
        (Some(r), Some((dialer, endpoint, credentials))) if r.content == ContentMode::OnDemand => {
            Arc::new(
                replica::OnDemandBlobs::start(
                    blobs.clone(),
                    dialer,
                    endpoint.clone(),
                    credentials.clone(),
                    config.replica_fetch_threads,
                    config.max_message_bytes,
                )
                .map_err(ServeError::Follower)?,
            )
        }
        _ => blobs.clone(),
    };
    let service_meta: Arc<dyn keel_store::MetaStore> = match &opts.replica {
        Some(r) => Arc::new(keel_store::ReadOnlyStore::new(
            meta.clone(),
            r.primary.clone(),
        )),
        None => meta.clone(),
    };
    let service = Service::new(
        service_meta,
        stores.have,
        service_blobs,
        system_clock(),
        config.service.clone(),
        root.clone(),
    );
    // A replica follows the primary's verifiers (it drops none itself).
    if config.p4_password_digests || opts.replica.is_none() {
        service
            .set_p4_password_digests(config.p4_password_digests)
            .map_err(ServeError::P4Digests)?;
    }
    if let Some(level) = opts.security {
        if opts.replica.is_some() {
            return Err(ServeError::ReplicaSecurity);
        }
        service
            .put_setting(keel_core::auth::SECURITY, &level.to_string())
            .map_err(ServeError::Security)?;
    }
    // Bumped after every submit, and on a replica after every change applied: it wakes
    // `watch` subscriptions and the webhooks' dispatcher.
    let commits = api_watch::commit_channel(&service);
    let (status, gate) = match (&opts.replica, primary) {
        (Some(r), Some((dialer, endpoint, credentials))) => {
            let status = Arc::new(replica::ReplicaStatus::new(
                r.primary.clone(),
                r.forward_writes,
                meta.applied_position()?,
            ));
            let forwarder = credentials.ticket().cloned();
            replica::start_follower(replica::Follower {
                primary: r.primary.clone(),
                meta: meta.clone(),
                blobs,
                content: r.content,
                publish_batch_bytes: config.service.publish_batch_bytes,
                fetch_parallel: config.replica_fetch_parallel,
                status: status.clone(),
                retry: std::time::Duration::from_millis(config.replica_retry_ms),
                max_message_bytes: config.max_message_bytes,
                credentials,
                trust_file: r.trust_file.clone(),
                applied: commits.clone(),
            })
            .map_err(ServeError::Follower)?;
            let forward = r.forward_writes.then(|| dialer.connect_lazy(endpoint));
            let mode = replica::gate::Mode {
                primary: r.primary.clone(),
                forward,
                forwarder,
            };
            (Some(status), Some(Arc::new(mode)))
        }
        _ => {
            // Finish any content purge a crash interrupted (see keel_service::obliterate). A
            // replica leaves purges to its primary.
            let (blobs, bytes) = service.recover_purges().map_err(ServeError::Recover)?;
            if blobs > 0 {
                tracing::info!(
                    blobs,
                    bytes,
                    "purged content left queued by an interrupted obliterate"
                );
            }
            (None, None)
        }
    };

    let audit = match config.audit_path(&root) {
        Some(path) => Some(audit::AuditLog::open(
            &path,
            config.audit_queue_records,
            std::time::Duration::from_millis(config.audit_batch_ms),
        )?),
        None => None,
    };
    let (command_log, command_log_writer) = match config.command_log_path(&root) {
        Some(path) => {
            let (log, writer) = monitor::log::open(line_log::LogOptions {
                path,
                queue_records: config.command_log_queue_records,
                batch: std::time::Duration::from_millis(config.command_log_batch_ms),
                rotation: Some(line_log::Rotation {
                    bytes: config.command_log_rotate_bytes,
                    age: std::time::Duration::from_secs(config.command_log_rotate_secs),
                    keep: config.command_log_keep,
                }),
            })?;
            (Some(log), Some(writer))
        }
        None => (None, None),
    };
    let registry = Arc::new(monitor::Registry::new(
        command_log
            .into_iter()
            .map(|log| log as Arc<dyn monitor::registry::CommandSink>)
            .collect(),
        std::time::Duration::from_millis(config.slow_command_ms),
    ));
    let tls = match listen.tls {
        true => Some(keel_tls::ServerTls::load_or_generate(
            &config.tls_paths(&root),
        )?),
        false => None,
    };
    // Connections need descriptors: the soft limit goes up to the hard one, and each
    // listener's cap fits under what it allows.
    let listeners =
        1 + u64::from(!config.metrics_listen.is_empty()) + u64::from(p4_listen.is_some());
    let limits = keel_tls::fit_connection_limits(config.connection_limits(), listeners);
    let grpc_conns = keel_tls::ConnTracker::new("grpc", limits);
    let metrics_conns = keel_tls::ConnTracker::new("metrics", limits);
    let p4_conns = keel_tls::ConnTracker::new("p4", limits);
    // The P4 listener speaks TLS with the server's certificate when its address says `ssl:`.
    let p4_tls = match &p4_listen {
        Some((_, true)) => Some(keel_tls::ServerTls::load_or_generate(
            &config.tls_paths(&root),
        )?),
        _ => None,
    };
    let p4_listening = match &p4_listen {
        Some((bound, _)) => Some(P4Listening {
            addr: bound.local_addr().map_err(|source| ServeError::Listen {
                addr: config.p4_listen.clone(),
                source,
            })?,
            fingerprint: p4_tls.as_ref().and_then(|t| t.p4_fingerprint.clone()),
        }),
        None => None,
    };
    let listening = Listening {
        addr,
        tls: tls.as_ref().map(|t| t.fingerprint),
        generated_certificate: tls.as_ref().is_some_and(|t| t.generated),
        metrics: metrics_endpoint.as_ref().map(|m| m.local_addr()),
        p4: p4_listening.clone(),
    };
    let incoming = keel_tls::incoming(
        listener,
        tls.map(|t| t.config),
        std::time::Duration::from_millis(config.tls_handshake_timeout_ms),
        grpc_conns.clone(),
    );
    // Triggers call back (`keel print //...@=N`) on the address the server listens on.
    service.set_server_address(addr, listening.tls.is_some());
    let service = Arc::new(service);
    let security = service.security_level()?;
    let authenticator = Arc::new(identity::Authenticator {
        service: service.clone(),
        server: listening.client_address(),
        args_max_bytes: config.command_args_max_bytes,
    });
    let journal = backup.journal.clone();
    // Installed before the server is ready, so an early SIGTERM is not lost.
    let stop_signal = stopping::stop_requested();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let api = api::Api::new(service, addr, config, Arc::new(backup), status.clone())
        .with_stopping(stop_rx.clone())
        .with_commits(commits.subscribe())
        .with_tls_fingerprint(listening.tls)
        .with_audit(audit.as_ref().map(|a| a.audit.clone()))
        .with_monitor(registry.clone());
    let webhook_stats = Arc::new(webhooks::WebhookStats::default());
    if status.is_none() {
        // A replica's table is the primary's, and the primary posts.
        tokio::spawn(
            webhooks::Dispatcher {
                service: authenticator.service.clone(),
                commits: api.commits(),
                saved: api.webhooks_saved(),
                stats: webhook_stats.clone(),
                limits: webhooks::WebhookLimits {
                    timeout: std::time::Duration::from_millis(config.webhook_timeout_ms),
                    retry_min: std::time::Duration::from_millis(config.webhook_retry_min_ms),
                    retry_max: std::time::Duration::from_millis(config.webhook_retry_max_ms),
                    max_files: config.webhook_max_files,
                },
                server: listening.client_address(),
                stopping: stop_rx.clone(),
            }
            .run(),
        );
    }
    let (api, rpc_metrics, metrics_task) = match metrics_endpoint {
        None => (api, None, None),
        Some(endpoint) => {
            let sources = metrics::Sources {
                meta: meta.clone(),
                journal,
                checkpoints: root.join(keel_store::backup::CHECKPOINT_DIR),
                content_sent: api.content_sent(),
                replica: status,
                connections: vec![grpc_conns.clone(), metrics_conns.clone(), p4_conns.clone()],
                service: authenticator.service.clone(),
                webhooks: webhook_stats.clone(),
            };
            let built = metrics::build(
                sources,
                root.join("content"),
                std::time::Duration::from_secs(config.metrics_content_scan_secs),
            )
            .map_err(ServeError::MetricsThread)?;
            tracing::info!(addr = %endpoint.local_addr(), "metrics at /metrics");
            let connections = keel_tls::incoming_http1(endpoint.into_listener(), metrics_conns);
            let task = tokio::spawn(keel_metrics::serve_connections(
                built.registry,
                connections,
                std::future::pending(),
            ));
            (api.with_probe(built.probe), Some(built.rpc), Some(task))
        }
    };
    let p4_task = match (p4_listen, &p4_listening) {
        (Some((bound, tls)), Some(at)) => {
            let key = keel_p4::TicketKey::load_or_create(&root)?;
            let gate = p4_front::P4Gate {
                gate: ServerGate {
                    service: authenticator.service.clone(),
                    registry: registry.clone(),
                    primary: opts.replica.as_ref().map(|r| r.primary.clone()),
                    metrics: rpc_metrics.clone(),
                    args_max_bytes: config.command_args_max_bytes,
                },
                tracker: p4_conns.clone(),
            };
            let front = Arc::new(keel_p4::P4Server::new(
                authenticator.service.clone(),
                p4_front::options(config, at.client_address(), &root, at.fingerprint.clone()),
                key,
                Arc::new(gate),
            ));
            let incoming = keel_tls::incoming_with(
                bound,
                p4_tls.map(|t| keel_tls::for_raw_tcp(&t.config)),
                std::time::Duration::from_millis(config.tls_handshake_timeout_ms),
                p4_conns.clone(),
                true,
            );
            tracing::info!(addr = %at.client_address(), fingerprint = ?at.fingerprint, "P4 listener ready");
            Some(tokio::spawn(p4_front::accept_loop(front, incoming, tls)))
        }
        _ => None,
    };
    match listening.tls {
        Some(fp) => tracing::info!(
            addr = %listening.client_address(),
            root = %root.display(),
            %security,
            fingerprint = %fp,
            generated = listening.generated_certificate,
            "keel server listening (TLS)"
        ),
        None => tracing::info!(%addr, root = %root.display(), %security, "keel server listening"),
    }
    ready(&listening);
    let grace = std::time::Duration::from_millis(config.shutdown_grace_ms);
    let stop = async move {
        stop_signal.await;
        tracing::info!(
            grace_ms = config.shutdown_grace_ms,
            "keel server stopping: no new connections, replica streams ended, running commands \
             get the grace period"
        );
        let _ = stop_tx.send(true);
    };
    let server = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .http2_keepalive_interval(Some(std::time::Duration::from_millis(
            config.keepalive_interval_ms,
        )))
        .http2_keepalive_timeout(Some(std::time::Duration::from_millis(
            config.keepalive_timeout_ms,
        )))
        .layer(keel_tls::InFlightLayer {
            tracker: grpc_conns,
        })
        .add_service(Wrapped {
            inner: Wrapped {
                inner: Wrapped {
                    inner: identity::Attach {
                        inner: keel_proto::v1::keel_server::KeelServer::new(api)
                            .max_decoding_message_size(config.max_message_bytes)
                            .max_encoding_message_size(config.max_message_bytes),
                        auth: authenticator,
                    },
                    around: replica::gate::Gate { mode: gate },
                },
                around: keel_metrics::Instrument {
                    metrics: rpc_metrics,
                },
            },
            around: monitor::Observe {
                registry: registry.clone(),
            },
        })
        .serve_with_incoming_shutdown(incoming, stop);
    tokio::select! {
        served = server => served?,
        _ = async {
            stopping::stopped(stop_rx).await;
            tokio::time::sleep(grace).await;
        } => tracing::warn!(
            grace_ms = config.shutdown_grace_ms,
            "commands still running at the end of the grace period are cancelled"
        ),
    }
    if let Some(task) = metrics_task {
        task.abort();
    }
    if let Some(task) = p4_task {
        task.abort();
    }
    if let Some(audit) = audit {
        // The server (and its handle on the log) is gone: the writer takes what is queued.
        audit.finish(std::time::Duration::from_secs(5));
    }
    drop(registry);
    if let Some(writer) = command_log_writer {
        // Every command has ended: the writer takes what is queued.
        writer.finish(std::time::Duration::from_secs(5));
    }
    tracing::info!("keel server stopped");
    Ok(())
}

/// The RPC names `keel.proto` declares, for the tests that check every RPC is classified (the
/// replica gate) and given a protections level.
#[cfg(test)]
pub(crate) fn proto_rpcs() -> Vec<&'static str> {
    include_str!("../../proto/proto/keel.proto")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rpc "))
        .filter_map(|l| l.split('(').next())
        .map(str::trim)
        .collect()
}

/// `keel serve --p4-stdio`: serves one P4 client connection on stdin and stdout (what an
/// `rsh:` port starts for each connection), over the store under `root`, then returns. The
/// root is locked meanwhile like a server's: it waits up to `p4_stdio_lock_wait_ms` for a root
/// another process holds (the previous connection exiting), then refuses. No monitor or
/// command log: the connection is the process.
pub async fn serve_p4_stdio(root: PathBuf, config: ServerConfig) -> Result<(), ServeError> {
    std::fs::create_dir_all(&root).map_err(|source| ServeError::Root {
        path: root.clone(),
        source,
    })?;
    let root = root.canonicalize().map_err(|source| ServeError::Root {
        path: root.clone(),
        source,
    })?;
    // An rsh: port starts a process per connection; the previous one may still be exiting.
    let wait = std::time::Duration::from_millis(config.p4_stdio_lock_wait_ms);
    let _lock = lock::RootLock::acquire_waiting(&root, wait)?;
    let stores = open_root(&root, &config.store)?;
    let blobs: Arc<dyn keel_blob::BlobStore> =
        Arc::new(FsBlobStore::open_with(root.join("content"), &config.blob)?);
    let service = Service::new(
        Arc::new(stores.meta),
        stores.have,
        blobs,
        system_clock(),
        config.service.clone(),
        root.clone(),
    );
    service.recover_purges().map_err(ServeError::Recover)?;
    service
        .set_p4_password_digests(config.p4_password_digests)
        .map_err(ServeError::P4Digests)?;
    let key = keel_p4::TicketKey::load_or_create(&root)?;
    let service = Arc::new(service);
    // No monitor, log or metrics: the connection is the process. The protections still apply.
    let gate = keel_service::command::PlainGate {
        service: service.clone(),
    };
    let front = Arc::new(keel_p4::P4Server::new(
        service,
        p4_front::options(&config, "stdio".to_string(), &root, None),
        key,
        Arc::new(gate),
    ));
    let stream = tokio::io::join(tokio::io::stdin(), tokio::io::stdout());
    keel_p4::serve_connection(front, Box::new(stream), keel_p4::PeerInfo::default()).await;
    Ok(())
}
