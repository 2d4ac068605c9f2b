//! `keel serve`: the effective configuration (`ROOT/keel.toml`, then flags) and running the
//! server crate with logging to stderr.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use keel_server::ServerConfig;
use tracing_subscriber::EnvFilter;

use crate::cli::ServeArgs;

/// The server root the arguments name, made absolute.
fn root(args: &ServeArgs) -> Result<PathBuf> {
    let root = args
        .root
        .clone()
        .unwrap_or_else(|| PathBuf::from(".keel-data"));
    if root.is_absolute() {
        return Ok(root);
    }
    let cwd = std::env::current_dir().context("cannot determine the current directory")?;
    Ok(cwd.join(root))
}

/// The configuration in effect: the defaults, overridden by `--config FILE` (else
/// `ROOT/keel.toml`), overridden by the flags.
pub fn config(args: &ServeArgs) -> Result<ServerConfig> {
    let mut config = match &args.config {
        Some(file) => ServerConfig::load_file(file)?,
        None => ServerConfig::load(&root(args)?)?,
    };
    if let Some(workers) = args.workers {
        config.workers = workers;
    }
    if let Some(readers) = args.readers {
        config.store.reader_pool_size = readers;
    }
    if let Some(threads) = args.long_read_threads {
        config.long_read_threads = threads;
    }
    if let Some(bytes) = args.reader_mmap_bytes {
        config.store.reader_mmap_bytes = bytes;
    }
    if let Some(cert) = &args.tls_cert {
        config.tls_cert = cert.clone();
    }
    if let Some(key) = &args.tls_key {
        config.tls_key = key.clone();
    }
    if let Some(log) = &args.command_log {
        config.command_log = log.clone();
    }
    if let Some(log) = &args.audit_log {
        config.audit_log = log.clone();
    }
    if let Some(addr) = &args.metrics_listen {
        config.metrics_listen = addr.clone();
    }
    if let Some(addr) = &args.p4_listen {
        config.p4_listen = addr.clone();
    }
    if let Some(knob) = config.invalid_knob() {
        return Err(knob.into());
    }
    Ok(config)
}

/// `keel serve --print-config`: the configuration as a commented `keel.toml` (or, with
/// `--json`, one JSON object).
pub fn print_config(config: &ServerConfig, json: bool) -> Result<()> {
    let text = if json {
        serde_json::to_string(config).context("cannot print the configuration")?
    } else {
        config.to_documented_toml()?
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", text.trim_end()).context("cannot write to stdout")?;
    Ok(())
}

pub async fn serve(args: &ServeArgs, config: ServerConfig) -> Result<()> {
    // On stdio the protocol owns stdout; the log (stderr) says only what went wrong.
    let level = if args.p4_stdio { "warn" } else { "info" };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level)),
        )
        .with_writer(std::io::stderr)
        // Colour for a person at a terminal; plain text for a log file, journald or a pipe.
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
    // Test-only crash points (see keel_service::failpoints); inert unless named here.
    if let Ok(spec) = std::env::var("KEEL_FAILPOINTS") {
        let armed = keel_server::failpoints::configure(&spec)
            .with_context(|| format!("bad KEEL_FAILPOINTS '{spec}'"))?;
        for (point, action) in armed {
            tracing::warn!(point, ?action, "failpoint armed");
        }
    }
    let root = root(args)?;
    crate::private_dir::make_private(&root)
        .with_context(|| format!("cannot make the server root {} private", root.display()))?;
    if args.p4_stdio {
        return keel_server::serve_p4_stdio(root, config)
            .await
            .context("keel serve --p4-stdio failed");
    }
    let shown = root.display().to_string();
    let options = keel_server::ServeOptions {
        root,
        listen: args.listen.clone(),
        config,
        replica: args
            .replica_of
            .clone()
            .map(|primary| -> Result<keel_server::ReplicaOptions> {
                let service_user = match &args.service_user {
                    Some(user) => Some(service_login(&primary, user)?),
                    None => None,
                };
                Ok(keel_server::ReplicaOptions {
                    primary,
                    forward_writes: args.forward_writes,
                    service_user,
                    content: match args.content {
                        crate::cli::ReplicaContent::All => keel_server::ContentMode::All,
                        crate::cli::ReplicaContent::OnDemand => keel_server::ContentMode::OnDemand,
                    },
                    trust_file: keel_tls::TrustFile::default_path(&|name| std::env::var(name).ok())
                        .ok(),
                })
            })
            .transpose()?,
        security: args.security,
    };
    keel_server::serve(options, move |at: &keel_server::Listening| {
        let mut stdout = std::io::stdout().lock();
        let addr = at.client_address();
        let metrics = at
            .metrics
            .map(|m| format!(", metrics http://{m}/metrics"))
            .unwrap_or_default();
        let metrics = match &at.p4 {
            Some(p4) => format!(
                "{metrics}, P4 clients on {}{}",
                p4.client_address(),
                p4.fingerprint
                    .as_ref()
                    .map(|fp| format!(" (p4 trust fingerprint {fp})"))
                    .unwrap_or_default()
            ),
            None => metrics,
        };
        let _ = match at.tls {
            Some(fp) => writeln!(
                stdout,
                "keel serve: listening on {addr} (root {shown}, TLS fingerprint {fp}{}{metrics})",
                if at.generated_certificate {
                    ", certificate generated"
                } else {
                    ""
                }
            ),
            None => writeln!(
                stdout,
                "keel serve: listening on {addr} (root {shown}{metrics})"
            ),
        };
        let _ = stdout.flush();
    })
    .await
    .map_err(|e| {
        // A port another program holds: which flag moves the server off it.
        let in_use = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
            .filter_map(|e| e.downcast_ref::<std::io::Error>())
            .any(|e| e.kind() == std::io::ErrorKind::AddrInUse);
        let flag = match &e {
            keel_server::ServeError::Listen { .. } if in_use => Some("--listen HOST:PORT"),
            keel_server::ServeError::Metrics(_) if in_use => Some("--metrics-listen HOST:PORT"),
            _ => None,
        };
        let e = anyhow::Error::new(e).context("keel serve failed");
        match flag {
            Some(flag) => anyhow::anyhow!(
                "{e:#} (is another server using that port? choose another address with {flag})"
            ),
            None => e,
        }
    })?;
    Ok(())
}

/// The service user's ticket for `server`, from the tickets file (`keel login` as that user,
/// against that server, puts it there).
pub(crate) fn service_login(server: &str, user: &str) -> Result<keel_server::ServiceLogin> {
    let file = keel_client::TicketFile::locate(&|k| std::env::var(k).ok())
        .context("no tickets file for the service user: set KEEL_TICKETS or HOME")?;
    let ticket = file.get(server, user)?.with_context(|| {
        format!(
            "no ticket for service user {user} on {server} in {}: run `keel -s {server} -u {user} login` first",
            file.path.display()
        )
    })?;
    Ok(keel_server::ServiceLogin {
        user: user.to_string(),
        ticket,
    })
}
