//! lockjam: a probe loop of five everyday calls (Info, Changes -m 1, Fstat of one file, Sync
//! preview of one file, Opened) timed per loop, while small submits run first alone and then
//! beside a long read (Fstat over the whole tree), followed by a large branch submit, and last
//! small submits again, first alone and then while checkpoints run back to back
//! (`Checkpoint`, the online backup). The checkpoint phase's submits are compared with the
//! alone ones just before it, which see the same database (grown by the branch) and the same
//! WAL, so the ratio measures what the checkpoints cost and not what the branch left behind.

use keel_client::ops::OpenFor;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use keel_client::Connection;
use keel_client::probe::{self, PROBE_COMMANDS, ProbeFiles};

use crate::branchsubmit;
use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rng::Rng;
use crate::rpc;
use crate::stats::{Latencies, ms};

/// Pause between probe loops.
const PROBE_PAUSE: Duration = Duration::from_millis(20);
/// Files added by each small submit.
const SUBMIT_FILES: u64 = 10;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Files of the browsed tree (three revisions each).
    pub files: u64,
    /// Files of the branch submitted during the long read.
    pub branch_files: u64,
    /// Small submits per phase.
    pub submits: u32,
    pub seed: u64,
    pub generate: bool,
}

const QUIET: u8 = 0;
const LOADED: u8 = 1;
const CHECKPOINTING: u8 = 2;
/// The small submits alone after the branch, the checkpoint phase's baseline (its probe loops
/// count in no phase's figures).
const BEFORE_CHECKPOINT: u8 = 3;
/// Most checkpoints the checkpoint phase starts (it stops after its submits anyway).
const MAX_CHECKPOINTS: u32 = 100;
/// Most small submits of one phase (the checkpoint phase goes on until a checkpoint is done).
const MAX_SUBMITS_PER_PHASE: u32 = 10_000;

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let tree = Shape::browse(config.files, config.seed);
    let mut source = Shape::branchsubmit(config.branch_files, config.seed);
    source.prefix = "//depot/jamsrc".into();
    let mut report = Report::new("lockjam");
    if config.generate {
        let a = dataset::generate(addr, &tree, 2).await?;
        let b = dataset::generate(addr, &source, 2).await?;
        report.set("generate_ms", ms(a.elapsed + b.elapsed));
    }
    let start = Instant::now();
    let phase = Arc::new(AtomicU8::new(QUIET));
    let stop = Arc::new(AtomicBool::new(false));
    let stop_probe = Arc::new(AtomicBool::new(false));

    // The probe and the long read are separate users: each runs on a thread and runtime of
    // its own, as a separate client process would, so neither waits on the other's decoding.
    let probe = {
        let (addr, tree, phase, stop) = (
            addr.to_string(),
            tree.clone(),
            phase.clone(),
            stop_probe.clone(),
        );
        own_thread("keel-bench-probe", async move {
            let conn = rpc::connect(&addr, "prober", "bench-probe").await?;
            rpc::save_workspace(
                &conn,
                "bench-probe",
                &std::env::temp_dir().join("keel-bench-probe"),
                vec![format!("{}/... //bench-probe/...", tree.prefix)],
            )
            .await?;
            probe_loop(conn, tree, phase, stop, start).await
        })?
    };

    let writer = rpc::connect(addr, "writer", "bench-jam").await?;
    rpc::save_workspace(
        &writer,
        "bench-jam",
        &std::env::temp_dir().join("keel-bench-jam"),
        vec!["//depot/... //bench-jam/...".into()],
    )
    .await?;
    let base = branchsubmit::head_change(&writer).await?;
    let quiet = small_submits(&writer, base, 0, config.submits, start, &mut report).await?;

    phase.store(LOADED, Ordering::SeqCst);
    let reader = {
        let (addr, prefix, stop) = (addr.to_string(), tree.prefix.clone(), stop.clone());
        own_thread("keel-bench-reader", async move {
            let conn = rpc::connect(&addr, "reader", "").await?;
            long_reads(conn, prefix, stop).await
        })?
    };
    // Let the long read get going before the writes start.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded = small_submits(&writer, base, 1, config.submits, start, &mut report).await?;
    let big_began = start.elapsed();
    let big = branchsubmit::branch(
        &writer,
        &format!("{}/...", source.prefix),
        &format!("//depot/jambranch{base}/..."),
    )
    .await?;
    let reads_during = reader.is_finished();
    stop.store(true, Ordering::SeqCst);
    let reads = reader
        .await
        .map_err(|e| BenchError::Check(format!("long read failed: {e}")))??;

    // Small submits alone on the grown database, then the same beside back-to-back checkpoints.
    phase.store(BEFORE_CHECKPOINT, Ordering::SeqCst);
    let before_checkpoint =
        small_submits(&writer, base, 3, config.submits, start, &mut report).await?;
    phase.store(CHECKPOINTING, Ordering::SeqCst);
    let stop_checkpoints = Arc::new(AtomicBool::new(false));
    let completed = Arc::new(AtomicU32::new(0));
    let checkpoints = {
        let (addr, stop, completed) = (
            addr.to_string(),
            stop_checkpoints.clone(),
            completed.clone(),
        );
        own_thread("keel-bench-checkpoint", async move {
            let conn = rpc::connect(&addr, "admin", "").await?;
            let mut done = Vec::new();
            for _ in 0..MAX_CHECKPOINTS {
                let began = Instant::now();
                rpc::checkpoint(&conn).await?;
                done.push(began.elapsed());
                completed.fetch_add(1, Ordering::SeqCst);
                if stop.load(Ordering::SeqCst) {
                    break;
                }
            }
            Ok(done)
        })?
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // At least the phase's submits, and on until a whole checkpoint ran beside them.
    let submits = config.submits;
    let during = submits_while(&writer, base, 2, start, &mut report, &|k| {
        k < submits || completed.load(Ordering::SeqCst) == 0
    })
    .await?;
    stop_checkpoints.store(true, Ordering::SeqCst);
    let checkpoints = checkpoints
        .await
        .map_err(|e| BenchError::Check(format!("checkpoint failed: {e}")))??;
    stop_probe.store(true, Ordering::SeqCst);
    let probes = probe
        .await
        .map_err(|e| BenchError::Check(format!("probe failed: {e}")))??;
    if reads_during {
        return Err(BenchError::Check(
            "the long read ended before the writes did".into(),
        ));
    }
    if big.submitted != config.branch_files {
        return Err(BenchError::Check(format!(
            "branch submitted {} files, expected {}",
            big.submitted, config.branch_files
        )));
    }

    let (mut all, mut under_load, mut checkpointing) = (
        Latencies::default(),
        Latencies::default(),
        Latencies::default(),
    );
    for probe in &probes {
        match probe.phase {
            CHECKPOINTING => checkpointing.push(probe.sample.latency),
            BEFORE_CHECKPOINT => {}
            LOADED => {
                all.push(probe.sample.latency);
                under_load.push(probe.sample.latency);
            }
            _ => all.push(probe.sample.latency),
        }
    }
    let without = quiet.percentile(50.0);
    let with = loaded.percentile(50.0);
    let ratio_of = |d: Duration, base: Duration| {
        if base.is_zero() {
            0.0
        } else {
            (d.as_secs_f64() / base.as_secs_f64() * 100.0).round() / 100.0
        }
    };
    let ratio = ratio_of(with, without);
    let with_checkpoint = during.percentile(50.0);
    let without_checkpoint = before_checkpoint.percentile(50.0);
    report
        .set("files", config.files)
        .set("branch_files", big.submitted)
        .set("probe_loops", probes.len() as u64)
        .set("probe_p50_ms", ms(all.percentile(50.0)))
        .set("probe_p99_ms", ms(all.percentile(99.0)))
        .set("probe_max_ms", ms(all.max()))
        .set("probe_loops_during_long_read", under_load.len() as u64)
        .set(
            "probe_p50_during_long_read_ms",
            ms(under_load.percentile(50.0)),
        )
        .set(
            "probe_p99_during_long_read_ms",
            ms(under_load.percentile(99.0)),
        )
        .set("probe_max_during_long_read_ms", ms(under_load.max()))
        .set("submits_per_phase", config.submits)
        .set("submit_p50_without_long_read_ms", ms(without))
        .set("submit_p50_with_long_read_ms", ms(with))
        .set("submit_ratio", ratio)
        .set("branch_integrate_ms", ms(big.integrate))
        .set("branch_commit_ms", ms(big.commit))
        .set("long_reads_completed", reads.len() as u64)
        .set(
            "long_read_ms",
            ms(reads.first().copied().unwrap_or_default()),
        )
        .set("submit_p50_with_checkpoint_ms", ms(with_checkpoint))
        .set("submit_p50_before_checkpoint_ms", ms(without_checkpoint))
        .set(
            "checkpoint_submit_ratio",
            ratio_of(with_checkpoint, without_checkpoint),
        )
        .set(
            "checkpoint_submit_ratio_to_first_quiet",
            ratio_of(with_checkpoint, without),
        )
        .set("probe_loops_during_checkpoint", checkpointing.len() as u64)
        .set(
            "probe_p99_during_checkpoint_ms",
            ms(checkpointing.percentile(99.0)),
        )
        .set("probe_max_during_checkpoint_ms", ms(checkpointing.max()))
        .set("checkpoints_completed", checkpoints.len() as u64)
        .set("submits_during_checkpoint", during.len() as u64)
        .set(
            "checkpoint_ms",
            ms(checkpoints.first().copied().unwrap_or_default()),
        );
    // Raw results: each loop, then its five calls (which one was slow), then the branch's
    // two phases, so a slow loop can be placed against what the writer was doing.
    for probe in probes {
        report.samples.push(probe.sample);
        report.samples.extend(probe.calls);
    }
    report.samples.push(Sample {
        op: "branch_integrate",
        client: 1,
        start: big_began,
        latency: big.integrate,
    });
    report.samples.push(Sample {
        op: "branch_commit",
        client: 1,
        start: big_began + big.integrate,
        latency: big.commit,
    });
    Ok(report)
}

