//! checkpoint: an online checkpoint of the browse dataset through the `Checkpoint` RPC (time,
//! records/s, size, the server's peak memory while it ran), then `keel admin restore` of it
//! into a fresh root as a child process (time, records/s, the restore's peak memory).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::rpc;
use crate::server::{peak_rss_kib, reset_peak_rss};
use crate::stats::{ms, rate};

/// Longest a restore may run before the workload gives up on it.
const RESTORE_LIMIT: Duration = Duration::from_secs(3600);

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Files of the browse tree (three revisions each).
    pub files: u64,
    pub seed: u64,
    pub generate: bool,
    /// The started server's process id (for its peak memory during the checkpoint).
    pub server_pid: Option<u32>,
    /// The `keel` executable that runs the restore; `None` skips the restore.
    pub restore_with: Option<PathBuf>,
    /// Where the restored root goes (a fresh directory under it; default: the system's
    /// temporary directory).
    pub work_dir: Option<PathBuf>,
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::browse(config.files, config.seed);
    let mut report = Report::new("checkpoint");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report.set("generate_ms", ms(generated.elapsed));
    }
    let measured = config.server_pid.filter(|pid| reset_peak_rss(*pid));
    let conn = rpc::connect(addr, "bench-admin", "").await?;
    let began = Instant::now();
    let done = rpc::checkpoint(&conn).await?;
    let elapsed = began.elapsed();
    report
        .set("files", config.files)
        .set("checkpoint_ms", ms(elapsed))
        .set("checkpoint_records", done.rows)
        .set("checkpoint_records_per_s", rate(done.rows, elapsed))
        .set("checkpoint_bytes", done.bytes)
        .set("checkpoint_databases", done.databases)
        .set("checkpoint_path", done.path.as_str());
    if let Some(kib) = measured.and_then(peak_rss_kib) {
        report.set("checkpoint_server_peak_rss_mib", kib / 1024);
    }
    let (Some(exe), true) = (&config.restore_with, Path::new(&done.path).exists()) else {
        return Ok(report);
    };
    let work = tempfile::Builder::new()
        .prefix("keel-bench-restore")
        .tempdir_in(config.work_dir.clone().unwrap_or_else(std::env::temp_dir))
        .map_err(|e| BenchError::Check(format!("restore work directory: {e}")))?;
    let root = work.path().join("root");
    let journal = Path::new(&done.path)
        .parent()
        .and_then(Path::parent)
        .map(|r| r.join("journal").join(format!("journal.{}", done.number)))
        .filter(|j| j.exists());
    let exe = exe.clone();
    let restore =
        tokio::task::spawn_blocking(move || run_restore(&exe, &done.path, journal, &root))
            .await
            .map_err(|e| BenchError::Check(format!("restore task failed: {e}")))??;
    report
        .set("restore_ms", ms(restore.elapsed))
        .set("restore_records", restore.records)
        .set(
            "restore_records_per_s",
            rate(restore.records, restore.elapsed),
        )
        .set("restore_peak_rss_mib", restore.peak_kib / 1024);
    Ok(report)
}

struct Restored {
    elapsed: Duration,
    records: u64,
    peak_kib: u64,
}

/// Runs `keel admin restore --json` and watches its peak memory until it exits.
fn run_restore(
    exe: &Path,
    checkpoint: &str,
    journal: Option<PathBuf>,
    root: &Path,
) -> Result<Restored> {
    let mut cmd = Command::new(exe);
    cmd.args([
        "--json",
        "admin",
        "restore",
        "--checkpoint",
        checkpoint,
        "--root",
    ])
    .arg(root)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some(journal) = journal {
        cmd.arg("--journal").arg(journal);
    }
    let began = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| BenchError::Check(format!("cannot start {}: {e}", exe.display())))?;
    let mut peak_kib = 0;
    loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if began.elapsed() < RESTORE_LIMIT => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Ok(None) => {
                let _ = child.kill();
                return Err(BenchError::Check(
                    "the restore did not finish in time".into(),
                ));
            }
            Err(e) => return Err(BenchError::Check(format!("waiting for the restore: {e}"))),
        }
    }
    let elapsed = began.elapsed();
    let output = child
        .wait_with_output()
        .map_err(|e| BenchError::Check(format!("restore output: {e}")))?;
    if !output.status.success() {
        return Err(BenchError::Check(format!(
            "restore failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let line: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| BenchError::Check(format!("restore report is not JSON: {e}")))?;
    let records = line["records"].as_u64().unwrap_or(0);
    Ok(Restored {
        elapsed,
        records,
        peak_kib,
    })
}
