//! The report's numbers, gathered as the records stream past: commands by total and peak
//! time, the slowest single commands, time and volume by user and by workspace, writer wait
//! and hold by command, errors, and a per-minute series.
//!
//! Memory is bounded by what the log names, not by its length: one [`Totals`] per command,
//! user and workspace; the [`TOP`] slowest commands (a heap); one [`Histogram`] per minute;
//! at most [`ERROR_KEYS`] distinct errors (past that, the rarest half is dropped and the
//! drop counted, so the top errors' counts may miss occurrences seen before they became
//! frequent).

use super::histogram::Histogram;
use super::read::LogLine;
use serde::Serialize;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// How many rows each table keeps.
pub const TOP: usize = 20;

/// How many distinct (command, code, error) triples are counted at once.
pub const ERROR_KEYS: usize = 10_000;

/// One group's totals (a command, a user or a workspace).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    pub peak_ms: f64,
    pub writer_wait_ms: f64,
    pub writer_hold_ms: f64,
    pub rows_read: u64,
    pub rows_written: u64,
    pub files: u64,
    pub bytes: u64,
    pub errors: u64,
}

impl Totals {
    fn add(&mut self, r: &LogLine<'_>) {
        self.count += 1;
        self.total_ms += r.lapse_ms;
        self.peak_ms = self.peak_ms.max(r.lapse_ms);
        self.writer_wait_ms += r.writer_wait_ms;
        self.writer_hold_ms += r.writer_hold_ms;
        self.rows_read += r.rows_read;
        self.rows_written += r.rows_written;
        self.files += r.files_sent + r.files_received;
        self.bytes += r.bytes_sent + r.bytes_received;
        self.errors += u64::from(r.result != "ok");
    }
}

/// One command as the slowest list shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Slow {
    pub time: String,
    pub id: u64,
    pub user: String,
    pub workspace: String,
    pub command: String,
    pub args: String,
    pub lapse_ms: f64,
    pub writer_wait_ms: f64,
}

/// An error and how often it happened.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorCount {
    pub command: String,
    pub code: String,
    pub error: String,
    pub count: u64,
}

/// One minute of the series.
#[derive(Clone, Debug, Serialize)]
pub struct Minute {
    /// `YYYY-MM-DDTHH:MM`.
    pub minute: String,
    pub commands: u64,
    /// The minute's p99 lapse (see [`Histogram`] for its precision).
    pub p99_ms: f64,
    pub writer_wait_ms: f64,
}

/// The whole report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub commands: u64,
    pub unreadable_lines: u64,
    /// Distinct errors dropped from the count to keep it bounded (see [`ERROR_KEYS`]).
    pub error_kinds_dropped: u64,
    pub first: String,
    pub last: String,
    pub by_total: Vec<Totals>,
    pub by_peak: Vec<Totals>,
    pub slowest: Vec<Slow>,
    pub by_user: Vec<Totals>,
    pub by_workspace: Vec<Totals>,
    pub writer_by_command: Vec<Totals>,
    pub errors: Vec<ErrorCount>,
    pub minutes: Vec<Minute>,
}

/// A slow command in the heap: ordered by lapse, and among equal lapses the earlier first
/// (so the heap's smallest, the one to drop, is the fastest and latest).
struct Ranked {
    lapse_ms: f64,
    seq: u64,
    slow: Slow,
}

impl Ranked {
    fn key(&self) -> (f64, Reverse<u64>) {
        (self.lapse_ms, Reverse(self.seq))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.key(), other.key());
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
    }
}

/// One minute while gathering.
#[derive(Default)]
struct MinuteSoFar {
    commands: u64,
    lapses: Histogram,
    writer_wait_ms: f64,
}

/// The report being gathered, one record at a time.
#[derive(Default)]
pub struct Aggregate {
    commands: u64,
    first: String,
    last: String,
    by_command: HashMap<String, Totals>,
    by_user: HashMap<String, Totals>,
    by_workspace: HashMap<String, Totals>,
    errors: HashMap<(String, String, String), u64>,
    error_kinds_dropped: u64,
    minutes: BTreeMap<String, MinuteSoFar>,
    /// The [`TOP`] slowest so far, the fastest of them on top.
    slowest: BinaryHeap<Reverse<Ranked>>,
}