/// `count` submits of `SUBMIT_FILES` new files each, timed.
async fn small_submits(
    conn: &Connection,
    base: u64,
    phase: u32,
    count: u32,
    start: Instant,
    report: &mut Report,
) -> Result<Latencies> {
    submits_while(conn, base, phase, start, report, &|k| k < count).await
}

/// Submits of `SUBMIT_FILES` new files each, timed, while `more(submits so far)`.
async fn submits_while(
    conn: &Connection,
    base: u64,
    phase: u32,
    start: Instant,
    report: &mut Report,
    more: &(dyn Fn(u32) -> bool + Sync),
) -> Result<Latencies> {
    let mut latencies = Latencies::default();
    for k in 0..MAX_SUBMITS_PER_PHASE {
        if !more(k) {
            break;
        }
        let dir = format!("jam/b{base}/p{phase}/s{k}");
        let files: Vec<String> = (0..SUBMIT_FILES)
            .map(|j| format!("//bench-jam/{dir}/f{j}.txt"))
            .collect();
        let uploads = (0..SUBMIT_FILES)
            .map(|j| format!("//depot/{dir}/f{j}.txt"))
            .collect();
        let began = Instant::now();
        rpc::open(conn, OpenFor::Add, files).await?;
        rpc::submit(conn, "lockjam submit", uploads, |f| f.as_bytes().to_vec()).await?;
        let latency = began.elapsed();
        latencies.push(latency);
        report.samples.push(Sample {
            op: match phase {
                0 => "submit_quiet",
                1 => "submit_loaded",
                3 => "submit_before_checkpoint",
                _ => "submit_checkpoint",
            },
            client: 1,
            start: began.duration_since(start),
            latency,
        });
    }
    Ok(latencies)
}

