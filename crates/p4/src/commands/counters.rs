//! `counters` and `counter NAME`: the `change` counter (the highest change number) that
//! clients read; other counters read 0, as unset counters do, and setting one is refused.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::dispatch::{self, Command};
use keel_service::ChangesQuery;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "counters",
        row: rows::CHANGES,
        login: true,
        flags: "",
        usage: "counters",
        run: |c| Box::pin(counters(c)),
    },
    Command {
        name: "counter",
        row: rows::CHANGES,
        login: true,
        flags: "",
        usage: "counter name",
        run: |c| Box::pin(counter(c)),
    },
];

/// The highest change number (0 before the first change).
fn change_counter(
    cmd: &Cmd,
) -> impl std::future::Future<Output = Result<u64, crate::cmd::CmdError>> + Send + 'static {
    let newest = cmd.call(|svc, caller| {
        let mut newest = None;
        let query = ChangesQuery {
            max: 1,
            ..ChangesQuery::default()
        };
        svc.changes(caller, &query, &mut |c| {
            newest = Some(c.change);
            Ok(())
        })
        .map(|()| newest)
    });
    async move {
        let newest = newest.await??;
        Ok(newest.map_or(0, |c| c.to_string().parse().unwrap_or(0)))
    }
}

async fn counters(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("counters").expect("counters is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let change = change_counter(cmd).await?;
    if change == 0 {
        return Ok(());
    }
    if cmd.tagged {
        cmd.stat([
            ("counter", "change".to_string()),
            ("value", change.to_string()),
        ]);
    } else {
        cmd.info(format!("change = {change}"));
    }
    Ok(())
}

async fn counter(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("counter").expect("counter is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let [name] = flags.rest.as_slice() else {
        if flags.rest.len() > 1 {
            return Err(usage(
                "Setting counters is not supported by this server; counters are read-only.",
            ));
        }
        return Err(usage(format!("Usage: {}", command.usage)));
    };
    let value = match name.as_str() {
        "change" => change_counter(cmd).await?,
        _ => 0,
    };
    if cmd.tagged {
        cmd.stat([("counter", name.clone()), ("value", value.to_string())]);
    } else {
        cmd.info(value.to_string());
    }
    Ok(())
}
