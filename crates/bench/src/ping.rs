//! ping: concurrent clients calling `Info` with no think time. The cheapest call the server
//! answers (one snapshot, no rows read), so its rate is the per-call ceiling of the transport
//! and the runtime on this machine, which bounds every call-bound workload such as browse.

use std::time::{Duration, Instant};

use keel_client::ops;

use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rpc;
use crate::stats::{Latencies, Windows, ms, rate, record};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub clients: u32,
    pub seconds: u64,
}

/// One client's tallies.
#[derive(Default)]
struct Tally {
    windows: Windows,
    latencies: Latencies,
    samples: Vec<Sample>,
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(config.seconds.max(1));
    let mut tasks = Vec::new();
    for c in 0..config.clients.max(1) {
        let conn = rpc::connect(addr, &format!("pinger{c}"), "").await?;
        tasks.push(tokio::spawn(async move {
            client(conn, c, start, deadline).await
        }));
    }
    let mut all = Tally::default();
    for t in rpc::join_clients("ping", tasks).await? {
        all.windows.merge(&t.windows);
        all.latencies.extend(&t.latencies);
        all.samples.extend(t.samples);
    }
    let elapsed = start.elapsed();
    let mut report = Report::new("ping");
    report
        .set("clients", config.clients)
        .set(
            "duration_s",
            (elapsed.as_secs_f64() * 100.0).round() / 100.0,
        )
        .set("calls", all.latencies.len() as u64)
        .set(
            "mean_calls_per_s",
            rate(all.latencies.len() as u64, elapsed),
        )
        .set(
            "max_calls_per_s",
            all.windows.max_per_second(config.seconds.max(1) as usize),
        )
        .set("call_p50_ms", ms(all.latencies.percentile(50.0)))
        .set("call_p99_ms", ms(all.latencies.percentile(99.0)));
    report.samples = all.samples;
    Ok(report)
}

/// One client: calls `Info` until the deadline.
async fn client(
    conn: keel_client::Connection,
    id: u32,
    start: Instant,
    deadline: Instant,
) -> Result<Tally> {
    let mut t = Tally::default();
    while Instant::now() < deadline {
        let began = Instant::now();
        let reply = ops::info(&conn)
            .await
            .map_err(|e| BenchError::op("info", e))?;
        if reply.user.is_empty() {
            return Err(BenchError::Check("info: the reply names no user".into()));
        }
        record(
            &mut t.samples,
            &mut t.windows,
            &mut t.latencies,
            "info",
            id,
            start,
            began,
        );
    }
    Ok(t)
}
