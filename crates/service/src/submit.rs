//! Submit: content streams into the blob store first, then one transaction commits the change.
//!
//! Order of durability: every revision's content is written, fsynced and renamed before the
//! metadata transaction starts, so a crash at any moment leaves the change wholly pending (some
//! unreferenced blobs, harmless) or wholly submitted with all content present.

use crate::context::{WorkspaceCtx, caller_workspace};
use crate::failpoints;
use crate::fileinfo::from_revision;
use crate::open::check_pending_change;
use crate::upload::{FileContents, Uploads, check_present};
use crate::{Caller, Service, ServiceError, SubmitResult};
use keel_blob::BlobStore;
use keel_core::{ChangeNumber, FileAction, IntegHow};
use keel_store::{
    ChangeRow, ChangeStatus, HaveRow, IntegRow, OpenedRow, ReadTxn, RevisionRow, WriteTxn,
};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A submit in progress: files announced by the client and their uploaded content.
pub struct SubmitSession {
    caller: Caller,
    workspace: String,
    change: u64,
    description: String,
    /// Opened files of the change, as planned at the start, and their uploaded content.
    uploads: Uploads,
    /// The store's write count when the files were planned (`ReadTxn::jobs_written`).
    planned_at: u64,
}

/// Refuses to submit (or delete) a pending change that still has shelved files.
pub(crate) fn check_no_shelf(snap: &dyn ReadTxn, change: u64) -> Result<(), ServiceError> {
    if change != 0
        && !snap
            .shelved_in_change(ChangeNumber(change), None, 1)?
            .is_empty()
    {
        return Err(ServiceError::Precondition(format!(
            "change {change} - shelved files must be deleted first: keel shelve -d -c {change}"
        )));
    }
    Ok(())
}

impl Service {
    /// Starts a submit of `change` (0 = the default changelist) of the caller's workspace.
    pub fn submit_begin(
        &self,
        caller: &Caller,
        change: u64,
        description: &str,
    ) -> Result<SubmitSession, ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ws = caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, change)?;
        check_no_shelf(snap.as_ref(), change)?;
        let description = if description.trim().is_empty() && change != 0 {
            snap.get_change(ChangeNumber(change))?
                .map(|c| c.description)
                .unwrap_or_default()
        } else {
            description.to_string()
        };
        if description.trim().is_empty() {
            return Err(ServiceError::Invalid(
                "submit needs a description (-d TEXT)".into(),
            ));
        }
        let planned_at = snap.jobs_written()?;
        let mut files = BTreeMap::new();
        let page = self.config.page_size;
        let mut after: Option<String> = None;
        loop {
            let rows =
                snap.opened_in_change(ws.name(), ChangeNumber(change), after.as_deref(), page)?;
            let full = rows.len() == page;
            after = rows.last().map(|r| r.path.clone());
            files.extend(rows.into_iter().map(|r| (r.path.clone(), r)));
            if !full {
                break;
            }
        }
        if files.is_empty() {
            let which = if change == 0 {
                "the default changelist".to_string()
            } else {
                format!("change {change}")
            };
            return Err(ServiceError::Precondition(format!(
                "No files to submit from {which}."
            )));
        }
        Ok(SubmitSession {
            caller: caller.clone(),
            workspace: ws.name().to_string(),
            change,
            description,
            uploads: Uploads::new(files),
            planned_at,
        })
    }
}

impl SubmitSession {
    /// The content being received for the change's files.
    pub fn uploads(&mut self) -> &mut Uploads {
        &mut self.uploads
    }

