//! One ended command as the command log writes it: a line of JSON with who, what, how long,
//! how much, and how it ended. docs/guide/monitoring.md ("The command log") lists the fields.
//!
//! A record is made on the request path when the command ends, so it copies nothing: it holds
//! the [`Running`] command (whose names and arguments were set once) and the counters as they
//! stood at the end. The log's writer thread turns it into the JSON line, written straight
//! into the writer's buffer (field names are constant text; strings are escaped as JSON
//! requires, numbers written as integers, milliseconds from microseconds exactly).

use super::registry::Running;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// One command's record, made when it ends.
#[derive(Clone)]
pub(crate) struct CommandRecord {
    pub(crate) run: Arc<Running>,
    pub(crate) lapse: Duration,
    pub(crate) writer_wait: Duration,
    pub(crate) writer_hold: Duration,
    pub(crate) rows_read: u64,
    pub(crate) rows_written: u64,
    pub(crate) files_sent: u64,
    pub(crate) files_received: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    pub(crate) code: tonic::Code,
    /// The error's message (empty on success).
    pub(crate) error: String,
}

impl CommandRecord {
    /// The record of `run`, ending now with `outcome` (`None`: success).
    pub(crate) fn of(run: &Arc<Running>, outcome: Option<(tonic::Code, String)>) -> CommandRecord {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &run.counters;
        let (code, error) = outcome.unwrap_or((tonic::Code::Ok, String::new()));
        CommandRecord {
            run: run.clone(),
            lapse: run.elapsed(),
            writer_wait: c.writer_wait(),
            writer_hold: c.writer_hold(),
            rows_read: c.rows_read(),
            rows_written: c.rows_written(),
            files_sent: c.files_sent(),
            files_received: c.files_received(),
            bytes_sent: run.bytes_out.load(Relaxed),
            bytes_received: run.bytes_in.load(Relaxed),
            code,
            error,
        }
    }

    /// `ok`, `error` or `terminated`.
    pub(crate) fn result(&self) -> &'static str {
        match (self.code, self.run.terminated_by.get().is_some()) {
            (tonic::Code::Ok, _) => "ok",
            (_, true) => "terminated",
            (_, false) => "error",
        }
    }

    /// Who the command ran as (empty before its handler read the caller).
    pub(crate) fn user(&self) -> &str {
        self.run.who.get().map_or("", |w| w.user.as_str())
    }

    /// Appends the record's JSON line (with its newline) to `out`; `time` is when it ended
    /// (RFC 3339 UTC).
    pub(crate) fn write_line(&self, time: &str, out: &mut Vec<u8>) {
        let run = &self.run;
        let who = run.who.get();
        let start_ms = run
            .started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let mut n = itoa::Buffer::new();
        out.extend_from_slice(b"{\"time\":");
        string(out, time);
        out.extend_from_slice(b",\"start_ms\":");
        out.extend_from_slice(n.format(start_ms).as_bytes());
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(n.format(run.id).as_bytes());
        out.extend_from_slice(b",\"user\":");
        string(out, who.map_or("", |w| &w.user));
        out.extend_from_slice(b",\"workspace\":");
        string(out, who.map_or("", |w| &w.workspace));
        out.extend_from_slice(b",\"host\":");
        string(out, who.map_or("", |w| &w.host));
        out.extend_from_slice(b",\"address\":\"");
        if let Some(address) = run.address.get() {
            use std::io::Write as _;
            // An address's text needs no escaping.
            let _ = write!(out, "{address}");
        }
        out.extend_from_slice(b"\",\"program\":");
        string(out, &run.program);
        out.extend_from_slice(b",\"command\":");
        string(out, &run.command);
        out.extend_from_slice(b",\"args\":");
        string(out, &run.args());
        out.extend_from_slice(b",\"lapse_ms\":");
        millis(out, self.lapse);
        out.extend_from_slice(b",\"writer_wait_ms\":");
        millis(out, self.writer_wait);
        out.extend_from_slice(b",\"writer_hold_ms\":");
        millis(out, self.writer_hold);
        for (name, value) in [
            (&b",\"rows_read\":"[..], self.rows_read),
            (b",\"rows_written\":", self.rows_written),
            (b",\"files_sent\":", self.files_sent),
            (b",\"files_received\":", self.files_received),
            (b",\"bytes_sent\":", self.bytes_sent),
            (b",\"bytes_received\":", self.bytes_received),
        ] {
            out.extend_from_slice(name);
            out.extend_from_slice(n.format(value).as_bytes());
        }
        out.extend_from_slice(b",\"result\":\"");
        out.extend_from_slice(self.result().as_bytes());
        out.extend_from_slice(b"\",\"code\":\"");
        out.extend_from_slice(code_name(self.code).as_bytes());
        out.extend_from_slice(b"\",\"error\":");
        string(out, &self.error);
        out.extend_from_slice(b",\"terminated_by\":");
        string(out, run.terminated_by.get().map_or("", String::as_str));
        out.extend_from_slice(b"}\n");
    }
}

