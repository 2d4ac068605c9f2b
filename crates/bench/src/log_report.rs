//! `keel bench log-report`: the command log report's throughput and memory. Writes a
//! realistic command log of N lines in a fresh directory (a few hundred users, fifteen build
//! accounts doing most of the volume, a mix of reads, syncs and submits, 1% errors, about
//! a hundred commands a second), then times `keel admin log-report --json` reading it as a
//! child process and reports its lines per second and peak resident memory.

use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::rng::Rng;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub struct Config {
    pub lines: u64,
    pub seed: u64,
    /// Where the log is written (a temporary directory when None); it must not exist yet or
    /// be empty.
    pub dir: Option<PathBuf>,
    /// The `keel` executable whose report is timed.
    pub exe: PathBuf,
}

/// Commands, their share of the log (per mille), median lapse (ms) and whether they carry
/// file arguments.
const MIX: [(&str, u64, f64, bool); 10] = [
    ("Fstat", 300, 0.6, true),
    ("Dirs", 180, 0.4, true),
    ("Filelog", 120, 0.8, true),
    ("Files", 90, 2.0, true),
    ("Changes", 80, 1.0, false),
    ("Sync", 80, 120.0, true),
    ("Opened", 60, 0.5, false),
    ("Info", 50, 0.1, false),
    ("Submit", 30, 250.0, false),
    ("Print", 10, 15.0, true),
];

pub fn run(config: &Config) -> Result<Report> {
    let temp;
    let dir = match &config.dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| BenchError::io(d.display().to_string(), e))?;
            d.clone()
        }
        None => {
            temp = tempfile::tempdir().map_err(|e| BenchError::io("temporary directory", e))?;
            temp.path().to_path_buf()
        }
    };
    let log = dir.join("commands.jsonl");
    let started = Instant::now();
    let bytes = write_log(&log, config.lines, config.seed)?;
    let generated = started.elapsed();
    let started = Instant::now();
    let child = Command::new(&config.exe)
        .args(["--json", "admin", "log-report"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| BenchError::io(format!("starting {}", config.exe.display()), e))?;
    let crate::dev_loop::Finished {
        code,
        peak_rss_kib,
        stdout,
        stderr,
    } = crate::dev_loop::wait_with_output_and_rusage(child)
        .map_err(|e| BenchError::io("waiting for keel admin log-report", e))?;
    let took = started.elapsed();
    if code != Some(0) {
        return Err(BenchError::Check(format!(
            "keel admin log-report exited with {code:?}: {}",
            String::from_utf8_lossy(&stderr)
        )));
    }
    let commands = summary_commands(&stdout)?;
    if commands != config.lines {
        return Err(BenchError::Check(format!(
            "the report counted {commands} commands in a log of {} lines",
            config.lines
        )));
    }
    let secs = took.as_secs_f64().max(1e-9);
    let mut report = Report::new("log-report");
    report
        .set("lines", config.lines)
        .set(
            "log_mib",
            (bytes as f64 / (1 << 20) as f64 * 10.0).round() / 10.0,
        )
        .set(
            "generate_s",
            (generated.as_secs_f64() * 100.0).round() / 100.0,
        )
        .set("report_s", (secs * 1000.0).round() / 1000.0)
        .set("lines_per_s", (config.lines as f64 / secs).round())
        .set(
            "report_peak_rss_mib",
            (peak_rss_kib as f64 / 1024.0 * 10.0).round() / 10.0,
        );
    Ok(report)
}

/// The `commands` of the report's summary line.
fn summary_commands(stdout: &[u8]) -> Result<u64> {
    let text = String::from_utf8_lossy(stdout);
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["section"] == "summary")
        .and_then(|v| v["commands"].as_u64())
        .ok_or_else(|| BenchError::Check(format!("no summary in the report: {text:.400}")))
}

/// Writes `lines` records to `path`; returns its size in bytes.
fn write_log(path: &Path, lines: u64, seed: u64) -> Result<u64> {
    let err = |e| BenchError::io(format!("writing {}", path.display()), e);
    let file = std::fs::File::create(path).map_err(err)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut rng = Rng::derive(seed, 0x106);
    // 2026-11-25T08:00:00Z, in milliseconds.
    let mut now_ms: u64 = 1_795_593_600_000;
    let mut written = 0u64;
    let mut line = String::new();
    for id in 1..=lines {
        now_ms += rng.below(20);
        line.clear();
        record(&mut line, &mut rng, id, now_ms);
        out.write_all(line.as_bytes()).map_err(err)?;
        written += line.len() as u64;
    }
    out.flush().map_err(err)?;
    Ok(written)
}

