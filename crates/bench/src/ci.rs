//! ci: build plans watching their own subtrees while developers submit (issue 31), measured
//! three ways in one run against one server: a `keel changes -m 1 PATH` process per plan per
//! poll (how a CI server polls today), one many-path `changes --since` call per poll, and one
//! `watch` subscription per plan (all on one connection). For each: the server's and this
//! client's CPU per minute, and the delay from a submit's reply to the plan knowing of it
//! (p50/p99), measured from the start of each submit call (an upper bound). Before them, the server's CPU while idle with no plans and with every plan
//! subscribed, and no submits.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keel_client::Connection;
use keel_client::ops::{self, OpenFor, SincePath, Watch, WatchEvent, WatchQuery};

use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::rpc;
use crate::stats::{Latencies, ms};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Build plans, each watching `//depot/ci/pNNN/...`.
    pub plans: u32,
    /// Minutes each of the three ways runs.
    pub minutes: f64,
    /// Seconds between two polls of the polling ways.
    pub poll_secs: f64,
    /// Milliseconds between two developer submits (each to one plan's subtree, in turn).
    pub submit_every_ms: u64,
    /// Seconds of each idle measurement (no submits).
    pub idle_secs: f64,
    /// Concurrent `keel changes` processes while polling the first way.
    pub process_parallel: u32,
    pub server_pid: Option<u32>,
    pub exe: PathBuf,
}

/// When each submit began (an upper bound of its commit's time, so every delay measured is
/// an upper bound too): by change number with its plan, once the submit returned, and by
/// its file's depot path from the start (a subscriber may hear of a change before the
/// submitter has its reply).
#[derive(Default)]
struct Log {
    by_change: HashMap<u64, (u32, Instant)>,
    by_path: HashMap<String, Instant>,
}

type Committed = Arc<Mutex<Log>>;

fn plan_path(plan: u32) -> String {
    format!("//depot/ci/p{plan:03}/...")
}

/// Runs the benchmark against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let plans = config.plans.max(1);
    let dev = rpc::connect(addr, "ci-dev", "ci-dev-ws").await?;
    let root = std::env::temp_dir().join("keel-bench-ci");
    rpc::save_workspace(
        &dev,
        "ci-dev-ws",
        &root,
        vec!["//depot/ci/... //ci-dev-ws/...".into()],
    )
    .await?;
    let committed: Committed = Arc::default();
    let mut serial = 0u64;
    // One file per plan to start with, so every plan has history.
    for plan in 0..plans {
        submit_one(&dev, plan, &mut serial, &committed).await?;
    }
    let mut report = Report::new("ci");
    report
        .set("plans", plans)
        .set("minutes_per_way", config.minutes)
        .set("poll_secs", config.poll_secs)
        .set("submit_every_ms", config.submit_every_ms);

    // Idle: no plans, then every plan subscribed; no submits.
    let idle = Duration::from_secs_f64(config.idle_secs.max(1.0));
    let (server_idle, _) = cpu_over(config.server_pid, idle, async {}).await;
    let watchers = rpc::connect(addr, "ci-plans", "").await?;
    let seen = Arc::new(Mutex::new(Latencies::default()));
    let subscriptions = subscribe_all(&watchers, plans, &committed, &seen).await?;
    let (server_idle_subscribed, _) = cpu_over(config.server_pid, idle, async {}).await;
    report
        .set(
            "server_cpu_ms_per_min_idle_no_plans",
            per_min(server_idle, idle),
        )
        .set(
            "server_cpu_ms_per_min_idle_subscribed",
            per_min(server_idle_subscribed, idle),
        );

    let span = Duration::from_secs_f64(config.minutes.max(0.05) * 60.0);
    let poll = Duration::from_secs_f64(config.poll_secs.max(0.1));

    // The way of subscriptions (already open).
    *seen.lock().expect("latencies") = Latencies::default();
    let (server, client) = cpu_over(
        config.server_pid,
        span,
        developers(&dev, plans, span, config, &mut serial, &committed),
    )
    .await;
    // Deliveries still in flight at the end are counted too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let subscribed = std::mem::take(&mut *seen.lock().expect("latencies"));
    for task in subscriptions {
        task.abort();
    }
    record(&mut report, "subscribe", server, client, span, &subscribed);

    // The way of one many-path call per poll.
    let known = known_now(&dev, plans).await?;
    let poller = {
        let conn = rpc::connect(addr, "ci-plans", "").await?;
        let committed = committed.clone();
        tokio::spawn(poll_batch(conn, plans, poll, span, known, committed))
    };
    let (server, client) = cpu_over(
        config.server_pid,
        span,
        developers(&dev, plans, span, config, &mut serial, &committed),
    )
    .await;
    let batch = join(poller).await?;
    record(&mut report, "batch", server, client, span, &batch);

    // The way of a process per plan per poll.
    let known = known_now(&dev, plans).await?;
    let poller = {
        let committed = committed.clone();
        let (exe, addr) = (config.exe.clone(), addr.to_string());
        let parallel = config.process_parallel.max(1);
        tokio::spawn(async move {
            poll_processes(exe, addr, plans, parallel, poll, span, known, committed).await
        })
    };
    let (server, client) = cpu_over(
        config.server_pid,
        span,
        developers(&dev, plans, span, config, &mut serial, &committed),
    )
    .await;
    let processes = join(poller).await?;
    record(&mut report, "process", server, client, span, &processes);
    Ok(report)
}

