//! branchsubmit: integrate a whole source tree into a new branch without workspace writes
//! (`integrate -v`), then submit it; run warm twice into two new branches, report the second.

use std::time::{Duration, Instant};

use keel_client::ops::{self, IntegrateQuery};

use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rpc;
use crate::server::{peak_rss_kib, reset_peak_rss};
use crate::stats::{ms, rate};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub seed: u64,
    /// Create the source tree first (false when `generate` already did).
    pub generate: bool,
    /// Branches to create; the last one is reported.
    pub runs: u32,
    /// The server's process id when the bench started it: its peak memory until the source
    /// tree exists is reported as `setup_peak_rss_mib`, and from then on (branching) as
    /// `branch_peak_rss_mib`.
    pub server_pid: Option<u32>,
}

/// One branch: how long integrate and submit took and how many files they handled.
#[derive(Debug, Clone, Copy)]
pub struct BranchRun {
    pub integrated: u64,
    pub submitted: u64,
    pub integrate: Duration,
    pub commit: Duration,
}

impl BranchRun {
    /// Integrate plus submit.
    pub fn elapsed(&self) -> Duration {
        self.integrate + self.commit
    }
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::branchsubmit(config.files, config.seed);
    let mut report = Report::new("branchsubmit");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report.set("generate_ms", ms(generated.elapsed));
    }
    // The branch runs' own peak, not the dataset upload's (reported apart, read before the
    // peak restarts).
    if let Some(kib) = config.server_pid.and_then(peak_rss_kib) {
        report.set("setup_peak_rss_mib", kib / 1024);
    }
    let measured_pid = config.server_pid.filter(|pid| reset_peak_rss(*pid));
    let conn = rpc::connect(addr, "brancher", "bench-branch").await?;
    let root = std::env::temp_dir().join("keel-bench-branch");
    rpc::save_workspace(
        &conn,
        "bench-branch",
        &root,
        vec!["//depot/... //bench-branch/...".into()],
    )
    .await?;
    let mut last = None;
    for run in 1..=config.runs.max(1) {
        let target = format!("//depot/branch{}r{run}", head_change(&conn).await?);
        let source = format!("{}/...", shape.prefix);
        let result = branch(&conn, &source, &format!("{target}/...")).await?;
        let start = report
            .samples
            .last()
            .map_or(Duration::ZERO, |s| s.start + s.latency);
        report.samples.push(Sample {
            op: "integrate",
            client: run,
            start,
            latency: result.integrate,
        });
        report.samples.push(Sample {
            op: "submit",
            client: run,
            start: start + result.integrate,
            latency: result.commit,
        });
        if run < config.runs {
            report.set("warmup_elapsed_ms", ms(result.elapsed()));
        }
        last = Some(result);
    }
    let last = last.ok_or_else(|| BenchError::Check("no branch run".into()))?;
    if last.submitted != config.files || last.integrated != config.files {
        return Err(BenchError::Check(format!(
            "branched {} and submitted {} files, expected {}",
            last.integrated, last.submitted, config.files
        )));
    }
    report
        .set("files", last.submitted)
        .set("integrate_ms", ms(last.integrate))
        .set("commit_ms", ms(last.commit))
        .set("commit_files_per_s", rate(last.submitted, last.commit))
        .set("elapsed_ms", ms(last.elapsed()));
    if let Some(kib) = measured_pid.and_then(peak_rss_kib) {
        report.set("branch_peak_rss_mib", kib / 1024);
    }
    Ok(report)
}

/// Integrates `from` into `to` (no workspace writes) and submits the result.
pub async fn branch(conn: &keel_client::Connection, from: &str, to: &str) -> Result<BranchRun> {
    let t = Instant::now();
    let query = IntegrateQuery {
        from: from.to_string(),
        to: to.to_string(),
        ..IntegrateQuery::default()
    };
    let integrated = rpc::count(ops::integrate(conn, query).await?).await?;
    let integrate = t.elapsed();
    let t = Instant::now();
    let (_, submitted) =
        rpc::submit(conn, &format!("branch {to}"), Vec::new(), |_| Vec::new()).await?;
    Ok(BranchRun {
        integrated,
        submitted,
        integrate,
        commit: t.elapsed(),
    })
}

/// The newest change number (0 on an empty server), used to name fresh branches.
pub async fn head_change(conn: &keel_client::Connection) -> Result<u64> {
    let query = keel_client::ops::ChangesQuery {
        max: 1,
        ..Default::default()
    };
    let newest = keel_client::ops::changes(conn, query).await?.all().await?;
    Ok(newest.iter().map(|c| c.number.0).max().unwrap_or(0))
}
