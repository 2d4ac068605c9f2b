//! Build machines' commands: `watch` (a subscription to the changes touching some paths,
//! resumed from the last change seen when the connection drops) and `changes --since` (for
//! each of many paths, what was submitted after its own change number, in one call).

use anyhow::{Context, Result, bail};
use keel_client::actions;
use keel_proto::v1::{Change, ChangesRequest, ChangesSince, WatchMessage, WatchRequest};
use std::time::Duration;

use super::browse::change_record;
use super::records::head_record;
use crate::cli::{ChangesArgs, WatchArgs};
use crate::output::{date, first_line};
use crate::session::Session;

/// Longest wait between two reconnects.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub async fn watch(s: &mut Session, args: WatchArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    // `None`: from now on; after the first message, the last change delivered.
    let mut since = args.since;
    let mut delivered = 0u64;
    let mut failures = 0u32;
    if args.count == Some(0) {
        return Ok(());
    }
    loop {
        let reply = s
            .client()
            .watch(WatchRequest {
                caller: s.caller(),
                files: files.clone(),
                since: since.unwrap_or(0),
                from_now: since.is_none(),
            })
            .await;
        let status = match reply {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                loop {
                    match stream.message().await {
                        Ok(Some(message)) => {
                            failures = 0;
                            since = Some(message.since);
                            if message.change.is_some() {
                                print_change(s, &message);
                                delivered += 1;
                                if args.count.is_some_and(|n| delivered >= n) {
                                    return Ok(());
                                }
                            }
                        }
                        Ok(None) => break None,
                        Err(status) => break Some(status),
                    }
                }
            }
            Err(status) => Some(status),
        };
        // A refusal (rights, a bad path) is final; a lost connection or a stopping server
        // is waited out, and the subscription resumes after the last change printed.
        if let Some(status) = &status
            && !retryable(status.code())
        {
            return Err(s.conn.status(status.clone()).into());
        }
        failures += 1;
        if failures > args.retries {
            match status {
                Some(status) => {
                    return Err(anyhow::Error::from(s.conn.status(status))
                        .context(format!("gave up after {} reconnects", args.retries)));
                }
                None => bail!(
                    "the server ended the subscription; gave up after {} reconnects",
                    args.retries
                ),
            }
        }
        let wait = (Duration::from_millis(200) * failures).min(MAX_BACKOFF);
        s.out.note(format!(
            "connection lost; reconnecting in {} ms (resuming after change {})",
            wait.as_millis(),
            since.unwrap_or(0)
        ));
        tokio::time::sleep(wait).await;
    }
}

fn retryable(code: tonic::Code) -> bool {
    use tonic::Code;
    matches!(
        code,
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::Aborted
    )
}

fn print_change(s: &Session, message: &WatchMessage) {
    let Some(change) = &message.change else {
        return;
    };
    let files: Vec<serde_json::Value> = message
        .files
        .iter()
        .map(|f| {
            let action = actions::name(actions::effective(f));
            serde_json::Value::Object(head_record(f).s("action", action).into_map())
        })
        .collect();
    let mut text = format!(
        "Change {} on {} by {}@{} '{}'",
        change.change,
        date(change.time),
        change.user,
        change.workspace,
        first_line(&change.description)
    );
    for f in &message.files {
        let action = actions::name(actions::effective(f));
        text.push_str(&format!("\n... {}#{} {action}", f.depot_file, f.head_rev));
    }
    if message.more_files {
        text.push_str("\n... (more files)");
    }
    s.out.emit(
        change_record(change)
            .v("files", serde_json::Value::Array(files))
            .b("moreFiles", message.more_files),
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
    let since: Vec<ChangesSince> = resolved
        .iter()
        .zip(&specs)
        .map(|(file, (_, n))| ChangesSince {
            file: file.clone(),
            since: *n,
        })
        .collect();
    let reply = s
        .client()
        .changes(ChangesRequest {
            caller: s.caller(),
            max: args.max.unwrap_or(0),
            since,
            ..Default::default()
        })
        .await;
    let mut stream = s.check(reply)?;
    while let Some(change) = stream.message().await.map_err(|e| s.conn.status(e))? {
        let Some((path, n)) = specs.get(change.since_index as usize) else {
            bail!(
                "the server answered for path number {}, but only {} were asked",
                change.since_index,
                specs.len()
            );
        };
        print_since(s, path, *n, &change);
    }
    Ok(())
}

fn print_since(s: &Session, path: &str, since: u64, change: &Change) {
    let text = format!(
        "{path} Change {} on {} by {}@{} '{}'",
        change.change,
        date(change.time),
        change.user,
        change.workspace,
        first_line(&change.description)
    );
    s.out.emit(
        change_record(change).s("path", path).n("since", since),
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
