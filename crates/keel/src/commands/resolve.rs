//! `resolve` and `resolved`: merge "theirs" into "yours" on the client, record the outcome.
//!
//! The server lists what needs resolving (theirs = the source revision, plus the merge base);
//! the client fetches both, merges with the workspace file using `keel_core`'s 3-way merge and
//! resolve rules, writes the result, and tells the server how the file was resolved.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, Result, bail};
use keel_client::content::ContentStream;
use keel_client::ops::{self, FileResult, ResolveResult};
use keel_client::transfer;
use keel_core::{Resolution, ResolveMode, Skip, decide, decide_binary, merge3};

use super::file_results::{outcome_text, result_record};
use crate::cli::ResolveArgs;
use crate::session::{AlreadyReported, Session};

/// The three contents of one resolve; `None` text marks binary content.
struct Sides {
    base: Option<Vec<u8>>,
    theirs: Vec<u8>,
    yours: Vec<u8>,
}

async fn fetch(s: &Session, spec: String) -> Result<Vec<u8>> {
    let mut content = ContentStream::open_for(&s.conn, vec![spec.clone()], "resolve").await?;
    match content.next_file().await? {
        Some((_, Some(header))) => Ok(content.read_all(&header, &spec).await?),
        _ => bail!("{spec} - no content to merge"),
    }
}

fn is_text(record: &FileResult, sides: &Sides) -> bool {
    let textual = |b: &[u8]| std::str::from_utf8(b).is_ok() && !b.contains(&0);
    record.file_type.starts_with("text")
        && textual(&sides.theirs)
        && textual(&sides.yours)
        && sides.base.as_deref().is_none_or(textual)
}

fn mode_of(flag: &str) -> Result<ResolveMode> {
    ResolveMode::parse(flag).with_context(|| {
        format!(
            "unknown resolve mode -a{} (use -am, -as, -at, -ay or -af)",
            &flag[1..]
        )
    })
}

