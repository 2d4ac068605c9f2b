//! `monitor show [-a -l -e]`: the commands running on the server, as the server's monitor
//! knows them (the gate's [`running`](keel_service::command::CommandGate::running)), the same
//! list `keel monitor show` reads. `-a` adds the arguments, `-l` the arguments unabridged, `-e`
//! the workspace, host and client program; each needs the right `keel monitor show -a` needs.
//! `monitor terminate ID...` marks running commands terminated, as `keel monitor terminate`
//! does (super users): each stops at its next check and is logged as terminated.

use crate::cmd::{Cmd, CmdResult, number, usage};
use crate::dispatch::{self, Command};
use crate::flags::Flags;
use crate::wire::report::{Generic, Report, Severity};
use keel_service::MonitorAccess;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "monitor",
    row: rows::MONITOR_SHOW,
    login: true,
    flags: "",
    usage: "monitor show [ -a -l -e ] | monitor terminate id...",
    run: |c| Box::pin(monitor(c)),
}];

/// Most characters of a command's arguments shown by `-a` without `-l`.
const ARGS_SHOWN: usize = 80;

async fn monitor(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("monitor").expect("monitor is in the table");
    let (verb, rest) = match cmd.args.split_first() {
        Some((verb, rest)) => (verb.clone(), rest.to_vec()),
        None => {
            return Err(usage(format!(
                "Missing subcommand.\nUsage: {}",
                command.usage
            )));
        }
    };
    match verb.as_str() {
        "show" => {}
        "terminate" => return terminate(cmd, &rest, command.usage).await,
        _ => {
            return Err(usage(format!(
                "monitor {verb} is not supported by this server: only show and terminate \
                 are.\nUsage: {}",
                command.usage
            )));
        }
    }
    let flags = Flags::parse(&rest, "a l e")
        .map_err(|e| usage(format!("{e}\nUsage: {}", command.usage)))?;
    if !flags.rest.is_empty() {
        return Err(usage(format!(
            "{}: monitor show takes no arguments.\nUsage: {}",
            flags.rest.join(" "),
            command.usage
        )));
    }
    let (all, long, extra) = (flags.has('a'), flags.has('l'), flags.has('e'));
    if all || long || extra {
        cmd.call(|svc, caller| svc.may_monitor(caller, MonitorAccess::Details))
            .await??;
    }
    let mut running = cmd.server.gate.running();
    running.sort_by_key(|r| r.id);
    for r in running {
        let status = if r.terminated { "T" } else { "R" };
        let secs = r.elapsed.as_secs();
        let time = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
        let args = match (all, long) {
            (_, true) => r.args.clone(),
            (true, false) => r.args.chars().take(ARGS_SHOWN).collect(),
            (false, false) => String::new(),
        };
        if cmd.tagged {
            let mut fields = vec![
                ("id", r.id.to_string()),
                ("status", status.to_string()),
                ("owner", r.user.clone()),
                ("time", time),
                ("command", r.command.clone()),
            ];
            if all || long {
                fields.push(("args", args));
            }
            if extra {
                fields.push(("client", r.workspace.clone()));
                fields.push(("host", r.host.clone()));
                fields.push(("prog", r.program.clone()));
            }
            cmd.stat(fields);
        } else {
            let mut line = format!("{:>6} ", r.id);
            if extra {
                line.push_str(&format!("{} {} {} ", r.program, r.workspace, r.host));
            }
            line.push_str(&format!("{status} {:<8} {time} {}", r.user, r.command));
            if !args.is_empty() {
                line.push(' ');
                line.push_str(&args);
            }
            cmd.info(line);
        }
    }
    Ok(())
}

/// `monitor terminate ID...`: each running command named marked terminated.
async fn terminate(cmd: &mut Cmd, ids: &[String], usage_text: &str) -> CmdResult {
    if ids.is_empty() {
        return Err(usage(format!("Missing id.\nUsage: {usage_text}")));
    }
    let ids = ids
        .iter()
        .map(|id| {
            id.parse::<u64>()
                .map_err(|_| usage(format!("{id}: a command id is a number (see monitor show)")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    cmd.call(|svc, caller| svc.may_monitor(caller, MonitorAccess::Terminate))
        .await??;
    for id in ids {
        match cmd.server.gate.terminate(id, &cmd.caller.user) {
            Some(_) => cmd.info(format!("** process '{id}' marked for termination **")),
            None => cmd.report(
                Report::new(Severity::Failed, Generic::Unknown, number::NO_SUCH)
                    .text(format!("no command {id} is running (see monitor show)")),
            ),
        }
    }
    Ok(())
}
