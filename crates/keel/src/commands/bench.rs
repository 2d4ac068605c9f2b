//! `keel bench`: runs a benchmark workload against a `keel serve` child process on loopback (or
//! `--server ADDR`) and prints its report.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use keel_bench::server::Target;
use keel_bench::{
    Report, access, branchsubmit, browse, checkpoint, dataset, deltas, dev_loop, lockjam, logins,
    ping, sync, verify,
};

/// `keel bench` flags shared by every workload.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub workload: Workload,
    /// Benchmark the server at HOST:PORT instead of starting one.
    #[arg(long = "server", global = true, value_name = "ADDR")]
    pub server: Option<String>,
    /// Keep the started server's data in DIR (reuse it later with --skip-generate).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Seed of the dataset generator and of the clients' random choices.
    #[arg(long, global = true, default_value_t = 1)]
    pub seed: u64,
    /// The dataset is already on the server (from `keel bench generate` with the same sizes).
    #[arg(long, global = true)]
    pub skip_generate: bool,
    /// Write raw per-operation results to FILE (.csv, else JSON lines).
    #[arg(long, global = true, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Start the server with TLS (`--listen ssl:127.0.0.1:0`); the benchmark trusts it in a
    /// trust file of its own.
    #[arg(long, global = true)]
    pub tls: bool,
    /// One more argument for the started `keel serve` (repeatable), e.g.
    /// `--serve-arg=--audit-log=/dev/shm/audit.log`.
    #[arg(long, global = true, value_name = "ARG", allow_hyphen_values = true)]
    pub serve_arg: Vec<String>,
}

/// The workloads.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Workload {
    /// Create a dataset through the API (use with --root or --server).
    Generate(GenerateArgs),
    /// Concurrent clients drilling down random paths (dirs, fstat, filelog).
    Browse(BrowseArgs),
    /// Branch a tree without workspace writes and submit it (twice, the second reported).
    Branchsubmit(BranchsubmitArgs),
    /// A full sync into an empty workspace, then concurrent subtree syncs.
    Sync(SyncArgs),
    /// Concurrent full syncs directly, through a cold and through a warm caching proxy.
    Proxy(ProxyBenchArgs),
    /// Replication lag under a submit stream, and syncs from a replica while submits go on.
    Replica(ReplicaBenchArgs),
    /// Integrate and sync previews over large file sets.
    Deltas(FilesArg),
    /// Probe latency and submit latency beside a long read and a large branch submit.
    Lockjam(LockjamArgs),
    /// Concurrent clients calling Info: the per-call ceiling of this machine (no dataset).
    Ping(PingArgs),
    /// The limits check: `keel files` while 2,000 idle connections come from 127.0.0.2, and
    /// the server's peak memory under concurrent `changes -l` of maximal descriptions.
    Limits(LimitsArgs),
    /// An online checkpoint of the browse dataset, then an offline restore of it.
    Checkpoint(CheckpointArgs),
    /// Verify of the sync dataset beside a raw read of its blob files, warm (and cold).
    Verify(VerifyArgs),
    /// The everyday loop through the CLI: status, edit + reconcile + submit, update elsewhere.
    #[command(name = "loop")]
    Loop(LoopArgs),
    /// Concurrent wrong logins against a fresh server at security 3: passwords checked (from
    /// the server's metrics) and its peak memory. The started server gets --metrics-listen.
    Logins(LoginsBenchArgs),
    /// Build plans watching their subtrees while developers submit: a `keel changes` process
    /// per plan per poll, one many-path call per poll, and subscriptions (server and client
    /// CPU per minute, commit-to-plan delay).
    Ci(CiBenchArgs),
    /// `keel admin log-report` over a generated command log: lines/s and peak memory (no
    /// server).
    LogReport(LogReportBenchArgs),
}

#[derive(Debug, Args)]
pub struct CiBenchArgs {
    /// Build plans, each watching its own subtree.
    #[arg(long, default_value_t = 110)]
    pub plans: u32,
    /// Minutes each of the three ways runs.
    #[arg(long, default_value_t = 1.0)]
    pub minutes: f64,
    /// Seconds between two polls of the polling ways.
    #[arg(long, default_value_t = 60.0)]
    pub poll_secs: f64,
    /// Milliseconds between two developer submits.
    #[arg(long, default_value_t = 2000)]
    pub submit_every_ms: u64,
    /// Seconds of each idle measurement (no plans, then every plan subscribed).
    #[arg(long, default_value_t = 10.0)]
    pub idle_secs: f64,
    /// `keel changes` processes run at once while polling by process.
    #[arg(long, default_value_t = 3)]
    pub process_parallel: u32,
}

