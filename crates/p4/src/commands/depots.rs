//! `depots`: the depots, tagged (`name`, `time`, `type`, `map`, `desc`) or as lines.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::dates;
use crate::dispatch::{self, Command};
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "depots",
    row: rows::LIST_DEPOTS,
    login: true,
    flags: "",
    usage: "depots",
    run: |c| Box::pin(depots(c)),
}];

async fn depots(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("depots").expect("depots is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let depots = cmd.call(|svc, caller| svc.list_depots(caller)).await??;
    for d in depots {
        let map = format!("{}/...", d.name);
        let desc = if d.description.ends_with('\n') {
            d.description.clone()
        } else {
            format!("{}\n", d.description)
        };
        if cmd.tagged {
            cmd.stat([
                ("name", d.name.clone()),
                ("time", d.created.to_string()),
                ("type", d.kind.clone()),
                ("map", map),
                ("desc", desc),
            ]);
        } else {
            cmd.info(format!(
                "Depot {} {} {} {} '{}'",
                d.name,
                dates::date(d.created),
                d.kind,
                map,
                desc.lines().next().unwrap_or("")
            ));
        }
    }
    Ok(())
}
