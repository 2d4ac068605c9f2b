//! `grep -e PATTERN [-a -i -F -n -v -l|-L -A N -B N -C N -s -t] FILE[REVRANGE]...`: lines of
//! stored revisions that match, searched on the server (`p4 grep`).

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, GrepHit, GrepKind, GrepList, GrepQuery};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct GrepArgs {
    /// The pattern, a regular expression; give -e several times to match any of them.
    #[arg(short = 'e', value_name = "PATTERN", required = true)]
    pub patterns: Vec<String>,
    /// Every revision in each file's range, not only the highest.
    #[arg(short = 'a')]
    pub all: bool,
    /// Letters match either case.
    #[arg(short = 'i')]
    pub ignore_case: bool,
    /// Patterns are plain strings, not regular expressions.
    #[arg(short = 'F')]
    pub fixed: bool,
    /// The line number of each line.
    #[arg(short = 'n')]
    pub numbers: bool,
    /// Select the lines that do not match.
    #[arg(short = 'v')]
    pub invert: bool,
    /// Only the revisions with a selected line.
    #[arg(short = 'l', conflicts_with = "without_match")]
    pub with_matches: bool,
    /// Only the revisions without a selected line.
    #[arg(short = 'L')]
    pub without_match: bool,
    /// Lines of context after each selected line.
    #[arg(short = 'A', value_name = "NUM")]
    pub after: Option<u32>,
    /// Lines of context before each selected line.
    #[arg(short = 'B', value_name = "NUM")]
    pub before: Option<u32>,
    /// Lines of context before and after (-A and -B take precedence).
    #[arg(short = 'C', value_name = "NUM")]
    pub context: Option<u32>,
    /// No warnings about the revisions not searched (binary, too large).
    #[arg(short = 's')]
    pub silent: bool,
    /// Search binary files as text too.
    #[arg(short = 't')]
    pub text: bool,
    /// Files, each with an optional revision or range (`file#3`, `file#3,#5`, `file@10,@20`).
    #[arg(required = true)]
    pub files: Vec<String>,
}

pub async fn grep(s: &mut Session, args: GrepArgs) -> Result<()> {
    if args.files.iter().any(|f| f.trim().is_empty()) {
        bail!("grep: an empty file argument");
    }
    if args.patterns.iter().all(|p| p.is_empty()) {
        bail!("grep: an empty pattern (-e PATTERN)");
    }
    let files = s.file_args(&args.files).await?;
    let list = if args.with_matches {
        GrepList::WithMatches
    } else if args.without_match {
        GrepList::WithoutMatch
    } else {
        GrepList::Lines
    };
    let context = args.context.unwrap_or(0);
    let (before, after) = (
        args.before.unwrap_or(context),
        args.after.unwrap_or(context),
    );
    let query = GrepQuery {
        paths: files,
        patterns: args.patterns.clone(),
        fixed_strings: args.fixed,
        ignore_case: args.ignore_case,
        invert: args.invert,
        list,
        all_revisions: args.all,
        before,
        after,
        binary_as_text: args.text,
    };
    let mut stream = ops::grep(&s.conn, query).await?;
    // The last line printed (file, revision, line), to separate groups of context with `--`.
    let mut last: Option<(String, u32, u64)> = None;
    let with_context = before > 0 || after > 0;
    while let Some(hits) = stream.next().await? {
        for hit in hits {
            let kind = hit.kind;
            match kind {
                GrepKind::Binary | GrepKind::TooLarge => {
                    if !args.silent {
                        let why = match kind {
                            GrepKind::Binary => "binary file skipped (-t searches it)",
                            _ => "too large for the server to search",
                        };
                        s.out
                            .note(format!("{}#{} - {why}", hit.depot_file, hit.rev));
                    }
                }
                GrepKind::File => {
                    let record = Record::new()
                        .s("depotFile", &hit.depot_file)
                        .n("rev", u64::from(hit.rev));
                    s.out
                        .emit(record, format!("{}#{}", hit.depot_file, hit.rev));
                }
                GrepKind::Match | GrepKind::Before | GrepKind::After => {
                    if with_context
                        && let Some((file, rev, line)) = &last
                        && (file != &hit.depot_file || *rev != hit.rev || line + 1 != hit.line)
                    {
                        s.out.text("--");
                    }
                    s.out
                        .emit(line_record(&hit, kind), line_text(&hit, kind, args.numbers));
                    last = Some((hit.depot_file.clone(), hit.rev, hit.line));
                }
            }
        }
    }
    Ok(())
}

/// `//depot/a#3:text`, `//depot/a#3:12:text` with `-n`; context lines with `-` for `:`.
fn line_text(hit: &GrepHit, kind: GrepKind, numbers: bool) -> String {
    let sep = if kind == GrepKind::Match { ':' } else { '-' };
    if numbers {
        format!(
            "{}#{}{sep}{}{sep}{}",
            hit.depot_file, hit.rev, hit.line, hit.text
        )
    } else {
        format!("{}#{}{sep}{}", hit.depot_file, hit.rev, hit.text)
    }
}

fn line_record(hit: &GrepHit, kind: GrepKind) -> Record {
    let record = Record::new()
        .s("depotFile", &hit.depot_file)
        .n("rev", u64::from(hit.rev))
        .n("line", hit.line)
        .s("matchedLine", &hit.text);
    match kind {
        GrepKind::Before => record.s("type", "before"),
        GrepKind::After => record.s("type", "after"),
        _ => record.s("type", "match"),
    }
}