#[derive(Debug, Args)]
pub struct LoginsBenchArgs {
    /// Wrong logins fired at once, in each of the two phases.
    #[arg(long, default_value_t = 400)]
    pub attempts: u32,
    /// HTTP/2 connections the attempts from one address share.
    #[arg(long, default_value_t = 16)]
    pub connections: u32,
    /// Loopback addresses (127.0.1.N) the second phase's distinct users come from.
    #[arg(long, default_value_t = 100)]
    pub addresses: u32,
}

#[derive(Debug, Args)]
pub struct LogReportBenchArgs {
    /// Lines of the generated command log.
    #[arg(long, default_value_t = 1_000_000)]
    pub lines: u64,
    /// Write the log in DIR (default: a temporary directory, removed after).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LoopArgs {
    #[arg(long, default_value_t = 70_000)]
    pub files: u64,
    /// Mean file size in bytes.
    #[arg(long, default_value_t = 7_000)]
    pub file_size: u64,
    /// Files edited and submitted per round.
    #[arg(long, default_value_t = 100)]
    pub edits: u64,
    /// Rounds of the three phases; medians and maxima reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// Directory for the workspaces (default: the system temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// Files of the browse tree (three revisions each).
    #[arg(long, default_value_t = 1_000_000)]
    pub files: u64,
    /// Skip the restore (it needs the checkpoint file on this machine).
    #[arg(long)]
    pub no_restore: bool,
    /// Directory for the restored root (default: the system temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShapeName {
    Browse,
    Branchsubmit,
    Sync,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[arg(long, value_enum)]
    pub shape: ShapeName,
    /// Files (default: the shape's reference size).
    #[arg(long)]
    pub files: Option<u64>,
    /// Mean file size in bytes (sync shape).
    #[arg(long, default_value_t = 4096)]
    pub file_size: u64,
}

#[derive(Debug, Args)]
pub struct BrowseArgs {
    #[arg(long, default_value_t = 1_000_000)]
    pub files: u64,
    #[arg(long, default_value_t = 8)]
    pub clients: u32,
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub p4: P4Args,
}

/// Whether `browse` and `sync` also run through the P4 front end.
#[derive(Debug, Clone, Args)]
pub struct P4Args {
    /// Also run the workload through the server's P4 listener (the bench's own P4 protocol
    /// client), after the native clients, and report both; a started server gets
    /// `--p4-listen 127.0.0.1:0`.
    #[arg(long)]
    pub p4: bool,
    /// With --server: the P4 listener of that server (implies --p4).
    #[arg(long, value_name = "HOST:PORT")]
    pub p4_server: Option<String>,
}

impl P4Args {
    fn wanted(&self) -> bool {
        self.p4 || self.p4_server.is_some()
    }
}

/// The P4 address a started server printed in its ready line (`P4 clients on ADDR`).
fn p4_address(target: &Target, args: &P4Args) -> Result<Option<String>> {
    if !args.wanted() {
        return Ok(None);
    }
    if let Some(addr) = &args.p4_server {
        return Ok(Some(addr.clone()));
    }
    let line = &target.ready_line;
    match line.split_once("P4 clients on ") {
        Some((_, rest)) => Ok(Some(
            rest.split([',', ')', ' '])
                .next()
                .unwrap_or_default()
                .to_string(),
        )),
        None => bail!(
            "--p4 needs the server's P4 listener: with --server, name it with --p4-server HOST:PORT"
        ),
    }
}

/// How the clients of `browse` and `sync` reach the server.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AccessName {
    /// As the server is (a fresh one: security 0, no protections table).
    Open,
    /// Security 3, every user logged in (a ticket on every call), a 34-line protections table.
    Secure,
}

