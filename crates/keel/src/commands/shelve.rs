//! Shelves: `shelve [-c N] [-r] [FILE...]`, `shelve -d -c N [FILE...]`, `unshelve -s N [-c M]`.

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, ChangeSave, FileResult, OpenedQuery, ShelveQuery, UnshelveQuery};

use super::file_results::{list_results, outcome_text};
use super::records::rev_text;
use crate::listing::Listing;
use crate::output::Record;
use crate::session::Session;

/// Description of a change created to shelve the default changelist.
const DEFAULT_DESCRIPTION: &str = "Shelved files.";

#[derive(Debug, Args)]
pub struct ShelveArgs {
    /// The pending change to shelve (default: move the default changelist to a new change).
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// Replace the whole shelf with the currently opened files.
    #[arg(short = 'r', conflicts_with = "delete")]
    pub replace: bool,
    /// Delete shelved files (all of change -c N, or the files given).
    #[arg(short = 'd')]
    pub delete: bool,
    /// Super users only: shelve into or delete shelved files of another user's change.
    #[arg(short = 'f')]
    pub force: bool,
    /// Description of the new change created when shelving the default changelist.
    #[arg(long = "description", value_name = "DESC", allow_hyphen_values = true)]
    pub description: Option<String>,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct UnshelveArgs {
    /// The change whose shelved files to unshelve.
    #[arg(short = 's', value_name = "N", required = true)]
    pub shelved: u64,
    /// The pending change to open the files in (default changelist when absent).
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    pub files: Vec<String>,
}

/// JSON fields of a shelved file.
fn shelved_record(record: &FileResult) -> Record {
    Record::new()
        .s("depotFile", &record.depot_file)
        .n("rev", u64::from(record.head_rev))
        .s("action", action_name(record))
        .n("change", record.change)
        .s("type", &record.file_type)
        .s("digest", &record.digest)
}

fn action_name(record: &FileResult) -> &'static str {
    record.action.map_or("", |a| a.as_str())
}

pub async fn shelve(s: &mut Session, args: ShelveArgs) -> Result<()> {
    if args.force {
        s.override_owner();
    }
    if args.delete {
        return delete(s, args).await;
    }
    let ws = s.workspace().await?;
    let mut files = s.file_args(&args.files).await?;
    let change = match args.change {
        Some(n) if n != 0 => n,
        _ => {
            let query = OpenedQuery {
                paths: files.clone(),
                change: Some(0),
                ..Default::default()
            };
            let default = ops::opened(&s.conn, query).await?.all().await?;
            if default.is_empty() {
                bail!("No files to shelve: nothing matching is opened in the default change.");
            }
            let save = ChangeSave {
                description: args
                    .description
                    .clone()
                    .unwrap_or_else(|| DEFAULT_DESCRIPTION.into()),
                files: default.into_iter().map(|r| r.depot_file).collect(),
                ..Default::default()
            };
            let created = ops::save_change(&s.conn, save).await?;
            s.out.emit(
                Record::new().n("change", created).s("action", "created"),
                format!("Change {created} created."),
            );
            files.clear();
            created
        }
    };
    let query = ShelveQuery {
        change,
        paths: files,
        replace: args.replace,
    };
    let reply = ops::shelve(&s.conn, &ws, query).await?;
    s.out
        .text(format!("Shelving files for change {}.", reply.change));
    let mut listing = Listing::new(s.out);
    for file in &reply.files {
        listing.item(
            "shelved",
            shelved_record(file),
            format!(
                "{}{} {}",
                file.depot_file,
                rev_text(file.head_rev),
                action_name(file)
            ),
        );
    }
    listing.finish();
    s.out.emit(
        Record::new()
            .n("change", reply.change)
            .s("action", "shelved"),
        format!("Change {} files shelved.", reply.change),
    );
    Ok(())
}

async fn delete(s: &mut Session, args: ShelveArgs) -> Result<()> {
    let Some(change) = args.change.filter(|c| *c != 0) else {
        bail!("shelve -d needs the change: keel shelve -d -c N [FILE...]");
    };
    let files = s.file_args(&args.files).await?;
    let whole = files.is_empty();
    let deleted = ops::delete_shelved(&s.conn, change, files)
        .await?
        .all()
        .await?;
    let mut listing = Listing::new(s.out);
    for file in &deleted {
        listing.item(
            "deleted from the shelf",
            shelved_record(file).s("message", outcome_text(file)),
            format!("{} - {}", file.depot_file, outcome_text(file)),
        );
    }
    listing.finish();
    if whole {
        s.out.text(format!("Shelved change {change} deleted."));
    }
    Ok(())
}

pub async fn unshelve(s: &mut Session, args: UnshelveArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let query = UnshelveQuery {
        shelved: args.shelved,
        change: args.change,
        paths: files,
    };
    let opened = ops::unshelve(&s.conn, &ws, query).await?;
    list_results(s.out, Some(&ws), &opened);
    Ok(())
}
