//! The report's numbers, from the records alone: commands by total and peak time, the slowest
//! single commands, time and volume by user and by workspace, writer wait and hold by
//! command, errors, and a per-minute series.

use super::read::LogLine;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many rows each table keeps.
pub const TOP: usize = 20;

/// One group's totals (a command, a user or a workspace).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    pub peak_ms: f64,
    pub writer_wait_ms: f64,
    pub writer_hold_ms: f64,
    pub rows_written: u64,
    pub files: u64,
    pub bytes: u64,
    pub errors: u64,
}

impl Totals {
    fn add(&mut self, r: &LogLine) {
        self.count += 1;
        self.total_ms += r.lapse_ms;
        self.peak_ms = self.peak_ms.max(r.lapse_ms);
        self.writer_wait_ms += r.writer_wait_ms;
        self.writer_hold_ms += r.writer_hold_ms;
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
    pub p99_ms: f64,
    pub writer_wait_ms: f64,
}

/// The whole report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub commands: u64,
    pub unreadable_lines: u64,
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

fn ranked(groups: BTreeMap<String, Totals>, key: impl Fn(&Totals) -> f64) -> Vec<Totals> {
    let mut v: Vec<Totals> = groups.into_values().collect();
    v.sort_by(|a, b| key(b).total_cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
    v.truncate(TOP);
    v
}

/// The `q` quantile (0..=1) of `values` (sorted here), nearest rank.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

pub fn summarize(lines: &[LogLine], unreadable: u64) -> Summary {
    let mut commands: BTreeMap<String, Totals> = BTreeMap::new();
    let mut users: BTreeMap<String, Totals> = BTreeMap::new();
    let mut workspaces: BTreeMap<String, Totals> = BTreeMap::new();
    let mut errors: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let mut minutes: BTreeMap<String, (u64, Vec<f64>, f64)> = BTreeMap::new();
    for r in lines {
        let group = |map: &mut BTreeMap<String, Totals>, name: &str| {
            map.entry(name.to_string())
                .or_insert_with(|| Totals {
                    name: name.to_string(),
                    ..Totals::default()
                })
                .add(r)
        };
        group(&mut commands, &r.command);
        group(&mut users, &r.user);
        group(&mut workspaces, &r.workspace);
        if r.result != "ok" {
            *errors
                .entry((r.command.clone(), r.code.clone(), r.error.clone()))
                .or_default() += 1;
        }
        let minute: String = r.time.chars().take(16).collect();
        let m = minutes.entry(minute).or_default();
        m.0 += 1;
        m.1.push(r.lapse_ms);
        m.2 += r.writer_wait_ms;
    }
    let mut slowest: Vec<&LogLine> = lines.iter().collect();
    slowest.sort_by(|a, b| b.lapse_ms.total_cmp(&a.lapse_ms));
    let mut errors: Vec<ErrorCount> = errors
        .into_iter()
        .map(|((command, code, error), count)| ErrorCount {
            command,
            code,
            error,
            count,
        })
        .collect();
    errors.sort_by_key(|e| std::cmp::Reverse(e.count));
    errors.truncate(TOP);
    Summary {
        commands: lines.len() as u64,
        unreadable_lines: unreadable,
        first: lines
            .iter()
            .map(|r| r.time.clone())
            .min()
            .unwrap_or_default(),
        last: lines
            .iter()
            .map(|r| r.time.clone())
            .max()
            .unwrap_or_default(),
        by_total: ranked(commands.clone(), |t| t.total_ms),
        by_peak: ranked(commands.clone(), |t| t.peak_ms),
        slowest: slowest
            .into_iter()
            .take(TOP)
            .map(|r| Slow {
                time: r.time.clone(),
                id: r.id,
                user: r.user.clone(),
                workspace: r.workspace.clone(),
                command: r.command.clone(),
                args: r.args.clone(),
                lapse_ms: r.lapse_ms,
                writer_wait_ms: r.writer_wait_ms,
            })
            .collect(),
        by_user: ranked(users, |t| t.total_ms),
        by_workspace: ranked(workspaces, |t| t.total_ms),
        writer_by_command: ranked(commands, |t| t.writer_wait_ms + t.writer_hold_ms),
        errors,
        minutes: minutes
            .into_iter()
            .map(|(minute, (commands, mut lapses, wait))| Minute {
                minute,
                commands,
                p99_ms: quantile(&mut lapses, 0.99),
                writer_wait_ms: wait,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(time: &str, user: &str, command: &str, lapse: f64, ok: bool) -> LogLine {
        LogLine {
            time: time.into(),
            user: user.into(),
            workspace: format!("{user}-ws"),
            command: command.into(),
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
        let s = summarize(&lines, 1);
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

    #[test]
    fn quantile_is_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&mut v, 0.99), 99.0);
        assert_eq!(quantile(&mut [], 0.99), 0.0);
    }
}
