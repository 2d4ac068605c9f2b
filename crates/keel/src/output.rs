//! Printing results: a text line or one JSON object per record, errors to stderr.

use std::io::Write;

use serde_json::{Map, Value};

/// A JSON record with Perforce field names, built field by field.
#[derive(Debug, Default, Clone)]
pub struct Record(Map<String, Value>);

impl Record {
    pub fn new() -> Record {
        Record::default()
    }

    /// A string field; empty strings are left out.
    pub fn s(mut self, key: &str, value: impl AsRef<str>) -> Record {
        let value = value.as_ref();
        if !value.is_empty() {
            self.0.insert(key.into(), Value::String(value.to_string()));
        }
        self
    }

    /// A numeric field.
    pub fn n(mut self, key: &str, value: u64) -> Record {
        self.0.insert(key.into(), Value::from(value));
        self
    }

    /// A numeric field left out when zero.
    pub fn nz(self, key: &str, value: u64) -> Record {
        if value == 0 { self } else { self.n(key, value) }
    }

    /// A boolean field.
    pub fn b(mut self, key: &str, value: bool) -> Record {
        self.0.insert(key.into(), Value::Bool(value));
        self
    }

    /// Any JSON value.
    pub fn v(mut self, key: &str, value: Value) -> Record {
        self.0.insert(key.into(), value);
        self
    }

    /// The fields, to nest this record in another.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// Where command output goes: text or JSON lines on stdout; diagnostics on stderr.
#[derive(Debug, Clone, Copy)]
pub struct Out {
    pub json: bool,
    /// `-q`: no informational text (results and notes); errors still print.
    pub quiet: bool,
    /// `-v`: every per-file line, however long the listing (see `listing.rs`).
    pub verbose: bool,
}

impl Out {
    pub fn new(json: bool) -> Out {
        Out {
            json,
            quiet: false,
            verbose: false,
        }
    }

    /// Emits one result: `record` as a JSON line, or `text` as a text line.
    pub fn emit(&self, record: Record, text: impl AsRef<str>) {
        if self.json {
            write_stdout(&Value::Object(record.0).to_string());
        } else if !self.quiet {
            write_stdout(text.as_ref());
        }
    }

    /// Text-mode only output (headers, blank separators, content).
    pub fn text(&self, text: impl AsRef<str>) {
        if !self.json && !self.quiet {
            write_stdout(text.as_ref());
        }
    }

    /// An informational message to stderr (`File(s) up-to-date.`); silent with -q or --json.
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.quiet && !self.json {
            eprintln!("{}", text.as_ref());
        }
    }

    /// A per-file error: `keel: message` on stderr (plus `{"error": ...}` with --json).
    pub fn error(&self, message: impl AsRef<str>) {
        report_error(self.json, message.as_ref());
    }
}

/// Prints an error the way every command does.
pub fn report_error(json: bool, message: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "keel: {message}");
    if json {
        let _ = writeln!(stderr, "{}", serde_json::json!({ "error": message }));
    }
}

fn write_stdout(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
}

/// `YYYY/MM/DD` (UTC) for a Unix time in seconds.
pub fn date(secs: u64) -> String {
    let (y, m, d) = keel_core::civil_from_days((secs / 86_400) as i64);
    format!("{y:04}/{m:02}/{d:02}")
}

/// `YYYY/MM/DD hh:mm:ss` (UTC) for a Unix time in seconds.
pub fn date_time(secs: u64) -> String {
    let (y, mo, d) = keel_core::civil_from_days((secs / 86_400) as i64);
    let (h, mi, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    format!("{y:04}/{mo:02}/{d:02} {h:02}:{mi:02}:{s:02}")
}

/// The first line of a description, for one-line listings.
pub fn first_line(description: &str) -> &str {
    description.lines().next().unwrap_or("").trim_end()
}

/// `default` for change 0, else `change N` (as in `opened` and `files` output).
pub fn change_label(change: u64) -> String {
    if change == 0 {
        "default change".to_string()
    } else {
        format!("change {change}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970/01/01");
        assert_eq!(date_time(1_700_000_000), "2023/11/14 22:13:20");
        assert_eq!(date(951_782_400), "2000/02/29");
    }
}
