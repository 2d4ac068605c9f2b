//! loop: the everyday developer loop through the real `keel` command line, each phase a child
//! process timed from start to exit, the way a user at a shell feels it. Two workspaces of the
//! sync tree; per round: `status` of the unmodified workspace A, then `edits` files edited in
//! place in A and `reconcile` + `submit`, then `sync` of workspace B bringing in those edits.
//!
//! Before each status the workload waits out the client's racy slack, as a developer between
//! commands would: files changed within it are hashed again by any scan (see
//! `keel_client::local_state`), which is what the first status (reported apart) pays for the
//! whole tree.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::stats::{Latencies, ms};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub file_size: u64,
    /// Files edited per round.
    pub edits: u64,
    pub rounds: u32,
    pub seed: u64,
    pub generate: bool,
    /// Where workspaces are written (a temporary directory when None).
    pub work_dir: Option<PathBuf>,
    /// The `keel` executable whose command line is timed.
    pub exe: PathBuf,
}

/// One finished command.
struct Ran {
    elapsed: Duration,
    stdout: String,
    peak_rss_kib: u64,
}

/// A workspace driven through the command line.
struct Ws {
    name: String,
    root: PathBuf,
}

struct Cli<'a> {
    exe: &'a Path,
    addr: &'a str,
}

impl Cli<'_> {
    /// Runs `keel ARGS` in `ws`'s root; fails unless it exits 0.
    fn run(&self, ws: &Ws, args: &[&str]) -> Result<Ran> {
        let mut cmd = Command::new(self.exe);
        for (key, _) in std::env::vars() {
            if key.starts_with("KEEL_") {
                cmd.env_remove(key);
            }
        }
        cmd.args(args)
            .current_dir(&ws.root)
            .env("KEEL_SERVER", self.addr)
            .env("KEEL_USER", "looper")
            .env("KEEL_WORKSPACE", &ws.name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let what = format!("keel {}", args.join(" "));
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(|e| BenchError::io(format!("starting {what}"), e))?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let err_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let (code, peak_rss_kib) = wait_with_rusage(child)
            .map_err(|e| BenchError::io(format!("waiting for {what}"), e))?;
        let elapsed = start.elapsed();
        let err = err_reader.join().unwrap_or_default();
        if code != Some(0) {
            return Err(BenchError::Check(format!(
                "{what} in {} failed ({code:?}): {}",
                ws.root.display(),
                err.trim()
            )));
        }
        Ok(Ran {
            elapsed,
            stdout: out,
            peak_rss_kib,
        })
    }
}

/// A reaped child: its exit code (None when killed), peak resident memory (KiB) and output.
pub(crate) struct Finished {
    pub(crate) code: Option<i32>,
    pub(crate) peak_rss_kib: u64,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Reads `child`'s piped stdout and stderr to their ends, then reaps it.
pub(crate) fn wait_with_output_and_rusage(
    mut child: std::process::Child,
) -> std::io::Result<Finished> {
    use std::io::Read;
    let mut stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_end(&mut buf);
        }
        buf
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout)?;
    }
    let stderr = errors.join().unwrap_or_default();
    let (code, peak_rss_kib) = wait_with_rusage(child)?;
    Ok(Finished {
        code,
        peak_rss_kib,
        stdout,
        stderr,
    })
}

/// Reaps `child`: its exit code (None when killed) and peak resident memory (KiB).
#[cfg(unix)]
fn wait_with_rusage(child: std::process::Child) -> std::io::Result<(Option<i32>, u64)> {
    let pid = child.id();
    let mut status = 0;
    // SAFETY: rusage is plain data, so all-zero is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child with valid pointers to locals.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, u64::try_from(usage.ru_maxrss).unwrap_or(0)))
}

/// Reaps `child`: its exit code; no peak memory where the platform does not report it.
#[cfg(not(unix))]
fn wait_with_rusage(mut child: std::process::Child) -> std::io::Result<(Option<i32>, u64)> {
    Ok((child.wait()?.code(), 0))
}

/// JSON lines in a command's output.
fn records(ran: &Ran) -> usize {
    ran.stdout.lines().filter(|l| l.starts_with('{')).count()
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::sync(config.files, config.file_size, config.seed);
    let mut report = Report::new("loop");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report.set("generate_ms", ms(generated.elapsed));
    }
    let config = config.clone();
    let addr = addr.to_string();
    tokio::task::spawn_blocking(move || run_cli(&addr, &config, &shape, report))
        .await
        .map_err(|e| BenchError::Check(format!("the loop task failed: {e}")))?
}