/// Fstat over the whole tree, again and again until `stop`; returns each completed read's time.
async fn long_reads(
    conn: Connection,
    prefix: String,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Duration>> {
    let mut done = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let began = Instant::now();
        let mut stream = keel_client::ops::fstat(&conn, vec![format!("{prefix}/...")]).await?;
        let mut finished = true;
        while stream.next().await?.is_some() {
            if stop.load(Ordering::SeqCst) {
                finished = false;
                break;
            }
        }
        if finished {
            done.push(began.elapsed());
        }
    }
    Ok(done)
}

/// One probe loop: its time, each call's, and the workload's phase when it began.
struct Probe {
    sample: Sample,
    calls: Vec<Sample>,
    phase: u8,
}

/// The probe: five everyday calls per loop until `stop`; each sample says which phase the
/// workload was in when the loop began.
async fn probe_loop(
    conn: Connection,
    tree: Shape,
    phase: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    start: Instant,
) -> Result<Vec<Probe>> {
    let mut rng = Rng::derive(tree.seed, 3000);
    let mut out = Vec::new();
    // Every loop is bounded by the workload's own bounded phases; this caps it regardless.
    for _ in 0..1_000_000u32 {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let phase = phase.load(Ordering::SeqCst);
        let i = rng.below(tree.files);
        let began = Instant::now();
        let calls = probe_calls(&conn, &tree, i, start).await?;
        let latency = began.elapsed();
        out.push(Probe {
            sample: Sample {
                op: "probe",
                client: 0,
                start: began.duration_since(start),
                latency,
            },
            calls,
            phase,
        });
        tokio::time::sleep(PROBE_PAUSE).await;
    }
    Ok(out)
}

