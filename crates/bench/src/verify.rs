//! verify: `Verify` of the sync dataset (the bulk case is 1 GiB of content) beside the raw read
//! rate of the same blob files read with plain reads, warm and (with `drop_caches`) with a
//! cold page cache, in interleaved rounds.
//!
//! Each round runs, in order: (cold: drop the page cache, raw read; drop it again, verify;)
//! warm raw read; warm verify. Verify MB/s counts content bytes checked (what the revisions
//! hold); its stored MB/s counts the compressed bytes it read from disk, the figure to hold
//! beside the raw read rate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use keel_client::ops::{self, VerifyItem, VerifyQuery, VerifyTotals};

use crate::dataset::{self, Shape};
use crate::error::{BenchError, Result};
use crate::report::{Report, Sample};
use crate::rpc;
use crate::stats::{Latencies, ms};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: u64,
    pub file_size: u64,
    pub seed: u64,
    pub generate: bool,
    /// Rounds of (cold,) warm raw read and verify; medians are reported.
    pub rounds: u32,
    /// Also measure with a cold page cache (drops the system's page cache: needs root).
    pub drop_caches: bool,
    /// The server's root, whose `content/` directory the raw reads read.
    pub server_root: PathBuf,
}

/// Bytes one raw read asks for at a time (the server's default verify read size).
const RAW_READ_BYTES: usize = 1 << 20;

/// Runs the workload against the server at `addr`.
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let shape = Shape::sync(config.files, config.file_size, config.seed);
    let mut report = Report::new("verify");
    if config.generate {
        let generated = dataset::generate(addr, &shape, 2).await?;
        report
            .set("generate_ms", ms(generated.elapsed))
            .set("generated_bytes", generated.bytes);
    }
    let content = config.server_root.join("content");
    let conn = rpc::connect(addr, "verifier", "").await?;
    let spec = format!("{}/...", shape.prefix);
    let expected_bytes = shape.head_bytes(0..shape.files);

    // The first raw read (untimed) brings the files into the page cache for the warm phases.
    let stored_bytes = raw_read(&content)?;
    let mut phases: [(&'static str, Latencies, Vec<f64>, Vec<f64>); 4] = [
        (
            "raw_read_cold",
            Latencies::default(),
            Vec::new(),
            Vec::new(),
        ),
        ("verify_cold", Latencies::default(), Vec::new(), Vec::new()),
        (
            "raw_read_warm",
            Latencies::default(),
            Vec::new(),
            Vec::new(),
        ),
        ("verify_warm", Latencies::default(), Vec::new(), Vec::new()),
    ];
    let start = Instant::now();
    for _ in 0..config.rounds.max(1) {
        let order = if config.drop_caches { 0..4 } else { 2..4 };
        for phase in order {
            if phase < 2 {
                drop_page_cache()?;
            }
            let began = Instant::now();
            // (content MB/s, stored MB/s) of this phase.
            let (content_rate, stored_rate) = if phase % 2 == 0 {
                let read = raw_read(&content)?;
                let took = began.elapsed();
                (mb_per_s(read, took), mb_per_s(read, took))
            } else {
                let totals = verify(&conn, &spec).await?;
                let took = began.elapsed();
                if totals.revisions != shape.files
                    || totals.ok != shape.files
                    || totals.bytes != expected_bytes
                {
                    return Err(BenchError::Check(format!(
                        "verify checked {} revisions ({} OK, {} bytes), expected {} OK ({expected_bytes} bytes)",
                        totals.revisions, totals.ok, totals.bytes, shape.files
                    )));
                }
                (
                    mb_per_s(totals.bytes, took),
                    mb_per_s(totals.stored_bytes_read, took),
                )
            };
            let took = began.elapsed();
            let (name, latencies, content_rates, stored_rates) = &mut phases[phase];
            latencies.push(took);
            content_rates.push(content_rate);
            stored_rates.push(stored_rate);
            report.samples.push(Sample {
                op: name,
                client: 0,
                start: began.duration_since(start),
                latency: took,
            });
        }
    }
    report
        .set("files", shape.files)
        .set("content_bytes", expected_bytes)
        .set("stored_bytes", stored_bytes)
        .set("rounds", config.rounds.max(1))
        .set("cold", config.drop_caches);
    for (name, latencies, content_rates, stored_rates) in &phases {
        if latencies.is_empty() {
            continue;
        }
        report
            .set(&format!("{name}_ms"), ms(latencies.percentile(50.0)))
            .set(&format!("{name}_mb_per_s"), median(content_rates));
        if name.starts_with("verify") {
            report.set(&format!("{name}_stored_mb_per_s"), median(stored_rates));
        }
        report.set(
            &format!("{name}_mb_per_s_range"),
            format!("{:.1}-{:.1}", min(content_rates), max(content_rates)),
        );
    }
    Ok(report)
}

/// Verifies `spec` (problems only, so the wire carries little) and returns the totals.
async fn verify(conn: &keel_client::Connection, spec: &str) -> Result<VerifyTotals> {
    let query = VerifyQuery {
        paths: vec![spec.to_string()],
        shelved: false,
        problems_only: true,
    };
    let mut stream = ops::verify(conn, query).await?;
    let mut summary = None;
    while let Some(item) = stream.next().await? {
        match item {
            VerifyItem::File(file) => {
                return Err(BenchError::Check(format!(
                    "verify reported a problem with {}#{}",
                    file.depot_file, file.rev
                )));
            }
            VerifyItem::Summary(totals) => summary = Some(totals),
            VerifyItem::Progress(_) => {}
        }
    }
    summary.ok_or_else(|| BenchError::Check("verify ended without its summary".into()))
}

/// Reads every blob file under `dir` (the writer's `tmp/` excluded) with plain reads, one file
/// after another in directory order; returns the bytes read.
pub fn raw_read(dir: &Path) -> Result<u64> {
    let mut buf = vec![0u8; RAW_READ_BYTES];
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| BenchError::io(format!("listing {}", dir.display()), e))?;
        let mut paths: Vec<PathBuf> = entries
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .map_err(|e| BenchError::io(format!("listing {}", dir.display()), e))?;
        paths.sort();
        for path in paths.into_iter().rev() {
            if path.is_dir() {
                if path.file_name().is_none_or(|n| n != "tmp") {
                    pending.push(path);
                }
                continue;
            }
            let mut file = std::fs::File::open(&path)
                .map_err(|e| BenchError::io(format!("opening {}", path.display()), e))?;
            loop {
                let n = file
                    .read(&mut buf)
                    .map_err(|e| BenchError::io(format!("reading {}", path.display()), e))?;
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
        }
    }
    Ok(total)
}

/// Writes dirty pages out and drops the system's page cache (Linux; needs root).
fn drop_page_cache() -> Result<()> {
    let synced = std::process::Command::new("sync")
        .status()
        .map_err(|e| BenchError::io("running sync", e))?;
    if !synced.success() {
        return Err(BenchError::Check(format!("sync failed: {synced}")));
    }
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        BenchError::io(
            "dropping the page cache (/proc/sys/vm/drop_caches; needs root)",
            e,
        )
    })
}

/// Decimal megabytes per second, to three decimals: a small dataset read slowly (a loaded
/// machine) still reports a rate above zero.
fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    let secs = took.as_secs_f64();
    if secs <= 0.0 {
        return 0.0;
    }
    (bytes as f64 / 1e6 / secs * 1000.0).round() / 1000.0
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}
