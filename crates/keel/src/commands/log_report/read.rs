//! Reading command logs as a stream: one record per JSON line, handed on when its end time is
//! within the window asked for, then forgotten. Lines that are not records are counted, not
//! fatal. Memory stays at one line (and its record) whatever the files' sizes.

use anyhow::{Context, Result};
use serde::Deserialize;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

/// The fields of a command log line the report uses (docs/guide/monitoring.md, "The command log"); strings are
/// borrowed from the line unless they hold escapes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LogLine<'a> {
    #[serde(borrow)]
    pub time: Cow<'a, str>,
    pub id: u64,
    #[serde(borrow)]
    pub user: Cow<'a, str>,
    #[serde(borrow)]
    pub workspace: Cow<'a, str>,
    #[serde(borrow)]
    pub command: Cow<'a, str>,
    #[serde(borrow)]
    pub args: Cow<'a, str>,
    pub lapse_ms: f64,
    pub writer_wait_ms: f64,
    pub writer_hold_ms: f64,
    pub rows_read: u64,
    pub rows_written: u64,
    pub files_sent: u64,
    pub files_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    #[serde(borrow)]
    pub result: Cow<'a, str>,
    #[serde(borrow)]
    pub code: Cow<'a, str>,
    #[serde(borrow)]
    pub error: Cow<'a, str>,
}

/// A time as given (`2026-11-25T15:00`, `2026-11-25 15:00:30`, ...) in the log's own form,
/// so that it compares with the log's times as text.
pub fn normalize_time(t: &str) -> String {
    t.trim().replacen(' ', "T", 1)
}

/// Reads every file, calling `each` with every record that ended in `[since, until)`;
/// returns how many lines were not records.
pub fn for_each(
    files: &[impl AsRef<Path>],
    since: Option<&str>,
    until: Option<&str>,
    each: &mut dyn FnMut(&LogLine<'_>),
) -> Result<u64> {
    let mut unreadable = 0;
    let mut line = Vec::new();
    for file in files {
        let path = file.as_ref();
        let f = std::fs::File::open(path)
            .with_context(|| format!("cannot open command log {}", path.display()))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 16, f);
        for n in 1.. {
            line.clear();
            let got = reader
                .read_until(b'\n', &mut line)
                .with_context(|| format!("cannot read {} line {n}", path.display()))?;
            if got == 0 {
                break;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(record) = serde_json::from_slice::<LogLine<'_>>(&line) else {
                unreadable += 1;
                continue;
            };
            if since.is_some_and(|s| &*record.time < s) || until.is_some_and(|u| &*record.time >= u)
            {
                continue;
            }
            each(&record);
        }
    }
    Ok(unreadable)
}
