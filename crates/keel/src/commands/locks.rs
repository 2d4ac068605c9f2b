//! `lock` and `unlock`: holding opened files so that no other workspace can submit them.

use anyhow::Result;
use keel_client::ops::{self, FileResult, LockQuery, UnlockScope};

use super::file_results::result_record;
use super::records::rev_text;
use crate::cli::{LockArgs, UnlockArgs};
use crate::listing::Listing;
use crate::session::Session;

pub async fn lock(s: &mut Session, args: LockArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let query = LockQuery {
        paths: files,
        change: args.change,
    };
    let records = ops::lock(&s.conn, query).await?.all().await?;
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
    let query = LockQuery {
        paths: files,
        change: args.change,
    };
    // `-x` and `-f` exclude each other (the argument parser refuses both).
    let scope = if args.orphaned {
        UnlockScope::Orphaned
    } else if args.force {
        UnlockScope::Force
    } else {
        UnlockScope::Own
    };
    let records = ops::unlock(&s.conn, query, scope).await?.all().await?;
    if records.is_empty() {
        s.out.note("No file(s) locked.");
    }
    report(s, ws.as_deref(), &records, "unlocking");
    Ok(())
}

/// One line per file: `//depot/x#1 - locking` (`--json`: the open record and `action`).
fn report(s: &Session, ws: Option<&keel_client::WorkspaceCtx>, records: &[FileResult], verb: &str) {
    let mut listing = Listing::new(s.out);
    for record in records {
        let owner = if ws.is_none() {
            format!(" by {}@{}", record.user, record.workspace)
        } else {
            String::new()
        };
        listing.item(
            verb,
            result_record(ws, record)
                .b("locked", record.locked)
                .s("message", verb),
            format!(
                "{}{} - {verb}{owner}",
                record.depot_file,
                rev_text(record.work_rev())
            ),
        );
    }
    listing.finish();
}
