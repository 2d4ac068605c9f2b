//! Changelists: `change` (create/delete) and `submit`.

use anyhow::{Context, Result, bail};
use keel_client::WorkspaceCtx;
use keel_client::ops::{self, ChangeSave, SubmitPlan, SubmitProgress, SubmitQuery};
use keel_core::Form;

use crate::cli::{ChangeArgs, SubmitArgs};
use crate::editor::edit_text;
use crate::listing::Listing;
use crate::output::Record;
use crate::session::Session;

const PLACEHOLDER: &str = "<enter description here>";

/// A description and file list edited in a Perforce-style change form.
struct ChangeForm {
    description: String,
    files: Vec<String>,
    /// The jobs the change fixes (its `Jobs:` field).
    jobs: Vec<String>,
}

/// Opens a change form listing `opened` in $EDITOR and reads back the description and files.
fn edit_change_form(s: &Session, ws: &WorkspaceCtx, opened: &[String]) -> Result<ChangeForm> {
    let form = Form {
        fields: vec![
            ("Change".into(), vec!["new".into()]),
            ("Client".into(), vec![ws.name.clone()]),
            ("User".into(), vec![s.settings.user.clone()]),
            ("Status".into(), vec!["new".into()]),
            ("Description".into(), vec![PLACEHOLDER.into()]),
            ("Jobs".into(), Vec::new()),
            ("Files".into(), opened.to_vec()),
        ],
    };
    let text = format!(
        "# A Keel change specification.\n\
         #  Description: What the change does (required).\n\
         #  Jobs:        The jobs the change fixes, one per line (submitting closes them).\n\
         #  Files:       The opened files in the change; remove lines to leave files out.\n\n{}",
        form.render()
    );
    let edited =
        Form::parse(&edit_text(&text, "change")?).context("error in change specification")?;
    let description = edited
        .get("Description")
        .unwrap_or(&[])
        .join("\n")
        .trim()
        .to_string();
    if description.is_empty() || description == PLACEHOLDER {
        bail!("Change description missing. You must enter one.");
    }
    let files = edited
        .get("Files")
        .unwrap_or(&[])
        .iter()
        .map(|f| f.split_whitespace().next().unwrap_or("").to_string())
        .filter(|f| !f.is_empty())
        .collect();
    let jobs = edited
        .get("Jobs")
        .unwrap_or(&[])
        .iter()
        .filter_map(|j| j.split_whitespace().next().map(String::from))
        .collect();
    Ok(ChangeForm {
        description,
        files,
        jobs,
    })
}

pub async fn change(s: &mut Session, args: ChangeArgs) -> Result<()> {
    if args.force {
        s.override_owner();
    }
    if let Some(number) = args.delete {
        ops::save_change(
            &s.conn,
            ChangeSave {
                change: number,
                delete: true,
                ..Default::default()
            },
        )
        .await?;
        s.out.emit(
            Record::new().n("change", number).s("action", "deleted"),
            format!("Change {number} deleted."),
        );
        return Ok(());
    }
    let ws = s.workspace().await?;
    let (description, files, jobs) = match args.description {
        Some(d) => (d, Vec::new(), Vec::new()),
        None => {
            let opened = ops::default_change(&s.conn, &ws).await?;
            let form = edit_change_form(s, &ws, &opened.files)?;
            (form.description, form.files, form.jobs)
        }
    };
    let created = ops::save_change(
        &s.conn,
        ChangeSave {
            description,
            files,
            ..Default::default()
        },
    )
    .await?;
    s.out.emit(
        Record::new().n("change", created).s("action", "created"),
        format!("Change {created} created."),
    );
    fix_jobs(s, created, jobs).await
}

/// Links the jobs of a change form's `Jobs:` field to the (pending) change.
async fn fix_jobs(s: &Session, change: u64, jobs: Vec<String>) -> Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    for f in ops::fix_jobs(&s.conn, change, jobs).await? {
        s.out.emit(
            Record::new()
                .s("Job", &f.job)
                .n("Change", f.change)
                .s("action", "fixed"),
            format!("Job {} fixed by change {}.", f.job, f.change),
        );
    }
    Ok(())
}

