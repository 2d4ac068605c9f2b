//! `clean` (reconcile in reverse: bring the workspace back to its have list) and `flush`
//! (record revisions as synced without transferring them, `sync -k`).

use anyhow::Result;
use keel_client::sync::SyncOptions;
use keel_client::transfer;
use keel_client::workspace_scan::ScanEntry;

use super::reconcile::scan_workspace;
use super::records::rev_text;
use crate::cli::{CleanArgs, FlushArgs, SyncArgs};
use crate::listing::Listing;
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

pub async fn clean(s: &mut Session, args: CleanArgs) -> Result<()> {
    if !args.preview {
        // Checked before the scan, so a moved root is named before anything else.
        s.writing_workspace().await?;
    }
    // No -a, -d or -e means all three.
    let all = !(args.added || args.deleted || args.edited);
    let result = scan_workspace(s, &args.files, !args.no_ignore).await?;
    let ws = s.workspace().await?;
    let added: &[ScanEntry] = if all || args.added { &result.add } else { &[] };
    let edited: &[ScanEntry] = if all || args.edited {
        &result.edit
    } else {
        &[]
    };
    let deleted: &[ScanEntry] = if all || args.deleted {
        &result.delete
    } else {
        &[]
    };
    if added.is_empty() && edited.is_empty() && deleted.is_empty() {
        s.out.note("No file(s) to clean.");
        return Ok(());
    }
    let mut listing = Listing::new(s.out);
    let verb = |done: &str, would: &str| if args.preview { would } else { done }.to_string();
    // New files first: deleted from the workspace (they were never the depot's).
    for entry in added {
        if !args.preview {
            transfer::remove_local(&ws.root, &entry.local, ws.options.rmdir)?;
        }
        let local = entry.local.display().to_string();
        let record = Record::new()
            .s("clientFile", &local)
            .s("depotFile", &entry.depot_file)
            .s("action", "deleted");
        let text = format!(
            "{local} - {} (not in the have list)",
            verb("deleted", "would be deleted")
        );
        listing.item(&verb("deleted", "would be deleted"), record, text);
    }
    // Edited and missing files: their have revisions, written again.
    let restore: Vec<&ScanEntry> = edited.iter().chain(deleted).collect();
    if args.preview {
        for entry in &restore {
            let local = entry.local.display().to_string();
            let record = Record::new()
                .s("clientFile", &local)
                .s("depotFile", &entry.depot_file)
                .n("rev", u64::from(entry.have_rev))
                .s("action", "restored");
            let text = format!(
                "{}{} - would be restored to {local}",
                entry.depot_file,
                rev_text(entry.have_rev)
            );
            listing.item("would be restored", record, text);
        }
        listing.finish();
        return Ok(());
    }
    let mut failed = 0u64;
    if !restore.is_empty() {
        let options = SyncOptions {
            files: restore
                .iter()
                .map(|e| format!("{}#{}", e.depot_file, e.have_rev))
                .collect(),
            preview: false,
            force: true,
            have_only: false,
            populate_only: false,
        };
        let out = s.out;
        let report = |event: &keel_client::sync::SyncEvent| {
            let file = &event.file;
            let local = event
                .local
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| file.client_file.clone());
            match &event.result {
                Ok(()) => {
                    let record = Record::new()
                        .s("clientFile", &local)
                        .s("depotFile", &file.depot_file)
                        .n("rev", u64::from(file.rev))
                        .s("action", "restored");
                    let text = format!(
                        "{}{} - restored {local}",
                        file.depot_file,
                        rev_text(file.rev)
                    );
                    listing.item("restored", record, text);
                }
                Err(e) => {
                    failed += 1;
                    out.error(e.to_string());
                }
            }
        };
        let totals = keel_client::sync::sync(&s.conn, &ws, &options, report).await?;
        failed += totals.failed;
    }
    listing.finish();
    if failed > 0 {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

pub async fn flush(s: &mut Session, args: FlushArgs) -> Result<()> {
    let sync = SyncArgs {
        preview: args.preview,
        force: false,
        have_only: true,
        populate_only: false,
        quiet: args.quiet,
        files: args.files,
    };
    super::sync::sync(s, sync).await
}
