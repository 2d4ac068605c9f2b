//! The one entry point a front end calls per command: [`CommandGate::begin`] refuses a write on
//! a read-only replica, registers the command with the monitor, checks the caller's level, and
//! the [`CommandRun`] it returns ends the command in the command log and metrics. The server
//! implements the gate (it owns the monitor, the log and the metrics); [`PlainGate`] only
//! checks access, for a front end run without a server around it.

use super::Command;
use crate::{Caller, Service, ServiceError};
use keel_store::command::CommandCounters;
use std::sync::Arc;

/// A command about to start.
#[derive(Clone, Debug, Default)]
pub struct CommandStart {
    /// Who runs it (the caller, authenticated by the front end).
    pub who: Caller,
    /// The client program and its version, as the client reports it.
    pub program: String,
    /// The command's arguments in words, for the monitor and the command log.
    pub args: String,
    /// The client's end of the connection (`None` off the network), for the transport's
    /// accounting of busy connections.
    pub connection: Option<std::net::SocketAddr>,
}

/// Runs every command of a front end: see the module's description.
pub trait CommandGate: Send + Sync {
    /// Starts `command`, or refuses it (the refusal is a command that ended with that error,
    /// so it is logged and counted like any other).
    fn begin(
        &self,
        command: &'static Command,
        start: CommandStart,
    ) -> Result<CommandRun, ServiceError>;

    /// Records `command`, refused before it could begin because the caller did not log in
    /// (`reason` says why, as the client was told), as a command that ended so.
    fn refused_login(&self, command: &'static Command, start: CommandStart, reason: &str) {
        let _ = (command, start, reason);
    }

    /// The commands running now, as the gate's monitor knows them (none for a gate that keeps
    /// no monitor).
    fn running(&self) -> Vec<RunningCommand> {
        Vec::new()
    }

    /// Marks running command `id` terminated on `by`'s behalf (the caller's right to was
    /// checked): the command it was, or `None` when no command of that id is running (always,
    /// for a gate that keeps no monitor).
    fn terminate(&self, id: u64, by: &str) -> Option<RunningCommand> {
        let _ = (id, by);
        None
    }
}

/// A running command as the monitor shows it (`monitor show`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningCommand {
    /// The monitor's id of the command.
    pub id: u64,
    /// Who runs it (empty until the caller is known).
    pub user: String,
    /// The command table row's name (`Info`, `ListUsers`).
    pub command: String,
    /// Its arguments in words.
    pub args: String,
    /// Time since it began.
    pub elapsed: std::time::Duration,
    /// Whether `monitor terminate` has marked it.
    pub terminated: bool,
    /// The caller's workspace, host, network address and client program.
    pub workspace: String,
    pub host: String,
    pub address: String,
    pub program: String,
}

/// What the gate that began a command does while it runs and when it ends.
pub trait RunHooks: Send + Sync {
    /// The command's counters (rows, writer time, termination), which the threads working for
    /// it enter (`keel_store::command::enter`).
    fn counters(&self) -> Arc<CommandCounters>;
    /// Counts bytes received from and sent to the client.
    fn add_bytes(&self, received: u64, sent: u64);
    /// Ends the command: `None` on success.
    fn end(&self, failure: Option<Failure<'_>>);
}

/// How a command failed.
#[derive(Clone, Copy, Debug)]
pub enum Failure<'a> {
    /// The service refused it or failed.
    Service(&'a ServiceError),
    /// The front end refused it (a usage error, a broken connection): its words.
    Said(&'a str),
}

/// A command that runs; it ends with [`CommandRun::end`] or, dropped unended, as cancelled
/// (the client went away).
pub struct CommandRun {
    command: &'static Command,
    hooks: Option<Box<dyn RunHooks>>,
    counters: Arc<CommandCounters>,
    /// Kept until the command ends (a transport's busy-connection guard).
    held: Vec<Box<dyn Send + Sync>>,
}

impl CommandRun {
    /// A command whose gate keeps no record of it.
    pub fn unrecorded(command: &'static Command) -> CommandRun {
        CommandRun {
            command,
            hooks: None,
            counters: Arc::new(CommandCounters::default()),
            held: Vec::new(),
        }
    }

    /// A command the gate's `hooks` follow.
    pub fn recorded(command: &'static Command, hooks: Box<dyn RunHooks>) -> CommandRun {
        CommandRun {
            command,
            counters: hooks.counters(),
            hooks: Some(hooks),
            held: Vec::new(),
        }
    }

    /// Keeps `guard` until the command ends.
    pub fn hold(mut self, guard: Box<dyn Send + Sync>) -> CommandRun {
        self.held.push(guard);
        self
    }

    pub fn command(&self) -> &'static Command {
        self.command
    }

    /// The counters the threads working for the command enter.
    pub fn counters(&self) -> Arc<CommandCounters> {
        self.counters.clone()
    }

    /// Whether the command was terminated (`monitor terminate`): stop, commit nothing more.
    pub fn is_terminated(&self) -> bool {
        self.counters.is_cancelled()
    }

    /// Counts bytes received from and sent to the client.
    pub fn add_bytes(&self, received: u64, sent: u64) {
        if let Some(hooks) = &self.hooks {
            hooks.add_bytes(received, sent);
        }
    }

    /// Ends the command with its outcome.
    pub fn end(mut self, outcome: Result<(), &ServiceError>) {
        if let Some(hooks) = self.hooks.take() {
            hooks.end(outcome.err().map(Failure::Service));
        }
        self.held.clear();
    }

    /// Ends the command as failed for a reason of the front end's (`text`, as the client was
    /// told).
    pub fn fail(mut self, text: &str) {
        if let Some(hooks) = self.hooks.take() {
            hooks.end(Some(Failure::Said(text)));
        }
        self.held.clear();
    }
}

impl Drop for CommandRun {
    fn drop(&mut self) {
        if let Some(hooks) = self.hooks.take() {
            hooks.end(Some(Failure::Service(&ServiceError::Cancelled)));
        }
    }
}

/// A gate that checks only the caller's level: no monitor, log or metrics, and no replica.
pub struct PlainGate {
    pub service: Arc<Service>,
}

impl CommandGate for PlainGate {
    fn begin(
        &self,
        command: &'static Command,
        start: CommandStart,
    ) -> Result<CommandRun, ServiceError> {
        self.service.admit(&start.who, command)?;
        Ok(CommandRun::unrecorded(command))
    }
}
