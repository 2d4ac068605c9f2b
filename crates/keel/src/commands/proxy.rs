//! `keel proxy`: the caching proxy's configuration (defaults, `--config FILE`, flags) and
//! running it with logging to stderr; the listen line at start and the counters at exit.

use anyhow::{Context, Result};
use keel_proxy::{ProxyConfig, ProxyOptions};
use tracing_subscriber::EnvFilter;

use crate::cli::ProxyArgs;
use crate::output::{Out, Record};

pub async fn run(args: &ProxyArgs, json: bool) -> Result<()> {
    let mut config = match &args.config {
        Some(path) => ProxyConfig::load(path)?,
        None => ProxyConfig::default(),
    };
    if let Some(bytes) = args.cache_size {
        config.cache_size_bytes = bytes;
    }
    if let Some(addr) = &args.metrics_listen {
        config.metrics_listen = addr.clone();
    }
    if args.print_config {
        let text = if json {
            serde_json::to_string(&config).context("cannot print the configuration")?
        } else {
            config.to_toml()
        };
        println!("{}", text.trim_end());
        return Ok(());
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    std::fs::create_dir_all(&args.cache)
        .with_context(|| format!("cannot create the cache {}", args.cache.display()))?;
    crate::private_dir::make_private(&args.cache).with_context(|| {
        format!(
            "cannot make the proxy cache {} private",
            args.cache.display()
        )
    })?;
    let options = ProxyOptions {
        target: args.target.clone(),
        listen: args.listen.clone(),
        cache_dir: args.cache.clone(),
        trust_file: keel_tls::TrustFile::default_path(&|name| std::env::var(name).ok()).ok(),
        config,
        service_user: match &args.service_user {
            Some(user) => {
                let login = super::serve::service_login(&args.target, user)?;
                let ticket = login.ticket.parse().map_err(|_| {
                    anyhow::anyhow!(
                        "the ticket of service user {user} is not ASCII text; log in again"
                    )
                })?;
                Some(keel_proxy::ServiceUser {
                    user: login.user,
                    ticket,
                })
            }
            None => None,
        },
    };
    let (target, cache) = (args.target.clone(), args.cache.display().to_string());
    let counters = keel_proxy::run(
        options,
        move |at: &keel_proxy::ProxyListening| {
            let (addr, fingerprint) = (&at.addr, at.fingerprint);
            let metrics = at
                .metrics
                .map(|m| format!("http://{m}/metrics"))
                .unwrap_or_default();
            let record = Record::new()
                .s("listen", addr)
                .s("metrics", &metrics)
                .s("target", &target)
                .s("cache", &cache)
                .s(
                    "tlsFingerprint",
                    fingerprint.map(|f| f.to_string()).unwrap_or_default(),
                );
            let mut tls = fingerprint
                .map(|f| format!(", TLS fingerprint {f}"))
                .unwrap_or_default();
            if !metrics.is_empty() {
                tls.push_str(&format!(", metrics {metrics}"));
            }
            let text =
                format!("keel proxy: listening on {addr} (target {target}, cache {cache}{tls})");
            Out::new(json).emit(record, text);
        },
        keel_server::stop_requested(),
    )
    .await
    .context("keel proxy failed")?;
    let record = Record::new()
        .n("hits", counters.hits)
        .n("misses", counters.misses)
        .n("bytesFromTarget", counters.bytes_from_target)
        .n("bytesServed", counters.bytes_served)
        .n("cacheFiles", counters.cache_files)
        .n("cacheBytes", counters.cache_bytes);
    let text = format!(
        "keel proxy: stopped ({} hits, {} misses, {} bytes from target, {} bytes served)",
        counters.hits, counters.misses, counters.bytes_from_target, counters.bytes_served
    );
    Out::new(json).emit(record, text);
    Ok(())
}
