//! Workspace state: `sync`, `have` and `where`.

use std::io::IsTerminal;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use keel_client::ops::{self, SyncAction, SyncQuery, Synced};
use keel_client::paths;

use super::records::rev_text;
use crate::cli::{FilesArgs, SyncArgs};
use crate::listing::Listing;
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

pub async fn sync(s: &mut Session, args: SyncArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let mut out = s.out;
    out.quiet |= args.quiet;
    let mut listing = Listing::new(out);
    let progress = (!out.json && !out.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos} files, {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    });
    let query = SyncQuery {
        paths: files,
        preview: args.preview,
        force: args.force,
        have_only: args.have_only,
        populate_only: args.populate_only,
    };
    let mut bytes = 0u64;
    let mut errors = 0u64;
    let mut count = 0u64;
    let report = |file: &Synced<'_>| {
        count += 1;
        let local = match file.local {
            Some(path) => path.display().to_string(),
            None if file.client_file.is_empty() => "(no longer in the view)".to_string(),
            None => file.client_file.to_string(),
        };
        match file.error {
            None => {
                bytes += file.bytes;
                let verb = match file.action {
                    SyncAction::Added => "added as",
                    SyncAction::Updated => "updating",
                    SyncAction::Deleted => "deleted as",
                    SyncAction::Refreshed => "refreshing",
                    SyncAction::Resolve => "is opened; resolve scheduled (keel resolve) for",
                    SyncAction::Unspecified => "unspecified",
                };
                let record = Record::new()
                    .s("depotFile", file.depot_file)
                    .s(
                        "clientFile",
                        file.local
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                    )
                    .n("rev", u64::from(file.rev))
                    .s("action", file.action.as_str())
                    .s("type", file.file_type)
                    .n("fileSize", file.size);
                let text = format!("{}{} - {verb} {local}", file.depot_file, rev_text(file.rev));
                let kind = summary_kind(file.action.as_str(), args.preview);
                match &progress {
                    Some(bar) => bar.suspend(|| listing.item(&kind, record, text)),
                    None => listing.item(&kind, record, text),
                }
            }
            Some(e) => {
                errors += 1;
                match &progress {
                    Some(bar) => bar.suspend(|| out.error(e.to_string())),
                    None => out.error(e.to_string()),
                }
            }
        }
        if let Some(bar) = &progress {
            bar.set_position(count);
            bar.set_message(human_bytes(bytes));
        }
    };
    let result = ops::sync(&s.conn, &ws, query, report).await;
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    listing.finish();
    let totals = result?;
    if totals.files == 0 && totals.failed == 0 {
        out.note("File(s) up-to-date.");
    }
    if totals.failed > 0 || errors > 0 {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// How a summary line counts a synced file: `updated`, or `would be updated` with `-n`.
fn summary_kind(action: &str, preview: bool) -> String {
    let done = match action {
        "resolve" => "scheduled for resolve",
        other => other,
    };
    if preview {
        format!("would be {done}")
    } else {
        done.to_string()
    }
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

pub async fn have(s: &mut Session, args: FilesArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let files = s.file_args(&args.files).await?;
    let records = ops::have(&s.conn, &ws, files).await?;
    for record in records {
        let client_file = record.client_file;
        let local = ws.display_local(&client_file).display().to_string();
        s.out.emit(
            Record::new()
                .s("depotFile", &record.depot_file)
                .s("clientFile", ws.workspace_path(&client_file))
                .s("path", &local)
                .n("haveRev", u64::from(record.have_rev)),
            format!(
                "{}{} - {local}",
                record.depot_file,
                rev_text(record.have_rev)
            ),
        );
    }
    Ok(())
}

pub async fn where_(s: &mut Session, args: FilesArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let args = s.file_args_or_cwd(&args.files).await?;
    let prefix = format!("//{}/", ws.name);
    let mut failed = false;
    for arg in args {
        let (path, _) = paths::split_rev(&arg);
        let mapped = match path.strip_prefix(&prefix) {
            Some(rel) => ws.depot_of_client(rel).map(|d| (d, rel.to_string())),
            None => ws.client_of_depot(path).map(|c| (path.to_string(), c)),
        };
        match mapped {
            Some((depot, rel)) => {
                let local = ws.display_local(&rel).display().to_string();
                let client = ws.workspace_path(&rel);
                s.out.emit(
                    Record::new()
                        .s("depotFile", &depot)
                        .s("clientFile", &client)
                        .s("path", &local),
                    format!("{depot} {client} {local}"),
                );
            }
            None => {
                s.out.error(format!("{path} - file(s) not in client view."));
                failed = true;
            }
        }
    }
    if failed {
        return Err(AlreadyReported.into());
    }
    Ok(())
}
