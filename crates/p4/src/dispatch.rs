//! The P4 verbs: every command the front end answers, with the server command it runs (its row
//! in `keel_service::command`'s table, which says the level it needs and whether it writes),
//! whether it needs a login, and the one path every command takes before it runs: the login,
//! then the server's [`CommandGate`](keel_service::command::CommandGate) (a read-only
//! replica's refusal of writes, the monitor, the protections, and at the end the command log
//! and metrics), exactly as a gRPC call. A command
//! not in the table gets the client's usual unknown-command error.
//!
//! The map from verbs to rows is the front end's: one verb may run different rows by its
//! flags (`client -o` reads a workspace, `client -i` saves one), so a verb names the row it
//! runs (or a handler begins a different one).

use crate::cmd::{Cmd, CmdError, CmdResult, number};
use crate::commands;
use crate::flags::{FlagError, Flags};
use crate::wire::report::{Generic, Report, Severity};
use keel_service::command::{self as rows, CommandStart};
use std::future::Future;
use std::pin::Pin;

/// A command's body.
pub type Handler = for<'a> fn(&'a mut Cmd) -> Pin<Box<dyn Future<Output = CmdResult> + Send + 'a>>;

/// One command of the table.
pub struct Command {
    pub name: &'static str,
    /// The server command it runs: the level it needs, whether it writes, whether its
    /// arguments carry a secret (kept from the monitor and the log).
    pub row: &'static rows::Command,
    /// Whether the caller must be let in first (a ticket, where the security level asks one).
    pub login: bool,
    /// The flags it takes (see [`Flags::parse`]).
    pub flags: &'static str,
    /// Its usage line, shown with a refused flag.
    pub usage: &'static str,
    pub run: Handler,
}

/// Every command the front end answers.
pub fn table() -> &'static [Command] {
    static TABLE: std::sync::OnceLock<Vec<Command>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut all = Vec::new();
        all.extend(commands::info::COMMANDS.iter().map(copy));
        all.extend(commands::auth::COMMANDS.iter().map(copy));
        all.extend(commands::users::COMMANDS.iter().map(copy));
        all.extend(commands::clients::COMMANDS.iter().map(copy));
        all.extend(commands::depots::COMMANDS.iter().map(copy));
        all.extend(commands::counters::COMMANDS.iter().map(copy));
        // p4browse
        all.extend(commands::changes::COMMANDS.iter().map(copy));
        all.extend(commands::files::COMMANDS.iter().map(copy));
        all.extend(commands::workspace_files::COMMANDS.iter().map(copy));
        all.extend(commands::history::COMMANDS.iter().map(copy));
        all.extend(commands::labels::COMMANDS.iter().map(copy));
        all.extend(commands::access::COMMANDS.iter().map(copy));
        all.extend(commands::admin::COMMANDS.iter().map(copy));
        all.extend(commands::configure::COMMANDS.iter().map(copy));
        // p4sync
        all.extend(commands::sync::COMMANDS.iter().map(copy));
        all.extend(commands::print::COMMANDS.iter().map(copy));
        all.extend(commands::revert::COMMANDS.iter().map(copy));
        all.extend(commands::unshelve::COMMANDS.iter().map(copy));
        all.extend(commands::integrate::COMMANDS.iter().map(copy));
        all.extend(commands::populate::COMMANDS.iter().map(copy));
        all.extend(commands::resolve::COMMANDS.iter().map(copy));
        // p4submit
        all.extend(commands::open::COMMANDS.iter().map(copy));
        all.extend(commands::submit::COMMANDS.iter().map(copy));
        all.extend(commands::change::COMMANDS.iter().map(copy));
        all.extend(commands::shelve::COMMANDS.iter().map(copy));
        all.extend(commands::diff::COMMANDS.iter().map(copy));
        all.extend(commands::maintenance::COMMANDS.iter().map(copy));
        all.extend(commands::day::COMMANDS.iter().map(copy));
        all.extend(commands::fixes::COMMANDS.iter().map(copy));
        all.extend(commands::monitor::COMMANDS.iter().map(copy));
        // p4jobs
        all.extend(commands::jobs::COMMANDS.iter().map(copy));
        all.extend(commands::glue::COMMANDS.iter().map(copy));
        // istat30
        all.extend(commands::merge_state::COMMANDS.iter().map(copy));
        // p4gaps
        all.extend(commands::reconcile::COMMANDS.iter().map(copy));
        all.extend(commands::undo::COMMANDS.iter().map(copy));
        all
    })
}

fn copy(c: &Command) -> Command {
    Command {
        name: c.name,
        row: c.row,
        login: c.login,
        flags: c.flags,
        usage: c.usage,
        run: c.run,
    }
}

/// The rows of the spec verbs whose `-o` only reads (so a read-only replica answers it and
/// the protections ask only what reading asks).
const READ_ROWS: &[(&str, &rows::Command)] = &[
    ("client", rows::GET_WORKSPACE),
    ("workspace", rows::GET_WORKSPACE),
    ("user", rows::GET_USER),
    ("label", rows::GET_LABEL),
    ("branch", rows::GET_BRANCH),
    ("group", rows::GET_GROUP),
    ("protect", rows::GET_PROTECTIONS),
    ("triggers", rows::GET_TRIGGERS),
    ("typemap", rows::GET_TYPEMAP),
    ("jobspec", rows::GET_JOB_SPEC),
    ("spec", rows::GET_JOB_SPEC),
    ("job", rows::GET_JOB),
];

