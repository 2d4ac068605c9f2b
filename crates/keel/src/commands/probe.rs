//! `keel probe [--every 15m] [--once] [--file FILE]`: times the five everyday commands (info,
//! changes -m 1, fstat of a file, sync -n of it, opened) as the configured user, prints each
//! latency, and reports them to the server's metrics (`keel_probe_duration_seconds`). Runs
//! every `--every` until stopped, or once with `--once` (exit 1 when a command failed).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::ops::{self, FilesQuery};
use keel_client::probe::{self, ProbeCall, ProbeFiles};

use crate::output::Record;
use crate::session::{AlreadyReported, Session};

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Time between runs: a number with s, m or h (15m, 30s, 1h).
    #[arg(long, value_name = "INTERVAL", default_value = "15m", value_parser = parse_interval)]
    pub every: Duration,
    /// Run once and exit (status 1 when a command failed), e.g. from cron.
    #[arg(long)]
    pub once: bool,
    /// The file fstat and sync -n ask about (default: the first file of the workspace).
    #[arg(long, value_name = "FILE")]
    pub file: Option<String>,
}

/// `15m`, `30s`, `1h`, `90` (seconds).
fn parse_interval(text: &str) -> std::result::Result<Duration, String> {
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not an interval like 15m, 30s or 1h"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => return Err(format!("'{text}': the unit must be s, m or h")),
    };
    if seconds == 0 {
        return Err(format!("'{text}': the interval must be at least 1s"));
    }
    Ok(Duration::from_secs(seconds))
}

pub async fn probe(s: &mut Session, args: ProbeArgs) -> Result<()> {
    let file = match &args.file {
        Some(file) => s
            .file_args(std::slice::from_ref(file))
            .await?
            .pop()
            .context("no file to probe")?,
        None => first_file(s).await?,
    };
    let files = ProbeFiles {
        fstat: file.clone(),
        sync: file,
    };
    loop {
        let calls = probe::run_once(&s.conn, &files).await;
        // A server without metrics still answers; one that cannot be reached fails the run.
        let recorded = probe::report(&s.conn, &calls).await;
        let failed = print_run(s, &files.fstat, &calls, recorded.as_ref().ok().copied());
        if let Err(e) = &recorded {
            s.out
                .error(format!("cannot report the probe's timings: {e}"));
        }
        if args.once {
            if failed || recorded.is_err() {
                return Err(AlreadyReported.into());
            }
            return Ok(());
        }
        tokio::select! {
            _ = tokio::time::sleep(args.every) => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// The first file of the caller's workspace (without one, of the first depot), for a probe
/// given none.
async fn first_file(s: &Session) -> Result<String> {
    let scope = match s.conn.workspace() {
        "" => match ops::depots(&s.conn).await?.into_iter().next() {
            Some(depot) => format!("//{}/...", depot.name),
            None => bail!("the server has no depot to probe"),
        },
        workspace => format!("//{workspace}/..."),
    };
    let query = FilesQuery {
        paths: vec![scope],
        max: 1,
        ..FilesQuery::default()
    };
    match ops::files(&s.conn, query).await?.next().await? {
        Some(f) => Ok(f.depot_file),
        None => bail!("the server has no file to probe: name one with --file"),
    }
}

/// Prints one run (a line per run; `--json`: one object) and its failures; true when any
/// command failed.
fn print_run(s: &Session, file: &str, calls: &[ProbeCall], recorded: Option<bool>) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let time = crate::output::date_time(now);
    let ms = |c: &ProbeCall| c.latency.as_secs_f64() * 1000.0;
    let mut record = Record::new().s("time", &time).s("file", file);
    let mut text = format!("probe {time} UTC:");
    for c in calls {
        record = record.v(&format!("{}Ms", c.command), serde_json::json!(ms(c)));
        text.push_str(&format!(" {} {:.1} ms", c.command, ms(c)));
        if c.error.is_some() {
            text.push_str(" (failed)");
        }
    }
    let failures: Vec<_> = calls
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| (c.command, e.to_string())))
        .collect();
    record = record
        .v(
            "failed",
            serde_json::json!(failures.iter().map(|(c, _)| *c).collect::<Vec<_>>()),
        )
        .b("recorded", recorded == Some(true));
    if recorded == Some(false) {
        text.push_str(" (not recorded: the server has no --metrics-listen)");
    }
    s.out.emit(record, text);
    for (command, error) in &failures {
        s.out.error(format!("probe {command}: {error}"));
    }
    !failures.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_interval("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_interval("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_interval("90"), Ok(Duration::from_secs(90)));
        assert!(parse_interval("0m").is_err());
        assert!(parse_interval("5d").is_err());
        assert!(parse_interval("m").is_err());
        assert!(parse_interval("").is_err());
    }
}
