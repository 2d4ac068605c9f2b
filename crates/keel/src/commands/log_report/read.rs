//! Reading command logs: one record per JSON line, kept when its end time is within the
//! window asked for. Lines that are not records are counted, not fatal.

use anyhow::{Context, Result};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

/// The fields of a command log line the report uses (README.md, "Monitoring").
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LogLine {
    pub time: String,
    pub id: u64,
    pub user: String,
    pub workspace: String,
    pub command: String,
    pub args: String,
    pub lapse_ms: f64,
    pub writer_wait_ms: f64,
    pub writer_hold_ms: f64,
    pub rows_written: u64,
    pub files_sent: u64,
    pub files_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub result: String,
    pub code: String,
    pub error: String,
}

/// The records read, and how many lines were not records.
#[derive(Default)]
pub struct Read {
    pub lines: Vec<LogLine>,
    pub unreadable: u64,
}

/// A time as given (`2026-11-25T15:00`, `2026-11-25 15:00:30`, ...) in the log's own form,
/// so that it compares with the log's times as text.
pub fn normalize_time(t: &str) -> String {
    t.trim().replacen(' ', "T", 1)
}

/// Reads every file, keeping records that ended in `[since, until)`.
pub fn read_all(
    files: &[impl AsRef<Path>],
    since: Option<&str>,
    until: Option<&str>,
) -> Result<Read> {
    let mut read = Read::default();
    for file in files {
        let path = file.as_ref();
        let f = std::fs::File::open(path)
            .with_context(|| format!("cannot open command log {}", path.display()))?;
        for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
            let line =
                line.with_context(|| format!("cannot read {} line {}", path.display(), n + 1))?;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(record) = serde_json::from_str::<LogLine>(&line) else {
                read.unreadable += 1;
                continue;
            };
            if since.is_some_and(|s| record.time.as_str() < s)
                || until.is_some_and(|u| record.time.as_str() >= u)
            {
                continue;
            }
            read.lines.push(record);
        }
    }
    Ok(read)
}
