//! The commands scripts call: `keys [-e filter] [-m max]` and `key [-d | -i] name [value]`
//! over the service's keys (the counters' own name space), and `typemap -o/-i`, the typemap
//! as a form with a `specdef` (P4Python's `fetch_typemap`/`save_typemap`).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Field, Kind, SpecDef, Values, lines};
use keel_core::CounterSpace;
use keel_service::command as rows;
use keel_service::{CounterOp, CounterOpError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "keys",
        row: rows::LIST_COUNTERS,
        login: true,
        flags: "e: m:",
        usage: "keys [ -e nameFilter -m max ]",
        run: |c| Box::pin(keys(c)),
    },
    Command {
        name: "key",
        row: rows::UPDATE_COUNTER,
        login: true,
        flags: "d i v",
        usage: "key [ -d | -i ] name [ value ]",
        run: |c| Box::pin(key(c)),
    },
    Command {
        name: "typemap",
        row: rows::SAVE_TYPEMAP,
        login: true,
        flags: "o i",
        usage: "typemap [ -o | -i ]",
        run: |c| Box::pin(typemap(c)),
    },
];

/// The typemap form.
pub const TYPEMAP: SpecDef = SpecDef {
    kind: "typemap",
    comment: "# A Keel typemap: the type a file added without -t gets.\n#\n#  TypeMap: \
              Lines of 'type pattern'; the last line that matches wins, '-pattern' \
              excludes.\n\n",
    fields: &[Field {
        name: "TypeMap",
        code: 601,
        kind: Kind::WordList { words: 2 },
        required: false,
        read_only: false,
        len: 64,
        values: "",
    }],
};

fn key_error(e: CounterOpError) -> CmdError {
    match e {
        CounterOpError::Service(s) => s.into(),
        other => CmdError::Report(Report::failed(
            Generic::Illegal,
            number::SERVICE,
            other.to_string(),
        )),
    }
}

async fn keys(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("keys").expect("keys is in the table");
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
    let listed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.list_counters(
                caller,
                CounterSpace::Key,
                filter.as_deref(),
                max,
                &mut |n, v| {
                    out.push((n, v));
                    Ok(())
                },
            )
            .map(|()| out)
        })
        .await?
        .map_err(key_error)?;
    for (name, value) in listed {
        if cmd.tagged {
            cmd.stat([("key", name), ("value", value)]);
        } else {
            cmd.info(format!("{name} = {value}"));
        }
    }
    Ok(())
}

async fn key(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("key").expect("key is in the table");
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
    let lookup = name.clone();
    let Some(op) = op else {
        let value = cmd
            .call(move |svc, caller| svc.get_counter(caller, CounterSpace::Key, &lookup))
            .await?
            .map_err(key_error)?;
        if cmd.tagged {
            cmd.stat([("key", name), ("value", value)]);
        } else {
            cmd.info(value);
        }
        return Ok(());
    };
    let deleting = matches!(op, CounterOp::Delete);
    let incrementing = matches!(op, CounterOp::Increment);
    let done = cmd
        .call(move |svc, caller| svc.update_counter(caller, CounterSpace::Key, &lookup, op, false))
        .await?
        .map_err(key_error)?;
    let value = done.value.clone().unwrap_or_default();
    if cmd.tagged && !deleting {
        cmd.stat([("key", name), ("value", value)]);
    } else if deleting {
        cmd.info(format!("Key {name} deleted."));
    } else if incrementing {
        cmd.info(value);
    } else {
        cmd.info(format!("Key {name} set."));
    }
    Ok(())
}

async fn typemap(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("typemap").expect("typemap is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.has('o') == flags.has('i') || !flags.rest.is_empty() {
        return Err(usage(format!(
            "typemap: this server edits no forms itself; use -o or -i.\nUsage: {}",
            command.usage
        )));
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &TYPEMAP).await?;
        // Blank lines stay: the refusal of a bad line names its number in the form.
        let table: Vec<String> = lines(&form, "TypeMap");
        cmd.call(move |svc, caller| svc.save_typemap(caller, &table))
            .await??;
        cmd.info("Typemap saved.");
        return Ok(());
    }
    let table = cmd.call(|svc, caller| svc.typemap(caller)).await??;
    let values: Values = vec![("TypeMap", table.iter().map(|l| l.to_string()).collect())];
    forms::send(cmd, &TYPEMAP, &values);
    Ok(())
}
