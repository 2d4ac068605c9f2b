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
        all.extend(commands::day::COMMANDS.iter().map(copy));
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
    if command.login
        && let Err(e) = cmd.authenticate().await
    {
        let reason = match &e {
            CmdError::Report(r) => r.rendered(),
            CmdError::Conn(c) => c.to_string(),
        };
        gate.refused_login(command.row, start, &reason);
        return Err(e);
    }
    let run = match gate.begin(command.row, start) {
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
    let outcome = (command.run)(cmd).await;
    match &outcome {
        Ok(()) => run.end(Ok(())),
        Err(CmdError::Report(r)) => run.fail(&r.rendered()),
        Err(CmdError::Conn(c)) => run.fail(&c.to_string()),
    }
    outcome
}
