//! The audit log: one JSON line per file content access (who, from where, what, which
//! revision), written off the request path. A request only puts a record on a bounded queue
//! (`audit_queue_records`) and never waits: when the writer is that far behind, the record is
//! dropped and counted, and the count is logged. A writer thread takes whatever is queued and
//! appends it with one write, then sleeps `audit_batch_ms` so the next records gather into one
//! batch instead of waking it one by one; a failed write (full disk, unwritable file) drops that batch,
//! cuts the file back to where the batch began so no partial line stays, is counted and
//! logged, and never reaches a request. Lines are not fsynced: a machine crash may lose the
//! last ones. There is no rotation: move the file away and the writer keeps appending to the
//! moved file until a restart.

use crate::lossy_log::{self, LossReport, Losses};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime};

use keel_core::{Digest, civil_from_days};
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
    queue: SyncSender<Entry>,
    counters: Arc<Losses>,
}

/// The audit log of a running server: the request side and the writer thread.
pub(crate) struct AuditLog {
    pub(crate) audit: Arc<Audit>,
    done: Receiver<()>,
}

/// The audit log file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the audit log {}: {source}", path.display())]
pub struct AuditOpenError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl AuditLog {
    /// Opens `path` for appending (creating it) and starts the writer, which writes what has
    /// gathered at most every `batch`.
    pub(crate) fn open(
        path: &Path,
        queue: usize,
        batch: Duration,
    ) -> Result<AuditLog, AuditOpenError> {
        let failed = |source| AuditOpenError {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(failed)?;
        let (tx, rx) = std::sync::mpsc::sync_channel(queue);
        let (done_tx, done) = std::sync::mpsc::channel();
        let counters = Arc::new(Losses::default());
        let writer = Writer {
            file,
            path: path.to_path_buf(),
            counters: counters.clone(),
            losses: LossReport::new("audit log", counters.clone()),
            batch,
        };
        std::thread::Builder::new()
            .name("keel-audit".into())
            .spawn(move || {
                writer.run(rx);
                let _ = done_tx.send(());
            })
            .map_err(failed)?;
        Ok(AuditLog {
            audit: Arc::new(Audit {
                queue: tx,
                counters,
            }),
            done,
        })
    }

    /// Lets the writer write what is queued once every request side is gone; waits at most
    /// `wait` for it.
    pub(crate) fn finish(self, wait: Duration) {
        let AuditLog { audit, done } = self;
        drop(audit);
        let _ = done.recv_timeout(wait);
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
        match self.queue.try_send(entry) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

struct Writer {
    file: std::fs::File,
    path: PathBuf,
    counters: Arc<Losses>,
    losses: LossReport,
    /// How long records gather between writes.
    batch: Duration,
}

impl Writer {
    fn run(mut self, rx: Receiver<Entry>) {
        let mut batch = Vec::new();
        let mut clock = Clock::default();
        while let Ok(first) = rx.recv() {
            batch.clear();
            let mut count = 1;
            push_line(&mut batch, &first, &mut clock);
            while let Ok(next) = rx.try_recv() {
                push_line(&mut batch, &next, &mut clock);
                count += 1;
            }
            if let Err(e) = lossy_log::append(&mut self.file, &batch) {
                self.counters.failed.fetch_add(count, Ordering::Relaxed);
                self.losses.report(&self.path, Some(&e));
            } else {
                self.losses.report(&self.path, None);
            }
            std::thread::sleep(self.batch);
        }
        self.losses.report_now(&self.path, None);
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

/// Formats times, reusing the date and time of day while the second stays the same.
#[derive(Default)]
pub(crate) struct Clock {
    second: Option<u64>,
    /// `2026-11-25T12:34:56.` for `second`.
    prefix: String,
    text: String,
}

impl Clock {
    /// `time` as RFC 3339 UTC with milliseconds (`2026-11-25T12:34:56.789Z`).
    pub(crate) fn format(&mut self, time: SystemTime) -> &str {
        use std::fmt::Write as _;
        let since = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = since.as_secs();
        if self.second != Some(secs) {
            let (days, rem) = (secs / 86_400, secs % 86_400);
            let (y, m, d) = civil_from_days(days as i64);
            self.prefix = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60
            );
            self.second = Some(secs);
        }
        self.text.clear();
        self.text.push_str(&self.prefix);
        let _ = write!(self.text, "{:03}Z", since.subsec_millis());
        &self.text
    }
}

#[cfg(test)]
fn rfc3339(time: SystemTime) -> String {
    Clock::default().format(time).to_string()
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

    #[test]
    fn times_are_rfc3339_utc() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_123, "2000-02-29T00:00:00.123Z"),
            (1_764_073_696_789, "2025-11-25T12:28:16.789Z"),
        ];
        for (millis, want) in cases {
            let t = SystemTime::UNIX_EPOCH + Duration::from_millis(millis);
            assert_eq!(rfc3339(t), want);
        }
    }

    #[test]
    fn lines_are_json_with_every_field() {
        let mut out = Vec::new();
        let caller = Caller {
            user: "al\"ice".into(),
            workspace: "ws".into(),
            host: "h".into(),
            address: Some("10.1.2.3".parse().unwrap()),
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
        let counters = log.audit.counters.clone();
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
