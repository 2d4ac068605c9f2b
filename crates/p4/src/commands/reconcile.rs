//! `reconcile` (open for add, edit and delete what was done in the workspace outside Keel),
//! `status` (what `reconcile` would open, worded as a status) and `clean` (`reconcile -w`:
//! the workspace brought back to its have list). The comparison is the client's, through
//! the callbacks of [`workspace_scan`](super::workspace_scan); the opening is the service's
//! `open`, all files checked (rights, view, names) before any is opened.

use crate::client_ops;
use crate::cmd::{Cmd, CmdError, CmdResult, number};
use crate::commands::open::{open_error, report_opened, work_rev};
use crate::commands::sync;
use crate::commands::workspace::{Work, change_arg};
use crate::commands::workspace_scan::{Found, ScanOptions, Want, scan};
use crate::dispatch::{self, Command};
use crate::flags::Flags;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeRef, FileAction, FileType};
use keel_service::command as rows;
use keel_service::{FileInfo, OpenAction, OpenRequest};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "reconcile",
        row: rows::OPEN,
        login: true,
        flags: "a e d n f I w k c:",
        usage: "reconcile [ -a -e -d -f -I -n -w ] [ -c changelist# ] [ file ... ]\n\
                reconcile -k [ -n ] [ file ... ]",
        run: |c| Box::pin(reconcile(c)),
    },
    Command {
        name: "status",
        row: rows::OPEN,
        login: true,
        flags: "a e d f I",
        usage: "status [ -a -e -d -f -I ] [ file ... ]",
        run: |c| Box::pin(status(c)),
    },
    Command {
        name: "clean",
        row: rows::SYNC,
        login: true,
        flags: "a e d n I",
        usage: "clean [ -a -e -d -I -n ] [ file ... ]",
        run: |c| Box::pin(clean(c)),
    },
];

/// The scan every one of the three commands starts with.
async fn scan_for(
    cmd: &mut Cmd,
    flags: &Flags,
    work: &Work,
    moves: bool,
) -> Result<Found, CmdError> {
    let args = sync::workspace_args(&work.place, &flags.rest)?;
    let options = ScanOptions {
        want: Want::of(flags.has('a'), flags.has('e'), flags.has('d')),
        no_ignore: flags.has('I'),
        wildcard_names: flags.has('f'),
        moves,
    };
    let found = scan(cmd, work, &args, &options).await?;
    for local in &found.wildcards {
        cmd.report(
            Report::new(Severity::Warn, Generic::Usage, number::USAGE)
                .arg("path", local.as_str())
                .text(
                    " - can't reconcile a file name with wildcards [@#%*] in it; use -f to add \
                     it with the characters escaped.",
                ),
        );
    }
    Ok(found)
}

/// The warning of a scan that found nothing.
fn nothing(cmd: &mut Cmd) {
    cmd.report(
        Report::new(Severity::Warn, Generic::Empty, number::NO_RECONCILE)
            .text("No file(s) to reconcile."),
    );
}

/// The three open requests of what was found (adds with the types the client detects).
async fn requests(
    cmd: &mut Cmd,
    found: &Found,
    change: ChangeRef,
) -> Result<Vec<(OpenAction, OpenRequest)>, CmdError> {
    let mut out = Vec::new();
    if !found.add.is_empty() {
        let asked: Vec<(String, String)> = found
            .add
            .iter()
            .enumerate()
            .map(|(i, f)| (i.to_string(), f.local.clone()))
            .collect();
        let mut types: Vec<Option<FileType>> = vec![None; found.add.len()];
        for c in client_ops::check_files(cmd, &asked).await? {
            if let Some(t) = c.key.parse::<usize>().ok().and_then(|i| types.get_mut(i)) {
                *t = Some(FileType::parse(&c.type_name).unwrap_or(FileType::TEXT));
            }
        }
        out.push((
            OpenAction::Add,
            OpenRequest {
                files: found.add.iter().map(|f| f.client_path.clone()).collect(),
                change,
                file_type: None,
                add_types: types,
            },
        ));
    }
    for (action, files) in [
        (OpenAction::Edit, &found.edit),
        (OpenAction::Delete, &found.delete),
    ] {
        if files.is_empty() {
            continue;
        }
        out.push((
            action,
            OpenRequest {
                files: files.iter().map(|f| f.depot_file.to_string()).collect(),
                change,
                file_type: None,
                add_types: Vec::new(),
            },
        ));
    }
    Ok(out)
}

