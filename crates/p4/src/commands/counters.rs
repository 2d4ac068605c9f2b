//! `counters [-e filter] [-m max]` and `counter [-f] [-d | -i] name [value]`: the server's
//! counters (the `change` counter is the newest change's number), read and set through the
//! service's counters. Reading runs the `GetCounter` row (a replica answers it), setting the
//! `UpdateCounter` row.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use keel_core::CounterSpace;
use keel_service::command as rows;
use keel_service::{CounterOp, CounterOpError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "counters",
        row: rows::LIST_COUNTERS,
        login: true,
        flags: "e: m:",
        usage: "counters [ -e nameFilter -m max ]",
        run: |c| Box::pin(counters(c)),
    },
    Command {
        name: "counter",
        row: rows::UPDATE_COUNTER,
        login: true,
        flags: "f d i v",
        usage: "counter [ -f ] [ -d | -i ] name [ value ]",
        run: |c| Box::pin(counter(c)),
    },
];

/// The row `counter` runs with `args`: reading a counter (a name alone) or changing it.
pub fn counter_row(args: &[String]) -> &'static rows::Command {
    let changes = args
        .iter()
        .any(|a| a.starts_with('-') && a.len() > 1 && a[1..].chars().any(|c| c == 'd' || c == 'i'));
    let words = args.iter().filter(|a| !a.starts_with('-')).count();
    match changes || words > 1 {
        true => rows::UPDATE_COUNTER,
        false => rows::GET_COUNTER,
    }
}

pub(crate) fn counter_error(e: CounterOpError) -> CmdError {
    match e {
        CounterOpError::Service(s) => s.into(),
        other => CmdError::Report(Report::failed(
            Generic::Illegal,
            number::SERVICE,
            other.to_string(),
        )),
    }
}

/// The names and values of one name space (`counters` or `keys`), after the verb's `-e` filter
/// and `-m` maximum; extra arguments are a usage error.
pub(crate) async fn list_space(
    cmd: &mut Cmd,
    verb: &str,
    space: CounterSpace,
) -> Result<Vec<(String, String)>, CmdError> {
    let command = dispatch::find(verb).expect("the verb is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let max: usize = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => 0,
    };
    let filter = flags.value('e').map(str::to_string);
    cmd.call(move |svc, caller| {
        let mut out = Vec::new();
        svc.list_counters(caller, space, filter.as_deref(), max, &mut |n, v| {
            out.push((n, v));
            Ok(())
        })
        .map(|()| out)
    })
    .await?
    .map_err(counter_error)
}

async fn counters(cmd: &mut Cmd) -> CmdResult {
    let listed = list_space(cmd, "counters", CounterSpace::Counter).await?;
    for (name, value) in listed {
        // Before the first change the change counter is 0: not set, so not listed.
        if name == "change" && value == "0" {
            continue;
        }
        if cmd.tagged {
            cmd.stat([("counter", name), ("value", value)]);
        } else {
            cmd.info(format!("{name} = {value}"));
        }
    }
    Ok(())
}

async fn counter(cmd: &mut Cmd) -> CmdResult {
    one_value(cmd, "counter", CounterSpace::Counter).await
}

/// `counter NAME [VALUE]` / `key NAME [VALUE]` (`-d`, `-i`, and for counters `-f`): one value of
/// `space`, read, set, incremented or deleted; `verb` is the command's name and its records'
/// field name.
pub(crate) async fn one_value(cmd: &mut Cmd, verb: &'static str, space: CounterSpace) -> CmdResult {
    let command = dispatch::find(verb).expect("the verb is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let (name, value) = match flags.rest.as_slice() {
        [name] => (name.clone(), None),
        [name, value] if !flags.has('d') && !flags.has('i') => (name.clone(), Some(value.clone())),
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    };
    let op = match (flags.has('d'), flags.has('i'), value) {
        (true, true, _) => return Err(usage("-d and -i cannot be used together.")),
        (true, false, _) => Some(CounterOp::Delete),
        (false, true, _) => Some(CounterOp::Increment),
        (false, false, Some(v)) => Some(CounterOp::Set(v)),
        (false, false, None) => None,
    };
    let force = flags.has('f');
    let lookup = name.clone();
    let Some(op) = op else {
        let value = cmd
            .call(move |svc, caller| svc.get_counter(caller, space, &lookup))
            .await?
            .map_err(counter_error)?;
        if cmd.tagged {
            cmd.stat([(verb, name), ("value", value)]);
        } else {
            cmd.info(value);
        }
        return Ok(());
    };
    let deleting = matches!(op, CounterOp::Delete);
    let incrementing = matches!(op, CounterOp::Increment);
    let done = cmd
        .call(move |svc, caller| svc.update_counter(caller, space, &lookup, op, force))
        .await?
        .map_err(counter_error)?;
    let value = done.value.clone().unwrap_or_default();
    let title = match space {
        CounterSpace::Counter => "Counter",
        CounterSpace::Key => "Key",
    };
    if cmd.tagged && !deleting {
        cmd.stat([(verb, name), ("value", value)]);
    } else if deleting {
        cmd.info(format!("{title} {name} deleted."));
    } else if incrementing {
        cmd.info(value);
    } else {
        cmd.info(format!("{title} {name} set."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_counter_runs_the_reading_row() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(counter_row(&args(&["review"])).name, "GetCounter");
        assert_eq!(counter_row(&args(&["review", "3"])).name, "UpdateCounter");
        assert_eq!(counter_row(&args(&["-i", "review"])).name, "UpdateCounter");
        assert_eq!(counter_row(&args(&["-fd", "review"])).name, "UpdateCounter");
    }
}
