//! `change` and `submit`: make or delete a pending change, link jobs to it, and submit a
//! change (its content uploaded as [`crate::submit`] plans it), hearing of its files in
//! batches as the server commits them.

use keel_core::FileAction;
use keel_proto::v1 as pb;

use crate::actions;
use crate::connect::Connection;
use crate::submit::SubmitEvent;
use crate::workspace::WorkspaceCtx;

pub use crate::submit::SubmitPlan;

/// Why a change could not be saved or submitted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The server could not be reached, or refused (rights, a locked or out-of-date file, a
    /// trigger), or a workspace file could not be read; nothing was submitted.
    #[error(transparent)]
    Call(#[from] crate::Error),
}

impl SubmitError {
    /// The connection's or server's error inside (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            SubmitError::Call(e) => Some(e),
        }
    }
}

/// A pending change to make (number 0) or to delete.
#[derive(Clone, Debug, Default)]
pub struct ChangeSave {
    /// 0: a new change.
    pub change: u64,
    pub description: String,
    /// Open files (depot syntax) moved into the new change; empty: none.
    pub files: Vec<String>,
    /// Delete pending change `change` (it must hold no files).
    pub delete: bool,
}

/// Makes a pending change, or deletes one; the change's number.
pub async fn save_change(conn: &Connection, save: ChangeSave) -> Result<u64, SubmitError> {
    let reply = conn
        .reply(conn.client().save_change(pb::SaveChangeRequest {
            caller: conn.caller(),
            change: save.change,
            description: save.description,
            files: save.files,
            delete: save.delete,
        }))
        .await?;
    Ok(if save.delete {
        save.change
    } else {
        reply.change
    })
}

/// A job linked to a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFix {
    pub job: String,
    pub change: u64,
}

/// Links `jobs` to `change` (submitting a pending change closes them).
pub async fn fix_jobs(
    conn: &Connection,
    change: u64,
    jobs: Vec<String>,
) -> Result<Vec<JobFix>, SubmitError> {
    let reply = conn
        .reply(conn.client().fix(pb::FixRequest {
            caller: conn.caller(),
            change,
            jobs,
            ..Default::default()
        }))
        .await?;
    Ok(reply
        .fixes
        .into_iter()
        .map(|f| JobFix {
            job: f.job,
            change: f.change,
        })
        .collect())
}

/// The default change of a workspace: its open files, as a change form lists them, and the
/// plan that submits them all.
#[derive(Debug)]
pub struct DefaultChange {
    /// Depot syntax, in the server's order.
    pub files: Vec<String>,
    pub plan: SubmitPlan,
}

/// The files open in `ws`'s default change and the plan to submit them.
pub async fn default_change(
    conn: &Connection,
    ws: &WorkspaceCtx,
) -> Result<DefaultChange, SubmitError> {
    let opened = ws.opened(conn, Vec::new(), Some(0)).await?;
    let plan = SubmitPlan::of_records(ws, &opened)?;
    Ok(DefaultChange {
        files: opened.into_iter().map(|r| r.depot_file).collect(),
        plan,
    })
}

/// Plans the submit of pending `change` of `ws` (0: the default change): what to upload.
pub async fn plan_submit(
    conn: &Connection,
    ws: &WorkspaceCtx,
    change: u64,
) -> Result<SubmitPlan, SubmitError> {
    Ok(SubmitPlan::of_change(conn, ws, change).await?)
}

/// The submit to make.
#[derive(Clone, Debug, Default)]
pub struct SubmitQuery {
    /// The pending change (0: the default change).
    pub change: u64,
    /// Its description; empty: the pending change's own.
    pub description: String,
    /// Send each submitted file's record back (else only their count).
    pub list_files: bool,
}

/// A file a submit committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmittedFile {
    pub depot_file: String,
    /// The revision it now has.
    pub rev: u32,
    pub action: Option<FileAction>,
}

