//! Browsing history and content: `changes`, `describe`, `files`, `dirs`, `fstat`, `filelog`, `print`.

use anyhow::Result;
use keel_client::content::ContentStream;
use keel_client::ops::{FilelogQuery, Integration};
use keel_client::transfer::LocalMode;

use super::records::{action_name, head_line, head_record, revision_line, revision_record};
use crate::cli::{
    ChangesArgs, DescribeArgs, DirsArgs, FilelogArgs, FilesListArgs, FilesRequiredArgs, PrintArgs,
    StatusArg,
};
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;
use keel_client::ops::{self, ChangeSummary, DescribeItem};

/// The JSON fields of a change in a listing.
pub(crate) fn summary_record(change: &ChangeSummary) -> Record {
    Record::new()
        .n("change", change.number.0)
        .n("time", change.time)
        .s("user", &change.user)
        .s("client", &change.workspace)
        .s("status", status_word(change.status))
        .s("desc", &change.description)
}

fn status_word(status: Option<keel_core::ChangeStatus>) -> &'static str {
    match status {
        Some(keel_core::ChangeStatus::Pending) => "pending",
        Some(keel_core::ChangeStatus::Submitted) => "submitted",
        None => "unspecified",
    }
}

pub async fn changes(s: &mut Session, args: ChangesArgs) -> Result<()> {
    if args.since.is_some() || args.since_file.is_some() {
        return super::watch::changes_since(s, args).await;
    }
    let query = ops::ChangesQuery {
        paths: s.file_args(&args.files).await?,
        max: args.max.unwrap_or(0),
        status: args.status.map(|status| match status {
            StatusArg::Pending => keel_core::ChangeStatus::Pending,
            StatusArg::Submitted => keel_core::ChangeStatus::Submitted,
        }),
        user: args.user,
        workspace: args.workspace,
    };
    // Printed as they arrive: a listing of many long descriptions is never held whole.
    let mut changes = ops::changes(&s.conn, query).await?;
    while let Some(change) = changes.next().await? {
        let pending = if change.status == Some(keel_core::ChangeStatus::Pending) {
            "*pending* "
        } else {
            ""
        };
        let head = format!(
            "Change {} on {} by {}@{} {pending}",
            change.number,
            date(change.time),
            change.user,
            change.workspace,
        );
        let text = match args.long {
            false => format!("{head}'{}'", first_line(&change.description)),
            true => {
                let mut text = format!("{}\n", head.trim_end());
                for line in change.description.lines() {
                    text.push_str(&format!("\n\t{line}"));
                }
                text.push('\n');
                text
            }
        };
        s.out.emit(summary_record(&change), text);
    }
    Ok(())
}

pub async fn describe(s: &mut Session, args: DescribeArgs) -> Result<()> {
    let query = ops::DescribeQuery {
        change: keel_core::ChangeNumber(args.change),
        summary: args.summary,
        shelved: args.shelved,
    };
    // Read whole first, as `files`: a refused description prints nothing but the refusal.
    let items = ops::describe(&s.conn, query).await?.all().await?;
    let mut files_started = false;
    let mut diffs_started = false;
    for item in items {
        match item {
            DescribeItem::Change(change) => {
                let pending = if change.status == Some(keel_core::ChangeStatus::Pending) {
                    " *pending*"
                } else {
                    ""
                };
                let mut text = format!(
                    "Change {} by {}@{} on {}{pending}\n",
                    change.number,
                    change.user,
                    change.workspace,
                    date_time(change.time)
                );
                for line in change.description.lines() {
                    text.push_str(&format!("\n\t{line}"));
                }
                text.push('\n');
                // The jobs the change fixes (p4's `Jobs fixed ...`; `job0`, `jobstat0` in JSON).
                let fixed = super::jobs::fixed_jobs(s, change.number.0).await?;
                let mut record = summary_record(&change);
                for (i, job) in fixed.iter().enumerate() {
                    record = record
                        .s(&format!("job{i}"), &job.name)
                        .s(&format!("jobstat{i}"), &job.status);
                }
                if !fixed.is_empty() {
                    text.push_str("\nJobs fixed ...\n");
                    for job in &fixed {
                        text.push_str(&format!(
                            "\n{} on {} by {} *{}*\n\n\t{}\n",
                            job.name, job.date, job.user, job.status, job.summary
                        ));
                    }
                }
                s.out.emit(record, text);
            }
            DescribeItem::File(file) => {
                if !files_started {
                    s.out.text(if args.shelved {
                        "Shelved files ...\n"
                    } else {
                        "Affected files ...\n"
                    });
                    files_started = true;
                }
                let action = action_name(file.action);
                s.out.emit(
                    revision_record(&file),
                    format!("... {}#{} {action}", file.depot_file, file.rev),
                );
            }
            DescribeItem::Diff(diff) => {
                if !diffs_started {
                    s.out.text("\nDifferences ...");
                    diffs_started = true;
                }
                s.out.emit(
                    Record::new().s("diff", &diff),
                    format!("\n{}", diff.trim_end_matches('\n')),
                );
            }
        }
    }
    Ok(())
}

pub async fn files(s: &mut Session, args: FilesListArgs) -> Result<()> {
    let query = ops::FilesQuery {
        paths: s.file_args(&args.files).await?,
        all_revisions: args.all,
        max: args.max.unwrap_or(0),
        include_deleted: args.include_deleted,
    };
    // Read whole first: a listing the server stops part way (a `maxresults` limit) prints
    // nothing but the refusal.
    let revisions = ops::files(&s.conn, query).await?.all().await?;
    for rev in &revisions {
        s.out.emit(revision_record(rev), revision_line(rev));
    }
    Ok(())
}

