//! sync: full syncs of the tree into empty workspaces (with a P4 address, alternating with as
//! many through the P4 front end, the bench's own P4 client writing the files), then concurrent
//! clients each syncing a random subtree into a fresh workspace (real Sync RPC + client
//! writes), natively and then through the P4 front end; P4 is reported beside native.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use keel_client::WorkspaceCtx;
use keel_client::ops::{self, SyncQuery, SyncTotals};

use crate::access::{self, AccessMode};
use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rng::Rng;
use crate::rpc;
use crate::stats::{Latencies, ms, rate};

/// Full syncs per way (native, P4), alternating.
const FULL_SYNCS: usize = 5;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub file_size: u64,
    pub clients: u32,
    /// Syncs per client in the concurrent phase.
    pub rounds: u32,
    pub seed: u64,
    pub generate: bool,
    /// Where workspaces are written (a temporary directory when None).
    pub work_dir: Option<PathBuf>,
    /// Whether the clients authenticate and are checked against a protections table.
    pub access: AccessMode,
    /// With `access` secure: the tickets file the logins are kept in and reused from.
    pub tickets: Option<PathBuf>,
    /// The server's P4 listener: sync through it too, after the native clients.
    pub p4: Option<String>,
}

/// What a workload of whole-tree syncs starts from: the tree generated (when asked), a fresh
/// work directory for its workspaces, and a nonce that keeps its workspace names unique.
pub(crate) struct SyncSetup {
    pub(crate) temp: tempfile::TempDir,
    pub(crate) nonce: u64,
}

impl SyncSetup {
    pub(crate) async fn prepare(
        addr: &str,
        shape: &Shape,
        generate: bool,
        work_dir: &Option<PathBuf>,
        report: &mut Report,
    ) -> Result<SyncSetup> {
        if generate {
            let generated = dataset::generate(addr, shape, 2).await?;
            report
                .set("generate_ms", ms(generated.elapsed))
                .set("generated_bytes", generated.bytes);
        }
        let temp = tempfile::Builder::new()
            .prefix(&format!("keel-bench-{}-", report.workload))
            .tempdir_in(work_dir.clone().unwrap_or_else(std::env::temp_dir))
            .map_err(|e| BenchError::io("creating the work directory", e))?;
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Ok(SyncSetup { temp, nonce })
    }
}

/// One finished sync.
pub(crate) struct Synced {
    pub(crate) totals: SyncTotals,
    pub(crate) latency: Duration,
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::sync(config.files, config.file_size, config.seed);
    let mut report = Report::new("sync");
    let SyncSetup { temp, nonce } =
        SyncSetup::prepare(addr, &shape, config.generate, &config.work_dir, &mut report).await?;

    let users = [SYNCER.to_string()];
    let logins = access::prepare(addr, config.access, &users, config.tickets.as_ref()).await?;
    let ticket = logins.ticket(SYNCER).map(str::to_string);
    report.set("access", config.access.as_str());

    if config.p4.is_some() && config.access != AccessMode::Open {
        return Err(BenchError::Check(
            "sync through the P4 listener runs with open access only".into(),
        ));
    }
    full_syncs(
        addr,
        config.p4.as_deref(),
        &shape,
        &temp,
        nonce,
        ticket.as_deref(),
        &mut report,
    )
    .await?;
    concurrent(
        addr,
        None,
        &shape,
        &temp,
        nonce,
        ticket.as_deref(),
        config,
        &mut report,
    )
    .await?;
    if let Some(p4) = &config.p4 {
        concurrent(
            addr,
            Some(p4),
            &shape,
            &temp,
            nonce,
            None,
            config,
            &mut report,
        )
        .await?;
        let ratio = |key: &str| {
            let number = |k: &str| report.get(k).and_then(serde_json::Value::as_f64);
            let (native, p4) = (number(key), number(&format!("p4_{key}")));
            match (native, p4) {
                (Some(n), Some(p)) if n > 0.0 => (p / n * 1000.0).round() / 1000.0,
                _ => 0.0,
            }
        };
        let full = ratio("full_sync_mb_per_s");
        let aggregate = ratio("aggregate_mb_per_s");
        report
            .set("p4_vs_native_full_sync", full)
            .set("p4_vs_native_aggregate", aggregate);
    }
    Ok(report)
}

