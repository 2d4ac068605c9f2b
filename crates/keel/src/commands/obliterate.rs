//! `obliterate [-y] FILESPEC...`: permanently remove files' history and reclaim their content.

use anyhow::Result;
use clap::Args;
use keel_client::ops::{self, ObliterateItem};

use super::records::{action_name, rev_text};
use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct ObliterateArgs {
    /// Perform the operation (without -y obliterate only reports what it would remove).
    #[arg(short = 'y')]
    pub yes: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

pub async fn obliterate(s: &mut Session, args: ObliterateArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let items = ops::obliterate(&s.conn, files, args.yes)
        .await?
        .all()
        .await?;
    for item in items {
        match item {
            ObliterateItem::Revision {
                revision: rev,
                purged,
            } => {
                let message = if purged { "purged" } else { "would be purged" };
                s.out.emit(
                    Record::new()
                        .s("depotFile", &rev.depot_file)
                        .n("rev", u64::from(rev.rev))
                        .n("change", rev.change)
                        .s("action", action_name(rev.action))
                        .s("digest", &rev.digest)
                        .s("message", message),
                    format!("{}{} - {message}", rev.depot_file, rev_text(rev.rev)),
                );
            }
            ObliterateItem::Summary(sum) => {
                let mut text = format!(
                    "{} {} revision record(s), {} integration record(s), {} label record(s)",
                    if sum.executed {
                        "Deleted"
                    } else {
                        "Would delete"
                    },
                    sum.revisions,
                    sum.integrations,
                    sum.label_entries
                );
                if sum.executed {
                    text.push_str(&format!(
                        "; reclaimed {} byte(s) of content in {} file(s).",
                        sum.bytes_reclaimed, sum.blobs_deleted
                    ));
                } else {
                    text.push_str(".\nThis was report mode. Use -y to perform the operation.");
                }
                s.out.emit(
                    Record::new()
                        .n("revisionRecDeleted", sum.revisions)
                        .n("integrationRecDeleted", sum.integrations)
                        .n("labelRecDeleted", sum.label_entries)
                        .n("purgedFiles", sum.blobs_deleted)
                        .n("purgedBytes", sum.bytes_reclaimed)
                        .b("reportOnly", !sum.executed),
                    text,
                );
            }
        }
    }
    Ok(())
}
