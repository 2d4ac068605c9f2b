//! `revert`: discard opened files and restore the have revision locally.

use std::collections::HashMap;

use anyhow::{Result, bail};
use keel_client::content::{ContentStream, kept_mod_time};
use keel_client::ops::{self, FileResult, RevertQuery};
use keel_client::transfer::{self, LocalMode};
use keel_core::FileAction;

use super::file_results::{outcome_text, result_record};
use super::records::rev_text;
use crate::cli::RevertArgs;
use crate::listing::Listing;
use crate::session::{AlreadyReported, Session};

pub async fn revert(s: &mut Session, args: RevertArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    if args.files.is_empty() && !args.unchanged {
        bail!("Usage: revert [-a] FILE... (use ... to revert everything)");
    }
    let files = s.file_args_or_all(&args.files).await?;
    let mut unchanged = Vec::new();
    if args.unchanged {
        unchanged = ops::unchanged_files(&s.conn, &ws, files.clone()).await?;
        if unchanged.is_empty() {
            s.out.note("No unchanged files to revert.");
            return Ok(());
        }
    }
    let query = RevertQuery {
        paths: files,
        unchanged_only: args.unchanged,
        unchanged,
    };
    let records = ops::revert(&s.conn, query).await?.all().await?;
    let mut listing = Listing::new(s.out);
    for record in &records {
        let kind = if matches!(record.action, Some(FileAction::Add | FileAction::MoveAdd)) {
            "abandoned"
        } else {
            "reverted"
        };
        let message = outcome_text(record);
        listing.item(
            kind,
            result_record(Some(&ws), record)
                .n("haveRev", u64::from(record.have_rev))
                .s("oldAction", record.action.map_or("", |a| a.as_str()))
                .s("message", &message),
            format!(
                "{}{} - {}",
                record.depot_file,
                rev_text(record.have_rev),
                message
            ),
        );
    }
    listing.finish();
    let mut failed = false;
    // New files of a reverted move disappear; reverted adds are left alone.
    for record in records
        .iter()
        .filter(|r| r.action == Some(FileAction::MoveAdd))
    {
        if let Some(client_file) = record.client_file_in(&ws) {
            transfer::remove_local(&ws.root, &ws.local(&client_file)?, ws.options.rmdir)?;
        }
    }
    let restore: Vec<&FileResult> = records
        .iter()
        .filter(|r| {
            !matches!(
                r.action,
                Some(FileAction::Add | FileAction::MoveAdd | FileAction::Branch)
            ) && r.have_rev > 0
        })
        .collect();
    if restore.is_empty() {
        return Ok(());
    }
    let mut targets: HashMap<String, &FileResult> = HashMap::new();
    let mut specs = Vec::new();
    for record in restore {
        specs.push(format!("{}#{}", record.depot_file, record.have_rev));
        targets.insert(record.depot_file.clone(), record);
    }
    let mut content = ContentStream::open_for(&s.conn, specs, "revert").await?;
    while let Some((file, header)) = content.next_file().await? {
        let (Some(header), Some(record)) = (header, targets.get(&file.depot_file)) else {
            continue;
        };
        let result = async {
            let client_file =
                record
                    .client_file_in(&ws)
                    .ok_or_else(|| keel_client::Error::BadArgument {
                        arg: record.depot_file.clone(),
                        reason: "not in the workspace view".into(),
                    })?;
            let local = ws.local(&client_file)?;
            let file_type = if record.head_type.is_empty() {
                &file.head_type
            } else {
                &record.head_type
            };
            let mode = LocalMode::for_type(file_type, ws.options.allwrite);
            let modified = kept_mod_time(&file, file_type, ws.options.modtime);
            content.write_file_at(&header, local, mode, modified).await
        }
        .await;
        if let Err(e) = result {
            s.out.error(e.to_string());
            failed = true;
        }
    }
    if failed {
        return Err(AlreadyReported.into());
    }
    Ok(())
}