/// Adds `r` to `name`'s totals in `map`, allocating the name only the first time.
fn group(map: &mut HashMap<String, Totals>, name: &str, r: &LogLine<'_>) {
    match map.get_mut(name) {
        Some(t) => t.add(r),
        None => {
            let mut t = Totals {
                name: name.to_string(),
                ..Totals::default()
            };
            t.add(r);
            map.insert(name.to_string(), t);
        }
    }
}

impl Aggregate {
    pub fn add(&mut self, r: &LogLine<'_>) {
        self.commands += 1;
        if self.first.is_empty() || *r.time < *self.first {
            self.first = r.time.to_string();
        }
        if *r.time > *self.last {
            self.last = r.time.to_string();
        }
        group(&mut self.by_command, &r.command, r);
        group(&mut self.by_user, &r.user, r);
        group(&mut self.by_workspace, &r.workspace, r);
        if r.result != "ok" {
            self.error(r);
        }
        let minute = r.time.get(..16).unwrap_or(&r.time);
        let m = match self.minutes.get_mut(minute) {
            Some(m) => m,
            None => self.minutes.entry(minute.to_string()).or_default(),
        };
        m.commands += 1;
        m.lapses.add(r.lapse_ms);
        m.writer_wait_ms += r.writer_wait_ms;
        let full = self.slowest.len() >= TOP;
        let beats = |top: &Ranked| r.lapse_ms > top.lapse_ms;
        if !full || self.slowest.peek().is_some_and(|Reverse(top)| beats(top)) {
            if full {
                self.slowest.pop();
            }
            self.slowest.push(Reverse(Ranked {
                lapse_ms: r.lapse_ms,
                seq: self.commands,
                slow: Slow {
                    time: r.time.to_string(),
                    id: r.id,
                    user: r.user.to_string(),
                    workspace: r.workspace.to_string(),
                    command: r.command.to_string(),
                    args: r.args.to_string(),
                    lapse_ms: r.lapse_ms,
                    writer_wait_ms: r.writer_wait_ms,
                },
            }));
        }
    }

    fn error(&mut self, r: &LogLine<'_>) {
        let key = (
            r.command.to_string(),
            r.code.to_string(),
            r.error.to_string(),
        );
        if let Some(n) = self.errors.get_mut(&key) {
            *n += 1;
            return;
        }
        if self.errors.len() >= ERROR_KEYS {
            // Keep the more frequent half.
            let mut counts: Vec<u64> = self.errors.values().copied().collect();
            let (_, median, _) = counts.select_nth_unstable(ERROR_KEYS / 2);
            let median = *median;
            let before = self.errors.len();
            self.errors.retain(|_, n| *n > median);
            if self.errors.len() >= ERROR_KEYS {
                self.errors.clear();
            }
            self.error_kinds_dropped += (before - self.errors.len()) as u64;
        }
        self.errors.insert(key, 1);
    }

    /// The report, with `unreadable` lines counted.
    pub fn finish(self, unreadable: u64) -> Summary {
        let mut errors: Vec<ErrorCount> = self
            .errors
            .into_iter()
            .map(|((command, code, error), count)| ErrorCount {
                command,
                code,
                error,
                count,
            })
            .collect();
        errors.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| (&a.command, &a.code, &a.error).cmp(&(&b.command, &b.code, &b.error)))
        });
        errors.truncate(TOP);
        let mut slowest: Vec<Ranked> = self.slowest.into_iter().map(|Reverse(r)| r).collect();
        slowest.sort_by(|a, b| b.cmp(a));
        let commands: Vec<Totals> = self.by_command.into_values().collect();
        Summary {
            commands: self.commands,
            unreadable_lines: unreadable,
            error_kinds_dropped: self.error_kinds_dropped,
            first: self.first,
            last: self.last,
            by_total: ranked(commands.clone(), |t| t.total_ms),
            by_peak: ranked(commands.clone(), |t| t.peak_ms),
            slowest: slowest.into_iter().map(|r| r.slow).collect(),
            by_user: ranked(self.by_user.into_values().collect(), |t| t.total_ms),
            by_workspace: ranked(self.by_workspace.into_values().collect(), |t| t.total_ms),
            writer_by_command: ranked(commands, |t| t.writer_wait_ms + t.writer_hold_ms),
            errors,
            minutes: self
                .minutes
                .into_iter()
                .map(|(minute, m)| Minute {
                    minute,
                    commands: m.commands,
                    p99_ms: m.lapses.quantile(0.99),
                    writer_wait_ms: m.writer_wait_ms,
                })
                .collect(),
        }
    }
}