pub async fn dirs(s: &mut Session, args: DirsArgs) -> Result<()> {
    let paths = s.file_args(&args.dirs).await?;
    let dirs = ops::dirs(&s.conn, paths, args.include_deleted)
        .await?
        .all()
        .await?;
    for dir in &dirs {
        s.out.emit(Record::new().s("dir", dir), dir);
    }
    Ok(())
}

pub async fn fstat(s: &mut Session, args: FilesRequiredArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    // The workspace (for `clientFile`) is fetched alongside the records, not before them: one
    // round trip to the server instead of two.
    let conn = s.conn.clone();
    let (ws, reply) = if s.settings.workspace.is_some() {
        let (ws, reply) = tokio::join!(s.workspace(), ops::fstat(&conn, files));
        (ws.ok(), reply)
    } else {
        (None, ops::fstat(&conn, files).await)
    };
    let records = reply?.all().await?;
    for record in &records {
        let head = &record.head;
        let local = ws
            .as_deref()
            .and_then(|ws| {
                record
                    .client_file_in(ws)
                    .map(|c| ws.display_local(&c).display().to_string())
            })
            .unwrap_or_default();
        let mut fields: Vec<(&str, String)> = vec![
            ("depotFile", head.depot_file.clone()),
            ("clientFile", local),
            ("headAction", action_name(head.action).to_string()),
            ("headType", head.file_type.clone()),
            ("headTime", head.time.to_string()),
            // The file's own modification time recorded at submit (left out when none).
            ("headModTime", head.mod_time.to_string()),
            ("headRev", head.rev.to_string()),
            ("headChange", head.change.to_string()),
            ("fileSize", head.size.to_string()),
            ("digest", head.digest.clone()),
            ("md5", record.md5.clone()),
        ];
        if record.have_rev > 0 {
            fields.push(("haveRev", record.have_rev.to_string()));
        }
        if record.action.is_some() {
            fields.push(("action", action_name(record.action).to_string()));
            fields.push(("change", record.change.to_string()));
            fields.push(("type", record.file_type.clone()));
        }
        fields.push(("movedFile", record.move_file.clone()));
        let others: Vec<String> = record
            .others_open
            .iter()
            .map(|o| format!("{}@{}", o.user, o.workspace))
            .collect();
        fields.push(("otherOpen", others.join(" ")));
        if record.locked {
            fields.push(("ourLock", "1".into()));
        }
        if record.exclusive_held {
            fields.push(("otherLock", "1".into()));
        }
        fields.retain(|(_, v)| !v.is_empty() && v != "0");
        let mut json = Record::new();
        let mut text = String::new();
        for (name, value) in &fields {
            json = match value.parse::<u64>() {
                Ok(n) if *name != "digest" && *name != "md5" => json.n(name, n),
                _ => json.s(name, value),
            };
            text.push_str(&format!("... {name} {value}\n"));
        }
        s.out.emit(json, text);
    }
    Ok(())
}

/// Filelog's `... ... ` line: the integration records into one revision, `; `-separated.
fn integrations_text(records: &[Integration]) -> String {
    records
        .iter()
        .map(|r| format!("{} {}#{},#{}", r.how_str(), r.file, r.start_rev, r.end_rev))
        .collect::<Vec<_>>()
        .join("; ")
}

pub async fn filelog(s: &mut Session, args: FilelogArgs) -> Result<()> {
    let query = FilelogQuery {
        paths: s.file_args(&args.files).await?,
        max: args.max.unwrap_or(0),
        follow: args.follow,
    };
    let records = ops::filelog(&s.conn, query).await?.all().await?;
    let mut current = String::new();
    for entry in &records {
        let record = &entry.revision;
        if record.depot_file != current {
            current = record.depot_file.clone();
            s.out.text(&current);
        }
        s.out.emit(
            revision_record(record)
                .n("headModTime", record.mod_time)
                .s("user", &entry.user)
                .s("client", &entry.workspace)
                .s("desc", &entry.description)
                .s("how", integrations_text(&entry.integrations)),
            format!(
                "... #{} change {} {} on {} by {}@{} ({}) '{}'",
                record.rev,
                record.change,
                action_name(record.action),
                date(record.time),
                entry.user,
                entry.workspace,
                record.file_type,
                first_line(&entry.description)
            ),
        );
        if !entry.integrations.is_empty() {
            s.out.text(format!(
                "... ... {}",
                integrations_text(&entry.integrations)
            ));
        }
    }
    Ok(())
}

pub async fn print(s: &mut Session, args: PrintArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let mut content = ContentStream::open(&s.conn, files).await?;
    while let Some((file, header)) = content.next_file().await? {
        let label = format!("{}#{}", file.depot_file, file.head_rev);
        let mut record = head_record(&file);
        if !args.quiet && !s.out.json {
            s.out.text(head_line(&file));
        }
        let Some(header) = header else {
            if s.out.json {
                s.out.emit(record, "");
            }
            continue;
        };
        match &args.output {
            Some(path) => {
                let target = keel_client::paths::absolute_local(&path.to_string_lossy(), &s.cwd);
                let mode = LocalMode {
                    writable: true,
                    symlink: false,
                    executable: LocalMode::for_type(&file.head_type, true).executable,
                };
                content.write_file(&header, target, mode).await?;
                if s.out.json {
                    s.out.emit(record.s("path", path.display().to_string()), "");
                }
            }
            None if s.out.json => {
                let bytes = content.read_all(&header, &label).await?;
                record = record.v(
                    "content",
                    String::from_utf8_lossy(&bytes).into_owned().into(),
                );
                s.out.emit(record, "");
            }
            None => {
                content
                    .copy_to(std::io::stdout(), &header, std::path::Path::new(&label))
                    .await?;
            }
        }
    }
    Ok(())
}
