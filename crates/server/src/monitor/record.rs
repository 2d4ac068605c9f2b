//! One ended command as the command log writes it: a line of JSON with who, what, how long,
//! how much, and how it ended. README.md ("Monitoring") lists the fields.

use super::registry::Running;
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

/// One command's record, made when it ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CommandRecord {
    /// When it ended (RFC 3339 UTC, milliseconds); filled in by the log writer.
    #[serde(default)]
    pub(crate) time: String,
    /// When it started (milliseconds since the Unix epoch).
    pub(crate) start_ms: u64,
    pub(crate) id: u64,
    pub(crate) user: String,
    pub(crate) workspace: String,
    pub(crate) host: String,
    pub(crate) address: String,
    /// The client program and version.
    pub(crate) program: String,
    pub(crate) command: String,
    pub(crate) args: String,
    pub(crate) lapse_ms: f64,
    pub(crate) writer_wait_ms: f64,
    pub(crate) writer_hold_ms: f64,
    pub(crate) rows_written: u64,
    pub(crate) files_sent: u64,
    pub(crate) files_received: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    /// `ok`, `error` or `terminated`.
    pub(crate) result: String,
    /// The gRPC status code's name (`OK`, `NOT_FOUND`, ...).
    pub(crate) code: String,
    /// The error's message (empty on success).
    pub(crate) error: String,
    /// Who terminated it (`monitor terminate`), if anyone did.
    pub(crate) terminated_by: String,
}

fn ms(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

impl CommandRecord {
    /// The record of `run`, ending now with `outcome` (`None`: success).
    pub(crate) fn of(run: &Running, outcome: Option<(tonic::Code, String)>) -> CommandRecord {
        use std::sync::atomic::Ordering::Relaxed;
        let who = run.who.get().cloned().unwrap_or_default();
        let c = &run.counters;
        let terminated_by = run.terminated_by.get().cloned().unwrap_or_default();
        let (code, error) = outcome.unwrap_or((tonic::Code::Ok, String::new()));
        let result = match (code, terminated_by.is_empty()) {
            (tonic::Code::Ok, _) => "ok",
            (_, false) => "terminated",
            (_, true) => "error",
        };
        CommandRecord {
            time: String::new(),
            start_ms: run
                .started_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64,
            id: run.id,
            user: who.user,
            workspace: who.workspace,
            host: who.host,
            address: run.address.get().map(|a| a.to_string()).unwrap_or_default(),
            program: run.program.clone(),
            command: run.command.clone(),
            args: run.args.get().cloned().unwrap_or_default(),
            lapse_ms: ms(run.elapsed()),
            writer_wait_ms: ms(c.writer_wait()),
            writer_hold_ms: ms(c.writer_hold()),
            rows_written: c.rows_written(),
            files_sent: c.files_sent(),
            files_received: c.files_received(),
            bytes_sent: run.bytes_out.load(Relaxed),
            bytes_received: run.bytes_in.load(Relaxed),
            result: result.to_string(),
            code: code_name(code).to_string(),
            error,
            terminated_by,
        }
    }
}

/// A gRPC code's canonical name.
pub(crate) fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}
