//! deltas: the read-only planning paths over large file sets — Integrate with preview and Sync
//! with preview into an empty workspace.

use std::time::Instant;

use keel_client::ops::{self, IntegrateQuery};
use keel_proto::v1::SyncRequest;

use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::rpc;
use crate::stats::{ms, rate};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub seed: u64,
    pub generate: bool,
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::branchsubmit(config.files, config.seed);
    let mut report = Report::new("deltas");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report.set("generate_ms", ms(generated.elapsed));
    }
    let ws = "bench-deltas";
    let conn = rpc::connect(addr, "deltas", ws).await?;
    let root = std::env::temp_dir().join("keel-bench-deltas");
    rpc::save_workspace(&conn, ws, &root, vec![format!("//depot/... //{ws}/...")]).await?;

    let t = Instant::now();
    let query = IntegrateQuery {
        from: format!("{}/...", shape.prefix),
        to: "//depot/deltas-preview/...".into(),
        preview: true,
        ..IntegrateQuery::default()
    };
    let integrated = rpc::count(ops::integrate(&conn, query).await?).await?;
    let integrate = t.elapsed();

    let t = Instant::now();
    let reply = conn
        .client()
        .sync(SyncRequest {
            caller: conn.caller(),
            files: vec![format!(
                "//{ws}/{}/...",
                shape.prefix.trim_start_matches("//depot/")
            )],
            preview: true,
            ..SyncRequest::default()
        })
        .await;
    // File messages plus one summary.
    let synced = rpc::drain("sync -n", reply).await?.saturating_sub(1);
    let sync = t.elapsed();
    if integrated != config.files || synced != config.files {
        return Err(BenchError::Check(format!(
            "integrate -n listed {integrated} and sync -n {synced} files, expected {}",
            config.files
        )));
    }
    report
        .set("files", config.files)
        .set("integrate_preview_ms", ms(integrate))
        .set("integrate_preview_files_per_s", rate(integrated, integrate))
        .set("sync_preview_ms", ms(sync))
        .set("sync_preview_files_per_s", rate(synced, sync));
    Ok(report)
}