/// What the caller hears of during a submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubmitProgress {
    /// The connection broke before the request was complete; nothing was submitted and it is
    /// sent once more. `reason` is the transport's description.
    Retrying { reason: String },
    /// One batch of the submitted files (the change is submitted by the time the first comes).
    Submitted {
        /// The change's number once submitted.
        change: u64,
        /// Its pending number when the submit renamed it, else 0.
        renamed_from: u64,
        /// With [`SubmitQuery::list_files`] off: how many files the change submitted.
        file_count: u64,
        files: Vec<SubmittedFile>,
    },
}

/// A change-commit trigger that failed: the change is submitted all the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerFailure {
    pub name: String,
    /// Its trigger type (`change-commit`).
    pub kind: String,
    /// What it ran on (`change 12`).
    pub subject: String,
    /// Why it failed (`exit status 1`).
    pub reason: String,
    /// Its output (bounded by the server).
    pub output: String,
}

/// A submitted change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub change: u64,
    /// Its pending number when the submit renamed it, else 0.
    pub renamed_from: u64,
    pub trigger_failures: Vec<TriggerFailure>,
}

impl Submitted {
    /// The number the change had before it was submitted, for a submit of `asked` (0: the
    /// default change).
    pub fn pending_number(&self, asked: u64) -> u64 {
        if self.renamed_from != 0 {
            self.renamed_from
        } else if asked != 0 {
            asked
        } else {
            self.change
        }
    }
}

/// Submits a change as `plan` says, calling `progress` on a retry and for every batch of
/// submitted files. The plan's files are made read-only by [`SubmitPlan::finish_modes`]
/// afterwards.
///
/// A release job submitting what it opened in the default change:
///
/// ```no_run
/// # async fn example(conn: keel_client::Connection) -> Result<(), Box<dyn std::error::Error>> {
/// use keel_client::WorkspaceCtx;
/// use keel_client::ops::{self, SubmitProgress, SubmitQuery};
///
/// let ws = WorkspaceCtx::fetch(&conn).await?;
/// let default = ops::default_change(&conn, &ws).await?;
/// let query = SubmitQuery {
///     change: 0,
///     description: "Release 1.4.0".into(),
///     list_files: true,
/// };
/// let done = ops::submit(&conn, query, &default.plan, |p| {
///     if let SubmitProgress::Submitted { files, .. } = p {
///         files.iter().for_each(|f| println!("{}#{}", f.depot_file, f.rev));
///     }
/// })
/// .await?;
/// default.plan.finish_modes()?;
/// println!("submitted change {}", done.change);
/// # Ok(())
/// # }
/// ```
pub async fn submit(
    conn: &Connection,
    query: SubmitQuery,
    plan: &SubmitPlan,
    mut progress: impl FnMut(SubmitProgress),
) -> Result<Submitted, SubmitError> {
    let reply_files = if query.list_files {
        pb::SubmitReplyFiles::All
    } else {
        pb::SubmitReplyFiles::None
    };
    let mut on_event = |event: SubmitEvent| -> crate::Result<()> {
        progress(match event {
            SubmitEvent::Retrying { reason } => SubmitProgress::Retrying { reason },
            SubmitEvent::Submitted(batch) => SubmitProgress::Submitted {
                change: batch.change,
                renamed_from: batch.renamed_from,
                file_count: batch.file_count,
                files: batch
                    .files
                    .iter()
                    .map(|f| SubmittedFile {
                        depot_file: f.depot_file.clone(),
                        rev: f.head_rev,
                        action: actions::from_wire(actions::effective(f)),
                    })
                    .collect(),
            },
        });
        Ok(())
    };
    let reply = crate::submit::submit(
        conn,
        query.change,
        &query.description,
        plan,
        reply_files,
        &mut on_event,
    )
    .await?;
    Ok(Submitted {
        change: reply.change,
        renamed_from: reply.renamed_from,
        trigger_failures: reply
            .trigger_failures
            .into_iter()
            .map(|f| TriggerFailure {
                name: f.name,
                kind: f.r#type,
                subject: f.subject,
                reason: f.reason,
                output: f.output,
            })
            .collect(),
    })
}
