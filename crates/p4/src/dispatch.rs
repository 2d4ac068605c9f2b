//! The command table: every command the front end answers, with the access it needs, whether
//! it writes and whether it needs a login, and the one check every command passes before it
//! runs (login, protections, the hooks). A command not in the table gets the client's usual
//! unknown-command error.

use crate::cmd::{Cmd, CmdError, CmdResult, number};
use crate::commands;
use crate::flags::{FlagError, Flags};
use crate::server::CommandStart;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::Level;
use keel_service::ServiceError;
use std::future::Future;
use std::pin::Pin;

/// A command's body.
pub type Handler = for<'a> fn(&'a mut Cmd) -> Pin<Box<dyn Future<Output = CmdResult> + Send + 'a>>;

/// One command of the table.
pub struct Command {
    pub name: &'static str,
    /// The level the caller needs somewhere in the protections table (`None`: none, as for
    /// `info`, `login` and `logout`).
    pub level: Option<Level>,
    /// Whether it writes metadata (refused on a read-only replica).
    pub writes: bool,
    /// Whether the caller must be let in first (a ticket, where the security level asks one).
    pub login: bool,
    /// Whether its arguments carry a secret (kept from the monitor and the log).
    pub secret: bool,
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
        all
    })
}

fn copy(c: &Command) -> Command {
    Command {
        name: c.name,
        level: c.level,
        writes: c.writes,
        login: c.login,
        secret: c.secret,
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

/// Runs `command` for `cmd`: registered with the hooks (the monitor and the command log see
/// refusals too), then let in (login, protections), then run; an error is sent as the
/// command's last line.
pub async fn run(cmd: &mut Cmd, command: &'static Command) -> CmdResult {
    let program = cmd.req.text("prog").unwrap_or_default();
    let args: Vec<String> = if command.secret {
        Vec::new()
    } else {
        cmd.args.clone()
    };
    let start = CommandStart {
        name: command.name,
        args: &args,
        user: &cmd.caller.user,
        workspace: &cmd.caller.workspace,
        host: &cmd.caller.host,
        address: cmd.caller.address,
        peer: cmd.peer.client,
        program: &program,
        writes: command.writes,
    };
    let hooks = cmd.server.hooks.clone();
    let end = hooks.start(&start).map_err(|refusal| {
        CmdError::Report(Report::failed(Generic::Illegal, number::REPLICA, refusal))
    })?;
    let outcome = match admit(cmd, command).await {
        Ok(()) => (command.run)(cmd).await,
        Err(e) => Err(e),
    };
    let error = match &outcome {
        Ok(()) => None,
        Err(CmdError::Report(r)) => Some(r.rendered()),
        Err(CmdError::Conn(e)) => Some(e.to_string()),
    };
    end.end(error.as_deref());
    outcome
}

/// The checks before a command runs: the caller let in (when the command needs a login) and
/// given the command's level somewhere by the protections table.
async fn admit(cmd: &mut Cmd, command: &'static Command) -> CmdResult {
    if command.login {
        cmd.authenticate().await?;
    }
    let Some(level) = command.level else {
        return Ok(());
    };
    let access = cmd.call(|svc, caller| svc.user_access(caller)).await??;
    if access.allows_anywhere(level.right()) {
        return Ok(());
    }
    tracing::info!(user = %cmd.caller.user, command = command.name, %level, "refused by protections (P4)");
    let e = ServiceError::CommandDenied {
        command: command.name,
        needed: level.right(),
    };
    Err(CmdError::Report(Report::failed(
        Generic::Protect,
        number::PROTECTED,
        e.to_string(),
    )))
}
