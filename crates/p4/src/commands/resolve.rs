//! `resolve -at | -ay | -as | -am | -af [-n] [file...]`: opened files with a pending
//! integration settled, the result written to the client. `-at` writes the source revision
//! ("theirs") and records it once the client confirms the write; `-ay` keeps the workspace
//! file. `-as`, `-am` and `-af` accept theirs when the workspace file is unchanged from the
//! merge base (the client compares it with the base's MD5, `client-CheckFile`) and yours when
//! theirs is the base. A text file changed on both sides is skipped by `-as`; `-am` and `-af`
//! fetch the workspace file ("yours", `client-SendFile`), merge it with base and theirs as the
//! native resolve does (`keel_core::merge::merge3`) and write the result back. A merge with
//! conflicts is skipped by `-am` (the workspace file untouched) and written with conflict
//! markers and recorded by `-af`. A resolve is recorded only once the client confirmed the
//! write. `-n` lists what needs resolving. Without `-a` the client merges interactively
//! ([`crate::commands::resolve_interactive`]).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::sync::{local_of, workspace, workspace_args};
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{
    DIGEST_LIMIT, Echo, Job, Outgoing, ToClient, client_type, echoed, is_text, write_files,
};
use crate::upload::{self, ToSend};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{Digest, FileType};
use keel_service::command as rows;
use keel_service::{ContentOf, FileInfo, ResolveOutcome};
use md5::{Digest as _, Md5};
use std::io::Read as _;

pub const COMMANDS: &[Command] = &[Command {
    name: "resolve",
    row: rows::RESOLVE_DONE,
    login: true,
    flags: "a: n",
    usage: "resolve [ -af -am -as -at -ay -n ] [ file ... ]",
    run: |c| Box::pin(resolve(c)),
}];

const CHECKED: &str = "dm-KeelChecked";

fn integrate_error(e: keel_service::IntegrateError) -> CmdError {
    crate::cmd::refused(e)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Theirs,
    Yours,
    Safe,
    Auto,
    Force,
    /// No `-a` flag: the client's interactive merge.
    Interactive,
}

async fn resolve(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("resolve").expect("resolve is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let preview = flags.has('n');
    let mode = match flags.value('a') {
        Some("t") => Mode::Theirs,
        Some("y") => Mode::Yours,
        Some("s") => Mode::Safe,
        Some("m") => Mode::Auto,
        Some("f") => Mode::Force,
        None if preview => Mode::Safe,
        Some(other) => {
            return Err(usage(format!(
                "-a{other} is not supported by this server: use -af, -am, -as, -at or -ay.\nUsage: {}",
                command.usage
            )));
        }
        None => Mode::Interactive,
    };
    let (_, place) = workspace(cmd).await?;
    let files = if flags.rest.is_empty() {
        Vec::new()
    } else {
        workspace_args(&place, &flags.rest)?
    };
    let pending = match cmd
        .call(move |svc, caller| svc.resolve_list(caller, &files))
        .await?
    {
        Ok(p) => p,
        // Nothing to do is a warning, as sync's "up-to-date".
        Err(keel_service::IntegrateError::NothingToResolve { .. }) => {
            let text = if flags.rest.is_empty() {
                "No file(s) to resolve.".to_string()
            } else {
                format!("{} - no file(s) to resolve.", flags.rest.join(" "))
            };
            cmd.report(
                Report::new(Severity::Warn, Generic::Empty, number::NOTHING_TO_RESOLVE).text(text),
            );
            return Ok(());
        }
        Err(e) => return Err(integrate_error(e)),
    };
    if mode == Mode::Interactive {
        return crate::commands::resolve_interactive::resolve(cmd, &place, &pending).await;
    }
    let mut out = ToClient::new();
    let mut jobs = Vec::new();
    let mut keep = Vec::new();
    let mut merges: Vec<(FileInfo, String, String)> = Vec::new();
    for f in &pending {
        let local = f
            .client_file
            .as_deref()
            .map(|c| local_of(&place, c))
            .unwrap_or_default();
        let source = f
            .source_file
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default();
        cmd.info(format!("{local} - merging {source}#{}", f.head_rev));
        if preview {
            continue;
        }
        let choice = match mode {
            Mode::Theirs => Some(ResolveOutcome::Theirs),
            Mode::Yours => Some(ResolveOutcome::Yours),
            Mode::Safe | Mode::Auto | Mode::Force | Mode::Interactive => {
                safe_choice(cmd, f, &local).await?
            }
        };
        match choice {
            Some(ResolveOutcome::Theirs) => match f.head_digest {
                Some(digest) => jobs.push(Job {
                    file: Outgoing {
                        local: local.clone(),
                        type_code: f.head_type.as_ref().map(client_type).unwrap_or("0"),
                        writable: true,
                        ..Outgoing::default()
                    },
                    digest,
                    size: f.head_size,
                    of: Some(ContentOf {
                        depot_file: source.clone(),
                        rev: f.head_rev,
                    }),
                    echo: vec![("keelFile".into(), f.depot_file.to_string())],
                    keywords: None,
                }),
                None => {
                    // Theirs is a deleted revision: nothing to write.
                    done(cmd, f, &local, &source, ResolveOutcome::Theirs).await?;
                }
            },
            Some(outcome) => keep.push((f.clone(), local, source, outcome)),
            None => match unmergeable(f, mode) {
                Some(why) => skipped(cmd, &local, why),
                None => merges.push((f.clone(), local, source)),
            },
        }
    }
    for (f, local, source, outcome) in keep {
        done(cmd, &f, &local, &source, outcome).await?;
    }
    let mut written: Vec<(FileInfo, ResolveOutcome)> = jobs
        .iter()
        .filter_map(|j| {
            pending
                .iter()
                .find(|f| Some(f.depot_file.as_str()) == echoed(&j.echo, "keelFile"))
                .map(|f| (f.clone(), ResolveOutcome::Theirs))
        })
        .collect();
    written.extend(merge_files(cmd, &mut out, merges, mode).await?);
    write_files(cmd, &mut out, jobs).await?;
    out.finish(cmd).await?;
    // A resolve is recorded only for the files the client wrote.
    let confirmed: Vec<Echo> = out.confirmed.clone();
    for (f, outcome) in written {
        if confirmed
            .iter()
            .any(|e| echoed(e, "keelFile") == Some(f.depot_file.as_str()))
        {
            let local = f
                .client_file
                .as_deref()
                .map(|c| local_of(&place, c))
                .unwrap_or_default();
            let source = f
                .source_file
                .as_ref()
                .map(|s| s.to_string())
                .unwrap_or_default();
            done(cmd, &f, &local, &source, outcome).await?;
        }
    }
    Ok(())
}

/// Why a file changed on both sides is not merged in `mode`, `None` when it is.
fn unmergeable(f: &FileInfo, mode: Mode) -> Option<&'static str> {
    let text = |t: Option<&FileType>| t.is_none_or(is_text);
    if !matches!(mode, Mode::Auto | Mode::Force) {
        Some("changed on both sides, which -as does not merge: use -am or -af")
    } else if !text(f.file_type.as_ref()) || !text(f.head_type.as_ref()) {
        Some("a binary file changed on both sides: use -at or -ay")
    } else if f.base_digest.is_none() || f.head_digest.is_none() {
        Some("no merge base to merge from: use -at or -ay")
    } else {
        None
    }
}

