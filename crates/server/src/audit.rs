//! The audit log: one JSON line per file content access (who, from where, what, which
//! revision), written off the request path by a [`line_log`] writer that gathers records for
//! `audit_batch_ms` between writes. There is no rotation: move the file away and the writer
//! keeps appending to the moved file until a restart.

use crate::line_log::{self, Clock, LogLine, LogOptions, LogSender, LogWriter};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use keel_core::Digest;
use keel_service::Caller;

/// Who a request's records name, made once per request.
pub(crate) struct Who {
    user: String,
    workspace: String,
    address: String,
}

/// One content access.
struct Entry {
    time: SystemTime,
    who: Arc<Who>,
    action: &'static str,
    file: String,
    rev: u32,
    digest: Option<Digest>,
}

/// An entry as its JSON line says it.
#[derive(serde::Serialize)]
struct Line<'a> {
    time: &'a str,
    user: &'a str,
    workspace: &'a str,
    address: &'a str,
    action: &'a str,
    file: &'a str,
    rev: u32,
    digest: &'a str,
}

/// The request side of the audit log: cheap to share, never blocks.
pub(crate) struct Audit {
    queue: LogSender<Entry>,
}

/// The audit log of a running server: the request side and the writer thread.
pub(crate) struct AuditLog {
    pub(crate) audit: Arc<Audit>,
    writer: LogWriter,
}

impl AuditLog {
    /// Opens `path` for appending (creating it) and starts the writer, which writes what has
    /// gathered at most every `batch`.
    pub(crate) fn open(
        path: &Path,
        queue: usize,
        batch: Duration,
    ) -> Result<AuditLog, line_log::LogOpenError> {
        let (queue, writer) = line_log::open(
            "audit log",
            LogOptions {
                path: path.to_path_buf(),
                queue_records: queue,
                batch,
                rotation: None,
            },
        )?;
        Ok(AuditLog {
            audit: Arc::new(Audit { queue }),
            writer,
        })
    }

    /// Lets the writer write what is queued once every request side is gone; waits at most
    /// `wait` for it.
    pub(crate) fn finish(self, wait: Duration) {
        let AuditLog { audit, writer } = self;
        drop(audit);
        writer.finish(wait);
    }
}

/// The caller as its records name it.
pub(crate) fn who(caller: &Caller) -> Arc<Who> {
    Arc::new(Who {
        user: caller.user.clone(),
        workspace: caller.workspace.clone(),
        address: caller
            .address
            .map(|a: IpAddr| a.to_string())
            .unwrap_or_default(),
    })
}

impl Audit {
    /// Records that `who` was sent the content of `file#rev` (its `digest`) for `action`.
    pub(crate) fn record(
        &self,
        who: &Arc<Who>,
        action: &'static str,
        file: &str,
        rev: u32,
        digest: Option<Digest>,
    ) {
        let entry = Entry {
            time: SystemTime::now(),
            who: who.clone(),
            action,
            file: file.to_string(),
            rev,
            digest,
        };
        self.queue.send(entry);
    }
}

impl LogLine for Entry {
    fn push_line(&self, out: &mut Vec<u8>, clock: &mut Clock) {
        push_line(out, self, clock);
    }
}

/// One entry as a JSON line.
fn push_line(out: &mut Vec<u8>, e: &Entry, clock: &mut Clock) {
    let digest = e.digest.map(|d| d.to_hex()).unwrap_or_default();
    let line = Line {
        time: clock.format(e.time),
        user: &e.who.user,
        workspace: &e.who.workspace,
        address: &e.who.address,
        action: e.action,
        file: &e.file,
        rev: e.rev,
        digest: &digest,
    };
    // Serializing strings and a number into memory cannot fail.
    let _ = serde_json::to_writer(&mut *out, &line);
    out.push(b'\n');
}

/// The action a Print request records: the purpose the client gave when it is one of the
/// known ones, else `print`.
pub(crate) fn print_action(purpose: &str) -> &'static str {
    const PURPOSES: [&str; 6] = [
        "diff",
        "unshelve",
        "integrate",
        "resolve",
        "revert",
        "print",
    ];
    PURPOSES
        .iter()
        .find(|p| **p == purpose)
        .copied()
        .unwrap_or("print")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn lines_are_json_with_every_field() {
        let mut out = Vec::new();
        let caller = Caller {
            user: "al\"ice".into(),
            workspace: "ws".into(),
            host: "h".into(),
            address: Some("10.1.2.3".parse().unwrap()),
            force: false,
        };
        push_line(
            &mut out,
            &Entry {
                time: SystemTime::UNIX_EPOCH,
                who: who(&caller),
                action: "sync",
                file: "//depot/a b.txt".into(),
                rev: 3,
                digest: Some(Digest([0xab; 32])),
            },
            &mut Clock::default(),
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with('\n'));
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["user"], "al\"ice");
        assert_eq!(v["address"], "10.1.2.3");
        assert_eq!(v["file"], "//depot/a b.txt");
        assert_eq!(v["rev"], 3);
        assert_eq!(v["action"], "sync");
        assert_eq!(v["digest"], "ab".repeat(32));
        assert_eq!(v["time"], "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn unknown_purposes_print() {
        assert_eq!(print_action("diff"), "diff");
        assert_eq!(print_action(""), "print");
        assert_eq!(print_action("x\ny"), "print");
    }

    fn caller() -> Caller {
        Caller {
            user: "u".into(),
            workspace: "w".into(),
            host: "h".into(),
            address: None,
            force: false,
        }
    }

    #[test]
    fn a_full_device_loses_records_but_never_fails_the_caller() {
        let log =
            AuditLog::open(Path::new("/dev/full"), 4, Duration::from_millis(1)).expect("opens");
        let who = who(&caller());
        for i in 0..100 {
            log.audit.record(&who, "sync", "//depot/a", i, None);
        }
        let counters = log.audit.queue.losses().clone();
        log.finish(Duration::from_secs(10));
        let lost =
            counters.dropped.load(Ordering::Relaxed) + counters.failed.load(Ordering::Relaxed);
        assert_eq!(lost, 100);
    }

    #[test]
    fn records_are_written_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(&path, 1024, Duration::from_millis(1)).expect("opens");
        let who = who(&caller());
        for i in 1..=50 {
            log.audit.record(&who, "print", "//depot/a", i, None);
        }
        log.finish(Duration::from_secs(10));
        let text = std::fs::read_to_string(&path).unwrap();
        let revs: Vec<u64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["rev"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(revs, (1..=50).collect::<Vec<u64>>());
    }
}
