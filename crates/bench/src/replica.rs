//! replica: a read-only replica (`keel serve --replica-of`) started beside the server. Its
//! catch-up on the dataset; then replication lag (a submit's reply on the primary → its
//! change visible on the replica) under a stream of small submits, first alone and then while
//! clients sync the whole tree from the replica; and that sync's throughput.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use keel_client::WorkspaceCtx;
use keel_client::ops::{self, OpenFor, SyncQuery};
use keel_proto::v1::GetWorkspaceRequest;

use crate::branchsubmit::head_change;
use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rpc;
use crate::server::{Launch, Target};
use crate::stats::{Latencies, ms, rate};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub file_size: u64,
    /// Clients syncing the whole tree from the replica at once in the sync phase.
    pub clients: u32,
    /// Small submits of the lag phase.
    pub submits: u32,
    pub seed: u64,
    pub generate: bool,
    /// Where the replica's root and the workspaces are written (the system temporary
    /// directory when None).
    pub work_dir: Option<PathBuf>,
    /// The `keel` executable that runs the replica.
    pub exe: PathBuf,
}

/// Files each small submit adds.
const SUBMIT_FILES: u64 = 10;
/// How often the watcher asks the replica for its newest change.
const POLL: Duration = Duration::from_millis(2);
/// Longest wait for the replica to show a change (or catch up on the dataset).
const CATCH_UP: Duration = Duration::from_secs(600);
/// Most submits the sync phase's stream makes (it stops when the syncs are done).
const MAX_SUBMITS_DURING_SYNC: u32 = 10_000;

/// When each submitted change was acknowledged on the primary and first seen on the replica.
#[derive(Default)]
struct Times {
    committed: HashMap<u64, Instant>,
    seen: HashMap<u64, Instant>,
}

pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::sync(config.files, config.file_size, config.seed);
    let mut report = Report::new("replica");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report.set("generate_ms", ms(generated.elapsed));
    }
    let temp = tempfile::Builder::new()
        .prefix("keel-bench-replica-")
        .tempdir_in(config.work_dir.clone().unwrap_or_else(std::env::temp_dir))
        .map_err(|e| BenchError::io("creating the work directory", e))?;
    let writer = rpc::connect(addr, "writer", "bench-replica").await?;
    rpc::save_workspace(
        &writer,
        "bench-replica",
        &temp.path().join("writer"),
        vec!["//depot/... //bench-replica/...".into()],
    )
    .await?;
    let head = head_change(&writer).await?;

    // The replica starts empty and replays the primary's journal.
    let began = Instant::now();
    let launch = Launch {
        root: Some(temp.path().join("replica")),
        args: vec!["--replica-of".into(), addr.to_string()],
        ..Launch::new(&config.exe)
    };
    let exe = config.exe.clone();
    let replica = tokio::task::spawn_blocking(move || Target::launch(launch))
        .await
        .map_err(|e| BenchError::Server(format!("{}: replica start task: {e}", exe.display())))??;
    let reader = rpc::connect(&replica.addr, "watcher", "").await?;
    wait_for_change(&reader, head).await?;
    report
        .set("catchup_ms", ms(began.elapsed()))
        .set("catchup_changes", head);

    let start = Instant::now();
    let times = Arc::new(Mutex::new(Times::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = tokio::spawn(watch(reader, head, times.clone(), stop.clone()));

    // Lag under a stream of submits alone.
    let mut submit_latencies = Latencies::default();
    let mut next = 0;
    let quiet = submit_stream(&writer, &times, &mut next, &mut submit_latencies, &|k| {
        k < config.submits.max(1)
    })
    .await?;
    wait_seen(&times, &quiet).await?;

    // Lag while clients sync the whole tree from the replica, and the syncs' throughput.
    let syncing = Arc::new(AtomicBool::new(true));
    let syncs = {
        let (primary, via, shape, dir) = (
            addr.to_string(),
            replica.addr.clone(),
            shape.clone(),
            temp.path().to_path_buf(),
        );
        let (clients, syncing) = (config.clients.max(1), syncing.clone());
        tokio::spawn(async move {
            let result = sync_clients(&primary, &via, &shape, &dir, clients).await;
            syncing.store(false, Ordering::SeqCst);
            result
        })
    };
    let sync_began = Instant::now();
    let during = submit_stream(&writer, &times, &mut next, &mut submit_latencies, &|k| {
        syncing.load(Ordering::SeqCst) && k < MAX_SUBMITS_DURING_SYNC
    })
    .await?;
    let synced = syncs
        .await
        .map_err(|e| BenchError::Check(format!("sync clients: {e}")))??;
    let sync_wall = sync_began.elapsed();
    wait_seen(&times, &during).await?;
    stop.store(true, Ordering::SeqCst);
    watcher
        .await
        .map_err(|e| BenchError::Check(format!("watcher: {e}")))??;

    let times = times.lock().unwrap_or_else(PoisonError::into_inner);
    let lags = |changes: &[u64], op: &'static str, report: &mut Report| {
        let mut lags = Latencies::default();
        for change in changes {
            let (committed, seen) = (times.committed[change], times.seen[change]);
            // A change can show on the replica before the submit's reply reaches the client.
            let lag = seen.saturating_duration_since(committed);
            lags.push(lag);
            report.samples.push(Sample {
                op,
                client: 0,
                start: committed.duration_since(start),
                latency: lag,
            });
        }
        lags
    };
    let quiet_lags = lags(&quiet, "lag", &mut report);
    let sync_lags = lags(&during, "lag_during_sync", &mut report);
    let expected = shape.head_bytes(0..shape.files) * u64::from(config.clients.max(1));
    if synced.bytes != expected {
        return Err(BenchError::Check(format!(
            "the syncs from the replica wrote {} bytes, expected {expected}",
            synced.bytes
        )));
    }
    for latency in &synced.latencies {
        report.samples.push(Sample {
            op: "sync",
            client: 0,
            start: sync_began.duration_since(start),
            latency: *latency,
        });
    }
    let mut sync_latencies = Latencies::default();
    synced
        .latencies
        .iter()
        .for_each(|l| sync_latencies.push(*l));
    report
        .set("files", shape.files)
        .set("tree_bytes", shape.head_bytes(0..shape.files))
        .set("submit_files", SUBMIT_FILES)
        .set("poll_ms", ms(POLL))
        .set("submits", quiet.len() as u64)
        .set("submit_p50_ms", ms(submit_latencies.percentile(50.0)))
        .set("lag_p50_ms", ms(quiet_lags.percentile(50.0)))
        .set("lag_p99_ms", ms(quiet_lags.percentile(99.0)))
        .set("lag_max_ms", ms(quiet_lags.max()))
        .set("sync_clients", config.clients.max(1))
        .set("sync_bytes", synced.bytes)
        .set("sync_wall_ms", ms(sync_wall))
        .set("sync_mb_per_s", rate(synced.bytes, sync_wall) / 1_000_000.0)
        .set("sync_p50_ms", ms(sync_latencies.percentile(50.0)))
        .set("submits_during_sync", during.len() as u64)
        .set("sync_lag_p50_ms", ms(sync_lags.percentile(50.0)))
        .set("sync_lag_p99_ms", ms(sync_lags.percentile(99.0)));
    Ok(report)
}

/// Small submits of `SUBMIT_FILES` new files each, back to back while `more(submits so far)`;
/// records when each change was acknowledged and returns the changes.
async fn submit_stream(
    writer: &keel_client::Connection,
    times: &Mutex<Times>,
    next: &mut u32,
    latencies: &mut Latencies,
    more: &(dyn Fn(u32) -> bool + Sync),
) -> Result<Vec<u64>> {
    let mut changes = Vec::new();
    for k in 0.. {
        if !more(k) {
            break;
        }
        let dir = format!("replica-bench/s{next}");
        *next += 1;
        let files = (0..SUBMIT_FILES)
            .map(|j| format!("//bench-replica/{dir}/f{j}.txt"))
            .collect();
        let uploads = (0..SUBMIT_FILES)
            .map(|j| format!("//depot/{dir}/f{j}.txt"))
            .collect();
        let began = Instant::now();
        rpc::open(writer, OpenFor::Add, files).await?;
        let (change, _) =
            rpc::submit(writer, "replica bench", uploads, |f| f.as_bytes().to_vec()).await?;
        let acknowledged = Instant::now();
        latencies.push(acknowledged - began);
        times
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .committed
            .insert(change, acknowledged);
        changes.push(change);
    }
    Ok(changes)
}

/// Asks the replica for its newest change every `POLL` until `stop`, noting when each change
/// after `from` was first seen.
async fn watch(
    reader: keel_client::Connection,
    from: u64,
    times: Arc<Mutex<Times>>,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let mut last = from;
    while !stop.load(Ordering::SeqCst) {
        let head = head_change(&reader).await?;
        if head > last {
            let now = Instant::now();
            let mut times = times.lock().unwrap_or_else(PoisonError::into_inner);
            for change in last + 1..=head {
                times.seen.insert(change, now);
            }
            last = head;
        }
        tokio::time::sleep(POLL).await;
    }
    Ok(())
}

