//! `tag` and `labelsync` (a label's files), `protect -o/-i` (the protections table as a form
//! with `specdef`), `groups [-u user]` and `group -o/-i/-d`.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs;
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Field, Kind, SpecDef, lines};
use keel_core::{GroupLimits, Limit};
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
    Command {
        name: "group",
        row: rows::SAVE_GROUP,
        login: true,
        flags: "o i d a A F",
        usage: "group [ -d | -o | -i ] groupname",
        run: |c| Box::pin(group(c)),
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

/// The group form.
pub const GROUP: SpecDef = SpecDef {
    kind: "group",
    comment: "# A Keel group specification.\n#\n#  Group:       The group name.\n#  \
              MaxResults:  Rows a command may return (unset, unlimited or a number).\n#  \
              MaxScanRows: Rows a command may scan.\n#  MaxLockTime: Milliseconds a command \
              may hold the writer.\n#  MaxOpenFiles: Files one command may open.\n#  \
              Timeout:     Seconds a login ticket lasts.\n#  Subgroups:   Groups within \
              this group.\n#  Owners:      Users who may edit this group.\n#  Users:       \
              The group's members.\n\n",
    fields: &[
        group_field("Group", 401, Kind::Word, true),
        group_field("MaxResults", 402, Kind::Word, false),
        group_field("MaxScanRows", 403, Kind::Word, false),
        group_field("MaxLockTime", 407, Kind::Word, false),
        group_field("MaxOpenFiles", 413, Kind::Word, false),
        group_field("Timeout", 406, Kind::Word, false),
        group_field("Subgroups", 404, Kind::LineList, false),
        group_field("Owners", 408, Kind::LineList, false),
        group_field("Users", 405, Kind::LineList, false),
    ],
};

const fn group_field(name: &'static str, code: u16, kind: Kind, rq: bool) -> Field {
    Field {
        name,
        code,
        kind,
        required: rq,
        read_only: false,
        len: 32,
        values: "",
    }
}

fn group_values(g: &keel_service::GroupSpec) -> crate::wire::specdef::Values {
    let l = &g.limits;
    vec![
        ("Group", vec![g.name.clone()]),
        ("MaxResults", vec![l.max_results.to_string()]),
        ("MaxScanRows", vec![l.max_scan_rows.to_string()]),
        ("MaxLockTime", vec![l.max_lock_time.to_string()]),
        ("MaxOpenFiles", vec![l.max_open_files.to_string()]),
        ("Timeout", vec![l.timeout.to_string()]),
        ("Subgroups", g.subgroups.clone()),
        ("Owners", g.owners.clone()),
        ("Users", g.users.clone()),
    ]
}

fn limit(form: &crate::wire::specdef::Values, field: &str) -> Result<Limit, CmdError> {
    let text = crate::wire::specdef::one(form, field);
    Limit::parse(text.trim()).map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Usage,
            number::FORM,
            format!("Error in group specification: {field} '{text}': {e}"),
        ))
    })
}

async fn group(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("group").expect("group is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['o', 'i', 'd'].iter().filter(|f| flags.has(**f)).count();
    let name = flags.rest.first().cloned().unwrap_or_default();
    if modes != 1 || flags.rest.len() > 1 || (name.is_empty() && !flags.has('i')) {
        return Err(usage(format!(
            "group: use -o, -i or -d with a group name (this server edits no forms itself).\n\
             Usage: {}",
            command.usage
        )));
    }
    if flags.has('d') {
        let target = name.clone();
        cmd.call(move |svc, caller| svc.delete_group(caller, &target))
            .await?
            .map_err(|e| refused(Generic::Usage, e))?;
        cmd.info(format!("Group {name} deleted."));
        return Ok(());
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &GROUP).await?;
        let name = crate::wire::specdef::one(&form, "Group");
        let spec = keel_service::GroupSpec {
            name: name.clone(),
            users: lines(&form, "Users"),
            subgroups: lines(&form, "Subgroups"),
            owners: lines(&form, "Owners"),
            limits: GroupLimits {
                max_results: limit(&form, "MaxResults")?,
                max_scan_rows: limit(&form, "MaxScanRows")?,
                max_lock_time: limit(&form, "MaxLockTime")?,
                max_open_files: limit(&form, "MaxOpenFiles")?,
                timeout: limit(&form, "Timeout")?,
            },
            updated: 0,
        };
        cmd.call(move |svc, caller| svc.save_group(caller, spec))
            .await?
            .map_err(|e| refused(Generic::Usage, e))?;
        cmd.info(format!("Group {name} saved."));
        return Ok(());
    }
    let lookup = name.clone();
    let found = cmd
        .call(move |svc, caller| svc.get_group(caller, &lookup))
        .await?;
    let spec = match found {
        Ok(g) => g,
        Err(keel_service::AccessError::NoSuchGroup { .. }) => keel_service::GroupSpec {
            name,
            users: Vec::new(),
            subgroups: Vec::new(),
            owners: Vec::new(),
            limits: GroupLimits::default(),
            updated: 0,
        },
        Err(e) => return Err(refused(Generic::Protect, e)),
    };
    forms::send(cmd, &GROUP, &group_values(&spec));
    Ok(())
}
