//! `populate [-d DESC] [-f] [-n] [-o] [-r] -b BRANCH [TOFILE...] | FROMFILE[REV] TOFILE`:
//! branch files into the depot as one submitted change, without a workspace (`p4 populate`).

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, PopulateQuery};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct PopulateArgs {
    /// The change's description (default: `Populate TARGET.`).
    #[arg(short = 'd', value_name = "DESCRIPTION")]
    pub description: Option<String>,
    /// Branch deleted source files as deleted targets (by default they are skipped).
    #[arg(short = 'f')]
    pub force: bool,
    /// Preview: list what would be branched, submit nothing.
    #[arg(short = 'n')]
    pub preview: bool,
    /// List every file branched, not only the total.
    #[arg(short = 'o')]
    pub list: bool,
    /// With -b: branch from the branch view's right side to its left.
    #[arg(short = 'r', requires = "branch")]
    pub reverse: bool,
    /// A branch spec mapping sources to targets.
    #[arg(short = 'b', value_name = "BRANCH")]
    pub branch: Option<String>,
    /// FROMFILE TOFILE (FROMFILE may carry a revision), or with -b the target files to limit to.
    pub files: Vec<String>,
}

pub async fn populate(s: &mut Session, args: PopulateArgs) -> Result<()> {
    let (from, to, files) = match &args.branch {
        Some(_) => (String::new(), String::new(), args.files.clone()),
        None => match args.files.as_slice() {
            [from, to] => (from.clone(), to.clone(), Vec::new()),
            _ => bail!("populate: give FROMFILE TOFILE, or -b BRANCH [TOFILE...]"),
        },
    };
    if args
        .description
        .as_ref()
        .is_some_and(|d| d.trim().is_empty())
    {
        bail!("populate: -d needs a description");
    }
    let query = PopulateQuery {
        from,
        to,
        branch: args.branch.clone(),
        reverse: args.reverse,
        paths: files,
        description: args.description.clone(),
        preview: args.preview,
        force: args.force,
    };
    let mut stream = ops::populate(&s.conn, query).await?;
    let (mut count, mut change) = (0u64, 0u64);
    while let Some(f) = stream.next().await? {
        let action = if f.deleted { "delete" } else { "branch" };
        count += 1;
        change = f.change;
        if args.list || args.preview {
            let record = Record::new()
                .s("depotFile", &f.depot_file)
                .n("rev", u64::from(f.rev))
                .s("fromFile", &f.from_file)
                .n("startFromRev", u64::from(f.from_rev))
                .s("action", action)
                .nz("change", f.change);
            let verb = if f.deleted {
                "delete from"
            } else {
                "branch from"
            };
            s.out.emit(
                record,
                format!(
                    "{}#{} - {verb} {}#{}",
                    f.depot_file, f.rev, f.from_file, f.from_rev
                ),
            );
        }
    }
    let summary = if args.preview {
        format!("{count} files would be branched (preview, nothing submitted).")
    } else {
        format!("{count} files branched (change {change}).")
    };
    s.out.emit(
        Record::new().n("files", count).nz("change", change),
        summary,
    );
    Ok(())
}
