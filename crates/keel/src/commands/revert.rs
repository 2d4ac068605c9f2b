//! `revert`: discard opened files and restore the have revision locally.

use keel_client::actions;
use keel_proto::v1::FileAction;
use std::collections::HashMap;

use anyhow::{Result, bail};
use keel_client::content::{ContentStream, kept_mod_time};
use keel_client::transfer::{self, LocalMode};
use keel_proto::v1::{FileRecord, RevertRequest};

use super::records::{open_record, rev_text};
use super::words::outcome_text;
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
        let opened = ws.opened(&s.conn, files.clone(), None).await?;
        let edits: Vec<&FileRecord> = opened
            .iter()
            .filter(|r| r.action() == FileAction::Edit)
            .collect();
        if !edits.is_empty() {
            let have_files = edits.iter().map(|r| r.depot_file.clone()).collect();
            let have: HashMap<String, String> = ws
                .have(&s.conn, have_files)
                .await?
                .into_iter()
                .map(|r| (r.depot_file, r.head_digest))
                .collect();
            for record in edits {
                let Some(client_file) = ws.client_file_of(record) else {
                    continue;
                };
                let keywords = keel_client::keywords::form_of(&record.file_type);
                let local = transfer::hash_local_as(&ws.local(&client_file)?, keywords)?;
                if let (Some(local), Some(have)) = (local, have.get(&record.depot_file))
                    && local.eq_ignore_ascii_case(have)
                {
                    unchanged.push(record.depot_file.clone());
                }
            }
        }
        if unchanged.is_empty() {
            s.out.note("No unchanged files to revert.");
            return Ok(());
        }
    }
    let records = s
        .all(
            s.client()
                .revert(RevertRequest {
                    caller: s.caller(),
                    files,
                    unchanged_only: args.unchanged,
                    unchanged,
                })
                .await,
        )
        .await?;
    let mut listing = Listing::new(s.out);
    for record in &records {
        let kind = if matches!(record.action(), FileAction::Add | FileAction::MoveAdd) {
            "abandoned"
        } else {
            "reverted"
        };
        let message = outcome_text(record);
        listing.item(
            kind,
            open_record(Some(&ws), record)
                .n("haveRev", u64::from(record.have_rev))
                .s("oldAction", actions::name(record.action()))
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
    for record in records.iter().filter(|r| r.action() == FileAction::MoveAdd) {
        if let Some(client_file) = ws.client_file_of(record) {
            transfer::remove_local(&ws.root, &ws.local(&client_file)?, ws.options.rmdir)?;
        }
    }
    let restore: Vec<&FileRecord> = records
        .iter()
        .filter(|r| {
            !matches!(
                r.action(),
                FileAction::Add | FileAction::MoveAdd | FileAction::Branch
            ) && r.have_rev > 0
        })
        .collect();
    if restore.is_empty() {
        return Ok(());
    }
    let mut targets: HashMap<String, &FileRecord> = HashMap::new();
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
                ws.client_file_of(record)
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
