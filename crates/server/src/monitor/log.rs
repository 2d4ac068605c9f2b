//! The command log: one JSON line per ended command, written off the request path by a
//! [`line_log`] writer that gathers records for `command_log_batch_ms` between writes and
//! rotates the file by size and age (`command_log_rotate_bytes`, `command_log_rotate_secs`,
//! keeping `command_log_keep` rotated files).

use super::record::CommandRecord;
use super::registry::CommandSink;
use crate::line_log::{self, Clock, LogLine, LogOptions, LogSender, LogWriter};
use std::sync::Arc;

/// The request side: a [`CommandSink`] that queues records for the writer.
pub(crate) struct CommandLog {
    queue: LogSender<CommandRecord>,
}

impl CommandSink for CommandLog {
    fn ended(&self, record: CommandRecord) {
        self.queue.send(record);
    }
}

impl LogLine for CommandRecord {
    /// The record as a JSON line, stamped with the time the command ended.
    fn push_line(&self, out: &mut Vec<u8>, clock: &mut Clock) {
        self.write_line(clock.format(self.run.started_at + self.lapse), out);
    }
}

/// Opens the log (creating it and its directory) and starts its writer.
pub(crate) fn open(
    options: LogOptions,
) -> Result<(Arc<CommandLog>, LogWriter), line_log::LogOpenError> {
    let (queue, writer) = line_log::open("command log", options)?;
    Ok((Arc::new(CommandLog { queue }), writer))
}
