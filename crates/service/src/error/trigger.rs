//! A trigger that failed: which one, on what, why, and what it printed.

use keel_core::TriggerKind;
use std::fmt;

/// Why a trigger failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TriggerFailureReason {
    /// It exited with a non-zero status.
    Exit(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past `ServiceConfig::trigger_timeout_ms` and was killed with its process group.
    TimedOut { limit_ms: u64 },
    /// Its program could not be started (`error` is the system's reason).
    CannotRun { program: String, error: String },
    /// A form-out trigger left a form that does not parse or validate.
    BadForm { reason: String },
}

impl fmt::Display for TriggerFailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TriggerFailureReason::Exit(code) => write!(f, "exit status {code}"),
            TriggerFailureReason::Signal(signal) => write!(f, "killed by signal {signal}"),
            TriggerFailureReason::TimedOut { limit_ms } => {
                write!(f, "killed after its time limit of {limit_ms} ms")
            }
            TriggerFailureReason::CannotRun { program, error } => {
                write!(f, "cannot run '{program}': {error}")
            }
            TriggerFailureReason::BadForm { reason } => {
                write!(f, "the form it wrote is not valid: {reason}")
            }
        }
    }
}

/// A trigger that failed on a change or a form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerFailure {
    /// The trigger's name in the table.
    pub name: String,
    pub kind: TriggerKind,
    /// What it ran on: `change 12`, `workspace ws1`.
    pub subject: String,
    /// The change it ran on, for change triggers.
    pub change: Option<u64>,
    pub reason: TriggerFailureReason,
    /// Its output (stdout and stderr), cut at `ServiceConfig::trigger_output_bytes`.
    pub output: String,
}

impl fmt::Display for TriggerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} trigger '{}' failed on {} ({})",
            self.kind, self.name, self.subject, self.reason
        )?;
        let output = self.output.trim_end();
        if !output.is_empty() {
            write!(f, ":\n{output}")?;
        }
        Ok(())
    }
}
