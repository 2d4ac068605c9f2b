//! `admin checkpoint` (online, on the server) and `admin restore` (offline, no server).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use keel_client::ops::{self, CheckpointEvent};
use std::io::IsTerminal;
use std::path::PathBuf;

use crate::output::{Out, Record};
use crate::session::Session;

/// Backup and recovery.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum AdminCmd {
    /// Write a checkpoint of all metadata on the server (online) and rotate its journal.
    Checkpoint,
    /// Rebuild a server root from a checkpoint and journals (offline: no server needed).
    Restore(RestoreArgs),
    /// Summarize command logs: top commands, users, workspaces, writer wait, errors, a
    /// per-minute series (offline: reads the files).
    LogReport(crate::commands::log_report::LogReportArgs),
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The checkpoint file (`ROOT/checkpoints/checkpoint.N`).
    #[arg(long)]
    pub checkpoint: PathBuf,
    /// Journal files to replay after it, in order (`ROOT/journal/journal.N`, ...).
    #[arg(long = "journal")]
    pub journals: Vec<PathBuf>,
    /// The new root: missing or empty.
    #[arg(long)]
    pub root: PathBuf,
}

fn bar(out: &Out, template: &str) -> Option<ProgressBar> {
    (!out.json && !out.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    })
}

pub async fn checkpoint(s: &mut Session) -> Result<()> {
    let mut stream = ops::checkpoint(&s.conn).await?;
    let progress = bar(&s.out, "{spinner} {msg} [{elapsed}]");
    let mut done = None;
    loop {
        let event = match stream.next().await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(e) => {
                if let Some(bar) = &progress {
                    bar.finish_and_clear();
                }
                return Err(e.into());
            }
        };
        match event {
            CheckpointEvent::Progress {
                rows,
                bytes,
                database,
            } => {
                if let Some(bar) = &progress {
                    bar.set_message(format!("{rows} rows, {bytes} bytes ({database})"));
                }
            }
            CheckpointEvent::Done(d) => done = Some(d),
        }
    }
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let d = done.context("the server ended the checkpoint without a report")?;
    let rate = if d.seconds > 0.0 {
        d.rows as f64 / d.seconds
    } else {
        0.0
    };
    let journal = if d.journal_closed.is_empty() {
        "journal off".to_string()
    } else {
        format!(
            "journal rotated: {} closed at position {}",
            d.journal_closed, d.journal_position
        )
    };
    s.out.emit(
        Record::new()
            .s("checkpoint", &d.path)
            .n("number", d.number)
            .n("databases", d.databases)
            .n("records", d.rows)
            .n("bytes", d.bytes)
            .v("seconds", serde_json::json!(d.seconds))
            .s("journalClosed", &d.journal_closed)
            .n("journalPosition", d.journal_position)
            .s("digest", &d.digest),
        format!(
            "Checkpoint {} written: {} records from {} database(s), {} bytes in {:.2} s ({:.0} records/s); {journal}.",
            d.path, d.rows, d.databases, d.bytes, d.seconds, rate
        ),
    );
    Ok(())
}

pub fn restore(out: &Out, args: RestoreArgs) -> Result<()> {
    let progress = bar(out, "{spinner} {msg} [{elapsed}]");
    let result = keel_server::restore(
        &args.checkpoint,
        &args.journals,
        &args.root,
        &keel_server::ServerConfig::default().store,
        &mut |p| {
            if let Some(bar) = &progress {
                bar.set_message(format!(
                    "{} rows loaded, {} records replayed",
                    p.rows, p.records
                ));
            }
        },
    );
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let report = result?;
    for (path, reason) in &report.torn {
        out.note(format!(
            "Skipped a torn last record in {}: {reason}.",
            path.display()
        ));
    }
    let torn: Vec<String> = report
        .torn
        .iter()
        .map(|(p, r)| format!("{}: {r}", p.display()))
        .collect();
    out.emit(
        Record::new()
            .s("root", report.root.display().to_string())
            .n("records", report.rows)
            .n("databases", report.databases)
            .n("replayed", report.replayed)
            .n("skipped", report.skipped)
            .n("position", report.position)
            .v("torn", serde_json::json!(torn))
            .v("seconds", serde_json::json!(report.seconds)),
        format!(
            "Restored {} from {}: {} records in {} database(s), {} journal records replayed ({} already in the checkpoint), up to position {}, in {:.2} s.",
            report.root.display(),
            args.checkpoint.display(),
            report.rows,
            report.databases,
            report.replayed,
            report.skipped,
            report.position,
            report.seconds
        ),
    );
    Ok(())
}