pub async fn resolve(s: &mut Session, args: ResolveArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let mode = match &args.accept {
        Some(m) => Some(mode_of(&format!("a{m}"))?),
        // A preview (-n) changes nothing, so it needs no mode; neither does a terminal, where
        // each file is asked about.
        None if args.preview || std::io::stdin().is_terminal() => None,
        None => bail!("resolve needs -am, -as, -at, -ay or -af when not run on a terminal"),
    };
    let files = s.file_args(&args.files).await?;
    let tasks = ops::resolve_list(&s.conn, files).await?.all().await?;
    let mut skipped = 0;
    for task in &tasks {
        let client_file = task.client_file_in(&ws).unwrap_or_default();
        let local = ws.local(&client_file)?;
        let base_text = if task.base_file.is_empty() {
            "no base".to_string()
        } else {
            format!("{}#{}", task.base_file, task.base_rev)
        };
        s.out.note(format!(
            "{} - merging {}#{},#{} using base {base_text}",
            local.display(),
            task.source_file,
            task.source_start + 1,
            task.source_end
        ));
        if args.preview {
            s.out.emit(
                result_record(Some(&ws), task)
                    .s("fromFile", &task.source_file)
                    .s("baseFile", &task.base_file),
                format!(
                    "{} - resolve needed from {}#{}",
                    task.depot_file, task.source_file, task.source_end
                ),
            );
            continue;
        }
        let theirs = fetch(s, format!("{}#{}", task.source_file, task.source_end)).await?;
        let base = if task.base_file.is_empty() {
            None
        } else {
            Some(fetch(s, format!("{}#{}", task.base_file, task.base_rev)).await?)
        };
        let yours = std::fs::read(&local).unwrap_or_default();
        // A utf16 file is resolved as the UTF-8 text it is stored as, and written back as
        // UTF-16.
        let utf16 = keel_client::keywords::form_of(&task.file_type).utf16;
        let yours = if utf16 {
            keel_core::utf16::from_workspace(&yours).unwrap_or(yours)
        } else {
            yours
        };
        let sides = Sides {
            base,
            theirs,
            yours,
        };
        let mode = match mode {
            Some(m) => m,
            None => match prompt(&sides, task)? {
                Some(m) => m,
                None => {
                    skipped += 1;
                    s.out
                        .note(format!("{} - resolve skipped.", local.display()));
                    continue;
                }
            },
        };
        match apply(mode, task, &sides) {
            Ok((result, outcome)) => {
                let word = outcome.as_str();
                if let Some(bytes) = result {
                    let bytes = if utf16 {
                        keel_core::utf16::to_workspace(&bytes)
                    } else {
                        bytes
                    };
                    transfer::make_writable(&local).ok();
                    std::fs::write(&local, bytes)
                        .with_context(|| format!("writing {}", local.display()))?;
                }
                let done = ops::resolve_done(&s.conn, &task.depot_file, outcome).await?;
                s.out.emit(
                    result_record(Some(&ws), &done)
                        .s("how", word)
                        .s("fromFile", &task.source_file),
                    format!("{} - {} ({word})", task.depot_file, outcome_text(&done)),
                );
            }
            Err(skip) => {
                skipped += 1;
                s.out
                    .error(format!("{} - resolve skipped: {skip}", task.depot_file));
            }
        }
    }
    if skipped > 0 {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// Decides one file: the bytes to write (None = keep yours) and the outcome to record.
fn apply(
    mode: ResolveMode,
    task: &FileResult,
    sides: &Sides,
) -> Result<(Option<Vec<u8>>, ResolveResult), Skip> {
    let resolution = if is_text(task, sides) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let base = sides.base.as_deref().map(text).unwrap_or_default();
        decide(mode, &base, &text(&sides.theirs), &text(&sides.yours))?
    } else {
        let digest = |b: &[u8]| blake3::hash(b).to_hex().to_string();
        let base = sides.base.as_deref().map(digest).unwrap_or_default();
        decide_binary(mode, &base, &digest(&sides.theirs), &digest(&sides.yours))?
    };
    Ok(match resolution {
        Resolution::Theirs => (Some(sides.theirs.clone()), ResolveResult::Theirs),
        Resolution::Yours => (None, ResolveResult::Yours),
        Resolution::Merged(text) => {
            let edited = mode == ResolveMode::AcceptForced && text.contains("\n<<<<");
            (
                Some(text.into_bytes()),
                if edited {
                    ResolveResult::Edited
                } else {
                    ResolveResult::Merged
                },
            )
        }
    })
}

/// Interactive choice on a terminal; `None` skips the file.
fn prompt(sides: &Sides, task: &FileResult) -> Result<Option<ResolveMode>> {
    if is_text(task, sides) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let base = sides.base.as_deref().map(text).unwrap_or_default();
        let outcome = merge3(&base, &text(&sides.theirs), &text(&sides.yours));
        eprintln!(
            "Diff chunks: {} yours + {} theirs + {} both + {} conflicting",
            outcome.yours_changed, outcome.theirs_changed, outcome.both_changed, outcome.conflicts
        );
    } else {
        eprintln!("Binary file: accept theirs (at) or yours (ay).");
    }
    let stdin = std::io::stdin();
    for _ in 0..20 {
        eprint!(
            "Accept theirs (at), yours (ay), merged (am), merged with markers (af), skip (s)? [am]: "
        );
        std::io::stderr().flush().ok();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(None);
        }
        match line.trim() {
            "" | "am" => return Ok(Some(ResolveMode::AcceptMerged)),
            "at" => return Ok(Some(ResolveMode::AcceptTheirs)),
            "ay" => return Ok(Some(ResolveMode::AcceptYours)),
            "af" => return Ok(Some(ResolveMode::AcceptForced)),
            "as" => return Ok(Some(ResolveMode::AcceptSafe)),
            "s" => return Ok(None),
            other => eprintln!("'{other}' is not a choice."),
        }
    }
    Ok(None)
}

/// `resolved [FILE...]`: files resolved but not yet submitted.
pub async fn resolved(s: &mut Session, files: Vec<String>) -> Result<()> {
    let ws = s.workspace().await?;
    let files = s.file_args(&files).await?;
    let records = ops::resolved(&s.conn, files).await?.all().await?;
    for r in &records {
        s.out.emit(
            result_record(Some(&ws), r)
                .s("fromFile", &r.source_file)
                .n("endFromRev", u64::from(r.source_end)),
            format!(
                "{} - resolved from {}#{},#{}",
                r.depot_file,
                r.source_file,
                r.source_start + 1,
                r.source_end
            ),
        );
    }
    Ok(())
}
