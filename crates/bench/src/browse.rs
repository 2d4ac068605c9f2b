//! browse: concurrent clients drilling down random paths of a deep tree (Dirs level by level,
//! then Fstat of a file, then Filelog of it) with no think time.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use keel_proto::v1::{DirsRequest, FilesRequest};

use crate::access::{self, AccessMode};
use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rng::Rng;
use crate::rpc;
use crate::stats::{Latencies, Windows, ms, rate, record};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub clients: u32,
    pub seconds: u64,
    pub seed: u64,
    pub generate: bool,
    /// Whether the clients authenticate and are checked against a protections table.
    pub access: AccessMode,
    /// With `access` secure: the tickets file the logins are kept in and reused from.
    pub tickets: Option<PathBuf>,
}

/// One client's tallies.
#[derive(Default)]
struct Tally {
    dirs: Windows,
    fstat: Windows,
    filelog: Windows,
    dirs_lat: Latencies,
    fstat_lat: Latencies,
    filelog_lat: Latencies,
    browses: u64,
    paths: HashSet<u64>,
    samples: Vec<Sample>,
}

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::browse(config.files, config.seed);
    let mut report = Report::new("browse");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report
            .set("generate_ms", ms(generated.elapsed))
            .set("generated_revisions", generated.revisions);
    }
    let users: Vec<String> = (0..config.clients.max(1))
        .map(|c| format!("browser{c}"))
        .collect();
    let logins = access::prepare(addr, config.access, &users, config.tickets.as_ref()).await?;
    report.set("access", config.access.as_str());
    let start = Instant::now();
    let deadline = start + Duration::from_secs(config.seconds.max(1));
    let mut tasks = Vec::new();
    for (c, user) in (0u32..).zip(&users) {
        let conn = access::connect(addr, user, "", logins.ticket(user)).await?;
        let shape = shape.clone();
        tasks.push(tokio::spawn(async move {
            client(conn, shape, c, start, deadline).await
        }));
    }
    let mut all = Tally::default();
    for t in rpc::join_clients("browse", tasks).await? {
        all.dirs.merge(&t.dirs);
        all.fstat.merge(&t.fstat);
        all.filelog.merge(&t.filelog);
        all.dirs_lat.extend(&t.dirs_lat);
        all.fstat_lat.extend(&t.fstat_lat);
        all.filelog_lat.extend(&t.filelog_lat);
        all.browses += t.browses;
        all.paths.extend(t.paths);
        all.samples.extend(t.samples);
    }
    let elapsed = start.elapsed();
    let whole = config.seconds.max(1) as usize;
    report
        .set("files", config.files)
        .set("clients", config.clients)
        .set(
            "duration_s",
            (elapsed.as_secs_f64() * 100.0).round() / 100.0,
        )
        .set("browses", all.browses)
        .set("unique_paths", all.paths.len() as u64)
        .set("dirs_calls", all.dirs_lat.len() as u64)
        .set("fstat_calls", all.fstat_lat.len() as u64)
        .set("filelog_calls", all.filelog_lat.len() as u64)
        .set("max_dirs_per_s", all.dirs.max_per_second(whole))
        .set("max_fstat_per_s", all.fstat.max_per_second(whole))
        .set("max_filelog_per_s", all.filelog.max_per_second(whole))
        .set("mean_dirs_per_s", rate(all.dirs_lat.len() as u64, elapsed))
        .set("dirs_p50_ms", ms(all.dirs_lat.percentile(50.0)))
        .set("dirs_p99_ms", ms(all.dirs_lat.percentile(99.0)))
        .set("fstat_p50_ms", ms(all.fstat_lat.percentile(50.0)))
        .set("fstat_p99_ms", ms(all.fstat_lat.percentile(99.0)))
        .set("filelog_p50_ms", ms(all.filelog_lat.percentile(50.0)))
        .set("filelog_p99_ms", ms(all.filelog_lat.percentile(99.0)));
    report.samples = all.samples;
    Ok(report)
}

/// One browsing client: drills until the deadline.
async fn client(
    conn: keel_client::Connection,
    shape: Shape,
    id: u32,
    start: Instant,
    deadline: Instant,
) -> Result<Tally> {
    let mut rng = Rng::derive(shape.seed, 1000 + u64::from(id));
    let mut t = Tally::default();
    let mut grpc = conn.client();
    while Instant::now() < deadline {
        let i = rng.below(shape.files);
        for pattern in shape.drill(i) {
            let began = Instant::now();
            let reply = grpc
                .dirs(DirsRequest {
                    caller: conn.caller(),
                    dirs: vec![pattern.clone()],
                    include_deleted: false,
                })
                .await;
            let n = rpc::drain(&format!("dirs {pattern}"), reply).await?;
            if n == 0 {
                return Err(BenchError::Check(format!("dirs {pattern}: no directories")));
            }
            record(
                &mut t.samples,
                &mut t.dirs,
                &mut t.dirs_lat,
                "dirs",
                id,
                start,
                began,
            );
        }
        let file = shape.depot_path(i);
        let files_request = FilesRequest {
            caller: conn.caller(),
            files: vec![file.clone()],
            ..FilesRequest::default()
        };
        let began = Instant::now();
        let reply = grpc.fstat(files_request.clone()).await;
        if rpc::drain(&format!("fstat {file}"), reply).await? != 1 {
            return Err(BenchError::Check(format!("fstat {file}: not one record")));
        }
        record(
            &mut t.samples,
            &mut t.fstat,
            &mut t.fstat_lat,
            "fstat",
            id,
            start,
            began,
        );
        let began = Instant::now();
        let reply = grpc.filelog(files_request).await;
        if rpc::drain(&format!("filelog {file}"), reply).await? == 0 {
            return Err(BenchError::Check(format!("filelog {file}: no revisions")));
        }
        record(
            &mut t.samples,
            &mut t.filelog,
            &mut t.filelog_lat,
            "filelog",
            id,
            start,
            began,
        );
        t.browses += 1;
        t.paths.insert(i);
    }
    Ok(t)
}
