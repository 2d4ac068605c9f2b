//! `undo [-n] [-c change] file[revRange]...`: the service's `undo` opens the inverse of
//! submitted revisions (an edit back to the content before the range, a delete of a file the
//! range added, an add of a file the range deleted), all files or none; then the client's
//! files get that content (a deleted file is removed). A file later revisions changed again
//! keeps its head content until `resolve` merges the undo in.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::open::work_rev;
use crate::commands::sync::{local_of, workspace};
use crate::commands::workspace::change_arg;
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{Echo, Job, Outgoing, ToClient, client_type, write_files};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeRef, FileAction, WorkspaceOptions};
use keel_service::command as rows;
use keel_service::{FileInfo, UndoRequest};

pub const COMMANDS: &[Command] = &[Command {
    name: "undo",
    row: rows::UNDO,
    login: true,
    flags: "n c:",
    usage: "undo [ -n -c changelist# ] file[revRange] ...",
    run: |c| Box::pin(undo(c)),
}];

async fn undo(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("undo").expect("undo is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!(
            "Missing file arguments.\nUsage: {}",
            command.usage
        )));
    }
    let change = change_arg(flags.value('c'))?.unwrap_or(ChangeRef::Default);
    let preview = flags.has('n');
    let (spec, place) = workspace(cmd).await?;
    let options = WorkspaceOptions::parse(&spec.options).unwrap_or_default();
    // A bare change (range) means the files of the workspace's view in it.
    let mut files = Vec::with_capacity(flags.rest.len());
    for arg in &flags.rest {
        files.push(if arg.starts_with('@') {
            format!("//{}/...{arg}", place.workspace)
        } else {
            place.to_keel(arg)?
        });
    }
    let req = UndoRequest {
        files,
        preview,
        change: change.number(),
    };
    let records = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.undo(caller, &req, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for f in &records {
        announce(
            cmd,
            f,
            &local_of(&place, f.client_file.as_deref().unwrap_or("")),
        );
    }
    if preview {
        return Ok(());
    }
    // Deleted files leave the workspace; the others get the content from before the range.
    let mut out = ToClient::new();
    // (the revision before the range, the local file, the depot file)
    let mut wanted: Vec<(String, String, String)> = Vec::new();
    for f in &records {
        let Some(rel) = f.client_file.as_deref() else {
            continue;
        };
        let local = local_of(&place, rel);
        if f.action == Some(FileAction::Delete) {
            let echo: Echo = vec![("keelFile".into(), f.depot_file.to_string())];
            out.delete(cmd, &local, false, options.rmdir, &echo).await?;
        } else if !f.unresolved {
            let depot = f.depot_file.to_string();
            wanted.push((format!("{depot}#{}", f.source_start), local, depot));
        }
    }
    let revs: Vec<String> = wanted.iter().map(|(r, _, _)| r.clone()).collect();
    let before = crate::commands::fileargs::listed(cmd, revs).await?;
    let jobs = wanted
        .into_iter()
        .filter_map(|(_, local, depot)| {
            let rev = before.iter().find(|b| b.depot_file.as_str() == depot)?;
            let t = rev.head_type;
            Some(Job {
                file: Outgoing {
                    local,
                    type_code: t.as_ref().map(client_type).unwrap_or("0"),
                    writable: true,
                    noclobber: false,
                    ..Outgoing::default()
                },
                digest: rev.head_digest?,
                size: rev.head_size,
                of: None,
                echo: vec![("keelFile".into(), depot)],
                keywords: None,
            })
        })
        .collect();
    let written = write_files(cmd, &mut out, jobs).await;
    out.finish(cmd).await?;
    written
}

/// An undone file's record (tagged) or line (untagged).
fn announce(cmd: &mut Cmd, f: &FileInfo, local: &str) {
    let action = f.action.unwrap_or(FileAction::Edit);
    let (start, end) = (f.source_start + 1, f.source_end);
    if cmd.tagged {
        let mut fields = vec![
            ("depotFile", f.depot_file.to_string()),
            ("clientFile", local.to_string()),
            ("workRev", work_rev(f).to_string()),
            ("action", action.as_str().to_string()),
            ("change", f.change.to_string()),
            ("startFromRev", start.to_string()),
            ("endFromRev", end.to_string()),
        ];
        if f.unresolved {
            fields.push(("unresolved", String::new()));
        }
        cmd.stat(fields);
        return;
    }
    let resolve = if f.unresolved {
        "; later revisions changed it: resolve to merge the undo in"
    } else {
        ""
    };
    cmd.report(
        Report::new(Severity::Info, Generic::None, 0)
            .arg("depotFile", f.depot_file.as_str())
            .text(format!(
                "#{} - opened for {action} (undo of #{start},#{end}{resolve})",
                work_rev(f)
            )),
    );
}