/// The moves found, as `(from, to)` for the service's `open_moved`.
fn move_pairs(found: &Found) -> Vec<(String, String)> {
    found
        .moves
        .iter()
        .map(|(from, to)| (from.depot_file.to_string(), to.client_path.clone()))
        .collect()
}

/// Checks every request and move as the open would (rights, view, names, the change), then
/// opens them unless `preview`; what was (or would be) opened. A refusal of any opens nothing.
async fn open_all(
    cmd: &mut Cmd,
    reqs: Vec<(OpenAction, OpenRequest)>,
    moves: Vec<(String, String)>,
    change: ChangeRef,
    preview: bool,
) -> Result<Vec<FileInfo>, CmdError> {
    let checked = reqs.clone();
    let checked_moves = moves.clone();
    let previewed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            for (action, req) in checked {
                out.extend(svc.open_preview(caller, action, req)?);
            }
            out.extend(svc.open_moved(caller, &checked_moves, change, true)?);
            Ok(out)
        })
        .await?
        .map_err(open_error)?;
    if preview {
        return Ok(previewed);
    }
    cmd.call(move |svc, caller| {
        let mut out = Vec::new();
        for (action, req) in reqs {
            out.extend(svc.open(caller, action, req)?);
        }
        out.extend(svc.open_moved(caller, &moves, change, false)?);
        Ok(out)
    })
    .await?
    .map_err(open_error)
}

async fn reconcile(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("reconcile").expect("reconcile is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.has('w') {
        return clean_with(cmd, &flags).await;
    }
    if flags.has('k') {
        return keep(cmd, &flags).await;
    }
    let change = change_arg(flags.value('c'))?.unwrap_or_default();
    let preview = flags.has('n');
    let work = Work::load(cmd).await?;
    let found = scan_for(cmd, &flags, &work, true).await?;
    if found.is_empty() {
        nothing(cmd);
        return Ok(());
    }
    let reqs = requests(cmd, &found, change).await?;
    let opened = open_all(cmd, reqs, move_pairs(&found), change, preview).await?;
    for info in &opened {
        if !preview
            && matches!(info.action, Some(FileAction::Edit | FileAction::MoveAdd))
            && let Some(rel) = &info.client_file
        {
            // Opened files are writable (the edited file most likely is already).
            let t = info.file_type.unwrap_or(FileType::TEXT);
            client_ops::chmod(cmd, &work.local_of_rel(rel), t, "rw");
        }
        report_opened(cmd, &work, info);
    }
    Ok(())
}

async fn status(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("status").expect("status is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let work = Work::load(cmd).await?;
    let found = scan_for(cmd, &flags, &work, true).await?;
    if found.is_empty() {
        nothing(cmd);
        return Ok(());
    }
    let reqs = requests(cmd, &found, ChangeRef::Default).await?;
    let would = open_all(cmd, reqs, move_pairs(&found), ChangeRef::Default, true).await?;
    for info in &would {
        if cmd.tagged {
            report_opened(cmd, &work, info);
            continue;
        }
        let local = info
            .client_file
            .as_deref()
            .map(|rel| work.local_of_rel(rel))
            .unwrap_or_default();
        let action = info.action.unwrap_or(FileAction::Edit);
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("clientFile", local)
                .text(format!(" - reconcile to {action} "))
                .arg("depotFile", info.depot_file.as_str())
                .text(format!("#{}", work_rev(info))),
        );
    }
    Ok(())
}