#[derive(Debug, Args)]
pub struct AccessArgs {
    /// `secure`: set security 3, give the clients' users passwords, log them in and install a
    /// protections table, so every call pays authentication and the per-file check.
    #[arg(long, value_enum, default_value = "open")]
    pub access: AccessName,
    /// With --access secure: keep the logins in this tickets file and reuse those still valid
    /// (a later run then checks no password and writes nothing before it starts).
    #[arg(long, value_name = "FILE")]
    pub tickets: Option<PathBuf>,
}

impl AccessArgs {
    fn mode(&self) -> access::AccessMode {
        match self.access {
            AccessName::Open => access::AccessMode::Open,
            AccessName::Secure => access::AccessMode::Secure,
        }
    }
}

#[derive(Debug, Args)]
pub struct PingArgs {
    #[arg(long, default_value_t = 8)]
    pub clients: u32,
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
}

#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// Idle connections opened from the hostile address.
    #[arg(long, default_value_t = 2000)]
    pub idle: u32,
    /// Of them, those that send the HTTP/2 preface and then nothing.
    #[arg(long, default_value_t = 200)]
    pub preface: u32,
    /// `keel files` runs timed before and while the connections are held.
    #[arg(long, default_value_t = 10)]
    pub runs: u32,
    /// Changes submitted with a maximal description.
    #[arg(long, default_value_t = 3)]
    pub descriptions: u32,
    /// Bytes of each description (the server's default max_description_bytes).
    #[arg(long, default_value_t = 262_144)]
    pub description_bytes: usize,
    /// Concurrent `keel changes -l`.
    #[arg(long, default_value_t = 10)]
    pub listers: u32,
}

#[derive(Debug, Args)]
pub struct BranchsubmitArgs {
    #[arg(long, default_value_t = 70_000)]
    pub files: u64,
    /// Branches to create; the last is reported.
    #[arg(long, default_value_t = 2)]
    pub runs: u32,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    #[arg(long, default_value_t = 3_400)]
    pub files: u64,
    /// Mean file size in bytes.
    #[arg(long, default_value_t = 4096)]
    pub file_size: u64,
    #[arg(long, default_value_t = 8)]
    pub clients: u32,
    /// Syncs per client.
    #[arg(long, default_value_t = 4)]
    pub rounds: u32,
    /// Directory for the workspaces (default: the system temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub p4: P4Args,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[arg(long, default_value_t = 4_096)]
    pub files: u64,
    /// Mean file size in bytes.
    #[arg(long, default_value_t = 262_144)]
    pub file_size: u64,
    /// Rounds of raw read and verify; medians are reported.
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Also measure with a cold page cache: drops the whole system's page cache before each
    /// cold phase (needs root).
    #[arg(long)]
    pub drop_caches: bool,
}