/// `d` in milliseconds with up to three decimals (`352.1`, `0.004`, `12.0`): the exact
/// decimal of its whole microseconds.
fn millis(out: &mut Vec<u8>, d: Duration) {
    let us = d.as_micros() as u64;
    let mut n = itoa::Buffer::new();
    out.extend_from_slice(n.format(us / 1000).as_bytes());
    out.push(b'.');
    let frac = us % 1000;
    let digits = [
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ];
    let keep = match (digits[1], digits[2]) {
        (_, d) if d != b'0' => 3,
        (d, _) if d != b'0' => 2,
        _ => 1,
    };
    out.extend_from_slice(&digits[..keep]);
}

/// `s` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`, ... or
/// `\u00XX` (as serde_json writes them).
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut clean = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[clean..i]);
        clean = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
    }
    out.extend_from_slice(&bytes[clean..]);
    out.push(b'"');
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The line is JSON with every field, strings escaped so that they read back the same,
    /// and milliseconds the exact decimal of the microseconds.
    #[test]
    fn the_line_is_json_that_reads_back_exactly() {
        let registry = super::super::Registry::new(Vec::new(), Duration::from_secs(60));
        let run = registry.start("Fstat".into(), "keel/0.1 \"x\"".into());
        let odd = "a\"b\\c\nd\te\u{1}\u{7f}é\r\u{8}\u{c}";
        let _ = run.who.set(super::super::Who {
            user: odd.into(),
            workspace: "w".into(),
            host: String::new(),
        });
        let _ = run.address.set("::1".parse().expect("address"));
        let request = keel_proto::v1::FilesRequest {
            files: vec!["//depot/a".into()],
            ..Default::default()
        };
        let kept = super::super::args::Arguments::keep("Fstat", &request, 512);
        let _ = run.args.set(kept.expect("not a secret"));
        let mut record = CommandRecord::of(&run, Some((tonic::Code::NotFound, odd.into())));
        record.lapse = Duration::from_micros(352_100);
        record.writer_wait = Duration::from_micros(4);
        record.writer_hold = Duration::from_micros(12_000);
        record.rows_read = 7;
        record.bytes_sent = u64::MAX;
        let mut out = Vec::new();
        record.write_line("2026-11-25T14:21:07.412Z", &mut out);
        assert_eq!(out.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(v["time"], "2026-11-25T14:21:07.412Z");
        assert_eq!(v["user"], odd);
        assert_eq!(v["error"], odd);
        assert_eq!(v["program"], "keel/0.1 \"x\"");
        assert_eq!(v["address"], "::1");
        assert!(
            v["args"]
                .as_str()
                .is_some_and(|a| a.starts_with("files: [\"//depot/a\"]")),
            "{}",
            v["args"]
        );
        assert_eq!(v["command"], "Fstat");
        assert_eq!(v["lapse_ms"].as_f64(), Some(352.1));
        assert_eq!(v["writer_wait_ms"].as_f64(), Some(0.004));
        assert_eq!(v["writer_hold_ms"].as_f64(), Some(12.0));
        assert_eq!(v["rows_read"], 7);
        assert_eq!(v["bytes_sent"], u64::MAX);
        assert_eq!(v["result"], "error");
        assert_eq!(v["code"], "NOT_FOUND");
        assert_eq!(v["terminated_by"], "");
        assert_eq!(v["id"], run.id);
        let fields: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(fields.len(), 23, "{fields:?}");
        // Each escape is the one serde_json writes.
        let mut ours = Vec::new();
        string(&mut ours, odd);
        assert_eq!(ours, serde_json::to_vec(odd).expect("serde_json"));
    }

    #[test]
    fn milliseconds_are_the_exact_decimal_of_the_microseconds() {
        for (us, text) in [
            (0, "0.0"),
            (1, "0.001"),
            (10, "0.01"),
            (100, "0.1"),
            (1_234_560, "1234.56"),
        ] {
            let mut out = Vec::new();
            millis(&mut out, Duration::from_micros(us));
            assert_eq!(String::from_utf8(out).expect("utf8"), text);
            assert_eq!(text.parse::<f64>().expect("f64"), us as f64 / 1000.0);
        }
    }
}
