//! `keel admin log-report [--since T] [--until T] [--html FILE] LOGFILE...`: what the command
//! logs say about a period: which commands, users and workspaces took the time, the writer's
//! wait and hold, the errors, and a per-minute series. Reads files only, as a stream, in
//! bounded memory; no server needed.

mod histogram;
mod html;
mod read;
mod summary;

use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;

use crate::output::{Out, Record};
use summary::{Summary, Totals};

#[derive(Debug, Args)]
pub struct LogReportArgs {
    /// Only commands that ended at or after this time (UTC, e.g. 2026-11-25T14:00).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only commands that ended before this time (UTC).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Also write the report as one self-contained HTML page with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Command logs (`ROOT/logs/commands.jsonl` and its rotated `.1`, `.2`, ...).
    #[arg(required = true, value_name = "LOGFILE")]
    pub files: Vec<PathBuf>,
}

pub fn run(out: &Out, args: LogReportArgs) -> Result<()> {
    let since = args.since.as_deref().map(read::normalize_time);
    let until = args.until.as_deref().map(read::normalize_time);
    if let (Some(s), Some(u)) = (&since, &until)
        && s >= u
    {
        bail!("--since {s} is not before --until {u}");
    }
    let mut aggregate = summary::Aggregate::default();
    let unreadable = read::for_each(&args.files, since.as_deref(), until.as_deref(), &mut |r| {
        aggregate.add(r)
    })?;
    let summary = aggregate.finish(unreadable);
    if let Some(path) = &args.html {
        std::fs::write(path, html::page(&summary))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    emit(out, &summary);
    Ok(())
}

fn totals(section: &str, t: &Totals) -> Record {
    Record::new()
        .s("section", section)
        .s("name", &t.name)
        .n("count", t.count)
        .v("total_ms", t.total_ms.into())
        .v("peak_ms", t.peak_ms.into())
        .v("writer_wait_ms", t.writer_wait_ms.into())
        .v("writer_hold_ms", t.writer_hold_ms.into())
        .n("rows_read", t.rows_read)
        .n("rows_written", t.rows_written)
        .n("files", t.files)
        .n("bytes", t.bytes)
        .n("errors", t.errors)
}

fn table(out: &Out, section: &str, title: &str, rows: &[Totals]) {
    out.text(format!(
        "\n{title}\n  {:<24} {:>8} {:>12} {:>10} {:>12} {:>12} {:>12} {:>12} {:>14} {:>7}",
        "name",
        "count",
        "total ms",
        "peak ms",
        "wait ms",
        "hold ms",
        "rows read",
        "rows written",
        "bytes",
        "errors"
    ));
    for t in rows {
        out.emit(
            totals(section, t),
            format!(
                "  {:<24} {:>8} {:>12.1} {:>10.1} {:>12.1} {:>12.1} {:>12} {:>12} {:>14} {:>7}",
                t.name,
                t.count,
                t.total_ms,
                t.peak_ms,
                t.writer_wait_ms,
                t.writer_hold_ms,
                t.rows_read,
                t.rows_written,
                t.bytes,
                t.errors
            ),
        );
    }
}

fn emit(out: &Out, s: &Summary) {
    out.emit(
        Record::new()
            .s("section", "summary")
            .n("commands", s.commands)
            .n("unreadable_lines", s.unreadable_lines)
            .n("error_kinds_dropped", s.error_kinds_dropped)
            .s("first", &s.first)
            .s("last", &s.last),
        format!(
            "{} commands from {} to {}{}",
            s.commands,
            if s.first.is_empty() { "-" } else { &s.first },
            if s.last.is_empty() { "-" } else { &s.last },
            if s.unreadable_lines > 0 {
                format!(" ({} unreadable lines skipped)", s.unreadable_lines)
            } else {
                String::new()
            }
        ),
    );
    table(out, "by_total", "Commands by total time", &s.by_total);
    table(out, "by_peak", "Commands by peak time", &s.by_peak);
    table(out, "by_user", "Users by total time", &s.by_user);
    table(
        out,
        "by_workspace",
        "Workspaces by total time",
        &s.by_workspace,
    );
    table(
        out,
        "writer",
        "Writer wait and hold by command",
        &s.writer_by_command,
    );
    out.text("\nSlowest commands");
    for c in &s.slowest {
        out.emit(
            Record::new()
                .s("section", "slowest")
                .s("time", &c.time)
                .n("id", c.id)
                .s("user", &c.user)
                .s("workspace", &c.workspace)
                .s("command", &c.command)
                .s("args", &c.args)
                .v("lapse_ms", c.lapse_ms.into())
                .v("writer_wait_ms", c.writer_wait_ms.into()),
            format!(
                "  {:>10.1} ms {} {} {}@{} {} {}",
                c.lapse_ms, c.time, c.id, c.user, c.workspace, c.command, c.args
            ),
        );
    }
    out.text("\nErrors");
    for e in &s.errors {
        out.emit(
            Record::new()
                .s("section", "errors")
                .s("command", &e.command)
                .s("code", &e.code)
                .s("error", &e.error)
                .n("count", e.count),
            format!("  {:>6} {} {} {}", e.count, e.command, e.code, e.error),
        );
    }
    out.text(format!(
        "\nPer minute\n  {:<16} {:>9} {:>10} {:>14}",
        "minute", "commands", "p99 ms", "writer wait ms"
    ));
    for m in &s.minutes {
        out.emit(
            Record::new()
                .s("section", "minute")
                .s("minute", &m.minute)
                .n("commands", m.commands)
                .v("p99_ms", m.p99_ms.into())
                .v("writer_wait_ms", m.writer_wait_ms.into()),
            format!(
                "  {:<16} {:>9} {:>10.1} {:>14.1}",
                m.minute, m.commands, m.p99_ms, m.writer_wait_ms
            ),
        );
    }
}
