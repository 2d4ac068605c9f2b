//! proxy: clients each syncing the whole tree into a fresh workspace, directly from the
//! server, through a cold caching proxy (empty cache) and through the same proxy warm. For
//! each phase: wall time, per-sync latency and the stored bytes the server sent (its
//! `content_bytes_sent`), over `runs` rounds of the three phases interleaved.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use keel_client::ops;

use crate::dataset::Shape;
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rpc;
use crate::server::{Launch, Target, cpu_ms};
use crate::stats::{Latencies, ms, percentile_sorted};
use crate::sync::{SyncSetup, sync_fresh};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub file_size: u64,
    pub clients: u32,
    /// Rounds of the three phases (direct, cold, warm); medians are reported.
    pub runs: u32,
    pub seed: u64,
    pub generate: bool,
    /// Where workspaces and the proxy's cache are written (the system temporary directory
    /// when None).
    pub work_dir: Option<PathBuf>,
    /// The `keel` executable that runs the proxy.
    pub exe: PathBuf,
    /// The server's process (when the bench started it), for its CPU time per phase.
    pub server_pid: Option<u32>,
}

const PHASES: [&str; 3] = ["direct", "cold", "warm"];

/// One phase of one run.
struct Phase {
    wall: Duration,
    /// CPU time of the server and of the proxy during the phase (None when unknown).
    server_cpu_ms: Option<u64>,
    proxy_cpu_ms: Option<u64>,
    primary_bytes: u64,
    latencies: Vec<Duration>,
}

pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::sync(config.files, config.file_size, config.seed);
    let mut report = Report::new("proxy");
    let SyncSetup { temp, nonce } =
        SyncSetup::prepare(addr, &shape, config.generate, &config.work_dir, &mut report).await?;
    let expected = shape.head_bytes(0..shape.files);
    let mut walls: [Vec<Duration>; 3] = Default::default();
    let mut bytes: [Vec<u64>; 3] = Default::default();
    let mut server_cpu: [Vec<u64>; 3] = Default::default();
    let mut proxy_cpu: [Vec<u64>; 3] = Default::default();
    let mut all: [Latencies; 3] = Default::default();
    let start = Instant::now();
    for run in 0..config.runs.max(1) {
        // A fresh cache each run: the cold phase starts empty, the warm one reuses it.
        let launch = Launch {
            root: Some(temp.path().join(format!("cache{run}"))),
            proxy_target: Some(addr.to_string()),
            ..Launch::new(&config.exe)
        };
        let exe = config.exe.clone();
        let proxy = tokio::task::spawn_blocking(move || Target::launch(launch))
            .await
            .map_err(|e| {
                BenchError::Server(format!("{}: proxy start task: {e}", exe.display()))
            })??;
        for (p, name) in PHASES.iter().enumerate() {
            let via = if p == 0 { addr } else { proxy.addr.as_str() };
            let tag = format!("bp{nonce}r{run}{name}");
            let pids = Pids {
                server: config.server_pid,
                proxy: proxy.pid(),
            };
            let phase = clients(
                addr,
                via,
                &shape,
                temp.path(),
                &tag,
                config.clients,
                expected,
                pids,
            )
            .await?;
            for (c, latency) in phase.latencies.iter().enumerate() {
                report.samples.push(Sample {
                    op: name,
                    client: c as u32,
                    start: start.elapsed(),
                    latency: *latency,
                });
                all[p].push(*latency);
            }
            walls[p].push(phase.wall);
            bytes[p].push(phase.primary_bytes);
            server_cpu[p].extend(phase.server_cpu_ms);
            proxy_cpu[p].extend(phase.proxy_cpu_ms);
        }
    }
    report
        .set("files", shape.files)
        .set("tree_bytes", expected)
        .set("clients", config.clients)
        .set("runs", config.runs.max(1));
    for (p, name) in PHASES.iter().enumerate() {
        walls[p].sort();
        bytes[p].sort();
        let (lo, hi) = (walls[p][0], walls[p][walls[p].len() - 1]);
        report
            .set(
                &format!("{name}_wall_ms"),
                ms(percentile_sorted(&walls[p], 50.0)),
            )
            .set(&format!("{name}_wall_min_ms"), ms(lo))
            .set(&format!("{name}_wall_max_ms"), ms(hi))
            .set(
                &format!("{name}_primary_bytes"),
                bytes[p][bytes[p].len() / 2],
            )
            .set(&format!("{name}_sync_p50_ms"), ms(all[p].percentile(50.0)))
            .set(&format!("{name}_sync_p99_ms"), ms(all[p].percentile(99.0)));
        for (what, cpu) in [("server", &mut server_cpu[p]), ("proxy", &mut proxy_cpu[p])] {
            cpu.sort();
            if let Some(median) = cpu.get(cpu.len() / 2) {
                report.set(&format!("{name}_{what}_cpu_ms"), *median);
            }
        }
    }
    Ok(report)
}

/// Processes whose CPU time a phase reports.
#[derive(Clone, Copy)]
struct Pids {
    server: Option<u32>,
    proxy: Option<u32>,
}

/// `clients` concurrent full syncs through `via`; the server at `primary` is asked how many
/// content bytes it sent meanwhile.
#[allow(clippy::too_many_arguments)]
async fn clients(
    primary: &str,
    via: &str,
    shape: &Shape,
    dir: &std::path::Path,
    tag: &str,
    clients: u32,
    expected: u64,
    pids: Pids,
) -> Result<Phase> {
    let cpu = |pid: Option<u32>| pid.and_then(cpu_ms);
    let before = sent(primary).await?;
    let cpu_before = (cpu(pids.server), cpu(pids.proxy));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients.max(1) {
        let (via, shape, dir) = (via.to_string(), shape.clone(), dir.to_path_buf());
        let name = format!("{tag}c{c}");
        tasks.push(tokio::spawn(async move {
            let synced = sync_fresh(&via, &shape, &dir, &name, "", None).await?;
            Ok::<_, BenchError>(vec![synced])
        }));
    }
    let mut latencies = Vec::new();
    for done in rpc::join_clients("proxy", tasks).await? {
        for synced in done {
            if synced.totals.bytes != expected {
                return Err(BenchError::Check(format!(
                    "a sync through {via} wrote {} bytes, expected {expected}",
                    synced.totals.bytes
                )));
            }
            latencies.push(synced.latency);
        }
    }
    let wall = start.elapsed();
    let spent = |before: Option<u64>, now: Option<u64>| Some(now? - before?);
    Ok(Phase {
        wall,
        server_cpu_ms: spent(cpu_before.0, cpu(pids.server)),
        proxy_cpu_ms: spent(cpu_before.1, cpu(pids.proxy)),
        primary_bytes: sent(primary).await? - before,
        latencies,
    })
}

/// The server's stored content bytes sent so far.
async fn sent(addr: &str) -> Result<u64> {
    let conn = rpc::connect(addr, "bench-proxy", "").await?;
    let info = ops::info(&conn)
        .await
        .map_err(|e| BenchError::op("Info", e))?;
    Ok(info.content_bytes_sent)
}