/// One record, in the server's field order.
fn record(out: &mut String, rng: &mut Rng, id: u64, end_ms: u64) {
    use std::fmt::Write as _;
    let mut pick = rng.below(1000);
    let &(command, _, median, with_files) = MIX
        .iter()
        .find(|(_, share, _, _)| {
            let hit = pick < *share;
            pick = pick.saturating_sub(*share);
            hit
        })
        .unwrap_or(&MIX[0]);
    // Fifteen build accounts make 60% of the commands; 300 people the rest.
    let (user, workspace) = if rng.below(10) < 6 {
        let b = rng.below(15);
        (format!("build{b}"), format!("build{b}-ws{}", rng.below(4)))
    } else {
        let u = rng.below(300);
        (format!("dev{u}"), format!("dev{u}-ws"))
    };
    // Lapses spread over two orders of magnitude around the command's median.
    let spread = [0.2, 0.5, 0.8, 1.0, 1.0, 1.2, 1.5, 2.5, 6.0, 40.0][rng.below(10) as usize];
    let lapse = median * spread * (0.9 + rng.below(200) as f64 / 1000.0);
    let (wait, hold, written) = if command == "Submit" {
        (lapse * 0.1, lapse * 0.6, 20 + rng.below(5000))
    } else {
        (0.0, 0.0, 0)
    };
    let failed = rng.below(100) == 0;
    let args = if with_files {
        format!(
            r#"files: [\"//depot/proj{}/src/mod{}/...\"]"#,
            rng.below(40),
            rng.below(500)
        )
    } else {
        String::new()
    };
    let (result, code, error) = if failed {
        (
            "error",
            "NOT_FOUND",
            format!(
                "no such files: //depot/proj{}/file{}",
                rng.below(40),
                rng.below(2000)
            ),
        )
    } else {
        ("ok", "OK", String::new())
    };
    let lapse_ms = (lapse * 1000.0).round() / 1000.0;
    let start_ms = end_ms.saturating_sub(lapse as u64);
    let (secs, ms) = (end_ms / 1000, end_ms % 1000);
    let (day_secs, days) = (secs % 86_400, secs / 86_400);
    let (y, m, d) = civil_from_days(days);
    let _ = writeln!(
        out,
        r#"{{"time":"{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z","start_ms":{start_ms},"id":{id},"user":"{user}","workspace":"{workspace}","host":"h{}","address":"10.0.{}.{}","program":"keel/0.1.0 tonic/0.14.9","command":"{command}","args":"{args}","lapse_ms":{lapse_ms},"writer_wait_ms":{wait:.3},"writer_hold_ms":{hold:.3},"rows_read":{},"rows_written":{written},"files_sent":{},"files_received":0,"bytes_sent":{},"bytes_received":{},"result":"{result}","code":"{code}","error":"{error}","terminated_by":""}}"#,
        day_secs / 3600,
        day_secs % 3600 / 60,
        day_secs % 60,
        rng.below(50),
        rng.below(4),
        rng.below(250),
        rng.below(2000),
        if command == "Sync" { rng.below(500) } else { 0 },
        rng.below(100_000),
        rng.below(2_000),
    );
}

/// The (year, month, day) of `days` since 1970-01-01 (the proleptic Gregorian calendar).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_lines_are_records_in_time_order() {
        assert_eq!(super::civil_from_days(20_782), (2026, 11, 25));
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("commands.jsonl");
        super::write_log(&log, 2_000, 1).expect("writes");
        let text = std::fs::read_to_string(&log).expect("reads");
        let mut last = String::new();
        let mut errors = 0;
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
            let time = v["time"].as_str().expect("time").to_string();
            assert!(time.starts_with("2026-11-25T08:") && time >= last, "{time}");
            errors += u32::from(v["result"] == "error");
            last = time;
        }
        assert_eq!(text.lines().count(), 2_000);
        assert!((5..=60).contains(&errors), "{errors} errors");
    }
}