/// Says that the resolve of `local` was skipped, and why.
pub(crate) fn skipped(cmd: &mut Cmd, local: &str, why: &str) {
    cmd.report(
        Report::new(Severity::Warn, Generic::NotYet, number::MERGE_NEEDED)
            .arg("clientFile", local)
            .text(format!(" - resolve skipped ({why}).")),
    );
}

/// Why a merge whose sides are not all UTF-8 is skipped.
pub(crate) const NOT_TEXT: &str = "not UTF-8 text, which the merge reads: use -at or -ay";

/// Base, theirs and yours as text, when all three are UTF-8.
pub(crate) fn texts<'a>(
    base: &'a [u8],
    theirs: &'a [u8],
    mine: &'a [u8],
) -> Option<(&'a str, &'a str, &'a str)> {
    Some((
        std::str::from_utf8(base).ok()?,
        std::str::from_utf8(theirs).ok()?,
        std::str::from_utf8(mine).ok()?,
    ))
}

/// Reads the stored content `digest` of `depot_file#rev` whole.
pub(crate) async fn stored_text(
    cmd: &mut Cmd,
    digest: Digest,
    depot_file: String,
    rev: u32,
) -> Result<Vec<u8>, CmdError> {
    let of = ContentOf { depot_file, rev };
    cmd.call(move |svc, caller| {
        let what = format!("{}#{}", of.depot_file, of.rev);
        let blob = svc.content(caller, &digest.to_hex(), Some(&of))?;
        let unreadable = |reason: String| keel_service::ServiceError::ContentUnreadable {
            file: what.clone(),
            reason,
        };
        let mut reader = blob
            .into_content_reader()
            .map_err(|e| unreadable(e.to_string()))?;
        let mut data = Vec::new();
        reader
            .by_ref()
            .take(DIGEST_LIMIT + 1)
            .read_to_end(&mut data)
            .map_err(|e| unreadable(e.to_string()))?;
        Ok::<_, keel_service::ServiceError>(data)
    })
    .await?
    .map_err(CmdError::from)
}

