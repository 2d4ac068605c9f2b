//! `lock` and `unlock`: holding opened files so that no other workspace can submit them.

use anyhow::Result;
use keel_proto::v1::{FileRecord, LockRequest, UnlockRequest};

use super::records::{open_record, rev_text, work_rev};
use crate::cli::{LockArgs, UnlockArgs};
use crate::listing::Listing;
use crate::session::Session;

pub async fn lock(s: &mut Session, args: LockArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let records = s
        .all(
            s.client()
                .lock(LockRequest {
                    caller: s.caller(),
                    files,
                    change: args.change.unwrap_or(0),
                    filter_change: args.change.is_some(),
                })
                .await,
        )
        .await?;
    report(s, Some(&ws), &records, "locking");
    Ok(())
}

pub async fn unlock(s: &mut Session, args: UnlockArgs) -> Result<()> {
    let ws = if args.force || args.orphaned {
        None
    } else {
        Some(s.writing_workspace().await?)
    };
    let files = s.file_args(&args.files).await?;
    let records = s
        .all(
            s.client()
                .unlock(UnlockRequest {
                    caller: s.caller(),
                    files,
                    change: args.change.unwrap_or(0),
                    filter_change: args.change.is_some(),
                    force: args.force,
                    orphaned: args.orphaned,
                })
                .await,
        )
        .await?;
    if records.is_empty() {
        s.out.note("No file(s) locked.");
    }
    report(s, ws.as_deref(), &records, "unlocking");
    Ok(())
}

/// One line per file: `//depot/x#1 - locking` (`--json`: the open record and `action`).
fn report(s: &Session, ws: Option<&keel_client::WorkspaceCtx>, records: &[FileRecord], verb: &str) {
    let mut listing = Listing::new(s.out);
    for record in records {
        let owner = if ws.is_none() {
            format!(" by {}@{}", record.user, record.workspace)
        } else {
            String::new()
        };
        listing.item(
            verb,
            open_record(ws, record)
                .b("locked", record.locked)
                .s("message", verb),
            format!(
                "{}{} - {verb}{owner}",
                record.depot_file,
                rev_text(work_rev(record))
            ),
        );
    }
    listing.finish();
}
