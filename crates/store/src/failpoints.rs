//! Named crash points for tests: a command reaching an armed point dies (or fails) there, so a
//! crash test can stop the server at an exact step instead of guessing one by timing.
//!
//! Points are armed once per process with [`configure`] (`keel serve` passes it the
//! `KEEL_FAILPOINTS` environment variable, e.g. `submit.in-commit=abort`). Unarmed, a point
//! costs one read of an initialised static. The points:
//! - [`SUBMIT_AFTER_PUBLISH`]: submit's content is durable in the blob store, no metadata yet;
//! - [`SUBMIT_IN_COMMIT`]: inside submit's metadata write job, every row written, before the
//!   transaction commits;
//! - [`SUBMIT_AFTER_COMMIT`]: the change is committed, before the have list and the reply;
//! - [`JOURNAL_BEFORE_COMMIT`]: the main writer's journal record is on disk, before the
//!   transaction commits (the next open must cut the record off). It is reached on the
//!   store's writer thread, so only `abort` and `exit` make sense there (`panic` would stop
//!   the writer, and every later write would fail).
//! - [`OBLITERATE_IN_PURGE`]: inside obliterate's purge job, right after a blob was deleted
//!   from the content store, before the job unqueues it and commits (on the writer thread
//!   too: `abort` or `exit`).
//!
//! The registry lives in the store, the lowest layer with a point; `keel_service::failpoints`
//! re-exports it.

use std::sync::OnceLock;

pub const SUBMIT_AFTER_PUBLISH: &str = "submit.after-publish";
pub const SUBMIT_IN_COMMIT: &str = "submit.in-commit";
pub const SUBMIT_AFTER_COMMIT: &str = "submit.after-commit";
pub const JOURNAL_BEFORE_COMMIT: &str = "journal.before-commit";
pub const OBLITERATE_IN_PURGE: &str = "obliterate.in-purge";

/// Every point a command can reach.
pub const POINTS: [&str; 5] = [
    SUBMIT_AFTER_PUBLISH,
    SUBMIT_IN_COMMIT,
    SUBMIT_AFTER_COMMIT,
    JOURNAL_BEFORE_COMMIT,
    OBLITERATE_IN_PURGE,
];

/// What an armed point does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The process aborts on the spot: no destructor, flush or reply runs (like kill -9).
    Abort,
    /// The process exits with status [`EXIT_STATUS`] without unwinding.
    Exit,
    /// The calling thread panics: the command fails, the process lives on.
    Panic,
}

/// Exit status of the `exit` action.
pub const EXIT_STATUS: i32 = 86;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FailpointError {
    #[error("failpoint entry '{0}' is not NAME=ACTION")]
    Syntax(String),
    #[error("unknown failpoint '{name}' (known: {})", POINTS.join(", "))]
    UnknownPoint { name: String },
    #[error("unknown failpoint action '{action}' for {name} (known: abort, exit, panic)")]
    UnknownAction { name: String, action: String },
    #[error("failpoints are already configured in this process")]
    AlreadyConfigured,
}

/// Armed points and what each does.
pub type Armed = Vec<(&'static str, Action)>;

static ARMED: OnceLock<Armed> = OnceLock::new();

/// Parses `NAME=ACTION[,NAME=ACTION...]` (an empty spec arms nothing).
pub fn parse(spec: &str) -> Result<Armed, FailpointError> {
    let mut armed = Vec::new();
    for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, action) = entry
            .split_once('=')
            .ok_or_else(|| FailpointError::Syntax(entry.to_string()))?;
        let (name, action) = (name.trim(), action.trim());
        let point = POINTS.into_iter().find(|p| *p == name).ok_or_else(|| {
            FailpointError::UnknownPoint {
                name: name.to_string(),
            }
        })?;
        let action = match action {
            "abort" => Action::Abort,
            "exit" => Action::Exit,
            "panic" => Action::Panic,
            _ => {
                return Err(FailpointError::UnknownAction {
                    name: name.to_string(),
                    action: action.to_string(),
                });
            }
        };
        armed.push((point, action));
    }
    Ok(armed)
}

/// Arms the points `spec` names for the rest of the process; returns what was armed.
pub fn configure(spec: &str) -> Result<Armed, FailpointError> {
    let armed = parse(spec)?;
    ARMED
        .set(armed.clone())
        .map_err(|_| FailpointError::AlreadyConfigured)?;
    Ok(armed)
}

/// Marks reaching point `name`: does what the point is armed with, nothing when unarmed.
pub fn hit(name: &str) {
    let Some(armed) = ARMED.get() else {
        return;
    };
    match armed.iter().find(|(p, _)| *p == name).map(|(_, a)| *a) {
        None => {}
        Some(Action::Abort) => std::process::abort(),
        Some(Action::Exit) => std::process::exit(EXIT_STATUS),
        Some(Action::Panic) => panic!("failpoint {name} reached"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_name_what_is_wrong() {
        let cases: [(&str, Result<Armed, FailpointError>); 6] = [
            ("", Ok(vec![])),
            (
                "submit.in-commit=abort, submit.after-commit=panic",
                Ok(vec![
                    (SUBMIT_IN_COMMIT, Action::Abort),
                    (SUBMIT_AFTER_COMMIT, Action::Panic),
                ]),
            ),
            (
                "submit.after-publish=exit",
                Ok(vec![(SUBMIT_AFTER_PUBLISH, Action::Exit)]),
            ),
            (
                "submit.in-commit",
                Err(FailpointError::Syntax("submit.in-commit".into())),
            ),
            (
                "nowhere=abort",
                Err(FailpointError::UnknownPoint {
                    name: "nowhere".into(),
                }),
            ),
            (
                "submit.in-commit=explode",
                Err(FailpointError::UnknownAction {
                    name: "submit.in-commit".into(),
                    action: "explode".into(),
                }),
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(parse(spec), want, "{spec}");
        }
    }
}
