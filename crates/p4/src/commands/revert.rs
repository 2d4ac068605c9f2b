//! `revert [-a -n -k] [-c change] file...`: opened files given up, and the workspace put back
//! as the have list says: an edited or deleted file rewritten with its have revision (read-only
//! unless `allwrite` or `+w`), a branched or moved-in file removed, a file opened for add left
//! as it is (as P4 servers do); `-k` leaves every workspace file alone, `-n` only lists.
//! `-a` reverts the files opened for edit whose content and type are unchanged: the client
//! compares each file with its have revision's MD5 (`client-CheckFile`) and says `same`.
//!
//! Lines as P4 users read them: `//depot/a#1 - was edit, reverted`,
//! `//depot/n#none - was add, abandoned`.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::sync::{local_of, workspace, workspace_args};
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{
    Echo, Job, Keyworded, Outgoing, ToClient, client_type, write_files,
};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeRef, FileAction, WorkspaceOptions};
use keel_service::command as rows;
use keel_service::{ContentOf, FileInfo};
use std::collections::HashMap;

pub const COMMANDS: &[Command] = &[Command {
    name: "revert",
    row: rows::REVERT,
    login: true,
    flags: "a n k c:",
    usage: "revert [ -a -n -k -c changelist# ] file ...",
    run: |c| Box::pin(revert(c)),
}];

/// The function the client calls back with a `client-CheckFile` answer.
const CHECKED: &str = "dm-KeelChecked";

fn open_error(e: keel_service::OpenError) -> CmdError {
    crate::cmd::refused(e)
}

