//! `monitor show` and `monitor terminate`: the commands the server runs now, and stopping one.

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;

/// A command the server is running.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningCommand {
    pub id: u64,
    pub user: String,
    /// Empty unless asked for the long form (super users).
    pub workspace: String,
    pub host: String,
    pub address: String,
    pub program: String,
    pub command: String,
    /// Empty unless asked for (super users).
    pub args: String,
    pub elapsed_ms: u64,
    /// `running`, `writer-queued`, `writing` or `sending`.
    pub state: String,
    /// Marked by a terminate and ending.
    pub terminated: bool,
    pub writer_wait_ms: u64,
    pub writer_hold_ms: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl RunningCommand {
    fn from_wire(c: pb::RunningCommand) -> RunningCommand {
        RunningCommand {
            id: c.id,
            user: c.user,
            workspace: c.workspace,
            host: c.host,
            address: c.address,
            program: c.program,
            command: c.command,
            args: c.args,
            elapsed_ms: c.elapsed_ms,
            state: c.state,
            terminated: c.terminated,
            writer_wait_ms: c.writer_wait_ms,
            writer_hold_ms: c.writer_hold_ms,
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
        }
    }
}

/// The commands running now. `all`: with their arguments; `long`: with workspace, host,
/// address, program and counters (both: super users).
pub async fn monitor_show(
    conn: &Connection,
    all: bool,
    long: bool,
) -> Result<Vec<RunningCommand>, QueryError> {
    let reply = conn
        .reply(conn.client().monitor_show(pb::MonitorShowRequest {
            caller: conn.caller(),
            all,
            long,
        }))
        .await?;
    Ok(reply
        .commands
        .into_iter()
        .map(RunningCommand::from_wire)
        .collect())
}

/// Marks command `id` for termination (super users): a read ends, a write not yet committed
/// is abandoned. Returns the command.
pub async fn monitor_terminate(conn: &Connection, id: u64) -> Result<RunningCommand, QueryError> {
    let c = conn
        .reply(
            conn.client()
                .monitor_terminate(pb::MonitorTerminateRequest {
                    caller: conn.caller(),
                    id,
                }),
        )
        .await?;
    Ok(RunningCommand::from_wire(c))
}
