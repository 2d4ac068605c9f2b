//! `add`, `edit`, `delete`, `opened`, `reopen` and `move`: opening files in the caller's
//! workspace through the service's `open`, with the client's own part done by its callbacks
//! (the type of an added file detected by the client, an edited file made writable, a deleted
//! file removed, a moved file renamed). The service opens all of a command's files or none;
//! the client's files are touched only after it did.

use crate::client_ops;
use crate::cmd::{Cmd, CmdError, CmdResult, usage};
use crate::commands::workspace::{Work, change_arg, escape};
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeRef, FileAction, FileType, TypeChange};
use keel_service::command as rows;
use keel_service::{FileInfo, FileOutcome, OpenAction, OpenRequest};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "add",
        row: rows::OPEN,
        login: true,
        flags: "c: t: n f d I",
        usage: "add [ -c changelist# -d -f -I -n -t filetype ] file ...",
        run: |c| Box::pin(add(c)),
    },
    Command {
        name: "edit",
        row: rows::OPEN,
        login: true,
        flags: "c: t: k n",
        usage: "edit [ -c changelist# -k -n -t filetype ] file ...",
        run: |c| Box::pin(edit(c)),
    },
    Command {
        name: "delete",
        row: rows::OPEN,
        login: true,
        flags: "c: k n v",
        usage: "delete [ -c changelist# -k -n -v ] file ...",
        run: |c| Box::pin(delete(c)),
    },
    Command {
        name: "opened",
        row: rows::OPENED,
        login: true,
        flags: "a c: u: C: m: s",
        usage: "opened [ -a -c changelist# -C client -u user -m max -s ] [ file ... ]",
        run: |c| Box::pin(opened(c)),
    },
    Command {
        name: "reopen",
        row: rows::REOPEN,
        login: true,
        flags: "c: t:",
        usage: "reopen [ -c changelist# ] [ -t filetype ] file ...",
        run: |c| Box::pin(reopen(c)),
    },
    Command {
        name: "move",
        row: rows::MOVE,
        login: true,
        flags: "c: f k n r t:",
        usage: "move [ -c changelist# -f -k -n -t filetype ] from to",
        run: |c| Box::pin(move_file(c)),
    },
];

/// The revision a file opened as `info` will be when submitted (`#1` for a new add), or the
/// one it was opened at (edit, delete), as P4 clients show it.
pub fn work_rev(info: &FileInfo) -> u32 {
    match info.action {
        Some(
            FileAction::Add | FileAction::Branch | FileAction::MoveAdd | FileAction::Integrate,
        ) if info.have_rev == 0 => info.head_rev + 1,
        _ if info.have_rev > 0 => info.have_rev,
        _ => info.head_rev,
    }
}

fn type_flag(value: Option<&str>) -> Result<Option<TypeChange>, CmdError> {
    value
        .map(|t| TypeChange::parse(t).map_err(|e| usage(format!("-t {t}: {e}"))))
        .transpose()
}

/// Sends the line (or tagged record) for one file `add`, `edit` or `delete` opened.
pub(crate) fn report_opened(cmd: &mut Cmd, work: &Work, info: &FileInfo) {
    let action = info.action.unwrap_or(FileAction::Edit);
    let rev = work_rev(info);
    let local = info
        .client_file
        .as_deref()
        .map(|rel| work.local_of_rel(rel))
        .unwrap_or_default();
    let outcome = info.outcome.unwrap_or(FileOutcome::Opened);
    if cmd.tagged {
        let mut fields = vec![
            ("depotFile", info.depot_file.to_string()),
            ("clientFile", local),
            ("workRev", rev.to_string()),
            ("action", action.to_string()),
            ("type", info.file_type.unwrap_or(FileType::TEXT).to_string()),
        ];
        if outcome == FileOutcome::AlreadyOpened {
            fields.push(("alreadyOpened", String::new()));
        }
        cmd.stat(fields);
        return;
    }
    let verb = match outcome {
        FileOutcome::AlreadyOpened => "currently opened for",
        _ => "opened for",
    };
    cmd.report(
        Report::new(Severity::Info, Generic::None, 0)
            .arg("depotFile", info.depot_file.as_str())
            .text(format!("#{rev} - {verb} {action}")),
    );
}

