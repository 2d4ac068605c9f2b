//! `tag` and `labelsync` (a label's files), `protect -o/-i` (the protections table as a form
//! with `specdef`) and `groups [-u user]`.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs;
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Field, Kind, SpecDef, lines};
use keel_service::command as rows;
use keel_service::{LabelEntryAction, LabelFileChange, TagOptions};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "tag",
        row: rows::TAG,
        login: true,
        flags: "d n l: g U",
        usage: "tag [ -d -n ] -l label file[revRange] ...",
        run: |c| Box::pin(tag(c)),
    },
    Command {
        name: "labelsync",
        row: rows::LABELSYNC,
        login: true,
        flags: "a d n q l: g",
        usage: "labelsync [ -n -q ] -l label [ file[revRange] ... ]",
        run: |c| Box::pin(labelsync(c)),
    },
    Command {
        name: "protect",
        row: rows::SAVE_PROTECTIONS,
        login: true,
        flags: "o i",
        usage: "protect [ -o | -i ]",
        run: |c| Box::pin(protect(c)),
    },
    Command {
        name: "groups",
        row: rows::LIST_GROUPS,
        login: true,
        flags: "u: i v m: g",
        usage: "groups [ -m max ] [ -u user ]",
        run: |c| Box::pin(groups(c)),
    },
];

/// The protections form.
pub const PROTECT: SpecDef = SpecDef {
    kind: "protect",
    comment: "# Keel's protections table: one line per grant,\n#  \
              MODE user|group NAME HOST PATH   (a PATH starting with - excludes).\n\n",
    fields: &[Field {
        name: "Protections",
        code: 751,
        kind: Kind::LineList,
        required: false,
        read_only: false,
        len: 64,
        values: "",
    }],
};

fn refused(generic: Generic, e: impl std::fmt::Display) -> CmdError {
    CmdError::Report(Report::failed(generic, number::SERVICE, e.to_string()))
}

/// One label entry changed, as `tag` and `labelsync` print it.
fn send_change(cmd: &mut Cmd, c: &LabelFileChange) {
    let action = match c.action {
        LabelEntryAction::Added => "added",
        LabelEntryAction::Updated => "updated",
        LabelEntryAction::Deleted => "deleted",
    };
    if cmd.tagged {
        cmd.stat([
            ("depotFile", c.depot_file.to_string()),
            ("rev", c.rev.to_string()),
            ("action", action.to_string()),
        ]);
    } else {
        cmd.info(format!("{}#{} - {action}", c.depot_file, c.rev));
    }
}

async fn tag(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("tag").expect("tag is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let Some(label) = flags.value('l').map(str::to_string) else {
        return Err(usage(format!(
            "tag needs -l label.\nUsage: {}",
            command.usage
        )));
    };
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let files: Vec<String> = args.into_iter().map(|a| a.keel).collect();
    let opts = TagOptions {
        delete: flags.has('d'),
        preview: flags.has('n'),
    };
    let changed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.tag(caller, &label, &files, opts, &mut |c| {
                out.push(c);
                Ok(())
            })
            .map(|_| out)
        })
        .await?
        .map_err(|e| refused(Generic::Usage, e))?;
    for c in &changed {
        send_change(cmd, c);
    }
    Ok(())
}

async fn labelsync(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("labelsync").expect("labelsync is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let Some(label) = flags.value('l').map(str::to_string) else {
        return Err(usage(format!(
            "labelsync needs -l label.\nUsage: {}",
            command.usage
        )));
    };
    if flags.has('a') || flags.has('d') {
        return Err(usage(
            "labelsync -a and -d are not supported by this server; use tag (tag -d removes).",
        ));
    }
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let files: Vec<String> = args.into_iter().map(|a| a.keel).collect();
    let preview = flags.has('n');
    let changed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.labelsync(caller, &label, &files, preview, &mut |c| {
                out.push(c);
                Ok(())
            })
            .map(|_| out)
        })
        .await?
        .map_err(|e| refused(Generic::Usage, e))?;
    if !flags.has('q') {
        for c in &changed {
            send_change(cmd, c);
        }
    }
    Ok(())
}

async fn protect(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("protect").expect("protect is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() || flags.has('o') == flags.has('i') {
        return Err(usage(format!(
            "protect: use -o or -i (this server edits no forms itself).\nUsage: {}",
            command.usage
        )));
    }
    if flags.has('o') {
        let table = cmd
            .call(|svc, caller| svc.get_protections(caller))
            .await?
            .map_err(|e| refused(Generic::Protect, e))?;
        forms::send(cmd, &PROTECT, &vec![("Protections", table.lines)]);
        return Ok(());
    }
    let form = forms::receive(cmd, &PROTECT).await?;
    let table: Vec<String> = lines(&form, "Protections")
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    cmd.call(move |svc, caller| svc.save_protections(caller, &table))
        .await?
        .map_err(|e| refused(Generic::Usage, e))?;
    cmd.info("Protections saved.");
    Ok(())
}

async fn groups(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("groups").expect("groups is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max = match flags.value('m') {
        Some(m) => m
            .parse::<usize>()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => usize::MAX,
    };
    let user = flags
        .value('u')
        .map(str::to_string)
        .or_else(|| flags.rest.first().cloned());
    let found = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.list_groups(caller, user.as_deref(), &mut |g| {
                if out.len() < max {
                    out.push(g);
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for g in found {
        if cmd.tagged {
            let mut rec = vec![("group".to_string(), g.name.clone())];
            for (i, u) in g.users.iter().enumerate() {
                rec.push((format!("user{i}"), u.clone()));
            }
            for (i, o) in g.owners.iter().enumerate() {
                rec.push((format!("owner{i}"), o.clone()));
            }
            for (i, s) in g.subgroups.iter().enumerate() {
                rec.push((format!("subgroup{i}"), s.clone()));
            }
            cmd.stat(rec);
        } else {
            cmd.info(&g.name);
        }
    }
    Ok(())
}