/// Full syncs of the whole tree into an empty workspace: [`FULL_SYNCS`] natively and, with
/// `p4`, as many through the P4 listener, alternating, so both see the same conditions; the
/// median is reported (`full_sync_ms`, `p4_full_sync_ms`) with the range.
async fn full_syncs(
    addr: &str,
    p4: Option<&str>,
    shape: &Shape,
    temp: &tempfile::TempDir,
    nonce: u64,
    ticket: Option<&str>,
    report: &mut Report,
) -> Result<()> {
    let ways: Vec<Option<&str>> = match p4 {
        Some(p4) => vec![None, Some(p4)],
        None => vec![None],
    };
    let mut times: Vec<Latencies> = vec![Latencies::default(); ways.len()];
    let expected_bytes = shape.head_bytes(0..shape.files);
    for round in 0..FULL_SYNCS {
        for (way, p4) in ways.iter().enumerate() {
            let tag = if p4.is_some() { "p" } else { "" };
            let full = sync_via(
                addr,
                *p4,
                shape,
                temp.path(),
                &format!("bsf{tag}{nonce}r{round}"),
                "",
                if p4.is_some() { None } else { ticket },
            )
            .await?;
            if full.totals.files != shape.files || full.totals.bytes != expected_bytes {
                return Err(BenchError::Check(format!(
                    "full sync wrote {} files / {} bytes, expected {} / {expected_bytes}",
                    full.totals.files, full.totals.bytes, shape.files
                )));
            }
            times[way].push(full.latency);
        }
    }
    for (way, p4) in ways.iter().enumerate() {
        let key = |k: &str| format!("{}{k}", if p4.is_some() { "p4_" } else { "" });
        let median = times[way].percentile(50.0);
        report
            .set(&key("files"), shape.files)
            .set(&key("bytes"), expected_bytes)
            .set(&key("full_syncs"), times[way].len())
            .set(&key("full_sync_ms"), ms(median))
            .set(&key("full_sync_min_ms"), ms(times[way].percentile(0.0)))
            .set(&key("full_sync_max_ms"), ms(times[way].max()))
            .set(
                &key("full_sync_mb_per_s"),
                rate(expected_bytes / 1_000_000, median),
            );
    }
    Ok(())
}

/// The concurrent phase, natively or (with `p4`) through the P4 listener, whose figures are
/// keyed `p4_...`.
#[allow(clippy::too_many_arguments)]
async fn concurrent(
    addr: &str,
    p4: Option<&String>,
    shape: &Shape,
    temp: &tempfile::TempDir,
    nonce: u64,
    ticket: Option<&str>,
    config: &Config,
    report: &mut Report,
) -> Result<()> {
    let (prefix, tag) = match p4 {
        Some(_) => ("p4_", "p"),
        None => ("", ""),
    };
    let key = |k: &str| format!("{prefix}{k}");
    let p4 = p4.cloned();
    // Concurrent clients, each syncing random subtrees into fresh workspaces.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..config.clients.max(1) {
        let addr = addr.to_string();
        let shape = shape.clone();
        let dir = temp.path().to_path_buf();
        let rounds = config.rounds.max(1);
        let ticket = ticket.map(str::to_string);
        let p4 = p4.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::derive(shape.seed, 2000 + u64::from(c));
            let groups = shape
                .files
                .div_ceil(shape.per_dir.max(1))
                .div_ceil(10)
                .max(1);
            let mut out = Vec::new();
            for r in 0..rounds {
                let g = rng.below(groups);
                let sub = format!("a{}/b{}/c{}/", g / 100, g / 10 % 10, g % 10);
                let began = Instant::now();
                let name = format!("bs{tag}{nonce}c{c}r{r}");
                let synced = sync_via(
                    &addr,
                    p4.as_deref(),
                    &shape,
                    &dir,
                    &name,
                    &sub,
                    ticket.as_deref(),
                )
                .await?;
                out.push((c, began, synced));
            }
            Ok::<_, BenchError>(out)
        }));
    }
    let mut latencies = Latencies::default();
    let (mut files, mut bytes, mut syncs) = (0u64, 0u64, 0u64);
    for done in rpc::join_clients("sync", tasks).await? {
        for (c, began, synced) in done {
            files += synced.totals.files;
            bytes += synced.totals.bytes;
            syncs += 1;
            latencies.push(synced.latency);
            report.samples.push(Sample {
                op: if p4.is_some() { "p4_sync" } else { "sync" },
                client: c,
                start: began.duration_since(start),
                latency: synced.latency,
            });
        }
    }
    let wall = start.elapsed();
    report
        .set("clients", config.clients)
        .set(&key("concurrent_syncs"), syncs)
        .set(&key("concurrent_files"), files)
        .set(&key("concurrent_bytes"), bytes)
        .set(&key("concurrent_wall_ms"), ms(wall))
        .set(&key("aggregate_mb_per_s"), rate(bytes / 1_000_000, wall))
        .set(&key("sync_p50_ms"), ms(latencies.percentile(50.0)))
        .set(&key("sync_p99_ms"), ms(latencies.percentile(99.0)));
    Ok(())
}

