//! `resolve -at | -ay | -as | -am [-n] [file...]`: opened files with a pending integration
//! settled, the result written to the client. `-at` writes the source revision ("theirs") and
//! records it once the client confirms the write; `-ay` keeps the workspace file. `-as` and
//! `-am` accept theirs when the workspace file is unchanged from the merge base (the client
//! compares it with the base's MD5, `client-CheckFile`) and yours when theirs is the base;
//! a file that needs a real three-way merge is skipped with a warning naming it (the
//! server merges no content of the client's yet). `-n` lists what needs resolving.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::sync::{local_of, workspace, workspace_args};
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{Echo, Job, Outgoing, ToClient, client_type, echoed, write_files};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_service::command as rows;
use keel_service::{ContentOf, FileInfo, ListOptions, ResolveOutcome};

pub const COMMANDS: &[Command] = &[Command {
    name: "resolve",
    row: rows::RESOLVE_DONE,
    login: true,
    flags: "a: n",
    usage: "resolve [ -am -as -at -ay -n ] [ file ... ]",
    run: |c| Box::pin(resolve(c)),
}];

const CHECKED: &str = "dm-KeelChecked";

fn integrate_error(e: keel_service::IntegrateError) -> CmdError {
    CmdError::Report(Report::failed(
        Generic::Usage,
        number::SERVICE,
        e.to_string(),
    ))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Theirs,
    Yours,
    Safe,
    Auto,
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
        None if preview => Mode::Safe,
        Some(other) => {
            return Err(usage(format!(
                "-a{other} is not supported by this server: use -am, -as, -at or -ay.\nUsage: {}",
                command.usage
            )));
        }
        None => {
            return Err(usage(format!(
                "Interactive resolve is not supported by this server: use -am, -as, -at or \
                 -ay.\nUsage: {}",
                command.usage
            )));
        }
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
    let mut out = ToClient::new();
    let mut jobs = Vec::new();
    let mut keep = Vec::new();
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
            Mode::Safe | Mode::Auto => safe_choice(cmd, f, &local).await?,
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
            None => cmd.report(
                Report::new(Severity::Warn, Generic::NotYet, number::MERGE_NEEDED)
                    .arg("clientFile", &local)
                    .text(" - needs a three-way merge, which this server does not do: resolve it with -at or -ay, or with Keel's own client."),
            ),
        }
    }
    for (f, local, source, outcome) in keep {
        done(cmd, &f, &local, &source, outcome).await?;
    }
    let written: Vec<FileInfo> = jobs
        .iter()
        .filter_map(|j| {
            pending
                .iter()
                .find(|f| Some(f.depot_file.as_str()) == echoed(&j.echo, "keelFile"))
                .cloned()
        })
        .collect();
    write_files(cmd, &mut out, jobs).await?;
    out.finish(cmd).await?;
    // Theirs is recorded only for the files the client wrote.
    let confirmed: Vec<Echo> = out.confirmed.clone();
    for f in written {
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
            done(cmd, &f, &local, &source, ResolveOutcome::Theirs).await?;
        }
    }
    Ok(())
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
    let spec = format!("{base_file}#{base_rev}");
    let base = cmd
        .call(move |svc, caller| {
            let mut found = None;
            svc.files(caller, &[spec], ListOptions::default(), &mut |i| {
                found = Some(i);
                Ok(())
            })
            .map(|()| found)
        })
        .await??;
    let Some(base) = base.filter(|b| !b.head_md5.is_empty()) else {
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