async fn add(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("add").expect("add is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!(
            "Missing file arguments.\nUsage: {}",
            command.usage
        )));
    }
    let change = change_arg(flags.value('c'))?.unwrap_or_default();
    let file_type = type_flag(flags.value('t'))?;
    let work = Work::load(cmd).await?;
    let force = flags.has('f');
    // Each argument: the service's syntax and the local file the client checks.
    let mut files = Vec::with_capacity(flags.rest.len());
    for arg in &flags.rest {
        let keel = if force {
            let escaped = if arg.starts_with("//") {
                arg.clone()
            } else {
                escape(arg)
            };
            work.place.to_keel(&escaped)?
        } else {
            if arg.contains(['@', '#', '*']) || arg.contains("...") || arg.contains("%%") {
                return Err(CmdError::Report(Report::failed(
                    Generic::Usage,
                    crate::cmd::number::USAGE,
                    format!(
                        "Can't add filenames with wildcards [@#%*] in them.\nUse -f option to \
                         force add. ({arg})"
                    ),
                )));
            }
            work.place.to_keel(arg)?
        };
        let local = work.local_of_arg(&keel).ok_or_else(|| {
            CmdError::Report(Report::failed(
                Generic::Context,
                crate::cmd::number::USAGE,
                format!("{arg} - file(s) not in client view."),
            ))
        })?;
        files.push((keel, local));
    }
    // The client detects each file's type (and says itself when one is missing).
    let asked: Vec<(String, String)> = files
        .iter()
        .enumerate()
        .map(|(i, (_, local))| (i.to_string(), local.clone()))
        .collect();
    let checked = client_ops::check_files(cmd, &asked).await?;
    let mut types: Vec<Option<FileType>> = vec![None; files.len()];
    let mut refused = vec![true; files.len()];
    for c in checked {
        if let Ok(i) = c.key.parse::<usize>()
            && i < files.len()
        {
            refused[i] = false;
            types[i] = Some(FileType::parse(&c.type_name).unwrap_or(FileType::TEXT));
        }
    }
    if refused.iter().any(|r| *r) {
        // The client said why (a directory, a special file, an ignored name); nothing opened.
        return Err(CmdError::Report(Report::failed(
            Generic::NotYet,
            crate::cmd::number::USAGE,
            "No files opened: the client refused some of them (see above).",
        )));
    }
    let req = OpenRequest {
        files: files.iter().map(|(k, _)| k.clone()).collect(),
        change,
        file_type,
        add_types: types,
    };
    let preview = flags.has('n');
    let opened = cmd
        .call(move |svc, caller| match preview {
            true => svc.open_preview(caller, OpenAction::Add, req),
            false => svc.open(caller, OpenAction::Add, req),
        })
        .await?
        .map_err(open_error)?;
    for info in &opened {
        report_opened(cmd, &work, info);
    }
    Ok(())
}

/// An open refusal as the client shows it.
pub fn open_error(e: keel_service::OpenError) -> CmdError {
    use keel_service::OpenError as E;
    let generic = match e {
        E::Service(s) => return CmdError::from(s),
        E::NoSuchFiles { .. } | E::NotOnClient { .. } | E::NotInView { .. } => Generic::Unknown,
        E::AlreadyOpened { .. } | E::MoveTargetOpened { .. } => Generic::NotYet,
        E::AddExisting { .. } | E::MoveOntoExisting { .. } => Generic::Illegal,
        _ => Generic::Usage,
    };
    let e = &e;
    CmdError::Report(Report::failed(
        generic,
        crate::cmd::number::SERVICE,
        e.to_string(),
    ))
}