async fn revert(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("revert").expect("revert is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = match flags.value('c') {
        None => None,
        Some("default") => Some(ChangeRef::Default),
        Some(n) => Some(ChangeRef::from_number(n.parse().map_err(|_| {
            usage(format!(
                "-c {n}: the changelist must be a number or 'default'"
            ))
        })?)),
    };
    if flags.rest.is_empty() && change.is_none() && !flags.has('a') {
        return Err(usage(format!(
            "Missing file argument.\nUsage: {}",
            command.usage
        )));
    }
    let (spec, place) = workspace(cmd).await?;
    let options = WorkspaceOptions::parse(&spec.options).unwrap_or_default();
    let files = if flags.rest.is_empty() {
        Vec::new()
    } else {
        workspace_args(&place, &flags.rest)?
    };

    // The opened files the arguments (and `-c`) select.
    let listed = files.clone();
    let mut opened = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.opened(caller, &listed, false, "", change, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    if flags.has('a') {
        opened = unchanged(cmd, &place, opened).await?;
    }
    if opened.is_empty() {
        let what = if flags.rest.is_empty() {
            format!("//{}/...", place.workspace)
        } else {
            flags.rest.join(" ")
        };
        cmd.report(
            Report::new(Severity::Warn, Generic::Empty, number::NOT_OPENED)
                .arg("path", what)
                .text(" - file(s) not opened on this client."),
        );
        return Ok(());
    }
    if flags.has('n') {
        for f in &opened {
            let local = f
                .client_file
                .as_deref()
                .map(|c| local_of(&place, c))
                .unwrap_or_default();
            announce(cmd, f, &local);
        }
        return Ok(());
    }
    let paths: Vec<String> = opened.iter().map(|f| f.depot_file.to_string()).collect();
    let reverted = cmd
        .call(move |svc, caller| svc.revert(caller, &paths, false, &[]))
        .await?
        .map_err(open_error)?;

    // What each file's workspace copy becomes.
    let mut restore: Vec<(FileInfo, String)> = Vec::new();
    let mut out = ToClient::new();
    for f in &reverted {
        let local = f
            .client_file
            .as_deref()
            .map(|c| local_of(&place, c))
            .unwrap_or_default();
        announce(cmd, f, &local);
        if flags.has('k') || local.is_empty() {
            continue;
        }
        let action = f.action.unwrap_or(FileAction::Edit);
        if f.have_rev > 0 && f.head_digest.is_some() {
            restore.push((f.clone(), local));
        } else if action != FileAction::Add {
            let echo: Echo = vec![("keelFile".into(), f.depot_file.to_string())];
            out.delete(cmd, &local, false, options.rmdir, &echo).await?;
        }
    }
    write_back(cmd, &mut out, restore, &options).await?;
    out.finish(cmd).await
}

/// Rewrites each file with its have revision (`head_*` of the revert's records).
async fn write_back(
    cmd: &mut Cmd,
    out: &mut ToClient,
    restore: Vec<(FileInfo, String)>,
    options: &WorkspaceOptions,
) -> CmdResult {
    let authors = authors(cmd, &restore).await?;
    let jobs = restore
        .into_iter()
        .filter_map(|(f, local)| {
            let digest = f.head_digest?;
            let t = f.head_type.or(f.file_type);
            let which = t.map(|t| t.expanded_keywords()).unwrap_or_default();
            Some(Job {
                file: Outgoing {
                    local,
                    type_code: t.as_ref().map(client_type).unwrap_or("0"),
                    writable: options.allwrite || t.is_some_and(|t| t.writable),
                    time: (options.modtime || t.is_some_and(|t| t.modtime))
                        .then_some(f.kept_mod_time()),
                    ..Outgoing::default()
                },
                digest,
                size: f.head_size,
                of: Some(ContentOf {
                    depot_file: f.depot_file.to_string(),
                    rev: f.have_rev,
                }),
                echo: Vec::new(),
                keywords: (which != keel_core::Keywords::None).then(|| Keyworded {
                    which,
                    depot_file: f.depot_file.to_string(),
                    rev: f.have_rev,
                    change: f.head_change.map(|c| c.0).unwrap_or_default(),
                    time: f.head_time,
                    author: authors
                        .get(f.depot_file.as_str())
                        .cloned()
                        .unwrap_or_default(),
                }),
            })
        })
        .collect();
    write_files(cmd, out, jobs).await
}

/// Who submitted the have revision of each keyword-expanding file among `restore`, by depot
/// file, for its `$Author$`: the revert's records name the one who opened it, the have list
/// the submitter.
async fn authors(
    cmd: &mut Cmd,
    restore: &[(FileInfo, String)],
) -> Result<HashMap<String, String>, CmdError> {
    let files: Vec<String> = restore
        .iter()
        .filter(|(f, _)| {
            f.head_type
                .or(f.file_type)
                .is_some_and(|t| t.expanded_keywords() != keel_core::Keywords::None)
        })
        .map(|(f, _)| f.depot_file.to_string())
        .collect();
    if files.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(cmd
        .call(move |svc, caller| {
            let mut out = HashMap::new();
            svc.have_list(caller, &files, &mut |f| {
                out.insert(f.depot_file.into_string(), f.user);
                Ok(())
            })
            .map(|()| out)
        })
        .await??)
}

/// The files opened for edit whose workspace copy the client says is its have revision, with
/// the type unchanged.
async fn unchanged(
    cmd: &mut Cmd,
    place: &crate::filespec::Place,
    opened: Vec<FileInfo>,
) -> Result<Vec<FileInfo>, CmdError> {
    let candidates: Vec<FileInfo> = opened
        .into_iter()
        .filter(|f| f.action == Some(FileAction::Edit) && f.have_rev > 0)
        .collect();
    let revs: Vec<String> = candidates
        .iter()
        .map(|f| format!("{}#{}", f.depot_file, f.have_rev))
        .collect();
    let haves = crate::commands::fileargs::listed(cmd, revs).await?;
    let mut keep = Vec::new();
    for f in candidates {
        let Some(have) = haves.iter().find(|h| h.depot_file == f.depot_file) else {
            continue;
        };
        if have.head_type != f.file_type || have.head_md5.is_empty() {
            continue;
        }
        let Some(local) = f.client_file.as_deref().map(|c| local_of(place, c)) else {
            continue;
        };
        let t = have.head_type.as_ref().map(client_type).unwrap_or("0");
        let ask = Message::new()
            .with("path", &local)
            .with("type", t)
            .with("digest", have.head_md5.to_uppercase())
            .with("digestType", "md5")
            .with("confirm", CHECKED)
            .with("func", "client-CheckFile");
        let reply = cmd.ask(&ask, CHECKED).await?;
        if reply.text("status").as_deref() == Some("same") {
            keep.push(f);
        }
    }
    Ok(keep)
}

/// A reverted file's record (tagged) or line (untagged).
fn announce(cmd: &mut Cmd, f: &FileInfo, local: &str) {
    let action = f.action.unwrap_or(FileAction::Edit);
    let added = f.have_rev == 0;
    let rev = if added {
        "none".to_string()
    } else {
        f.have_rev.to_string()
    };
    let outcome = if added { "abandoned" } else { "reverted" };
    if cmd.tagged {
        cmd.stat([
            ("depotFile", f.depot_file.to_string()),
            ("clientFile", local.to_string()),
            ("haveRev", rev),
            ("oldAction", action.as_str().to_string()),
            ("action", outcome.to_string()),
        ]);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("depotFile", f.depot_file.as_str())
                .text("#")
                .arg("haveRev", rev)
                .text(" - was ")
                .arg("action", action.as_str())
                .text(", ")
                .arg("outcome", outcome),
        );
    }
}
