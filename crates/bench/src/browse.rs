//! browse: concurrent clients drilling down random paths of a deep tree (Dirs level by level,
//! then Fstat of a file, then Filelog of it) with no think time; with a P4 address, the same
//! clients then browse through the P4 front end for as long, and the report shows both.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use keel_client::ops::{self, FilelogQuery};

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
    /// The server's P4 listener: browse through it too, after the native clients.
    pub p4: Option<String>,
}

/// One client's tallies.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) dirs: Windows,
    pub(crate) fstat: Windows,
    pub(crate) filelog: Windows,
    pub(crate) dirs_lat: Latencies,
    pub(crate) fstat_lat: Latencies,
    pub(crate) filelog_lat: Latencies,
    pub(crate) browses: u64,
    pub(crate) paths: HashSet<u64>,
    pub(crate) samples: Vec<Sample>,
}

impl Tally {
    fn merge(&mut self, t: Tally) {
        self.dirs.merge(&t.dirs);
        self.fstat.merge(&t.fstat);
        self.filelog.merge(&t.filelog);
        self.dirs_lat.extend(&t.dirs_lat);
        self.fstat_lat.extend(&t.fstat_lat);
        self.filelog_lat.extend(&t.filelog_lat);
        self.browses += t.browses;
        self.paths.extend(t.paths);
        self.samples.extend(t.samples);
    }

    /// Sets this tally's figures on `report`, each key prefixed with `prefix`.
    fn report(&self, report: &mut Report, prefix: &str, seconds: u64, elapsed: Duration) {
        let whole = seconds.max(1) as usize;
        let key = |k: &str| format!("{prefix}{k}");
        report
            .set(
                &key("duration_s"),
                (elapsed.as_secs_f64() * 100.0).round() / 100.0,
            )
            .set(&key("browses"), self.browses)
            .set(&key("unique_paths"), self.paths.len() as u64)
            .set(&key("dirs_calls"), self.dirs_lat.len() as u64)
            .set(&key("fstat_calls"), self.fstat_lat.len() as u64)
            .set(&key("filelog_calls"), self.filelog_lat.len() as u64)
            .set(&key("max_dirs_per_s"), self.dirs.max_per_second(whole))
            .set(&key("max_fstat_per_s"), self.fstat.max_per_second(whole))
            .set(
                &key("max_filelog_per_s"),
                self.filelog.max_per_second(whole),
            )
            .set(
                &key("mean_dirs_per_s"),
                rate(self.dirs_lat.len() as u64, elapsed),
            )
            .set(&key("dirs_p50_ms"), ms(self.dirs_lat.percentile(50.0)))
            .set(&key("dirs_p99_ms"), ms(self.dirs_lat.percentile(99.0)))
            .set(&key("fstat_p50_ms"), ms(self.fstat_lat.percentile(50.0)))
            .set(&key("fstat_p99_ms"), ms(self.fstat_lat.percentile(99.0)))
            .set(
                &key("filelog_p50_ms"),
                ms(self.filelog_lat.percentile(50.0)),
            )
            .set(
                &key("filelog_p99_ms"),
                ms(self.filelog_lat.percentile(99.0)),
            );
    }
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
        all.merge(t);
    }
    let elapsed = start.elapsed();
    report
        .set("files", config.files)
        .set("clients", config.clients);
    all.report(&mut report, "", config.seconds, elapsed);
    report.samples = std::mem::take(&mut all.samples);
    if let Some(p4) = &config.p4 {
        if config.access != AccessMode::Open {
            return Err(BenchError::Check(
                "browse through the P4 listener runs with open access only".into(),
            ));
        }
        let start = Instant::now();
        let deadline = start + Duration::from_secs(config.seconds.max(1));
        let mut tasks = Vec::new();
        for (c, user) in (0u32..).zip(&users) {
            let (p4, user, shape) = (p4.clone(), user.clone(), shape.clone());
            tasks.push(tokio::spawn(async move {
                crate::p4_browse::client(&p4, &user, shape, c, start, deadline).await
            }));
        }
        let mut p4_all = Tally::default();
        for t in rpc::join_clients("browse through P4", tasks).await? {
            p4_all.merge(t);
        }
        let p4_elapsed = start.elapsed();
        p4_all.report(&mut report, "p4_", config.seconds, p4_elapsed);
        let per_s = |t: &Tally, d: Duration| t.browses as f64 / d.as_secs_f64().max(1e-9);
        let ratio = per_s(&p4_all, p4_elapsed) / per_s(&all, elapsed).max(1e-9);
        report.set("p4_vs_native_browses", (ratio * 1000.0).round() / 1000.0);
        report.samples.extend(p4_all.samples);
    }
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
    while Instant::now() < deadline {
        let i = rng.below(shape.files);
        for pattern in shape.drill(i) {
            let began = Instant::now();
            let n = rpc::count(ops::dirs(&conn, vec![pattern.clone()], false).await?).await?;
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
        let began = Instant::now();
        if rpc::count(ops::fstat(&conn, vec![file.clone()]).await?).await? != 1 {
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
        let query = FilelogQuery {
            paths: vec![file.clone()],
            ..FilelogQuery::default()
        };
        if rpc::count(ops::filelog(&conn, query).await?).await? == 0 {
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
