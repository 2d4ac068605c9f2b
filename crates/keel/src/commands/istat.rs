//! `istat` (what needs merging between a source and a target, both ways: FROM TO, or
//! `-b BRANCH [-r]`) and `prune [-y] FILESPEC...` (remove unmodified branched files; a preview
//! without -y).

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, IstatQuery, PendingFlow, PruneItem};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct IstatArgs {
    /// Use this branch spec's view: its left side is the source, its right the target.
    #[arg(short = 'b', long = "branch")]
    pub branch: Option<String>,
    /// With -b: the view's right side is the source.
    #[arg(short = 'r', requires = "branch")]
    pub reverse: bool,
    /// SOURCE TARGET depot paths (without -b).
    pub paths: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Remove the files (without -y prune only lists what it would remove).
    #[arg(short = 'y')]
    pub yes: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

fn changes_text(flow: &PendingFlow) -> String {
    match flow.changes {
        0 => "nothing".to_string(),
        1 => format!("1 change (change {})", flow.newest_change),
        n => format!("{n} changes (newest {})", flow.newest_change),
    }
}

pub async fn istat(s: &mut Session, args: IstatArgs) -> Result<()> {
    let paths = s.file_args(&args.paths).await?;
    let (from, to) = match (&args.branch, paths.as_slice()) {
        (Some(_), []) => (String::new(), String::new()),
        (Some(_), _) => bail!("istat -b BRANCH takes no paths"),
        (None, [from, to]) => (from.clone(), to.clone()),
        (None, _) => bail!("istat needs SOURCE TARGET, or -b BRANCH"),
    };
    let query = IstatQuery {
        from,
        to,
        branch: args.branch.clone(),
        reverse: args.reverse,
    };
    let reply = ops::istat(&s.conn, query).await?;
    let (down, up) = (reply.from_source, reply.to_source);
    let record = Record::new()
        .s("source", &reply.source)
        .s("target", &reply.target)
        .s("branch", args.branch.as_deref().unwrap_or(""))
        .b("needs_merge_from_source", down.changes > 0)
        .n("merge_from_source_changes", down.changes)
        .nz("newest_from_source", down.newest_change)
        .b("needs_copy_to_source", up.changes > 0)
        .n("copy_to_source_changes", up.changes)
        .nz("newest_to_source", up.newest_change);
    let text = format!(
        "{} -> {}: {} to merge\n{} -> {}: {} to copy back",
        reply.source,
        reply.target,
        changes_text(&down),
        reply.target,
        reply.source,
        changes_text(&up),
    );
    s.out.emit(record, text);
    Ok(())
}

pub async fn prune(s: &mut Session, args: PruneArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let mut items = ops::prune(&s.conn, files, args.yes).await?;
    let mut count = 0u64;
    while let Some(item) = items.next().await? {
        match item {
            PruneItem::File(f) => {
                count += 1;
                let verb = if args.yes {
                    "pruned"
                } else {
                    "would be pruned"
                };
                s.out.emit(
                    Record::new()
                        .s("depotFile", &f.depot_file)
                        .n("rev", u64::from(f.rev))
                        .n("revisions", u64::from(f.revisions))
                        .s("fromFile", &f.from_file)
                        .n("fromRev", u64::from(f.from_rev))
                        .b("reportOnly", !args.yes),
                    format!(
                        "{}#{} - {verb} (unmodified copy of {}#{})",
                        f.depot_file, f.rev, f.from_file, f.from_rev
                    ),
                );
            }
            PruneItem::Summary(sum) => {
                let text = if sum.executed {
                    format!(
                        "Pruned {count} file(s): {} revision(s); reclaimed {} byte(s) of content.",
                        sum.revisions, sum.bytes_reclaimed
                    )
                } else if count == 0 {
                    "No unmodified branched files to prune.".to_string()
                } else {
                    format!(
                        "Would prune {count} file(s), {} revision(s). \
                         This was report mode. Use -y to perform the operation.",
                        sum.revisions
                    )
                };
                s.out.emit(
                    Record::new()
                        .n("files", count)
                        .n("revisionRecDeleted", sum.revisions)
                        .n("purgedBytes", sum.bytes_reclaimed)
                        .b("reportOnly", !sum.executed),
                    text,
                );
            }
        }
    }
    Ok(())
}