async fn edit_or_delete(cmd: &mut Cmd, name: &'static str, action: OpenAction) -> CmdResult {
    let command = dispatch::find(name).expect("in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!(
            "Missing file arguments.\nUsage: {}",
            command.usage
        )));
    }
    let change = change_arg(flags.value('c'))?.unwrap_or_default();
    let file_type = type_flag(flags.value('t'))?;
    let work = Work::load(cmd).await?;
    let files = work.place.args_or_all(&flags.rest)?;
    let req = OpenRequest {
        files,
        change,
        file_type,
        add_types: Vec::new(),
    };
    let preview = flags.has('n');
    let opened = cmd
        .call(move |svc, caller| match preview {
            true => svc.open_preview(caller, action, req),
            false => svc.open(caller, action, req),
        })
        .await?
        .map_err(open_error)?;
    // A preview touches no client file.
    let keep = flags.has('k') || preview;
    for info in &opened {
        if !keep
            && info.outcome == Some(FileOutcome::Opened)
            && let Some(rel) = &info.client_file
        {
            let local = work.local_of_rel(rel);
            let t = info.file_type.unwrap_or(FileType::TEXT);
            match action {
                OpenAction::Delete => client_ops::delete(cmd, &local, t),
                _ => client_ops::chmod(cmd, &local, t, "rw"),
            }
        }
        report_opened(cmd, &work, info);
    }
    Ok(())
}

async fn edit(cmd: &mut Cmd) -> CmdResult {
    edit_or_delete(cmd, "edit", OpenAction::Edit).await
}

async fn delete(cmd: &mut Cmd) -> CmdResult {
    edit_or_delete(cmd, "delete", OpenAction::Delete).await
}

/// `default change` or `change N`, as `opened` words it.
fn change_words(change: ChangeRef) -> String {
    match change {
        ChangeRef::Default => "default change".to_string(),
        ChangeRef::Numbered(n) => format!("change {n}"),
    }
}