/// The user the syncing clients act as.
pub(crate) const SYNCER: &str = "syncer";

/// [`sync_fresh`], or with `p4` the same through the P4 listener.
async fn sync_via(
    addr: &str,
    p4: Option<&str>,
    shape: &Shape,
    dir: &Path,
    name: &str,
    sub: &str,
    ticket: Option<&str>,
) -> Result<Synced> {
    match p4 {
        Some(p4) => sync_fresh_p4(addr, p4, shape, dir, name, sub).await,
        None => sync_fresh(addr, shape, dir, name, sub, ticket).await,
    }
}

/// Creates workspace `name` (natively, as [`sync_fresh`] does) and syncs `sub` into it through
/// the P4 listener at `p4` with the bench's own P4 client, which writes the files; then deletes
/// the workspace and its files.
async fn sync_fresh_p4(
    addr: &str,
    p4: &str,
    shape: &Shape,
    dir: &Path,
    name: &str,
    sub: &str,
) -> Result<Synced> {
    let conn = access::connect(addr, SYNCER, name, None).await?;
    let root = dir.join(name);
    std::fs::create_dir_all(&root)
        .map_err(|e| BenchError::io(format!("mkdir {}", root.display()), e))?;
    rpc::save_workspace(
        &conn,
        name,
        &root,
        vec![format!("{}/... //{name}/...", shape.prefix)],
    )
    .await?;
    let mut p4conn = crate::p4_client::P4Conn::connect(p4, SYNCER, name, &root).await?;
    let began = Instant::now();
    let reply = p4conn
        .run("sync", &[&format!("//{name}/{sub}...")], false)
        .await?;
    let latency = began.elapsed();
    ops::delete_workspace(&conn, name)
        .await
        .map_err(|e| BenchError::op(format!("deleting workspace {name}"), e))?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(Synced {
        totals: SyncTotals {
            files: reply.files_written,
            bytes: reply.bytes_written,
            ..SyncTotals::default()
        },
        latency,
    })
}

/// Creates workspace `name` rooted in a new directory under `dir`, syncs `sub` (a subtree of
/// the shape, empty = all) into it as [`SYNCER`] sending `ticket`, then deletes the workspace
/// and its files.
pub(crate) async fn sync_fresh(
    addr: &str,
    shape: &Shape,
    dir: &Path,
    name: &str,
    sub: &str,
    ticket: Option<&str>,
) -> Result<Synced> {
    let conn = access::connect(addr, SYNCER, name, ticket).await?;
    let root = dir.join(name);
    std::fs::create_dir_all(&root)
        .map_err(|e| BenchError::io(format!("mkdir {}", root.display()), e))?;
    let spec = rpc::save_workspace(
        &conn,
        name,
        &root,
        vec![format!("{}/... //{name}/...", shape.prefix)],
    )
    .await?;
    let ws = WorkspaceCtx::from_spec(spec)?;
    let query = SyncQuery {
        paths: vec![format!("//{name}/{sub}...")],
        ..SyncQuery::default()
    };
    let began = Instant::now();
    let totals = ops::sync(&conn, &ws, query, |_| {}).await?;
    let latency = began.elapsed();
    if totals.failed > 0 {
        return Err(BenchError::Check(format!(
            "{name}: {} files failed to sync",
            totals.failed
        )));
    }
    ops::delete_workspace(&conn, name)
        .await
        .map_err(|e| BenchError::op(format!("deleting workspace {name}"), e))?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(Synced { totals, latency })
}
