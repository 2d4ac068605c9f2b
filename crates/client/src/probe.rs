//! The probe: the five everyday commands a developer feels (info, changes -m 1, fstat of a
//! file, sync -n of a file, opened), each timed on its own, and the report of their timings
//! to the server's metrics (`ReportProbe`). `keel probe` and `keel bench lockjam` both run it.

use crate::{Connection, Error, Result};
use keel_proto::v1::{
    ChangesRequest, FilesRequest, InfoRequest, OpenedRequest, ProbeTiming, ReportProbeRequest,
    SyncRequest,
};
use std::time::{Duration, Instant};

/// The commands in the order they run, as the server's metrics name them.
pub const PROBE_COMMANDS: [&str; 5] = ["info", "changes", "fstat", "sync", "opened"];

/// The file the probe asks about.
#[derive(Clone, Debug)]
pub struct ProbeFiles {
    /// Given to fstat (a depot path).
    pub fstat: String,
    /// Given to sync -n (depot or workspace syntax; it must map into the caller's workspace).
    pub sync: String,
}

/// One command's outcome.
#[derive(Debug)]
pub struct ProbeCall {
    /// One of [`PROBE_COMMANDS`].
    pub command: &'static str,
    /// When it started.
    pub began: Instant,
    /// From the request to the last message of its reply.
    pub latency: Duration,
    /// Why it failed, when it did (its time is still measured).
    pub error: Option<Error>,
}

/// Runs the five commands once, in order, each to the end of its reply. A failed command is
/// recorded and the next one still runs.
pub async fn run_once(conn: &Connection, files: &ProbeFiles) -> Vec<ProbeCall> {
    let mut calls = Vec::with_capacity(PROBE_COMMANDS.len());
    for command in PROBE_COMMANDS {
        let began = Instant::now();
        let outcome = one(conn, files, command).await;
        calls.push(ProbeCall {
            command,
            began,
            latency: began.elapsed(),
            error: outcome.err().map(|s| conn.status(s)),
        });
    }
    calls
}

async fn one(
    conn: &Connection,
    files: &ProbeFiles,
    command: &str,
) -> std::result::Result<(), tonic::Status> {
    let mut rpc = conn.client();
    let caller = conn.caller();
    match command {
        "info" => {
            rpc.info(InfoRequest { caller }).await?;
        }
        "changes" => {
            let request = ChangesRequest {
                caller,
                max: 1,
                ..ChangesRequest::default()
            };
            drain(rpc.changes(request).await?.into_inner()).await?;
        }
        "fstat" => {
            let request = FilesRequest {
                caller,
                files: vec![files.fstat.clone()],
                ..FilesRequest::default()
            };
            drain(rpc.fstat(request).await?.into_inner()).await?;
        }
        "sync" => {
            let request = SyncRequest {
                caller,
                files: vec![files.sync.clone()],
                preview: true,
                ..SyncRequest::default()
            };
            drain(rpc.sync(request).await?.into_inner()).await?;
        }
        _ => {
            let request = OpenedRequest {
                caller,
                ..OpenedRequest::default()
            };
            drain(rpc.opened(request).await?.into_inner()).await?;
        }
    }
    Ok(())
}

/// Reads a reply stream to its end.
async fn drain<M>(mut stream: tonic::Streaming<M>) -> std::result::Result<(), tonic::Status> {
    while stream.message().await?.is_some() {}
    Ok(())
}

/// Reports one run's timings to the server; `Ok(false)` when the server keeps no metrics.
pub async fn report(conn: &Connection, calls: &[ProbeCall]) -> Result<bool> {
    let request = ReportProbeRequest {
        caller: conn.caller(),
        timings: calls
            .iter()
            .map(|c| ProbeTiming {
                command: c.command.to_string(),
                seconds: c.latency.as_secs_f64(),
                failed: c.error.is_some(),
            })
            .collect(),
    };
    let reply = conn.client().report_probe(request).await;
    Ok(reply.map_err(|s| conn.status(s))?.into_inner().recorded)
}
