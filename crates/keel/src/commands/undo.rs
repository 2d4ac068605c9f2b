//! `undo`: open the inverse of submitted revisions, and put their earlier content in the
//! workspace.

use std::collections::HashMap;

use anyhow::Result;
use clap::Args;
use keel_client::ops::{self, FileResult, UndoQuery};
use keel_client::transfer;
use keel_core::FileAction;

use super::file_results::result_record;
use super::opened_content::write_opened;
use crate::listing::Listing;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Preview: list what would be opened; open nothing.
    #[arg(short = 'n')]
    pub preview: bool,
    /// Open the files in this pending change (default: the default change).
    #[arg(short = 'c', value_name = "CHANGE")]
    pub change: Option<u64>,
    /// What to undo: `@CHANGE`, `@A,@B`, `file#N`, `file#A,#B` or `file@A,@B`.
    #[arg(required = true)]
    pub files: Vec<String>,
}

pub async fn undo(s: &mut Session, args: UndoArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    // A bare change (range) means the files of the workspace's view in it.
    let named: Vec<String> = args
        .files
        .iter()
        .map(|f| {
            if f.starts_with('@') {
                format!("//{}/...{f}", ws.name)
            } else {
                f.clone()
            }
        })
        .collect();
    let files = s.file_args(&named).await?;
    let query = UndoQuery {
        paths: files,
        preview: args.preview,
        change: args.change,
    };
    let mut stream = ops::undo(&s.conn, query).await?;
    let mut records: Vec<FileResult> = Vec::new();
    let mut listing = Listing::new(s.out);
    while let Some(record) = stream.next().await? {
        let action = record.action.map_or("", |a| a.as_str());
        let undone = format!("#{},#{}", record.source_start + 1, record.source_end);
        listing.item_with(
            &format!("opened for {action}"),
            || {
                result_record(Some(&ws), &record)
                    .n("startFromRev", u64::from(record.source_start + 1))
                    .n("endFromRev", u64::from(record.source_end))
                    .b("unresolved", record.unresolved)
            },
            || {
                let resolve = if record.unresolved {
                    "; later revisions changed it: resolve to merge the undo in"
                } else {
                    ""
                };
                format!(
                    "{} - opened for {action} (undo of {undone}{resolve})",
                    record.depot_file,
                )
            },
        );
        // A file to resolve keeps its head content until resolve merges the undo in.
        if !args.preview && !record.unresolved {
            records.push(record);
        }
    }
    listing.finish();
    // Deleted files leave the workspace; the others get the content from before the range.
    let mut resolver = ws.resolver();
    let mut wanted: HashMap<String, FileResult> = HashMap::new();
    for record in records {
        if record.action == Some(FileAction::Delete) {
            if let Some(client_file) = record.client_file_in(&ws) {
                transfer::remove_local(
                    &ws.root,
                    &resolver.resolve(&client_file)?,
                    ws.options.rmdir,
                )?;
            }
        } else {
            wanted.insert(record.depot_file.clone(), record);
        }
    }
    write_opened(s, &ws, &mut resolver, &wanted, |r| r.source_start, "undo").await
}