pub async fn submit(s: &mut Session, args: SubmitArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let change = args.change.unwrap_or(0);
    if let Some(description) = args.description {
        let plan = ops::plan_submit(&s.conn, &ws, change).await?;
        return finish_submit(s, &ws, change, &description, &plan).await;
    }
    if change != 0 {
        // The pending change's own description.
        let plan = ops::plan_submit(&s.conn, &ws, change).await?;
        return finish_submit(s, &ws, change, "", &plan).await;
    }
    // The default changelist without -d: its files are listed in a change form.
    let opened = ops::default_change(&s.conn, &ws).await?;
    if opened.files.is_empty() {
        return finish_submit(s, &ws, 0, "", &SubmitPlan::default()).await;
    }
    let form = edit_change_form(s, &ws, &opened.files)?;
    // Jobs are fixed by a numbered change, so a form naming jobs takes the numbered route.
    if form.files.len() == opened.files.len() && form.jobs.is_empty() {
        return finish_submit(s, &ws, 0, &form.description, &opened.plan).await;
    }
    // Files removed from the form go to a new numbered change first.
    let keep: std::collections::HashSet<&str> = form.files.iter().map(String::as_str).collect();
    let moved: Vec<String> = opened
        .files
        .iter()
        .filter(|f| keep.contains(f.as_str()))
        .cloned()
        .collect();
    let created = ops::save_change(
        &s.conn,
        ChangeSave {
            description: form.description.clone(),
            files: moved,
            ..Default::default()
        },
    )
    .await?;
    fix_jobs(s, created, form.jobs).await?;
    let plan = ops::plan_submit(&s.conn, &ws, created).await?;
    finish_submit(s, &ws, created, &form.description, &plan).await
}

async fn finish_submit(
    s: &Session,
    ws: &keel_client::workspace::WorkspaceCtx,
    change: u64,
    description: &str,
    plan: &SubmitPlan,
) -> Result<()> {
    let mut listing = Listing::new(s.out);
    // A listing that will be one summary line (or nothing) needs the files' count, not their
    // records: the server then sends none.
    let query = SubmitQuery {
        change,
        description: description.to_string(),
        list_files: !Listing::summarizes(s.out, plan.files()),
    };
    let mut announced = false;
    let on_event = |event: SubmitProgress| match event {
        SubmitProgress::Retrying { reason } => {
            eprintln!("keel: {reason}; nothing was submitted, retrying once");
        }
        SubmitProgress::Submitted {
            change: submitted,
            renamed_from,
            file_count,
            files,
        } => {
            if !announced {
                announced = true;
                let pending = pending_number(change, submitted, renamed_from);
                s.out.text(format!("Submitting change {pending}."));
            }
            listing.count("submitted", file_count as usize);
            for file in &files {
                let action = file.action.map_or("", |a| a.as_str());
                listing.item_with(
                    "submitted",
                    || {
                        Record::new()
                            .s("depotFile", &file.depot_file)
                            .n("rev", u64::from(file.rev))
                            .s("action", action)
                    },
                    || format!("{action} {}#{}", file.depot_file, file.rev),
                );
            }
        }
    };
    let reply = ops::submit(&s.conn, query, plan, on_event).await?;
    listing.finish();
    let pending = reply.pending_number(change);
    // Change-commit triggers that failed: the change is submitted all the same.
    for failure in &reply.trigger_failures {
        let output = failure.output.trim_end();
        s.out.error(format!(
            "{} trigger '{}' failed on {} ({}); the change is submitted{}{output}",
            failure.kind,
            failure.name,
            failure.subject,
            failure.reason,
            if output.is_empty() { "" } else { ":\n" },
        ));
    }
    let mut record = Record::new()
        .n("submittedChange", reply.change)
        .n("change", pending);
    if !reply.trigger_failures.is_empty() {
        let failures = reply
            .trigger_failures
            .iter()
            .map(|f| {
                serde_json::json!({
                    "name": f.name, "type": f.kind, "reason": f.reason, "output": f.output,
                })
            })
            .collect();
        record = record.v("triggerFailures", serde_json::Value::Array(failures));
    }
    if pending != reply.change {
        s.out.emit(
            record.n("renamedFrom", pending),
            format!(
                "Change {pending} renamed change {} and submitted.",
                reply.change
            ),
        );
    } else {
        s.out
            .emit(record, format!("Change {} submitted.", reply.change));
    }
    // After the change's own line: a file left writable is reported, never instead of it.
    plan.finish_modes()?;
    refresh_keyword_files(s, ws, reply.change, plan).await
}

/// Rewrites the submitted keyword (`+k`) files from the new revisions, so the workspace shows
/// their new `$Id$`, `$Change$`, ... values, as after a sync.
async fn refresh_keyword_files(
    s: &Session,
    ws: &keel_client::workspace::WorkspaceCtx,
    change: u64,
    plan: &SubmitPlan,
) -> Result<()> {
    let files: Vec<String> = plan
        .keyword_files()
        .map(|f| format!("{f}@{change}"))
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    let query = ops::SyncQuery {
        paths: files,
        force: true,
        ..Default::default()
    };
    let mut failed = Vec::new();
    ops::sync(&s.conn, ws, query, |file| {
        if let Some(e) = file.error {
            failed.push(format!("{}: {e}", file.depot_file));
        }
    })
    .await?;
    for failure in failed {
        s.out.error(format!(
            "{failure} (the file is submitted; sync -f rewrites it)"
        ));
    }
    Ok(())
}

/// The number the change had before it was submitted: its pending number when the submit
/// renamed it, else the one it was submitted under.
fn pending_number(change: u64, submitted: u64, renamed_from: u64) -> u64 {
    if renamed_from != 0 {
        renamed_from
    } else if change != 0 {
        change
    } else {
        submitted
    }
}
