//! sync: one full sync of the tree into an empty workspace, then concurrent clients each
//! syncing a random subtree into a fresh workspace (real Sync RPC + client writes).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use keel_client::WorkspaceCtx;
use keel_client::sync::{SyncOptions, SyncTotals};
use keel_proto::v1::DeleteWorkspaceRequest;

use crate::access::{self, AccessMode};
use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rng::Rng;
use crate::rpc;
use crate::stats::{Latencies, ms, rate};

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

    // One sync of the whole tree into an empty workspace.
    let full = sync_fresh(
        addr,
        &shape,
        temp.path(),
        &format!("bsf{nonce}"),
        "",
        ticket.as_deref(),
    )
    .await?;
    let expected_bytes = shape.head_bytes(0..shape.files);
    if full.totals.files != shape.files || full.totals.bytes != expected_bytes {
        return Err(BenchError::Check(format!(
            "full sync wrote {} files / {} bytes, expected {} / {expected_bytes}",
            full.totals.files, full.totals.bytes, shape.files
        )));
    }
    report
        .set("files", full.totals.files)
        .set("bytes", full.totals.bytes)
        .set("full_sync_ms", ms(full.latency))
        .set(
            "full_sync_mb_per_s",
            rate(full.totals.bytes / 1_000_000, full.latency),
        );

    // Concurrent clients, each syncing random subtrees into fresh workspaces.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..config.clients.max(1) {
        let addr = addr.to_string();
        let shape = shape.clone();
        let dir = temp.path().to_path_buf();
        let rounds = config.rounds.max(1);
        let ticket = ticket.clone();
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
                let name = format!("bs{nonce}c{c}r{r}");
                let synced =
                    sync_fresh(&addr, &shape, &dir, &name, &sub, ticket.as_deref()).await?;
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
                op: "sync",
                client: c,
                start: began.duration_since(start),
                latency: synced.latency,
            });
        }
    }
    let wall = start.elapsed();
    report
        .set("clients", config.clients)
        .set("concurrent_syncs", syncs)
        .set("concurrent_files", files)
        .set("concurrent_bytes", bytes)
        .set("concurrent_wall_ms", ms(wall))
        .set("aggregate_mb_per_s", rate(bytes / 1_000_000, wall))
        .set("sync_p50_ms", ms(latencies.percentile(50.0)))
        .set("sync_p99_ms", ms(latencies.percentile(99.0)));
    Ok(report)
}

/// The user the syncing clients act as.
pub(crate) const SYNCER: &str = "syncer";

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
    let options = SyncOptions {
        files: vec![format!("//{name}/{sub}...")],
        ..SyncOptions::default()
    };
    let began = Instant::now();
    let totals = keel_client::sync::sync(&conn, &ws, &options, |_| {}).await?;
    let latency = began.elapsed();
    if totals.failed > 0 {
        return Err(BenchError::Check(format!(
            "{name}: {} files failed to sync",
            totals.failed
        )));
    }
    conn.client()
        .delete_workspace(DeleteWorkspaceRequest {
            caller: conn.caller(),
            name: name.to_string(),
        })
        .await
        .map_err(|s| BenchError::rpc(format!("deleting workspace {name}"), s))?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(Synced { totals, latency })
}