async fn join(task: tokio::task::JoinHandle<Result<Latencies>>) -> Result<Latencies> {
    task.await
        .map_err(|e| BenchError::Check(format!("ci poller failed: {e}")))?
}

fn record(
    report: &mut Report,
    way: &str,
    server_ms: u64,
    client_ms: u64,
    span: Duration,
    delays: &Latencies,
) {
    report
        .set(
            &format!("{way}_server_cpu_ms_per_min"),
            per_min(server_ms, span),
        )
        .set(
            &format!("{way}_client_cpu_ms_per_min"),
            per_min(client_ms, span),
        )
        .set(&format!("{way}_changes_known"), delays.len() as u64);
    if !delays.is_empty() {
        report
            .set(&format!("{way}_delay_p50_ms"), ms(delays.percentile(50.0)))
            .set(&format!("{way}_delay_p99_ms"), ms(delays.percentile(99.0)));
    }
}

fn per_min(cpu_ms: u64, span: Duration) -> f64 {
    (cpu_ms as f64 * 60.0 / span.as_secs_f64() * 10.0).round() / 10.0
}

/// Runs `work` for at least `span`; the server's CPU (ms) and this process's own plus its
/// children's over that time.
async fn cpu_over<F: std::future::Future>(pid: Option<u32>, span: Duration, work: F) -> (u64, u64) {
    let server_before = pid.and_then(crate::server::cpu_ms).unwrap_or(0);
    let client_before = client_cpu_ms();
    let began = Instant::now();
    work.await;
    if let Some(rest) = span.checked_sub(began.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    let server = pid.and_then(crate::server::cpu_ms).unwrap_or(0);
    (
        server.saturating_sub(server_before),
        client_cpu_ms().saturating_sub(client_before),
    )
}

/// CPU time of this process and its waited-for children, in milliseconds.
fn client_cpu_ms() -> u64 {
    #[cfg(unix)]
    {
        let of = |who| {
            // SAFETY: getrusage only writes the struct it is given.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(who, &mut usage) } != 0 {
                return 0;
            }
            let t = |tv: libc::timeval| tv.tv_sec as u64 * 1000 + tv.tv_usec as u64 / 1000;
            t(usage.ru_utime) + t(usage.ru_stime)
        };
        of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Adds one file under plan `plan`'s subtree and submits it; notes when the submit returned.
async fn submit_one(
    dev: &Connection,
    plan: u32,
    serial: &mut u64,
    committed: &Committed,
) -> Result<()> {
    *serial += 1;
    let file = format!("p{plan:03}/f{serial}.txt");
    rpc::open(dev, OpenFor::Add, vec![format!("//ci-dev-ws/{file}")]).await?;
    let depot = format!("//depot/ci/{file}");
    let began = Instant::now();
    committed
        .lock()
        .expect("committed")
        .by_path
        .insert(depot.clone(), began);
    let (change, _) = rpc::submit(dev, "ci: a developer's change", vec![depot], |path| {
        format!("{path}\n").into_bytes()
    })
    .await?;
    committed
        .lock()
        .expect("committed")
        .by_change
        .insert(change, (plan, began));
    Ok(())
}

/// Developers submitting, one change every `submit_every_ms`, to each plan in turn, for `span`.
async fn developers(
    dev: &Connection,
    plans: u32,
    span: Duration,
    config: &Config,
    serial: &mut u64,
    committed: &Committed,
) {
    let began = Instant::now();
    let every = Duration::from_millis(config.submit_every_ms.max(10));
    let mut plan = 0;
    while began.elapsed() < span {
        let next = Instant::now() + every;
        if let Err(e) = submit_one(dev, plan % plans, serial, committed).await {
            eprintln!("ci: a developer's submit failed: {e}");
        }
        plan += 1;
        tokio::time::sleep_until(next.into()).await;
    }
}

/// The delay from a change's submit beginning to now.
fn delay_of(committed: &Committed, change: u64) -> Option<Duration> {
    let (_, at) = *committed
        .lock()
        .expect("committed")
        .by_change
        .get(&change)?;
    Some(Instant::now().saturating_duration_since(at))
}

/// One `watch` per plan, all on `conn`; each delivery's delay goes to `seen`.
async fn subscribe_all(
    conn: &Connection,
    plans: u32,
    committed: &Committed,
    seen: &Arc<Mutex<Latencies>>,
) -> Result<Vec<tokio::task::JoinHandle<()>>> {
    let mut tasks = Vec::new();
    for plan in 0..plans {
        let mut watch = Watch::new(conn, WatchQuery::new(vec![plan_path(plan)]));
        // Open before any submit: every later change is delivered.
        watch.open().await?;
        let (committed, seen) = (committed.clone(), seen.clone());
        tasks.push(tokio::spawn(async move {
            while let Ok(event) = watch.next().await {
                let WatchEvent::Change(change) = event else {
                    continue;
                };
                let Some(file) = change.files.first() else {
                    continue;
                };
                let at = committed
                    .lock()
                    .expect("committed")
                    .by_path
                    .get(&file.depot_file)
                    .copied();
                if let Some(at) = at {
                    seen.lock().expect("latencies").push(at.elapsed());
                }
            }
        }));
    }
    Ok(tasks)
}

/// Each plan's newest change now.
async fn known_now(conn: &Connection, plans: u32) -> Result<Vec<u64>> {
    let paths: Vec<SincePath> = (0..plans)
        .map(|p| SincePath::new(plan_path(p), 0))
        .collect();
    let mut known = vec![0; plans as usize];
    let mut found = ops::changes_since(conn, &paths, 1).await?;
    while let Some(hit) = found.next().await? {
        let slot = &mut known[hit.path];
        *slot = (*slot).max(hit.change.number.0);
    }
    Ok(known)
}

/// Every `poll`, one many-path call for every plan's path after what it knows.
async fn poll_batch(
    conn: Connection,
    plans: u32,
    poll: Duration,
    span: Duration,
    mut known: Vec<u64>,
    committed: Committed,
) -> Result<Latencies> {
    let mut delays = Latencies::default();
    let began = Instant::now();
    while began.elapsed() < span {
        let next = Instant::now() + poll;
        let paths: Vec<SincePath> = (0..plans)
            .map(|p| SincePath::new(plan_path(p), known[p as usize]))
            .collect();
        let mut found = ops::changes_since(&conn, &paths, 0).await?;
        let mut newest = known.clone();
        while let Some(hit) = found.next().await? {
            if let Some(delay) = delay_of(&committed, hit.change.number.0) {
                delays.push(delay);
            }
            let slot = &mut newest[hit.path];
            *slot = (*slot).max(hit.change.number.0);
        }
        known = newest;
        tokio::time::sleep_until(next.into()).await;
    }
    Ok(delays)
}

/// Every `poll`, a `keel changes -m 1 --json PATH` process per plan (`parallel` at a time);
/// a plan knows of every change up to the newest one printed.
#[allow(clippy::too_many_arguments)]
async fn poll_processes(
    exe: PathBuf,
    addr: String,
    plans: u32,
    parallel: u32,
    poll: Duration,
    span: Duration,
    known: Vec<u64>,
    committed: Committed,
) -> Result<Latencies> {
    let known = Arc::new(Mutex::new(known));
    let delays = Arc::new(Mutex::new(Latencies::default()));
    let began = Instant::now();
    while began.elapsed() < span {
        let next = Instant::now() + poll;
        let mut workers = Vec::new();
        for worker in 0..parallel {
            let (exe, addr, known, delays, committed) = (
                exe.clone(),
                addr.clone(),
                known.clone(),
                delays.clone(),
                committed.clone(),
            );
            workers.push(tokio::task::spawn_blocking(move || -> Result<()> {
                for plan in (worker..plans).step_by(parallel as usize) {
                    let newest = newest_by_process(&exe, &addr, &plan_path(plan))?;
                    let before = known.lock().expect("known")[plan as usize];
                    if newest > before {
                        // The plan learns of every change since its last poll; the ones
                        // under its path are those `committed` has, in order.
                        let now = Instant::now();
                        let learnt: Vec<Duration> = committed
                            .lock()
                            .expect("committed")
                            .by_change
                            .iter()
                            .filter(|(c, (p, _))| *p == plan && **c > before && **c <= newest)
                            .map(|(_, (_, at))| now.saturating_duration_since(*at))
                            .collect();
                        let mut delays = delays.lock().expect("delays");
                        for delay in learnt {
                            delays.push(delay);
                        }
                        known.lock().expect("known")[plan as usize] = newest;
                    }
                }
                Ok(())
            }));
        }
        for w in workers {
            w.await
                .map_err(|e| BenchError::Check(format!("keel changes worker failed: {e}")))??;
        }
        tokio::time::sleep_until(next.into()).await;
    }
    let delays = std::mem::take(&mut *delays.lock().expect("delays"));
    Ok(delays)
}

/// `keel changes -m 1 --json PATH` as its own process: the newest change number it prints.
fn newest_by_process(exe: &PathBuf, addr: &str, path: &str) -> Result<u64> {
    let mut cmd = Command::new(exe);
    for (key, _) in std::env::vars() {
        if key.starts_with("KEEL_") && key != "KEEL_TRUST" {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .args(["--json", "changes", "-m", "1", path])
        .env("KEEL_SERVER", addr)
        .env("KEEL_USER", "ci-plans")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BenchError::io("starting keel changes".to_string(), e))?;
    if !out.status.success() {
        return Err(BenchError::Check(format!(
            "keel changes -m 1 {path} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["change"].as_u64())
        .max()
        .unwrap_or(0))
}
