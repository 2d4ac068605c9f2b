//! `obliterate [-y] FILESPEC...`: permanently remove files' history and reclaim their content.

use anyhow::Result;
use clap::Args;
use keel_client::actions;
use keel_proto::v1::ObliterateRequest;
use keel_proto::v1::obliterate_message::Body;

use super::records::rev_text;
use super::words::outcome_text;
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
    let messages = s
        .all(
            s.client()
                .obliterate(ObliterateRequest {
                    caller: s.caller(),
                    files,
                    execute: args.yes,
                })
                .await,
        )
        .await?;
    for message in messages {
        match message.body {
            Some(Body::Revision(rev)) => s.out.emit(
                Record::new()
                    .s("depotFile", &rev.depot_file)
                    .n("rev", u64::from(rev.head_rev))
                    .n("change", rev.head_change)
                    .s("action", actions::name(rev.head_action()))
                    .s("digest", &rev.head_digest)
                    .s("message", outcome_text(&rev)),
                format!(
                    "{}{} - {}",
                    rev.depot_file,
                    rev_text(rev.head_rev),
                    outcome_text(&rev)
                ),
            ),
            Some(Body::Summary(sum)) => {
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
            None => {}
        }
    }
    Ok(())
}
