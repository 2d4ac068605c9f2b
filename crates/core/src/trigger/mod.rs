//! The triggers table (Perforce's `p4 triggers`): lines `NAME TYPE PATH COMMAND`, parsed,
//! checked, rendered, and matched against a change's files or a form's type. Pure logic: the
//! service runs the commands.

mod command;
mod line;
mod select;

pub use command::{TriggerVars, split_command};
pub use line::{FormType, TriggerKind, TriggerLine, parse_line, parse_table, render_table};
pub use select::{Trigger, triggers_of};

/// A triggers table line that does not parse: the line, its number and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("triggers line {line_no} '{line}': {reason}")]
pub struct TriggerError {
    pub line_no: usize,
    pub line: String,
    pub reason: String,
}