async fn opened(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("opened").expect("opened is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = change_arg(flags.value('c'))?;
    let user = flags.value('u').unwrap_or_default().to_string();
    let other = flags.value('C').map(str::to_string);
    let max: usize = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => usize::MAX,
    };
    let all = flags.has('a') || other.is_some();
    let mine = cmd.caller.workspace.clone();
    // File arguments map through the caller's workspace when it has one.
    let work = match Work::load(cmd).await {
        Ok(w) => Some(w),
        // `-a` lists every workspace's files: the caller needs none of its own.
        Err(_) if all => None,
        Err(e) => return Err(e),
    };
    let files = match &work {
        Some(w) if !flags.rest.is_empty() => flags
            .rest
            .iter()
            .map(|a| w.place.to_keel(a))
            .collect::<Result<Vec<_>, _>>()?,
        _ => flags.rest.clone(),
    };
    let listed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.opened(caller, &files, all, &user, change, &mut |f| {
                let wanted = other.as_ref().is_none_or(|c| *c == f.workspace);
                if wanted && out.len() < max {
                    out.push(f);
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    if listed.is_empty() {
        // A script reading records (`p4 -G opened ...`, as git-p4 checks for opened files)
        // gets no records and no warning.
        // Nor does a plain tagged `opened`, no flags or files (P4Python's `run_opened()` in
        // a workspace with nothing open returns an empty list, raising nothing).
        if cmd.tagged_connection || (cmd.tagged && cmd.args.is_empty()) {
            return Ok(());
        }
        let what = if flags.rest.is_empty() {
            "File(s) not opened on this client.".to_string()
        } else {
            format!(
                "{} - file(s) not opened on this client.",
                flags.rest.join(" ")
            )
        };
        cmd.report(
            Report::new(
                Severity::Warn,
                Generic::Empty,
                crate::cmd::number::NOT_OPENED,
            )
            .text(what),
        );
        return Ok(());
    }
    for f in listed {
        let action = f.action.unwrap_or(FileAction::Edit);
        let t = f.file_type.unwrap_or(FileType::TEXT);
        let rev = work_rev(&f);
        if cmd.tagged {
            let mut fields = vec![("depotFile", f.depot_file.to_string())];
            if let Some(rel) = &f.client_file {
                fields.push(("clientFile", format!("//{}/{}", f.workspace, rel)));
            }
            fields.extend([
                ("rev", rev.to_string()),
                (
                    "haveRev",
                    if f.have_rev > 0 {
                        f.have_rev.to_string()
                    } else {
                        "none".to_string()
                    },
                ),
                ("action", action.to_string()),
                ("change", f.change.to_string()),
                ("type", t.to_string()),
                ("user", f.user.clone()),
                ("client", f.workspace.clone()),
            ]);
            if let Some(m) = &f.move_file {
                fields.push(("movedFile", m.to_string()));
            }
            cmd.stat(fields);
        } else {
            let by = if f.workspace != mine {
                format!(" by {}@{}", f.user, f.workspace)
            } else {
                String::new()
            };
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .arg("depotFile", f.depot_file.as_str())
                    .text(format!(
                        "#{rev} - {action} {} ({t}){by}",
                        change_words(f.change)
                    )),
            );
        }
    }
    Ok(())
}

async fn reopen(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("reopen").expect("reopen is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = change_arg(flags.value('c'))?;
    let file_type = type_flag(flags.value('t'))?;
    if flags.rest.is_empty() || (change.is_none() && file_type.is_none()) {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let work = Work::load(cmd).await?;
    let files = work.place.args_or_all(&flags.rest)?;
    let reopened = cmd
        .call(move |svc, caller| svc.reopen(caller, &files, change, file_type))
        .await?
        .map_err(open_error)?;
    for f in &reopened {
        let rev = work_rev(f);
        let t = f.file_type.unwrap_or(FileType::TEXT);
        if cmd.tagged {
            cmd.stat([
                ("depotFile", f.depot_file.to_string()),
                ("workRev", rev.to_string()),
                ("action", f.action.unwrap_or(FileAction::Edit).to_string()),
                ("change", f.change.to_string()),
                ("type", t.to_string()),
            ]);
            continue;
        }
        let mut what = Vec::new();
        if change.is_some() {
            what.push(change_words(f.change));
        }
        if file_type.is_some() {
            what.push(format!("type {t}"));
        }
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("depotFile", f.depot_file.as_str())
                .text(format!("#{rev} - reopened; {}", what.join("; "))),
        );
    }
    Ok(())
}

async fn move_file(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("move").expect("move is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let [from, to] = flags.rest.as_slice() else {
        return Err(usage(format!("Usage: {}", command.usage)));
    };
    let preview = flags.has('n');
    let change = change_arg(flags.value('c'))?.unwrap_or_default();
    let file_type = type_flag(flags.value('t'))?;
    let work = Work::load(cmd).await?;
    let (from_k, to_k) = (work.place.to_keel(from)?, work.place.to_keel(to)?);
    let from_local = work.local_of_arg(&from_k);
    let to_local = work.local_of_arg(&to_k);
    let (f2, t2) = (from_k.clone(), to_k.clone());
    let moved = cmd
        .call(move |svc, caller| {
            if preview {
                return svc.move_file_preview(caller, &f2, &t2, change);
            }
            let moved = svc.move_file(caller, &f2, &t2, change)?;
            match file_type {
                Some(t) => {
                    let target: Vec<String> = moved
                        .iter()
                        .filter(|m| {
                            m.action == Some(FileAction::MoveAdd)
                                || m.action == Some(FileAction::Add)
                        })
                        .map(|m| m.depot_file.to_string())
                        .collect();
                    svc.reopen(caller, &target, None, Some(t))?;
                    Ok(moved)
                }
                None => Ok(moved),
            }
        })
        .await?
        .map_err(open_error)?;
    if !flags.has('k')
        && !preview
        && let (Some(a), Some(b)) = (&from_local, &to_local)
    {
        let t = moved
            .iter()
            .find_map(|m| m.file_type)
            .unwrap_or(FileType::TEXT);
        // The client prints why when it cannot (the target exists, the source is missing).
        client_ops::rename(cmd, a, b, t).await?;
    }
    for m in &moved {
        if matches!(m.action, Some(FileAction::MoveDelete)) {
            continue;
        }
        let rev = work_rev(m);
        let source = m
            .move_file
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_else(|| from_k.clone());
        if cmd.tagged {
            cmd.stat([
                ("depotFile", m.depot_file.to_string()),
                (
                    "clientFile",
                    m.client_file
                        .as_deref()
                        .map(|r| work.local_of_rel(r))
                        .unwrap_or_default(),
                ),
                ("workRev", rev.to_string()),
                (
                    "action",
                    m.action.unwrap_or(FileAction::MoveAdd).to_string(),
                ),
                ("fromFile", source),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .arg("depotFile", m.depot_file.as_str())
                    .text(format!("#{rev} - moved from "))
                    .arg("fromFile", source),
            );
        }
    }
    Ok(())
}
