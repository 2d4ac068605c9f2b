//! `configure set [any#]name=value`, `configure unset [any#]name`, `configure show [name |
//! allservers]`: the server settings Keel has (`security`, `auth.tickets.bind`, `keys.hide`,
//! which P4 clients may also call `dm.keys.hide`), over the service's, super users only. A
//! Keel server is one server, so the only server name a setting takes is `any`.

use crate::cmd::{Cmd, CmdError, CmdResult, auth_report, usage};
use crate::dispatch::{self, Command};
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "configure",
    row: rows::CONFIGURE,
    login: true,
    flags: "",
    usage: "configure [ set [ serverName# ]variable=value | unset [ serverName# ]variable | show [ allservers | variable ] ]",
    run: |c| Box::pin(configure(c)),
}];

/// P4 configurable names of Keel's settings that Keel names otherwise.
const P4_NAMES: &[(&str, &str)] = &[("dm.keys.hide", "keys.hide")];

/// The setting `arg` names, without a server prefix (refusing a server other than `any`)
/// and under Keel's name.
fn variable(arg: &str) -> Result<&str, CmdError> {
    let name = match arg.split_once('#') {
        None => arg,
        Some(("any", name)) => name,
        Some((server, _)) => {
            return Err(usage(format!(
                "{server}#: a Keel server's settings apply to every server ('any'); give the \
                 variable alone"
            )));
        }
    };
    Ok(P4_NAMES
        .iter()
        .find(|(p4, _)| *p4 == name)
        .map_or(name, |(_, keel)| keel))
}

async fn configure(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("configure").expect("in the table");
    let flags = dispatch::flags(cmd, command)?;
    let bad = || usage(format!("Usage: {}", command.usage));
    match flags.rest.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["set", assignment] => {
            let (name, value) = assignment.split_once('=').ok_or_else(bad)?;
            let name = variable(name)?.to_string();
            let value = value.to_string();
            let asked = name.clone();
            let stored = cmd
                .call(move |svc, caller| svc.configure_set(caller, &asked, &value))
                .await?
                .map_err(|e| CmdError::Report(auth_report(&e)))?;
            if cmd.tagged {
                cmd.stat([("ServerName", "any"), ("Name", &name), ("Value", &stored)]);
            } else {
                cmd.info(format!(
                    "For server 'any', configuration variable '{name}' set to '{stored}'"
                ));
            }
        }
        ["unset", name] => {
            let name = variable(name)?.to_string();
            let asked = name.clone();
            let was_set = cmd
                .call(move |svc, caller| svc.configure_unset(caller, &asked))
                .await?
                .map_err(|e| CmdError::Report(auth_report(&e)))?;
            let what = if was_set { "removed" } else { "was not set" };
            cmd.info(format!(
                "For server 'any', configuration variable '{name}' {what}."
            ));
        }
        ["show", ref rest @ ..] if rest.len() <= 1 => {
            let only = match rest.first() {
                None | Some(&"allservers") => None,
                Some(name) => Some(variable(name)?.to_string()),
            };
            let settings = cmd
                .call(|svc, caller| svc.configure_show(caller))
                .await?
                .map_err(|e| CmdError::Report(auth_report(&e)))?;
            for s in settings
                .iter()
                .filter(|s| only.as_ref().is_none_or(|n| *n == s.name))
            {
                let source = if s.is_default { "default" } else { "configure" };
                if cmd.tagged {
                    cmd.stat([
                        ("Type", source),
                        ("ServerName", "any"),
                        ("Name", s.name.as_str()),
                        ("Value", s.value.as_str()),
                    ]);
                } else {
                    cmd.info(format!("{}={} ({source})", s.name, s.value));
                }
            }
        }
        _ => return Err(bad()),
    }
    Ok(())
}