/// The row `command` runs with `args`: a spec verb's `-o` its reading row, `counter NAME`
/// the reading one, else its own.
pub fn row_of(command: &Command, args: &[String]) -> &'static rows::Command {
    if matches!(command.name, "counter" | "key") {
        return commands::counters::counter_row(args);
    }
    let output_only = args.iter().any(|a| a == "-o");
    match READ_ROWS.iter().find(|(name, _)| *name == command.name) {
        Some((_, read)) if output_only => read,
        _ => command.row,
    }
}

/// The command named `name`.
pub fn find(name: &str) -> Option<&'static Command> {
    table().iter().find(|c| c.name == name)
}

/// The refusal of a command the front end does not have.
pub fn unknown_command(name: &str) -> Report {
    Report::new(Severity::Failed, Generic::Unknown, number::UNKNOWN_COMMAND)
        .text("Unknown command.  Try 'p4 help' for info. (")
        .arg("command", name)
        .text(" is not a command this server has.)")
}

/// Parses the command's flags, refusing bad ones with the usage line.
pub fn flags(cmd: &Cmd, command: &Command) -> Result<Flags, CmdError> {
    Flags::parse(&cmd.args, command.flags).map_err(|e: FlagError| {
        CmdError::Report(Report::failed(
            Generic::Usage,
            number::USAGE,
            format!("{e}\nUsage: {}", command.usage),
        ))
    })
}

/// Starts link compression when the command's workspace asks for it (its `compress` option),
/// once per connection.
async fn compress_if_asked(cmd: &mut Cmd) -> Result<(), crate::conn::ConnError> {
    if cmd.conn.compressing() || cmd.caller.workspace.is_empty() {
        return Ok(());
    }
    let name = cmd.caller.workspace.clone();
    let wants = cmd
        .call(move |svc, _| {
            svc.workspace_options(&name)
                .ok()
                .flatten()
                .is_some_and(|o| o.compress)
        })
        .await
        .unwrap_or(false);
    if wants {
        cmd.conn.start_compression().await?;
    }
    Ok(())
}

/// Runs `command` for `cmd`: the caller let in (when the command needs a login), then begun
/// through the server's gate (a refusal there is the command's error), then run and ended
/// with its outcome; an error is sent as the command's last line.
pub async fn run(cmd: &mut Cmd, command: &'static Command) -> CmdResult {
    let start = CommandStart {
        who: cmd.caller.clone(),
        program: cmd.req.text("prog").unwrap_or_default(),
        args: match command.row.secret {
            true => String::new(),
            false => cmd.args.join(" "),
        },
        connection: cmd.peer.client,
    };
    let gate = cmd.server.gate.clone();
    let row = row_of(command, &cmd.args);
    if command.login
        && let Err(e) = cmd.authenticate().await
    {
        let reason = match &e {
            CmdError::Report(r) => r.rendered(),
            CmdError::Conn(c) => c.to_string(),
        };
        gate.refused_login(row, start, &reason);
        return Err(e);
    }
    let run = match gate.begin(row, start) {
        Ok(run) => run,
        Err(e) => {
            let number = match e {
                keel_service::ServiceError::CommandDenied { .. } => number::PROTECTED,
                keel_service::ServiceError::Store(_) => number::REPLICA,
                _ => number::SERVICE,
            };
            let generic = match number {
                number::PROTECTED => Generic::Protect,
                number::REPLICA => Generic::Illegal,
                _ => Generic::None,
            };
            return Err(CmdError::Report(Report::failed(
                generic,
                number,
                e.to_string(),
            )));
        }
    };
    if let Err(e) = compress_if_asked(cmd).await {
        run.fail(&e.to_string());
        return Err(CmdError::Conn(e));
    }
    cmd.counters = Some(run.counters());
    let bytes = |cmd: &Cmd| {
        (
            cmd.conn.bytes_in,
            cmd.conn.bytes_out + cmd.conn.queued() as u64,
        )
    };
    let (in0, out0) = bytes(cmd);
    let outcome = (command.run)(cmd).await;
    let (in1, out1) = bytes(cmd);
    // The request itself was read before the command began.
    let request = (cmd.req.encode().len() + crate::wire::frame::HEADER_LEN) as u64;
    run.add_bytes(request + in1.saturating_sub(in0), out1.saturating_sub(out0));
    cmd.counters = None;
    match &outcome {
        Ok(()) => run.end(Ok(())),
        Err(CmdError::Report(r)) => run.fail(&r.rendered()),
        Err(CmdError::Conn(c)) => run.fail(&c.to_string()),
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_is_in_the_table_once() {
        let mut names: Vec<&str> = table().iter().map(|c| c.name).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a verb is in the table twice");
        for verb in [
            "info",
            "sync",
            "submit",
            "changes",
            "print",
            "fstat",
            "integrate",
        ] {
            assert!(find(verb).is_some(), "{verb} is missing");
        }
    }
}