/// `reconcile -k`: the files the workspace has, not on its have list, that the depot has at
/// head, recorded in the have list at that revision without being opened or transferred
/// (as `sync -k` records them); `-n` lists them only.
async fn keep(cmd: &mut Cmd, flags: &Flags) -> CmdResult {
    let work = Work::load(cmd).await?;
    let args = sync::workspace_args(&work.place, &flags.rest)?;
    let options = ScanOptions {
        want: Want::of(true, false, false),
        no_ignore: flags.has('I'),
        wildcard_names: flags.has('f'),
        moves: false,
    };
    let found = scan(cmd, &work, &args, &options).await?;
    let candidates: Vec<(String, String)> = found
        .add
        .into_iter()
        .map(|f| (f.client_path, f.local))
        .collect();
    // Each new file's head revision, where the depot has one that is not a deletion.
    let in_depot = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            for (client_path, local) in candidates {
                let mut head = None;
                match svc.files(
                    caller,
                    std::slice::from_ref(&client_path),
                    Default::default(),
                    &mut |f| {
                        head = Some(f);
                        Ok(())
                    },
                ) {
                    Ok(()) => {}
                    Err(keel_service::ServiceError::NoSuchFiles { .. }) => continue,
                    Err(e) => return Err(e),
                }
                if let Some(f) =
                    head.filter(|f| f.head_rev > 0 && !f.head_action.is_some_and(|a| a.is_delete()))
                {
                    out.push((f, local));
                }
            }
            Ok(out)
        })
        .await??;
    if in_depot.is_empty() {
        nothing(cmd);
        return Ok(());
    }
    if flags.has('n') {
        for (f, local) in &in_depot {
            if cmd.tagged {
                cmd.stat([
                    ("depotFile", f.depot_file.to_string()),
                    ("clientFile", local.clone()),
                    ("rev", f.head_rev.to_string()),
                    ("action", "updated".to_string()),
                ]);
            } else {
                cmd.report(
                    Report::new(Severity::Info, Generic::None, 0)
                        .arg("depotFile", f.depot_file.as_str())
                        .text(format!("#{} - updating ", f.head_rev))
                        .arg("clientFile", local.as_str()),
                );
            }
        }
        return Ok(());
    }
    // The have list written by sync itself (`sync -k` of exactly these revisions).
    cmd.args = in_depot
        .iter()
        .map(|(f, _)| format!("{}#{}", f.depot_file, f.head_rev))
        .collect();
    sync::run(cmd, true).await
}

async fn clean(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("clean").expect("clean is in the table");
    let flags = dispatch::flags(cmd, command)?;
    clean_with(cmd, &flags).await
}

/// `clean` and `reconcile -w`: new files deleted from the workspace, edited and missing
/// files written again at the revision the workspace has.
async fn clean_with(cmd: &mut Cmd, flags: &Flags) -> CmdResult {
    let preview = flags.has('n');
    let work = Work::load(cmd).await?;
    let found = scan_for(cmd, flags, &work, false).await?;
    if found.is_empty() {
        nothing(cmd);
        return Ok(());
    }
    for f in &found.add {
        let depot = work
            .view()
            .and_then(|v| v.translate_back(&f.client_path))
            .unwrap_or_else(|| f.client_path.clone());
        if !preview {
            client_ops::delete(cmd, &f.local, FileType::TEXT);
        }
        if cmd.tagged {
            cmd.stat([
                ("depotFile", depot),
                ("clientFile", f.local.clone()),
                ("rev", "none".to_string()),
                ("action", "deleted".to_string()),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .arg("depotFile", depot)
                    .text("#none - deleted as ")
                    .arg("clientFile", f.local.as_str()),
            );
        }
    }
    let restore: Vec<&FileInfo> = found.edit.iter().chain(&found.delete).collect();
    if restore.is_empty() {
        return Ok(());
    }
    if preview {
        for f in restore {
            let local = f
                .client_file
                .as_deref()
                .map(|rel| work.local_of_rel(rel))
                .unwrap_or_default();
            if cmd.tagged {
                cmd.stat([
                    ("depotFile", f.depot_file.to_string()),
                    ("clientFile", local),
                    ("rev", f.have_rev.to_string()),
                    ("action", "refreshed".to_string()),
                ]);
            } else {
                cmd.report(
                    Report::new(Severity::Info, Generic::None, 0)
                        .arg("depotFile", f.depot_file.as_str())
                        .text(format!("#{} - refreshing ", f.have_rev))
                        .arg("clientFile", local),
                );
            }
        }
        return Ok(());
    }
    // Edited files are overwritten: clean means it, so the client's refusal to clobber a
    // writable file is lifted for them first.
    for f in &found.edit {
        if let Some(rel) = &f.client_file {
            let t = f.head_type.unwrap_or(FileType::TEXT);
            client_ops::chmod(cmd, &work.local_of_rel(rel), t, "ro");
        }
    }
    // The have revisions written again by sync itself (its transfer and its wording).
    let mut args = vec!["-f".to_string()];
    args.extend(
        restore
            .iter()
            .map(|f| format!("{}#{}", f.depot_file, f.have_rev)),
    );
    cmd.args = args;
    sync::run(cmd, false).await
}
