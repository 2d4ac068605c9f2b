//! `interchanges`: the submitted changes not yet integrated from a source into a target (FROM
//! TO, or `-b BRANCH [-r]`), oldest first, as `p4 interchanges` lists them; and `cstat`, the
//! same changes-of-files question asked of the workspace's have list.

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, InterchangesQuery};

use super::browse::summary_record;
use crate::output::{date, first_line};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct InterchangesArgs {
    /// Use this branch spec's view (FILES then limit the targets).
    #[arg(short = 'b', long = "branch")]
    pub branch: Option<String>,
    /// With -b: from the view's right side to its left.
    #[arg(short = 'r', requires = "branch")]
    pub reverse: bool,
    /// Print whole descriptions.
    #[arg(short = 'l')]
    pub long: bool,
    /// List the source revisions of each change not yet integrated.
    #[arg(short = 'f')]
    pub files: bool,
    /// FROM TO (FROM may carry @change/#rev/@label), or with -b: target files.
    pub args: Vec<String>,
}

pub async fn interchanges(s: &mut Session, args: InterchangesArgs) -> Result<()> {
    let paths = s.file_args(&args.args).await?;
    let (from, to, files) = match (&args.branch, paths.as_slice()) {
        (Some(_), _) => (String::new(), String::new(), paths.clone()),
        (None, [from, to]) => (from.clone(), to.clone(), Vec::new()),
        (None, _) => bail!("interchanges needs FROM TO, or -b BRANCH [FILES]"),
    };
    let query = InterchangesQuery {
        from,
        to,
        branch: args.branch.clone(),
        reverse: args.reverse,
        paths: files,
        with_files: args.files,
    };
    let mut found = ops::interchanges(&s.conn, query).await?;
    while let Some(item) = found.next().await? {
        let change = &item.change;
        let head = format!(
            "Change {} on {} by {}@{}",
            change.number.0,
            date(change.time),
            change.user,
            change.workspace,
        );
        let mut text = if args.long {
            let mut text = format!("{head}\n");
            for line in change.description.lines() {
                text.push_str(&format!("\n\t{line}"));
            }
            text.push('\n');
            text
        } else {
            format!("{head} '{}'", first_line(&change.description))
        };
        for file in &item.files {
            text.push_str(&format!("\n{file}"));
        }
        let mut record = summary_record(change);
        if args.files {
            record = record.v("files", serde_json::Value::from(item.files.clone()));
        }
        s.out.emit(record, text);
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct CstatArgs {
    /// Files (default: the whole workspace).
    pub files: Vec<String>,
}

/// `cstat [FILES]`: each change touching the files, and whether this workspace has it.
pub async fn cstat(s: &mut Session, args: CstatArgs) -> Result<()> {
    let files = s.file_args_or_all(&args.files).await?;
    let mut states = ops::cstat(&s.conn, files).await?;
    while let Some(state) = states.next().await? {
        s.out.emit(
            crate::output::Record::new()
                .n("change", state.change)
                .s("status", &state.status),
            format!("... change {}\n... status {}\n", state.change, state.status),
        );
    }
    Ok(())
}