fn run_cli(addr: &str, config: &Config, shape: &Shape, mut report: Report) -> Result<Report> {
    let temp = tempfile::Builder::new()
        .prefix("keel-bench-loop-")
        .tempdir_in(config.work_dir.clone().unwrap_or_else(std::env::temp_dir))
        .map_err(|e| BenchError::io("creating the workspace directory", e))?;
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let cli = Cli {
        exe: &config.exe,
        addr,
    };
    let make = |suffix: &str| -> Result<Ws> {
        let ws = Ws {
            name: format!("bl{nonce}{suffix}"),
            root: temp.path().join(suffix),
        };
        std::fs::create_dir_all(&ws.root)
            .map_err(|e| BenchError::io(format!("creating {}", ws.root.display()), e))?;
        let view = format!("{}/... //{}/...", shape.prefix, ws.name);
        let root = ws.root.display().to_string();
        cli.run(
            &ws,
            &[
                "workspace",
                "create",
                &ws.name,
                "--root",
                &root,
                "--view",
                &view,
            ],
        )?;
        Ok(ws)
    };
    let a = make("a")?;
    let b = make("b")?;
    let full = cli.run(&a, &["sync", "-q"])?;
    cli.run(&b, &["sync", "-q"])?;
    report
        .set("work_dir", temp.path().display().to_string())
        .set("files", shape.files)
        .set("full_sync_ms", ms(full.elapsed));

    let settle =
        keel_client::TransferConfig::default().state_racy_slack + Duration::from_millis(500);
    std::thread::sleep(settle);
    let first = cli.run(&a, &["--json", "status"])?;
    check(
        records(&first) == 0,
        "status of the fresh workspace found changes",
    )?;
    report
        .set("first_status_ms", ms(first.elapsed))
        .set("first_status_rss_mib", first.peak_rss_kib / 1024);

    let (mut status, mut submit, mut update) = (
        Latencies::default(),
        Latencies::default(),
        Latencies::default(),
    );
    let mut status_rss = 0;
    let started = Instant::now();
    let edits = config.edits.clamp(1, shape.files.max(1));
    for round in 0..config.rounds.max(1) {
        std::thread::sleep(settle);
        let began = started.elapsed();
        let ran = cli.run(&a, &["--json", "status"])?;
        check(
            records(&ran) == 0,
            "status of the unmodified workspace found changes",
        )?;
        status.push(ran.elapsed);
        status_rss = status_rss.max(ran.peak_rss_kib);
        sample(&mut report, "status", began, ran.elapsed);

        // Spread the edits over the tree, different files each round.
        let stride = (shape.files / edits).max(1);
        for k in 0..edits {
            let i = (k * stride + u64::from(round)) % shape.files;
            edit_in_place(&a.root.join(shape.rel_path(i)), round)?;
        }
        let began = started.elapsed();
        let reconciled = cli.run(&a, &["--json", "reconcile"])?;
        let description = format!("loop round {round}");
        let submitted = cli.run(&a, &["-q", "submit", "-d", &description])?;
        check(
            records(&reconciled) as u64 == edits,
            "reconcile did not open every edited file",
        )?;
        submit.push(reconciled.elapsed + submitted.elapsed);
        sample(
            &mut report,
            "edit_submit",
            began,
            reconciled.elapsed + submitted.elapsed,
        );

        let began = started.elapsed();
        let synced = cli.run(&b, &["--json", "sync"])?;
        check(
            records(&synced) as u64 == edits,
            "the other workspace's sync did not bring every edit",
        )?;
        update.push(synced.elapsed);
        sample(&mut report, "update", began, synced.elapsed);
    }
    report
        .set("edits", edits)
        .set("rounds", config.rounds.max(1))
        .set("status_p50_ms", ms(status.percentile(50.0)))
        .set("status_max_ms", ms(status.max()))
        .set("status_rss_mib", status_rss / 1024)
        .set("edit_submit_p50_ms", ms(submit.percentile(50.0)))
        .set("edit_submit_max_ms", ms(submit.max()))
        .set("update_p50_ms", ms(update.percentile(50.0)))
        .set("update_max_ms", ms(update.max()));
    Ok(report)
}

fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(BenchError::Check(what.to_string()))
    }
}

fn sample(report: &mut Report, op: &'static str, start: Duration, latency: Duration) {
    report.samples.push(Sample {
        op,
        client: 0,
        start,
        latency,
    });
}

/// Edits a synced (read-only) file in place, as an editor would: writable, one line appended.
fn edit_in_place(path: &Path, round: u32) -> Result<()> {
    let io = |e| BenchError::io(format!("editing {}", path.display()), e);
    let mut perms = std::fs::metadata(path).map_err(io)?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).map_err(io)?;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(io)?;
    std::io::Write::write_all(&mut file, format!("// loop edit {round}\n").as_bytes()).map_err(io)
}