/// Three-way merges of the files changed on both sides: yours from the client, base and
/// theirs from the store; each result written to the client through `out`. Returns the files
/// written and the outcome to record once the client confirms.
async fn merge_files(
    cmd: &mut Cmd,
    out: &mut ToClient,
    merges: Vec<(FileInfo, String, String)>,
    mode: Mode,
) -> Result<Vec<(FileInfo, ResolveOutcome)>, CmdError> {
    if merges.is_empty() {
        return Ok(Vec::new());
    }
    let to_send: Vec<ToSend> = merges
        .iter()
        .map(|(f, local, _)| ToSend {
            depot_file: f.depot_file.to_string(),
            local: local.clone(),
            file_type: f.file_type.unwrap_or(FileType::TEXT),
            server_md5: None,
        })
        .collect();
    let mut yours = upload::receive_whole(cmd, &to_send, DIGEST_LIMIT).await?;
    let mut written = Vec::new();
    for (f, local, source) in merges {
        let depot = f.depot_file.to_string();
        let Some(at) = yours.iter().position(|(d, _)| *d == depot) else {
            skipped(cmd, &local, "the client did not send the workspace file");
            continue;
        };
        let (_, mine) = yours.swap_remove(at);
        let (Some(base_digest), Some(base_file), Some(their_digest)) =
            (f.base_digest, f.base_file.as_ref(), f.head_digest)
        else {
            skipped(cmd, &local, "no merge base to merge from: use -at or -ay");
            continue;
        };
        let base = stored_text(cmd, base_digest, base_file.to_string(), f.base_rev).await?;
        let theirs = stored_text(cmd, their_digest, source.clone(), f.head_rev).await?;
        if [&base, &theirs, &mine]
            .iter()
            .any(|d| d.len() as u64 > DIGEST_LIMIT)
        {
            skipped(cmd, &local, "too large to merge: use -at or -ay");
            continue;
        }
        let Some((base, theirs, mine)) = texts(&base, &theirs, &mine) else {
            skipped(cmd, &local, NOT_TEXT);
            continue;
        };
        let merged = keel_core::merge::merge3(base, theirs, mine);
        cmd.info(format!(
            "Diff chunks: {} yours + {} theirs + {} both + {} conflicting",
            merged.yours_changed, merged.theirs_changed, merged.both_changed, merged.conflicts
        ));
        let outcome = if merged.conflicts == 0 {
            ResolveOutcome::Merged
        } else if mode == Mode::Force {
            ResolveOutcome::Edited
        } else {
            skipped(
                cmd,
                &local,
                "conflicts: edit the file and use -ay, or use -af",
            );
            continue;
        };
        let bytes = merged.merged.into_bytes();
        let file = Outgoing {
            local: local.clone(),
            type_code: f.file_type.as_ref().map(client_type).unwrap_or("0"),
            writable: true,
            size: bytes.len() as u64,
            md5: Some(hex::encode_upper(Md5::digest(&bytes))),
            ..Outgoing::default()
        };
        out.open(cmd, &file);
        out.write(cmd, &bytes).await?;
        out.close(cmd, &vec![("keelFile".to_string(), depot)])
            .await?;
        written.push((f, outcome));
    }
    Ok(written)
}

/// Records the outcome and says so.
async fn done(
    cmd: &mut Cmd,
    f: &FileInfo,
    local: &str,
    source: &str,
    outcome: ResolveOutcome,
) -> CmdResult {
    let file = f.depot_file.to_string();
    cmd.call(move |svc, caller| svc.resolve_done(caller, &file, outcome))
        .await?
        .map_err(integrate_error)?;
    let how = match outcome {
        ResolveOutcome::Theirs => "copy from",
        ResolveOutcome::Yours => "ignored",
        ResolveOutcome::Merged | ResolveOutcome::Edited => "merge from",
    };
    cmd.info(format!("{local} - {how} {source}"));
    Ok(())
}

/// The choice a safe resolve makes: theirs when the workspace file is the base, yours when
/// theirs is the base, `None` when both changed.
async fn safe_choice(
    cmd: &mut Cmd,
    f: &FileInfo,
    local: &str,
) -> Result<Option<ResolveOutcome>, CmdError> {
    let (Some(base_file), base_rev) = (f.base_file.as_ref(), f.base_rev) else {
        return Ok(None);
    };
    if base_rev == 0 {
        return Ok(None);
    }
    if f.base_digest.is_some() && f.base_digest == f.head_digest {
        return Ok(Some(ResolveOutcome::Yours));
    }
    let Some(base) = base_revision(cmd, &base_file.to_string(), base_rev).await? else {
        return Ok(None);
    };
    let t = base.head_type.as_ref().map(client_type).unwrap_or("0");
    let ask = Message::new()
        .with("path", local)
        .with("type", t)
        .with("digest", base.head_md5.to_uppercase())
        .with("digestType", "md5")
        .with("confirm", CHECKED)
        .with("func", "client-CheckFile");
    let reply = cmd.ask(&ask, CHECKED).await?;
    Ok((reply.text("status").as_deref() == Some("same")).then_some(ResolveOutcome::Theirs))
}

/// The merge base `file#rev` as listed, when it exists and its MD5 is known.
pub(crate) async fn base_revision(
    cmd: &mut Cmd,
    file: &str,
    rev: u32,
) -> Result<Option<FileInfo>, CmdError> {
    let found = crate::commands::fileargs::listed(cmd, vec![format!("{file}#{rev}")]).await?;
    Ok(found.into_iter().next().filter(|b| !b.head_md5.is_empty()))
}