/// Waits (bounded) until the watcher has seen every change of `changes`.
async fn wait_seen(times: &Mutex<Times>, changes: &[u64]) -> Result<()> {
    let deadline = Instant::now() + CATCH_UP;
    loop {
        let missing = {
            let times = times.lock().unwrap_or_else(PoisonError::into_inner);
            changes
                .iter()
                .find(|c| !times.seen.contains_key(c))
                .copied()
        };
        let Some(change) = missing else {
            return Ok(());
        };
        if Instant::now() > deadline {
            return Err(BenchError::Check(format!(
                "change {change} did not show on the replica within {CATCH_UP:?}"
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits (bounded) until the replica shows change `change`.
async fn wait_for_change(reader: &keel_client::Connection, change: u64) -> Result<()> {
    let deadline = Instant::now() + CATCH_UP;
    while head_change(reader).await? < change {
        if Instant::now() > deadline {
            return Err(BenchError::Check(format!(
                "the replica did not reach change {change} within {CATCH_UP:?}"
            )));
        }
        tokio::time::sleep(POLL).await;
    }
    Ok(())
}

/// What the sync clients did.
struct Synced {
    bytes: u64,
    latencies: Vec<Duration>,
}

/// `clients` concurrent full syncs from the replica at `via`, each into a fresh workspace
/// created on the primary (a replica takes no spec writes) once the replica shows it.
async fn sync_clients(
    primary: &str,
    via: &str,
    shape: &Shape,
    dir: &Path,
    clients: u32,
) -> Result<Synced> {
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (primary, via, shape, dir) = (
            primary.to_string(),
            via.to_string(),
            shape.clone(),
            dir.to_path_buf(),
        );
        tasks.push(tokio::spawn(async move {
            let name = format!("bench-replica-sync{c}");
            let on_primary = rpc::connect(&primary, "syncer", &name).await?;
            let root = dir.join(&name);
            std::fs::create_dir_all(&root)
                .map_err(|e| BenchError::io(format!("mkdir {}", root.display()), e))?;
            let view = vec![format!("{}/... //{name}/...", shape.prefix)];
            rpc::save_workspace(&on_primary, &name, &root, view).await?;
            let on_replica = rpc::connect(&via, "syncer", &name).await?;
            let spec = replicated_workspace(&on_replica, &name).await?;
            let ws = WorkspaceCtx::from_spec(spec)?;
            let query = SyncQuery {
                paths: vec![format!("//{name}/...")],
                ..SyncQuery::default()
            };
            let began = Instant::now();
            let totals = ops::sync(&on_replica, &ws, query, |_| {}).await?;
            let latency = began.elapsed();
            if totals.failed > 0 {
                return Err(BenchError::Check(format!(
                    "{name}: {} files failed to sync from the replica",
                    totals.failed
                )));
            }
            ops::delete_workspace(&on_primary, &name)
                .await
                .map_err(|e| BenchError::op(format!("deleting workspace {name}"), e))?;
            let _ = std::fs::remove_dir_all(&root);
            Ok::<_, BenchError>(vec![(totals.bytes, latency)])
        }));
    }
    let mut synced = Synced {
        bytes: 0,
        latencies: Vec::new(),
    };
    for done in rpc::join_clients("replica sync", tasks).await? {
        for (bytes, latency) in done {
            synced.bytes += bytes;
            synced.latencies.push(latency);
        }
    }
    Ok(synced)
}

/// The workspace `name` once the replica has it (bounded wait).
async fn replicated_workspace(
    conn: &keel_client::Connection,
    name: &str,
) -> Result<keel_proto::v1::Workspace> {
    let deadline = Instant::now() + CATCH_UP;
    loop {
        let reply = conn
            .client()
            .get_workspace(GetWorkspaceRequest {
                caller: conn.caller(),
                name: name.to_string(),
                form: false,
            })
            .await;
        match reply {
            Ok(spec) => return Ok(spec.into_inner()),
            Err(s) if s.code() == tonic::Code::NotFound && Instant::now() < deadline => {
                tokio::time::sleep(POLL).await;
            }
            Err(s) => {
                return Err(BenchError::rpc(
                    format!("workspace {name} on the replica"),
                    s,
                ));
            }
        }
    }
}
