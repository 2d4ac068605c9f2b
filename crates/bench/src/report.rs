//! Results: a text table or one JSON object per line, and raw samples as CSV or JSON lines.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{BenchError, Result};

/// One workload's summary: named figures in insertion order.
#[derive(Debug, Clone)]
pub struct Report {
    pub workload: String,
    pub fields: Vec<(String, Value)>,
    /// Raw per-operation samples (for `--out`).
    pub samples: Vec<Sample>,
}

/// One timed operation.
#[derive(Debug, Clone)]
pub struct Sample {
    pub op: &'static str,
    pub client: u32,
    /// When it started, since the workload's start.
    pub start: Duration,
    pub latency: Duration,
}

impl Report {
    /// An empty report for `workload`.
    pub fn new(workload: &str) -> Report {
        Report {
            workload: workload.to_string(),
            fields: Vec::new(),
            samples: Vec::new(),
        }
    }

    /// Adds a figure.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Report {
        self.fields.push((key.to_string(), value.into()));
        self
    }

    /// A figure by name.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The summary as one JSON object (`workload` first).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("workload".into(), Value::String(self.workload.clone()));
        for (k, v) in &self.fields {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }

    /// The summary as an aligned two-column table.
    pub fn to_text(&self) -> String {
        let width = self.fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = format!("{}\n", self.workload);
        for (k, v) in &self.fields {
            let shown = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("  {k:<width$}  {shown}\n"));
        }
        out
    }

    /// Writes the raw samples to `path`: CSV when it ends in `.csv`, JSON lines otherwise.
    pub fn write_samples(&self, path: &Path) -> Result<()> {
        let err = |e| BenchError::io(format!("writing {}", path.display()), e);
        let file = std::fs::File::create(path).map_err(err)?;
        let mut out = std::io::BufWriter::new(file);
        let csv = path.extension().is_some_and(|e| e == "csv");
        if csv {
            writeln!(out, "workload,op,client,start_ms,latency_ms").map_err(err)?;
        }
        for s in &self.samples {
            let start = crate::stats::ms(s.start);
            let latency = crate::stats::ms(s.latency);
            if csv {
                writeln!(
                    out,
                    "{},{},{},{start},{latency}",
                    self.workload, s.op, s.client
                )
                .map_err(err)?;
            } else {
                let line = serde_json::json!({
                    "workload": self.workload, "op": s.op, "client": s.client,
                    "start_ms": start, "latency_ms": latency,
                });
                writeln!(out, "{line}").map_err(err)?;
            }
        }
        // The summary goes last, so one file holds the whole run.
        if !csv {
            writeln!(out, "{}", self.to_json()).map_err(err)?;
        }
        out.flush().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text_keep_the_fields() {
        let mut r = Report::new("browse");
        r.set("total", 3u64).set("unit", "x");
        assert_eq!(r.to_json()["total"], 3);
        assert!(r.to_text().contains("total  3"));
        assert_eq!(r.get("unit"), Some(&Value::from("x")));
    }
}
