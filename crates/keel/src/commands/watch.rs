//! Build machines' commands: `watch` (a subscription to the changes touching some paths,
//! resumed from the last change seen when the connection drops) and `changes --since` (for
//! each of many paths, what was submitted after its own change number, in one call).

use anyhow::{Context, Result, bail};
use keel_client::ops::{
    self, ChangeSummary, SincePath, Watch, WatchEvent, WatchQuery, WatchedChange,
};

use super::browse::summary_record;
use super::records::{action_name, revision_record};
use crate::cli::{ChangesArgs, WatchArgs};
use crate::output::{date, first_line};
use crate::session::Session;

pub async fn watch(s: &mut Session, args: WatchArgs) -> Result<()> {
    if args.count == Some(0) {
        return Ok(());
    }
    let query = WatchQuery {
        paths: s.file_args(&args.files).await?,
        since: args.since,
        retries: args.retries,
    };
    let mut watch = Watch::new(&s.conn, query);
    let mut delivered = 0u64;
    loop {
        match watch.next().await? {
            WatchEvent::Change(change) => {
                print_change(s, &change);
                delivered += 1;
                if args.count.is_some_and(|n| delivered >= n) {
                    return Ok(());
                }
            }
            WatchEvent::Reconnecting { wait, after } => s.out.note(format!(
                "connection lost; reconnecting in {} ms (resuming after change {after})",
                wait.as_millis(),
            )),
        }
    }
}

fn print_change(s: &Session, watched: &WatchedChange) {
    let change = &watched.change;
    let files: Vec<serde_json::Value> = watched
        .files
        .iter()
        .map(|f| serde_json::Value::Object(revision_record(f).into_map()))
        .collect();
    let mut text = format!(
        "Change {} on {} by {}@{} '{}'",
        change.number,
        date(change.time),
        change.user,
        change.workspace,
        first_line(&change.description)
    );
    for f in &watched.files {
        text.push_str(&format!(
            "\n... {}#{} {}",
            f.depot_file,
            f.rev,
            action_name(f.action)
        ));
    }
    if watched.more_files {
        text.push_str("\n... (more files)");
    }
    s.out.emit(
        summary_record(change)
            .v("files", serde_json::Value::Array(files))
            .b("moreFiles", watched.more_files),
        text,
    );
}

pub async fn changes_since(s: &mut Session, args: ChangesArgs) -> Result<()> {
    let specs: Vec<(String, u64)> = match (&args.since_file, args.since) {
        (Some(file), _) => {
            if !args.files.is_empty() {
                bail!("changes --since-file: give the paths in the file, not also as arguments");
            }
            read_since_file(file)?
        }
        (None, Some(n)) => {
            if args.files.is_empty() {
                bail!("changes --since N needs one or more paths (try //depot/...)");
            }
            args.files.iter().map(|f| (f.clone(), n)).collect()
        }
        (None, None) => bail!("changes --since needs a change number or --since-file"),
    };
    let texts: Vec<String> = specs.iter().map(|(f, _)| f.clone()).collect();
    let resolved = s.file_args(&texts).await?;
    let paths: Vec<SincePath> = resolved
        .into_iter()
        .zip(&specs)
        .map(|(file, (_, n))| SincePath::new(file, *n))
        .collect();
    let mut found = ops::changes_since(&s.conn, &paths, args.max.unwrap_or(0)).await?;
    while let Some(hit) = found.next().await? {
        let (path, n) = &specs[hit.path];
        print_since(s, path, *n, &hit.change);
    }
    Ok(())
}

fn print_since(s: &Session, path: &str, since: u64, change: &ChangeSummary) {
    let text = format!(
        "{path} Change {} on {} by {}@{} '{}'",
        change.number,
        date(change.time),
        change.user,
        change.workspace,
        first_line(&change.description)
    );
    s.out.emit(
        summary_record(change).s("path", path).n("since", since),
        text,
    );
}

/// `FILESPEC N` lines; an error names the file, the line and what was wrong with it.
fn read_since_file(file: &std::path::Path) -> Result<Vec<(String, u64)>> {
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let mut specs = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let at = || format!("{} line {}", file.display(), number + 1);
        let [path, n] = fields[..] else {
            bail!("{}: expected `FILESPEC N`, found {line:?}", at());
        };
        let n: u64 = n
            .parse()
            .map_err(|_| anyhow::anyhow!("{}: {n:?} is not a change number (in {line:?})", at()))?;
        specs.push((path.to_string(), n));
    }
    if specs.is_empty() {
        bail!("{} holds no `FILESPEC N` line", file.display());
    }
    Ok(specs)
}