    /// Commits the change in one transaction and records the new revisions as had.
    pub fn commit(self, service: &Service) -> Result<SubmitResult, ServiceError> {
        let now = service.now();
        let SubmitSession {
            caller,
            workspace,
            change,
            description,
            uploads,
            planned_at,
        } = self;
        let contents = uploads.finish(service)?;
        failpoints::hit(failpoints::SUBMIT_AFTER_PUBLISH);
        let ws_name = workspace.clone();
        let blobs = service.blobs.clone();
        let (number, renamed_from, revisions) =
            keel_store::write(service.meta.as_ref(), move |txn| {
                let committed = commit_in(
                    txn,
                    blobs.as_ref(),
                    &caller,
                    &ws_name,
                    change,
                    &description,
                    &contents,
                    planned_at,
                    now,
                )?;
                failpoints::hit(failpoints::SUBMIT_IN_COMMIT);
                Ok::<_, ServiceError>(committed)
            })?;
        failpoints::hit(failpoints::SUBMIT_AFTER_COMMIT);
        let snap = service.meta.snapshot()?;
        let ws: Option<WorkspaceCtx> = snap
            .get_workspace(&workspace)?
            .map(WorkspaceCtx::new)
            .transpose()?;
        // Each file's workspace path, worked out once through the view.
        let clients: Vec<String> = revisions
            .iter()
            .map(|r| {
                ws.as_ref()
                    .and_then(|w| w.client_file(&r.path))
                    .unwrap_or_default()
            })
            .collect();
        let have: Vec<HaveRow> = revisions
            .iter()
            .zip(&clients)
            .map(|(r, client)| HaveRow {
                path: r.path.clone(),
                rev: if r.action.is_delete() { 0 } else { r.rev },
                client: client.clone(),
            })
            .collect();
        service.have.apply(&workspace, &have)?;
        drop(have);
        let files = revisions
            .iter()
            .zip(clients)
            .map(|(r, client_file)| {
                let mut info = from_revision(r);
                info.client_file = client_file;
                info.have_rev = if r.action.is_delete() { 0 } else { r.rev };
                info.file_type = r.file_type.to_string();
                info.action = r.action.as_str().to_string();
                info
            })
            .collect();
        Ok(SubmitResult {
            change: number.0,
            renamed_from,
            files,
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn commit_in(
    txn: &mut dyn WriteTxn,
    blobs: &dyn BlobStore,
    caller: &Caller,
    workspace: &str,
    change: u64,
    description: &str,
    contents: &FileContents,
    planned_at: u64,
    now: i64,
) -> Result<(ChangeNumber, u64, Vec<RevisionRow>), ServiceError> {
    let planned = &contents.files;
    check_no_shelf(txn, change)?;
    let current = current_files(txn, workspace, change, planned, planned_at)?;
    if let Some(open) = current
        .iter()
        .find(|o| o.integ.as_ref().is_some_and(|i| !i.resolved))
    {
        return Err(ServiceError::Precondition(format!(
            "{} - must resolve before submitting (keel resolve)",
            open.path
        )));
    }
    let mut revisions = Vec::with_capacity(planned.len());
    // Per revision: known to be a lazy copy of content another revision owns.
    let mut owners: Vec<bool> = Vec::with_capacity(planned.len());
    let mut records = Vec::new();
    for open in current.iter().map(|c| c.as_ref()) {
        let head = txn.head_revision(&open.path)?;
        let head_rev = head.as_ref().map(|h| h.rev).unwrap_or(0);
        if head_rev != open.base_rev {
            return Err(ServiceError::Precondition(format!(
                "{} - must sync/resolve #{head_rev} before submitting (opened at #{})",
                open.path, open.base_rev
            )));
        }
        let uploaded = contents.was_uploaded(&open.path);
        // A lazy copy whose content a revision owns (read in this transaction).
        let owned = !uploaded && open.lazy.as_ref().is_some_and(|l| l.owned);
        let (digest, size, md5) = match contents.content_of(open) {
            Some(content) => {
                // Obliterate may have purged this content since it was uploaded (or since the
                // lazy copy was opened); content a revision owns cannot have been purged.
                if !owned {
                    check_present(blobs, &open.path, &content.digest)?;
                }
                (Some(content.digest), content.size, content.md5)
            }
            None => (None, 0, String::new()),
        };
        owners.push(owned);
        if let Some(record) = integration_record(open, head_rev + 1, uploaded, planned) {
            records.push(record);
        }
        let action = match (open.action, &head) {
            (FileAction::Add, Some(h)) if !h.action.is_delete() => {
                return Err(ServiceError::Precondition(format!(
                    "{} - can't add existing file",
                    open.path
                )));
            }
            (FileAction::Edit | FileAction::Delete, Some(h)) if h.action.is_delete() => {
                return Err(ServiceError::Precondition(format!(
                    "{} - was deleted at #{}; can't {}",
                    open.path,
                    h.rev,
                    open.action.as_str()
                )));
            }
            (action, _) => action,
        };
        revisions.push(RevisionRow {
            path: open.path.clone(),
            rev: head_rev + 1,
            change: ChangeNumber(0),
            action,
            file_type: open.file_type,
            digest,
            size,
            md5,
            time: now,
        });
    }
    // Perforce renumbers a pending change if newer changes were created since.
    let number = if change != 0 && txn.last_change()?.0 == change {
        ChangeNumber(change)
    } else {
        txn.allocate_change()?
    };
    let renamed_from = if change != 0 && number.0 != change {
        change
    } else {
        0
    };
    if renamed_from != 0 {
        txn.delete_change(ChangeNumber(change))?;
    }
    txn.put_change(&ChangeRow {
        change: number,
        status: ChangeStatus::Submitted,
        user: caller.user.clone(),
        workspace: workspace.to_string(),
        description: description.to_string(),
        time: now,
    })?;
    for (rev, owned) in revisions.iter_mut().zip(owners) {
        rev.change = number;
        if owned {
            txn.insert_revision_owned(rev)?;
        } else {
            txn.insert_revision(rev)?;
        }
    }
    // Every open record of the change is being submitted (checked above).
    txn.delete_opened_in_change(workspace, ChangeNumber(change))?;
    for mut record in records {
        record.change = number;
        txn.insert_integration(&record)?;
    }
    Ok((number, renamed_from, revisions))
}

/// The change's open files as the transaction sees them, which must be the files the submit
/// planned with (in path order). When no write job has run since they were planned, they are
/// those files unchanged and are not read again, which spares a large branch's commit a read
/// of every open record.
fn current_files<'p>(
    txn: &dyn WriteTxn,
    workspace: &str,
    change: u64,
    planned: &'p BTreeMap<String, OpenedRow>,
    planned_at: u64,
) -> Result<Vec<Cow<'p, OpenedRow>>, ServiceError> {
    if txn.jobs_written()? == planned_at {
        return Ok(planned.values().map(Cow::Borrowed).collect());
    }
    // Something was written since: the change may not have moved.
    let mut current: Vec<Cow<OpenedRow>> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let rows =
            txn.opened_in_change(workspace, ChangeNumber(change), after.as_deref(), 10_000)?;
        let full = rows.len() == 10_000;
        after = rows.last().map(|r| r.path.clone());
        current.extend(rows.into_iter().map(Cow::Owned));
        if !full {
            break;
        }
    }
    if current.len() != planned.len()
        || current
            .iter()
            .any(|r| planned.get(&r.path) != Some(r.as_ref()))
    {
        return Err(ServiceError::Precondition(format!(
            "the files of change {change} changed while it was being submitted; submit again"
        )));
    }
    Ok(current)
}

/// The history record a submitted open file leaves: integrations by how they were resolved
/// (a resolved copy that was then changed in the workspace becomes `edit from`), renames as
/// `moved from`. Resolves scheduled by sync (a file against its own newer head) leave none.
fn integration_record(
    open: &OpenedRow,
    to_rev: u32,
    uploaded: bool,
    planned: &BTreeMap<String, OpenedRow>,
) -> Option<IntegRow> {
    if let Some(integ) = open
        .integ
        .as_ref()
        .filter(|i| i.from_path != open.path && !i.how.is_empty())
    {
        let how = match IntegHow::parse(&integ.how) {
            Some(IntegHow::CopyFrom | IntegHow::BranchFrom) if uploaded => IntegHow::EditFrom,
            Some(how) => how,
            None => return None,
        };
        return Some(IntegRow {
            to_path: open.path.clone(),
            to_rev,
            from_path: integ.from_path.clone(),
            from_start: integ.from_start,
            from_end: integ.from_end,
            how: how.as_str().to_string(),
            change: ChangeNumber(0),
        });
    }
    match (open.action, &open.move_file) {
        (FileAction::MoveAdd, Some(from)) => Some(IntegRow {
            to_path: open.path.clone(),
            to_rev,
            from_path: from.clone(),
            from_start: 0,
            from_end: planned.get(from).map(|f| f.base_rev).unwrap_or(0),
            how: IntegHow::MovedFrom.as_str().to_string(),
            change: ChangeNumber(0),
        }),
        _ => None,
    }
}