/// One probe loop's five calls (the probe `keel probe` runs, `keel_client::probe`), each
/// timed; a failed call fails the workload (`start` is the workload's start).
async fn probe_calls(
    conn: &Connection,
    tree: &Shape,
    i: u64,
    start: Instant,
) -> Result<Vec<Sample>> {
    let files = ProbeFiles {
        fstat: tree.depot_path(i),
        sync: format!("//bench-probe/{}", tree.rel_path(i)),
    };
    let mut calls = Vec::with_capacity(PROBE_COMMANDS.len());
    for call in probe::run_once(conn, &files).await {
        if let Some(e) = call.error {
            return Err(BenchError::Check(format!("probe {}: {e}", call.command)));
        }
        calls.push(Sample {
            op: sample_op(call.command),
            client: 0,
            start: call.began.duration_since(start),
            latency: call.latency,
        });
    }
    Ok(calls)
}

/// The sample name of a probe command in the report's raw samples.
fn sample_op(command: &str) -> &'static str {
    match command {
        "info" => "probe_info",
        "changes" => "probe_changes",
        "fstat" => "probe_fstat",
        "sync" => "probe_sync_n",
        _ => "probe_opened",
    }
}

/// Runs `work` on a new thread with a single-threaded runtime of its own; the returned task
/// finishes with its result.
fn own_thread<T, F>(name: &str, work: F) -> Result<tokio::task::JoinHandle<Result<T>>>
where
    T: Send + 'static,
    F: std::future::Future<Output = Result<T>> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| BenchError::Check(format!("starting a client runtime: {e}")))
                .and_then(|runtime| runtime.block_on(work));
            let _ = tx.send(result);
        })
        .map_err(|e| BenchError::Check(format!("starting a client thread: {e}")))?;
    Ok(tokio::spawn(async move {
        rx.await
            .unwrap_or_else(|_| Err(BenchError::Check("a client thread panicked".into())))
    }))
}
