//! The command is the unit on the server: one table ([`COMMANDS`], rows in `table.rs`) says,
//! for every command, its name, the level a caller needs somewhere, whether it writes and
//! whether it may be answered inline; every front end (the gRPC API, the P4-protocol
//! listener) runs each request as one of these commands through a [`CommandGate`], so access
//! checks, the replica's refusal of writes, the monitor, the command log and metrics apply the
//! same way whatever the wire.
//!
//! A front end maps its requests onto rows: the gRPC API one RPC to one row (the row's name is
//! the RPC's); the P4 front end owns its own map of verbs and flags onto rows (`p4 add`, `edit`
//! and `delete` run [`OPEN`]; `client -o` runs [`GET_WORKSPACE`], `client -i` [`SAVE_WORKSPACE`]),
//! since one P4 verb may be several commands depending on its flags.

mod gate;
mod table;

pub use gate::{
    CommandGate, CommandRun, CommandStart, Failure, PlainGate, RunHooks, RunningCommand,
};
/// A front end's threads working for a command enter its counters (rows read and written,
/// writer time), as the gRPC layer's do.
pub use keel_store::command::{CommandCounters, Entered, enter};
pub use table::*;

use crate::{Caller, Service, ServiceError};
use keel_core::Level;

/// One command of the server.
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    /// Its name in the monitor, the command log and metrics (the gRPC RPC's name).
    pub name: &'static str,
    /// The level the caller must hold somewhere (on some path) for the server to run it at
    /// all, as p4 checks a command's level before it looks at any file; `None`: no level. The
    /// service then checks each file the command touches.
    pub level: Option<Level>,
    pub kind: Kind,
    /// Whether the command may be answered on the front end's own thread while its answer is
    /// small (a front end decides per request what is small: a few named files, `-m 1`), and
    /// rerun as a long read when it turns out not to be.
    pub small: bool,
    /// Whether its arguments carry a password: the monitor and the command log never keep
    /// them.
    pub secret: bool,
}

/// What a command does to the server's metadata, which decides what a replica does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Reads only (or writes only what a replica keeps itself, as the have lists): a replica
    /// answers it.
    Read,
    /// Reads the opened-files state: a replica forwarding writes sends it to the primary too,
    /// since the same user's next command (`submit` after `add`) must see what a forwarded
    /// write just changed.
    ReadOpened,
    /// Changes the primary's metadata (or acts on its journal): a replica refuses it or
    /// forwards it.
    Write,
}

impl Command {
    /// Whether the command changes the primary's metadata.
    pub fn writes(&self) -> bool {
        self.kind == Kind::Write
    }

    /// Whether a request of this command that is small (by the front end's measure) may be
    /// answered inline.
    pub fn inline(&self, small_request: bool) -> bool {
        self.small && small_request
    }
}

/// The command named `name` (a gRPC RPC's name), if the server has it.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().copied().find(|c| c.name == name)
}

impl Service {
    /// Admits `who` to run `command` when the protections give them the command's level
    /// somewhere; otherwise [`ServiceError::CommandDenied`] naming the command and the level.
    pub fn admit(&self, who: &Caller, command: &'static Command) -> Result<(), ServiceError> {
        let Some(level) = command.level else {
            return Ok(());
        };
        let access = self.user_access(who)?;
        if access.allows_anywhere(level.right()) {
            return Ok(());
        }
        tracing::info!(
            user = %who.user,
            address = ?who.address,
            command = command.name,
            %level,
            "refused by protections"
        );
        Err(ServiceError::CommandDenied {
            command: command.name,
            needed: level.right(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{COMMANDS, find};

    /// Names are unique, so a front end's lookup by name finds one row.
    #[test]
    fn every_name_is_one_row() {
        for c in COMMANDS {
            let rows = COMMANDS.iter().filter(|o| o.name == c.name).count();
            assert_eq!(rows, 1, "{} has {rows} rows", c.name);
            assert_eq!(find(c.name), Some(*c));
        }
        assert_eq!(find("NoSuchCommand"), None);
    }

    /// Only reads are answered inline: a write is never run twice.
    #[test]
    fn only_reads_are_small() {
        for c in COMMANDS.iter().filter(|c| c.small) {
            assert!(!c.writes(), "{} writes but is marked small", c.name);
        }
    }
}
