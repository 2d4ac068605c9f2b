//! `annotate`: each line of files with the revision or change that added it.

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, AnnotateFollow, AnnotateQuery, AnnotatedLine, Whitespace};

use super::records::{revision_line, revision_record};
use crate::output::{Record, date};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// All lines, including those later revisions removed, each with the range of revisions
    /// (or changes) that held it.
    #[arg(short = 'a')]
    pub all: bool,
    /// Change numbers instead of revision numbers.
    #[arg(short = 'c')]
    pub changes: bool,
    /// Follow branch and copy history into the source files (implies -c).
    #[arg(short = 'i', conflicts_with = "integrations")]
    pub branches: bool,
    /// Follow every integration into its source, merges too (implies -c; not with -a).
    #[arg(short = 'I', conflicts_with = "all")]
    pub integrations: bool,
    /// No header line per file.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// The user and date of the change that added each line.
    #[arg(short = 'u')]
    pub user: bool,
    /// Annotate binary files as text too.
    #[arg(short = 't')]
    pub text: bool,
    /// Which differences are not changes: -db the amount of whitespace, -dw all whitespace,
    /// -dl line endings.
    #[arg(short = 'd', value_name = "b|w|l")]
    pub diff: Option<String>,
    /// Files, each with an optional revision or range (`file#3`, `file#3,#5`, `file@10,@20`).
    #[arg(required = true)]
    pub files: Vec<String>,
}

pub async fn annotate(s: &mut Session, args: AnnotateArgs) -> Result<()> {
    if args.files.iter().any(|f| f.trim().is_empty()) {
        bail!("annotate: an empty file argument");
    }
    let whitespace = match args.diff.as_deref() {
        None => Whitespace::Exact,
        Some("b") => Whitespace::Changes,
        Some("w") => Whitespace::All,
        Some("l") => Whitespace::LineEndings,
        Some(other) => bail!("annotate: -d{other}: not a diff option (-db, -dw or -dl)"),
    };
    let files = s.file_args(&args.files).await?;
    let follow = if args.integrations {
        AnnotateFollow::All
    } else if args.branches {
        AnnotateFollow::Branches
    } else {
        AnnotateFollow::None
    };
    let query = AnnotateQuery {
        paths: files,
        all: args.all,
        follow,
        binary_as_text: args.text,
        whitespace,
    };
    let mut stream = ops::annotate(&s.conn, query).await?;
    let by_change = args.changes || follow != AnnotateFollow::None;
    let mut depot_file = String::new();
    while let Some(chunk) = stream.next().await? {
        if let Some((file, binary)) = chunk.file {
            if !args.quiet {
                let mut header = revision_record(&file);
                if binary {
                    header = header.b("binary", true);
                }
                s.out.emit(header, revision_line(&file));
            }
            depot_file = file.depot_file;
        }
        let depot_file = depot_file.as_str();
        for line in &chunk.lines {
            s.out.emit(
                line_record(depot_file, line),
                line_text(line, by_change, args.all, args.user),
            );
        }
    }
    Ok(())
}

/// `N: text`, `N-M: text` with `-a`, `N: user date text` with `-u`.
fn line_text(line: &AnnotatedLine, by_change: bool, all: bool, user: bool) -> String {
    let (lower, upper) = if by_change {
        (line.lower_change, line.upper_change)
    } else {
        (u64::from(line.lower_rev), u64::from(line.upper_rev))
    };
    let mut out = if all {
        format!("{lower}-{upper}: ")
    } else {
        format!("{lower}: ")
    };
    if user {
        out.push_str(&format!("{} {} ", line.user, date(line.time)));
    }
    out.push_str(&line.text);
    out
}

fn line_record(depot_file: &str, line: &AnnotatedLine) -> Record {
    let mut record = Record::new()
        .s("depotFile", depot_file)
        .n("lowerRev", u64::from(line.lower_rev))
        .n("lowerChange", line.lower_change)
        .n("upperRev", u64::from(line.upper_rev))
        .n("upperChange", line.upper_change)
        .s("user", &line.user)
        .n("time", line.time)
        .s("data", &line.text);
    if line.lower_file != depot_file {
        record = record.s("lowerFile", &line.lower_file);
    }
    record
}
