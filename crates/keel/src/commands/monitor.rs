//! `monitor show [-a] [-l]` and `monitor terminate ID`: the commands the server runs now, and
//! stopping one (like `p4 monitor`).

use anyhow::Result;
use clap::Subcommand;
use keel_client::ops::{self, RunningCommand};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum MonitorCmd {
    /// List the running commands: id, state, user, elapsed time, command.
    Show {
        /// Also each command's arguments (super users).
        #[arg(short = 'a')]
        all: bool,
        /// Also workspace, host, client address, program, writer wait and hold, bytes
        /// (super users).
        #[arg(short = 'l')]
        long: bool,
    },
    /// Stop a running command (super users): a read ends, a write not yet committed is
    /// abandoned with nothing committed.
    Terminate { id: u64 },
}

pub async fn run(s: &mut Session, cmd: MonitorCmd) -> Result<()> {
    match cmd {
        MonitorCmd::Show { all, long } => {
            for c in ops::monitor_show(&s.conn, all, long).await? {
                let text = line(&c, all || long, long);
                s.out.emit(record(&c), text);
            }
        }
        MonitorCmd::Terminate { id } => {
            let c = ops::monitor_terminate(&s.conn, id).await?;
            let text = format!(
                "Command {} ({} by {}) marked for termination.",
                c.id, c.command, c.user
            );
            s.out.emit(record(&c).s("action", "terminated"), text);
        }
    }
    Ok(())
}

fn record(c: &RunningCommand) -> Record {
    Record::new()
        .n("id", c.id)
        .s("state", &c.state)
        .b("terminated", c.terminated)
        .s("user", &c.user)
        .s("workspace", &c.workspace)
        .s("host", &c.host)
        .s("address", &c.address)
        .s("program", &c.program)
        .s("command", &c.command)
        .s("args", &c.args)
        .n("elapsed_ms", c.elapsed_ms)
        .n("writer_wait_ms", c.writer_wait_ms)
        .n("writer_hold_ms", c.writer_hold_ms)
        .n("bytes_sent", c.bytes_sent)
        .n("bytes_received", c.bytes_received)
}

/// `ID STATE USER HH:MM:SS COMMAND [ARGS]`, then the details with `long`.
fn line(c: &RunningCommand, args: bool, long: bool) -> String {
    let secs = c.elapsed_ms / 1000;
    let status = if c.terminated { "T" } else { "R" };
    let mut text = format!(
        "{:>6} {status} {:<13} {:<12} {:02}:{:02}:{:02} {}",
        c.id,
        c.state,
        c.user,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        c.command
    );
    if args && !c.args.is_empty() {
        text.push(' ');
        text.push_str(&c.args);
    }
    if long {
        text.push_str(&format!(
            "\n       workspace {} host {} address {} program {} writer wait {} ms hold {} ms sent {} B received {} B",
            c.workspace,
            c.host,
            c.address,
            c.program,
            c.writer_wait_ms,
            c.writer_hold_ms,
            c.bytes_sent,
            c.bytes_received
        ));
    }
    text
}