#[derive(Debug, Args)]
pub struct ProxyBenchArgs {
    #[arg(long, default_value_t = 3_400)]
    pub files: u64,
    /// Mean file size in bytes.
    #[arg(long, default_value_t = 4096)]
    pub file_size: u64,
    #[arg(long, default_value_t = 8)]
    pub clients: u32,
    /// Rounds of the three phases (direct, cold, warm), interleaved; medians reported.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Directory for the workspaces and the proxy's cache (default: the system temporary
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReplicaBenchArgs {
    #[arg(long, default_value_t = 3_400)]
    pub files: u64,
    /// Mean file size in bytes.
    #[arg(long, default_value_t = 4096)]
    pub file_size: u64,
    /// Clients syncing the whole tree from the replica at once while submits go on.
    #[arg(long, default_value_t = 4)]
    pub clients: u32,
    /// Small (10-file) submits of the lag phase.
    #[arg(long, default_value_t = 200)]
    pub submits: u32,
    /// Directory for the replica's root and the workspaces (default: the system temporary
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FilesArg {
    #[arg(long, default_value_t = 70_000)]
    pub files: u64,
}

#[derive(Debug, Args)]
pub struct LockjamArgs {
    /// Files of the browsed tree (three revisions each).
    #[arg(long, default_value_t = 1_000_000)]
    pub files: u64,
    /// Files of the branch submitted during the long read.
    #[arg(long, default_value_t = 70_000)]
    pub branch_files: u64,
    /// Small submits per phase (without, then with the long read). Fewer make the ratio of the
    /// two medians swing widely between runs of one binary.
    #[arg(long, default_value_t = 30)]
    pub submits: u32,
}

/// Runs `keel bench ...`.
pub async fn run(args: &BenchArgs, global_server: Option<&str>, json: bool) -> Result<()> {
    if let Workload::LogReport(l) = &args.workload {
        let config = keel_bench::log_report::Config {
            lines: l.lines,
            seed: args.seed,
            dir: l.dir.clone(),
            exe: std::env::current_exe().context("cannot find the keel executable")?,
        };
        let report = tokio::task::spawn_blocking(move || keel_bench::log_report::run(&config))
            .await
            .context("log-report task failed")??;
        print_report(&report, json);
        return Ok(());
    }
    let target = match args.server.as_deref().or(global_server) {
        Some(addr) => Target::external(addr),
        None => {
            if matches!(args.workload, Workload::Generate(_)) && args.root.is_none() {
                bail!("keel bench generate needs --root DIR or --server ADDR to keep the data");
            }
            let exe = std::env::current_exe().context("cannot find the keel executable")?;
            let root = match &args.root {
                Some(root) if root.is_relative() => Some(std::env::current_dir()?.join(root)),
                other => other.clone(),
            };
            let mut serve_args = args.serve_arg.clone();
            if matches!(args.workload, Workload::Logins(_)) {
                // Passwords checked are read from the server's own metrics.
                serve_args.push("--metrics-listen=127.0.0.1:0".to_string());
            }
            let p4 = match &args.workload {
                Workload::Browse(b) => b.p4.wanted(),
                Workload::Sync(s) => s.p4.wanted(),
                _ => false,
            };
            if p4 {
                serve_args.push("--p4-listen=127.0.0.1:0".to_string());
            }
            let launch = keel_bench::server::Launch {
                root,
                listen: args.tls.then(|| "ssl:127.0.0.1:0".to_string()),
                args: serve_args,
                ..keel_bench::server::Launch::new(&exe)
            };
            tokio::task::spawn_blocking(move || Target::launch(launch))
                .await
                .context("server start task failed")??
        }
    };
    let addr = target.addr.as_str();
    let generate = !args.skip_generate;
    let seed = args.seed;
    let mut report = match &args.workload {
        Workload::Generate(g) => generate_only(addr, g, seed).await?,
        Workload::Browse(b) => {
            let config = browse::Config {
                files: b.files,
                clients: b.clients,
                seconds: b.seconds,
                seed,
                generate,
                access: b.access.mode(),
                tickets: b.access.tickets.clone(),
                p4: p4_address(&target, &b.p4)?,
            };
            browse::run(addr, &config).await?
        }
        Workload::Branchsubmit(b) => {
            let config = branchsubmit::Config {
                files: b.files,
                seed,
                generate,
                runs: b.runs,
                server_pid: target.pid(),
            };
            branchsubmit::run(addr, &config).await?
        }
        Workload::Sync(s) => {
            let config = sync::Config {
                files: s.files,
                file_size: s.file_size,
                clients: s.clients,
                rounds: s.rounds,
                seed,
                generate,
                work_dir: s.work_dir.clone(),
                access: s.access.mode(),
                tickets: s.access.tickets.clone(),
                p4: p4_address(&target, &s.p4)?,
            };
            sync::run(addr, &config).await?
        }
        Workload::Proxy(p) => {
            let config = keel_bench::proxy::Config {
                files: p.files,
                file_size: p.file_size,
                clients: p.clients,
                runs: p.runs,
                seed,
                generate,
                work_dir: p.work_dir.clone(),
                exe: std::env::current_exe().context("cannot find the keel executable")?,
                server_pid: target.pid(),
            };
            keel_bench::proxy::run(addr, &config).await?
        }
        Workload::Replica(r) => {
            let config = keel_bench::replica::Config {
                files: r.files,
                file_size: r.file_size,
                clients: r.clients,
                submits: r.submits,
                seed,
                generate,
                work_dir: r.work_dir.clone(),
                exe: std::env::current_exe().context("cannot find the keel executable")?,
            };
            keel_bench::replica::run(addr, &config).await?
        }
        Workload::Deltas(d) => {
            let config = deltas::Config {
                files: d.files,
                seed,
                generate,
            };
            deltas::run(addr, &config).await?
        }
        Workload::Lockjam(l) => {
            let config = lockjam::Config {
                files: l.files,
                branch_files: l.branch_files,
                submits: l.submits,
                seed,
                generate,
            };
            lockjam::run(addr, &config).await?
        }
        Workload::Checkpoint(c) => {
            let config = checkpoint::Config {
                files: c.files,
                seed,
                generate,
                server_pid: target.pid(),
                restore_with: if c.no_restore {
                    None
                } else {
                    Some(std::env::current_exe().context("cannot find the keel executable")?)
                },
                work_dir: c.work_dir.clone(),
            };
            checkpoint::run(addr, &config).await?
        }
        Workload::Verify(v) => {
            // Raw reads read the blob files: the root of the started server, or with --server
            // the one --root names.
            let Some(server_root) = target.root.clone().or_else(|| args.root.clone()) else {
                bail!("keel bench verify --server ADDR needs --root DIR, that server's root");
            };
            let config = verify::Config {
                files: v.files,
                file_size: v.file_size,
                seed,
                generate,
                rounds: v.rounds,
                drop_caches: v.drop_caches,
                server_root,
            };
            verify::run(addr, &config).await?
        }
        Workload::LogReport(_) => bail!("keel bench log-report starts no server"),
        Workload::Loop(l) => {
            let config = dev_loop::Config {
                files: l.files,
                file_size: l.file_size,
                edits: l.edits,
                rounds: l.rounds,
                seed,
                generate,
                work_dir: l.work_dir.clone(),
                exe: std::env::current_exe().context("cannot find the keel executable")?,
            };
            dev_loop::run(addr, &config).await?
        }
        Workload::Limits(l) => {
            let config = keel_bench::limits::Config {
                idle: l.idle,
                preface: l.preface,
                from: [127, 0, 0, 2],
                runs: l.runs,
                descriptions: l.descriptions,
                description_bytes: l.description_bytes,
                listers: l.listers,
                server_pid: target.pid(),
                exe: std::env::current_exe().context("cannot find the keel executable")?,
            };
            keel_bench::limits::run(addr, &config).await?
        }
        Workload::Logins(l) => {
            let config = logins::Config {
                attempts: l.attempts,
                connections: l.connections,
                addresses: l.addresses,
                metrics: target.metrics.clone(),
            };
            logins::run(addr, &config).await?
        }
        Workload::Ci(c) => {
            let config = keel_bench::ci::Config {
                plans: c.plans,
                minutes: c.minutes,
                poll_secs: c.poll_secs,
                submit_every_ms: c.submit_every_ms,
                idle_secs: c.idle_secs,
                process_parallel: c.process_parallel,
                server_pid: target.pid(),
                exe: std::env::current_exe().context("cannot find the keel executable")?,
            };
            keel_bench::ci::run(addr, &config).await?
        }
        Workload::Ping(p) => {
            let config = ping::Config {
                clients: p.clients,
                seconds: p.seconds,
            };
            ping::run(addr, &config).await?
        }
    };
    if let Some(kib) = target.peak_rss_kib() {
        report.set("server_peak_rss_mib", kib / 1024);
    }
    if let Some(out) = &args.out {
        report.write_samples(out)?;
    }
    print_report(&report, json);
    Ok(())
}

fn print_report(report: &Report, json: bool) {
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
}

/// `keel bench generate`: only creates the dataset.
async fn generate_only(addr: &str, args: &GenerateArgs, seed: u64) -> Result<Report> {
    let shape = match args.shape {
        ShapeName::Browse => dataset::Shape::browse(args.files.unwrap_or(1_000_000), seed),
        ShapeName::Branchsubmit => dataset::Shape::branchsubmit(args.files.unwrap_or(70_000), seed),
        ShapeName::Sync => dataset::Shape::sync(args.files.unwrap_or(3_400), args.file_size, seed),
    };
    let generated = dataset::generate(addr, &shape, 2).await?;
    let mut report = Report::new("generate");
    report
        .set("prefix", shape.prefix.as_str())
        .set("files", generated.files)
        .set("revisions", generated.revisions)
        .set("bytes", generated.bytes)
        .set("changes", generated.changes)
        .set("elapsed_ms", keel_bench::stats::ms(generated.elapsed))
        .set(
            "revisions_per_s",
            keel_bench::stats::rate(generated.revisions, generated.elapsed),
        );
    Ok(report)
}