fn ranked(mut groups: Vec<Totals>, key: impl Fn(&Totals) -> f64) -> Vec<Totals> {
    groups.sort_by(|a, b| key(b).total_cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
    groups.truncate(TOP);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(time: &str, user: &str, command: &str, lapse: f64, ok: bool) -> LogLine<'static> {
        LogLine {
            time: time.to_string().into(),
            user: user.to_string().into(),
            workspace: format!("{user}-ws").into(),
            command: command.to_string().into(),
            lapse_ms: lapse,
            writer_wait_ms: lapse / 2.0,
            result: if ok { "ok" } else { "error" }.into(),
            code: if ok { "OK" } else { "NOT_FOUND" }.into(),
            ..LogLine::default()
        }
    }

    #[test]
    fn groups_rank_by_time_and_minutes_carry_p99() {
        let lines = vec![
            line("2026-11-25T10:00:01.000Z", "build", "Sync", 900.0, true),
            line("2026-11-25T10:00:02.000Z", "ann", "Fstat", 5.0, true),
            line("2026-11-25T10:01:00.000Z", "build", "Sync", 100.0, true),
            line("2026-11-25T10:01:30.000Z", "ann", "Fstat", 7.0, false),
        ];
        let mut agg = Aggregate::default();
        for l in &lines {
            agg.add(l);
        }
        let s = agg.finish(1);
        assert_eq!(s.commands, 4);
        assert_eq!(s.unreadable_lines, 1);
        assert_eq!(s.by_total[0].name, "Sync");
        assert_eq!(s.by_total[0].total_ms, 1000.0);
        assert_eq!(s.by_peak[0].peak_ms, 900.0);
        assert_eq!(s.by_user[0].name, "build");
        assert_eq!(s.by_workspace[0].name, "build-ws");
        assert_eq!(s.slowest[0].lapse_ms, 900.0);
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.errors[0].code, "NOT_FOUND");
        assert_eq!(s.minutes.len(), 2);
        assert_eq!(s.minutes[0].minute, "2026-11-25T10:00");
        assert_eq!(s.minutes[0].commands, 2);
        assert_eq!(s.minutes[0].p99_ms, 900.0);
        assert_eq!(s.minutes[1].writer_wait_ms, 53.5);
    }

    /// The slowest list keeps the [`TOP`] slowest, slowest first, ties in log order; errors
    /// stay bounded however many distinct ones arrive.
    #[test]
    fn slowest_and_errors_stay_bounded() {
        let mut agg = Aggregate::default();
        for i in 0..(ERROR_KEYS as u64 * 3) {
            let mut l = line(
                "2026-11-25T10:00:01.000Z",
                "u",
                "Fstat",
                (i % 1000) as f64,
                false,
            );
            l.id = i;
            l.error = format!("no such file //depot/{i}").into();
            agg.add(&l);
        }
        assert!(agg.errors.len() <= ERROR_KEYS);
        let s = agg.finish(0);
        assert_eq!(s.slowest.len(), TOP);
        assert!(s.slowest.iter().all(|c| c.lapse_ms == 999.0));
        let ids: Vec<u64> = s.slowest.iter().map(|c| c.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "ties keep log order");
        assert_eq!(ids[0], 999);
        assert!(s.error_kinds_dropped > 0);
        assert_eq!(s.errors.len(), TOP);
        assert_eq!(s.commands, ERROR_KEYS as u64 * 3);
    }
}
