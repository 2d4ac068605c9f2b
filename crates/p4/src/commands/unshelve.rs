//! `unshelve -s change [-f] [-c change] [file...]`: shelved files opened in the workspace
//! (in the default change or `-c`'s) and their shelved content written to the client,
//! writable as opened files are. The client refuses to replace a writable file it does not
//! know unless `-f`; a file it declines is not left opened (the workspace and the server
//! agree). Lines as P4 users read them: `//depot/a#2 - unshelved, opened for edit`.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::sync::{local_of, workspace, workspace_args};
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{Echo, Job, Outgoing, ToClient, client_type, echoed, write_files};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeNumber, ChangeRef, FileAction, WorkspaceOptions};
use keel_service::FileInfo;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "unshelve",
    row: rows::UNSHELVE,
    login: true,
    flags: "s: f c:",
    usage: "unshelve -s changelist# [ -f -c changelist# ] [ file ... ]",
    run: |c| Box::pin(unshelve(c)),
}];

fn change_number(flag: char, text: &str) -> Result<u64, CmdError> {
    text.parse()
        .map_err(|_| usage(format!("-{flag} {text}: the changelist must be a number")))
}

async fn unshelve(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("unshelve").expect("unshelve is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let Some(shelf) = flags.value('s') else {
        return Err(usage(format!(
            "Missing -s changelist#.\nUsage: {}",
            command.usage
        )));
    };
    let shelf = ChangeNumber(change_number('s', shelf)?);
    let target = match flags.value('c') {
        None | Some("default") => ChangeRef::Default,
        Some(n) => ChangeRef::from_number(change_number('c', n)?),
    };
    let force = flags.has('f');
    let (spec, place) = workspace(cmd).await?;
    let options = WorkspaceOptions::parse(&spec.options).unwrap_or_default();
    let files = if flags.rest.is_empty() {
        Vec::new()
    } else {
        workspace_args(&place, &flags.rest)?
    };
    let opened = cmd
        .call(move |svc, caller| svc.unshelve(caller, shelf, target, &files))
        .await?
        .map_err(crate::cmd::refused)?;

    let mut out = ToClient::new();
    let mut writes: Vec<(FileInfo, String)> = Vec::new();
    for f in &opened {
        let local = f
            .client_file
            .as_deref()
            .map(|c| local_of(&place, c))
            .unwrap_or_default();
        let action = f.action.unwrap_or(FileAction::Edit);
        if cmd.tagged {
            cmd.stat([
                ("depotFile", f.depot_file.to_string()),
                ("clientFile", local.clone()),
                ("rev", f.head_rev.to_string()),
                ("action", action.as_str().to_string()),
                ("change", f.change.number().to_string()),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .arg("depotFile", f.depot_file.as_str())
                    .text("#")
                    .arg("rev", f.head_rev.to_string())
                    .text(" - unshelved, opened for ")
                    .arg("action", action.as_str()),
            );
        }
        if action.is_delete() {
            let echo: Echo = vec![("keelFile".into(), f.depot_file.to_string())];
            out.delete(cmd, &local, !force, options.rmdir, &echo)
                .await?;
        } else if f.head_digest.is_some() {
            writes.push((f.clone(), local));
        }
    }

    let jobs = writes
        .into_iter()
        .filter_map(|(f, local)| {
            let digest = f.head_digest?;
            let t = f.file_type.or(f.head_type);
            Some(Job {
                file: Outgoing {
                    local,
                    type_code: t.as_ref().map(client_type).unwrap_or("0"),
                    writable: true,
                    noclobber: !force,
                    ..Outgoing::default()
                },
                digest,
                size: f.head_size,
                of: None,
                echo: vec![("keelFile".into(), f.depot_file.to_string())],
                keywords: None,
            })
        })
        .collect();
    // Answers are read whatever happens, so a declined file is known.
    let written = write_files(cmd, &mut out, jobs).await;
    out.finish(cmd).await?;
    // A file the client could not write is not left opened.
    let declined: Vec<String> = out
        .declined
        .iter()
        .filter_map(|e| echoed(e, "keelFile").map(str::to_string))
        .collect();
    if !declined.is_empty() {
        cmd.call(move |svc, caller| svc.revert(caller, &declined, false, &[]))
            .await?
            .map_err(|e| {
                CmdError::Report(Report::failed(
                    Generic::Fault,
                    number::SERVICE,
                    e.to_string(),
                ))
            })?;
    }
    written
}
