//! Submit: content streams into the blob store first, then one transaction commits the change.
//!
//! Order of durability: every revision's content is written, fsynced and renamed before the
//! metadata transaction starts, so a crash at any moment leaves the change wholly pending (some
//! unreferenced blobs, harmless) or wholly submitted with all content present.
//!
//! Memory stays bounded whatever the change's size: the plan keeps only the open records whose
//! content must be uploaded plus a count and fingerprint of all of them; the commit (one write
//! job) writes the revisions of files with new content in pages of
//! `ServiceConfig::submit_batch` and those of all other files (deletes, lazy copies: a branch)
//! set-based inside the store; the have list and the reply are pages of the change's revisions
//! read after the commit.

use crate::context::WorkspaceCtx;
use crate::failpoints;
use crate::fileinfo::from_revision;
use crate::open::check_pending_change;
use crate::paging::opened_pages;
use crate::triggers::ChangeTriggers;
use crate::upload::{FileContents, Uploads, check_present, needs_content};
use crate::{Caller, FileInfo, Service, ServiceError, SubmitError, SubmitResult};
use keel_blob::BlobStore;
use keel_core::{ChangeNumber, ChangeRef, DepotPath, FileAction, IntegHow, TriggerKind};
use keel_store::RevisionRow;
use keel_store::{ChangeRow, ChangeStatus, HaveRow, IntegRow, OpenedRow, ReadTxn, WriteTxn};
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// A submit in progress: files announced by the client and their uploaded content.
pub struct SubmitSession {
    caller: Caller,
    workspace: String,
    change: u64,
    description: String,
    /// Uploaded content for the change's opened files.
    uploads: Uploads,
    /// The change's open records as planned: how many, and their fingerprint.
    planned: Fingerprint,
    /// The store's write count when the files were planned (`ReadTxn::jobs_written`).
    planned_at: u64,
    /// The change triggers the change's files select (`None`: the table has none).
    triggers: Option<ChangeTriggers>,
    /// MaxLockTime of the caller's groups, for the commit job.
    timer: crate::access::LockTimer,
}

/// A summary of a change's open records, read in path order: equal fingerprints mean (up to a
/// 64-bit hash collision) the same records, without holding them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Fingerprint {
    count: u64,
    hash: u64,
}

/// Builds a [`Fingerprint`] one open record at a time. The hash is foldhash's quality variant
/// with a fixed seed: both fingerprints of a submit are taken in one process, and it costs a
/// fraction of SipHash per record.
struct FingerprintBuilder {
    count: u64,
    hasher: foldhash::quality::FoldHasher,
}

impl FingerprintBuilder {
    fn new() -> Self {
        FingerprintBuilder {
            count: 0,
            hasher: foldhash::quality::FixedState::with_seed(0).build_hasher(),
        }
    }

    fn add(&mut self, row: &OpenedRow) {
        self.count += 1;
        row.hash(&mut self.hasher);
    }

    fn finish(&self) -> Fingerprint {
        Fingerprint {
            count: self.count,
            hash: self.hasher.finish(),
        }
    }
}

/// Refuses to submit (or delete) a pending change that still has shelved files.
pub(crate) fn check_no_shelf(snap: &dyn ReadTxn, change: u64) -> Result<(), ServiceError> {
    if change != 0
        && !snap
            .shelved_in_change(ChangeNumber(change), None, 1)?
            .is_empty()
    {
        return Err(ServiceError::ShelvedFilesExist {
            change: ChangeNumber(change),
        });
    }
    Ok(())
}

/// The refusals of a submit of the default changelist that need no trigger, checked before
/// triggers make it a numbered change: `write` on every file, no reserved name, and at least
/// one file.
fn check_default_change(
    snap: &dyn ReadTxn,
    who: &crate::access::Access,
    workspace: &str,
    page: usize,
) -> Result<(), SubmitError> {
    let mut count = 0u64;
    opened_pages(snap, workspace, ChangeNumber(0), page, &mut |rows| {
        for row in rows {
            who.require(keel_core::Right::Write, row.path.as_str())?;
            if !row.action.is_delete() {
                crate::reserved::check_reserved(row.path.as_str())?;
            }
            count += 1;
        }
        Ok::<_, SubmitError>(())
    })?;
    if count == 0 {
        return Err(SubmitError::NothingToSubmit { change: None });
    }
    Ok(())
}

impl Service {
    /// Starts a submit of pending `change` of the caller's workspace.
    pub fn submit_begin(
        &self,
        caller: &Caller,
        change: ChangeRef,
        description: &str,
    ) -> Result<SubmitSession, SubmitError> {
        let mut change = change.number();
        self.check_description(description)?;
        self.touch_user(caller)?;
        let mut snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
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
            return Err(SubmitError::NoDescription);
        }
        let mut triggers = ChangeTriggers::from_table(&snap.triggers()?);
        if triggers.is_some() && change == 0 {
            // Every refusal that needs no trigger comes before the numbering, so a refused
            // submit leaves the default changelist as it was.
            check_default_change(snap.as_ref(), &who, ws.name(), self.config.submit_batch)?;
            // Triggers name the change by number (and read it as `@=N`): the default
            // changelist becomes a numbered one, which stays pending if a trigger refuses.
            let numbered = self.number_default_change(caller, ws.name(), &description)?;
            if numbered != 0 {
                change = numbered;
                snap = self.meta.snapshot()?;
            }
        }
        let planned_at = snap.jobs_written()?;
        // Only files without content on the server are kept: the client must upload them.
        let mut required = BTreeMap::new();
        let mut fingerprint = FingerprintBuilder::new();
        opened_pages(
            snap.as_ref(),
            ws.name(),
            ChangeNumber(change),
            self.config.submit_batch,
            &mut |rows| {
                for row in rows {
                    who.require(keel_core::Right::Write, row.path.as_str())?;
                    if !row.action.is_delete() {
                        crate::reserved::check_reserved(row.path.as_str())?;
                    }
                    fingerprint.add(&row);
                    if let Some(triggers) = triggers.as_mut() {
                        triggers.observe(&row.path);
                    }
                    if needs_content(row.action) && row.lazy.is_none() {
                        required.insert(row.path.clone(), row);
                    }
                }
                Ok::<_, SubmitError>(())
            },
        )?;
        let planned = fingerprint.finish();
        if planned.count == 0 {
            return Err(SubmitError::NothingToSubmit {
                change: (change != 0).then_some(ChangeNumber(change)),
            });
        }
        if let Some(triggers) = &triggers {
            // Before any content is sent; the writer is not held.
            self.run_change_triggers(
                caller,
                &triggers.selected(TriggerKind::ChangeSubmit),
                change,
            )?;
        }
        Ok(SubmitSession {
            caller: caller.clone(),
            workspace: ws.name().to_string(),
            change,
            description,
            uploads: Uploads::for_change(required, ws.name(), ChangeNumber(change)),
            planned,
            planned_at,
            triggers,
            timer: who.lock_timer(),
        })
    }
}

impl SubmitSession {
    /// The content being received for the change's files.
    pub fn uploads(&mut self) -> &mut Uploads {
        &mut self.uploads
    }

    /// Commits the change in one transaction and records the new revisions as had. The
    /// submitted files can be read afterwards, in pages, with [`Service::submitted_files`].
    pub fn commit(self, service: &Service) -> Result<SubmitResult, SubmitError> {
        self.commit_with(service, &mut |_, _| true)
    }

    /// Commits like [`SubmitSession::commit`] and hands each page of submitted files to `each`
    /// (with the change's result) as the have list records it, so a reply costs no second read of the change. `each`
    /// returns false when it wants no more pages (its listener went away); the have list is
    /// recorded whole either way.
    pub fn commit_with(
        self,
        service: &Service,
        each: &mut dyn FnMut(&SubmitResult, Vec<FileInfo>) -> bool,
    ) -> Result<SubmitResult, SubmitError> {
        let now = service.now();
        let SubmitSession {
            caller,
            workspace,
            change,
            description,
            uploads,
            planned,
            planned_at,
            triggers,
            timer,
        } = self;
        let contents = Arc::new(uploads.finish(service)?);
        failpoints::hit(failpoints::SUBMIT_AFTER_PUBLISH);
        if let Some(triggers) = &triggers {
            // The content is stored and readable as `@=N`; the writer is not held.
            service.run_content_triggers(
                &caller,
                &triggers.selected(TriggerKind::ChangeContent),
                &workspace,
                change,
                contents.clone(),
            )?;
        }
        let trigger_caller = caller.clone();
        let ws_name = workspace.clone();
        let blobs = service.blobs.clone();
        let batch = service.config.submit_batch.max(1);
        // Read before the commit: whether the submit can give an empty have list its first mark.
        let first_mark = service.first_mark_basis(&workspace);
        let (number, renamed_from) = keel_store::write(service.meta.as_ref(), move |txn| {
            let timer = timer.start();
            let plan = Plan {
                workspace: &ws_name,
                change,
                contents: &contents,
                planned: &planned,
                planned_at,
                batch,
            };
            let committed = commit_in(txn, blobs.as_ref(), &caller, &description, &plan, now)?;
            timer.check()?;
            failpoints::hit(failpoints::SUBMIT_IN_COMMIT);
            Ok::<_, SubmitError>(committed)
        })?;
        failpoints::hit(failpoints::SUBMIT_AFTER_COMMIT);
        let mut result = SubmitResult {
            change: number,
            renamed_from: (renamed_from != 0).then_some(ChangeNumber(renamed_from)),
            workspace,
            trigger_failures: Vec::new(),
        };
        // The workspace now has every submitted revision (a crash part way leaves the have
        // list behind the workspace, never ahead of it).
        let mut listening = true;
        let mut kept = Vec::new();
        // The paths a small change touched, for the commit listener (`None`: too many).
        let mut paths: Option<Vec<DepotPath>> = Some(Vec::new());
        let listed = service.submitted_files(&result, &mut |files| {
            kept.extend(files.iter().filter_map(|f| {
                let keep = f.head_type.and_then(|t| t.keep)?;
                Some((f.depot_file.clone(), keep))
            }));
            if let Some(list) = paths.as_mut() {
                if list.len() + files.len() > crate::commit_signal::MAX_PATHS {
                    paths = None;
                } else {
                    list.extend(files.iter().map(|f| f.depot_file.clone()));
                }
            }
            let have: Vec<HaveRow> = files
                .iter()
                .map(|f| HaveRow {
                    // The change's revisions, just read back from the store.
                    path: f.depot_file.clone(),
                    rev: f.have_rev,
                    client: f.client_file.clone().unwrap_or_default(),
                })
                .collect();
            service.have.apply_keeping_mark(&result.workspace, &have)?;
            listening = listening && each(&result, files);
            Ok(())
        });
        // Told even when the have list could not be recorded: the change is submitted.
        service
            .commits
            .committed(number, paths.as_deref().filter(|_| listed.is_ok()));
        listed?;
        // The submitter's next sync need not look at this change, nor at older ones when
        // nothing else in its view changed since its have list was marked (or, for a list
        // that was empty, when nothing was in its view before).
        let moved = match first_mark {
            Some(basis) => service.mark_first_submit(&result.workspace, number, basis),
            None => service.advance_mark(&result.workspace, number),
        };
        if let Err(e) = moved {
            tracing::warn!(change = number.0, error = %e, "moving the sync mark failed");
        }
        // `+S`/`+Sn` files: older revisions' content goes. The change is submitted whatever
        // happens here; content queued and not yet deleted is purged at the next start.
        if let Err(e) = service.reclaim_beyond_keep(kept) {
            tracing::warn!(change = number.0, error = %e, "purging +S revisions failed");
        }
        if let Some(triggers) = &triggers {
            // After the commit: a failure is reported, the change stays submitted.
            result.trigger_failures = service.run_commit_triggers(
                &trigger_caller,
                &triggers.selected(TriggerKind::ChangeCommit),
                number,
            );
            if !result.trigger_failures.is_empty() && listening {
                each(&result, Vec::new());
            }
        }
        Ok(result)
    }
}

impl Service {
    /// The files a submit committed, as they stand in the workspace after it, in pages of
    /// `ServiceConfig::submit_batch` (path order; at least one call, possibly empty).
    pub fn submitted_files(
        &self,
        result: &SubmitResult,
        each: &mut dyn FnMut(Vec<FileInfo>) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let snap = self.meta.snapshot()?;
        let ws: Option<WorkspaceCtx> = snap
            .get_workspace(&result.workspace)?
            .map(WorkspaceCtx::new)
            .transpose()?;
        let page = self.config.submit_batch.max(1);
        let mut after: Option<DepotPath> = None;
        loop {
            let revisions =
                snap.change_revisions(result.change, after.as_ref().map(DepotPath::as_str), page)?;
            let full = revisions.len() == page;
            after = revisions.last().map(|r| r.path.clone());
            let files = revisions
                .iter()
                .map(|r| {
                    let mut info = from_revision(r);
                    // Each file's workspace path, worked out through the view.
                    info.client_file = ws.as_ref().and_then(|w| w.client_file(&r.path));
                    info.have_rev = if r.action.is_delete() { 0 } else { r.rev };
                    info.file_type = Some(r.file_type);
                    info.action = Some(r.action);
                    info
                })
                .collect();
            each(files)?;
            if !full {
                return Ok(());
            }
        }
    }
}

/// What the commit checks the change against, and how it pages through it.
struct Plan<'a> {
    workspace: &'a str,
    change: u64,
    contents: &'a FileContents,
    planned: &'a Fingerprint,
    planned_at: u64,
    batch: usize,
}

/// The commit: allocates the change number, checks the change's open records, writes their
/// revisions and integration records, then deletes the open records. All in one write job, so
/// an error anywhere leaves nothing written.
///
/// Files whose revision carries content no revision owns yet (uploads, and lazy copies whose
/// blob must still be there) are written one by one, in pages; every other file (deletes, and
/// lazy copies of owned content: a whole branch) is written set-based by the store, so a
/// branch's files are never read into memory.
fn commit_in(
    txn: &mut dyn WriteTxn,
    blobs: &dyn BlobStore,
    caller: &Caller,
    description: &str,
    plan: &Plan,
    now: i64,
) -> Result<(ChangeNumber, u64), SubmitError> {
    let change = plan.change;
    let pending = ChangeNumber(change);
    check_no_shelf(txn, change)?;
    // When no write job ran since the plan, the open records are the planned ones unchanged;
    // otherwise they must add up to the same fingerprint.
    if txn.jobs_written()? != plan.planned_at {
        let mut fingerprint = FingerprintBuilder::new();
        each_opened(txn, plan, &mut |_, open| {
            fingerprint.add(&open);
            Ok(())
        })?;
        if fingerprint.finish() != *plan.planned {
            return Err(SubmitError::ChangedDuringSubmit {
                change: (change != 0).then_some(pending),
            });
        }
    }
    // Perforce renumbers a pending change if newer changes were created since.
    let number = if change != 0 && txn.last_change()?.0 == change {
        pending
    } else {
        txn.allocate_change()?
    };
    let renamed_from = if change != 0 && number.0 != change {
        change
    } else {
        0
    };
    if renamed_from != 0 {
        txn.delete_change(pending)?;
    }
    txn.put_change(&ChangeRow {
        change: number,
        status: ChangeStatus::Submitted,
        user: caller.user.clone(),
        workspace: plan.workspace.to_string(),
        description: description.to_string(),
        time: now,
    })?;
    if txn.first_unsubmittable(plan.workspace, pending)?.is_some() {
        // Some file cannot be submitted: the file-by-file commit refuses at the first one in
        // path order, with the error its checks give.
        each_opened(txn, plan, &mut |txn, open| {
            submit_file(txn, blobs, plan, &open, number, now)
        })?;
    } else {
        let mut after: Option<DepotPath> = None;
        loop {
            let page = txn.opened_with_new_content(
                plan.workspace,
                pending,
                after.as_ref().map(DepotPath::as_str),
                plan.batch,
            )?;
            let full = page.len() == plan.batch;
            after = page.last().map(|r| r.path.clone());
            for open in &page {
                submit_file(txn, blobs, plan, open, number, now)?;
            }
            if !full {
                break;
            }
        }
        // Lazy copies of owned content the client sent new content for: their revisions
        // carry the upload, so they are written one by one too.
        let mut resent = false;
        for path in plan.contents.resent() {
            let Ok(path) = DepotPath::parse(path) else {
                continue;
            };
            let open = txn
                .opened_file(&path)?
                .into_iter()
                .find(|f| f.workspace == plan.workspace && f.change == pending)
                .filter(|f| !has_new_content(f));
            if let Some(open) = open {
                submit_file(txn, blobs, plan, &open, number, now)?;
                resent = true;
            }
        }
        txn.commit_without_new_content(plan.workspace, pending, number, now, resent)?;
    }
    // Every open record of the change was submitted above.
    txn.delete_opened_in_change(plan.workspace, pending)?;
    // Jobs the change fixes take their fix's status (`closed` unless `fix -s` said otherwise).
    if change != 0 {
        crate::fixes::close_fixed_jobs(txn, pending, number, now)?;
    }
    Ok((number, renamed_from))
}

/// Whether a record's revision carries content no revision owns (the store's
/// `opened_with_new_content`): a content-carrying action without a lazy copy of owned content.
fn has_new_content(open: &OpenedRow) -> bool {
    needs_content(open.action) && !open.lazy.as_ref().is_some_and(|l| l.owned)
}

/// Hands every open record of the planned change to `each`, in pages of `plan.batch`.
fn each_opened(
    txn: &mut dyn WriteTxn,
    plan: &Plan,
    each: &mut dyn FnMut(&mut dyn WriteTxn, OpenedRow) -> Result<(), SubmitError>,
) -> Result<(), SubmitError> {
    let mut after: Option<DepotPath> = None;
    loop {
        let page = txn.opened_in_change(
            plan.workspace,
            ChangeNumber(plan.change),
            after.as_ref().map(DepotPath::as_str),
            plan.batch,
        )?;
        let full = page.len() == plan.batch;
        after = page.last().map(|r| r.path.clone());
        for open in page {
            each(txn, open)?;
        }
        if !full {
            return Ok(());
        }
    }
}

/// Checks one open record and writes its revision (and integration record) into `number`.
fn submit_file(
    txn: &mut dyn WriteTxn,
    blobs: &dyn BlobStore,
    plan: &Plan,
    open: &OpenedRow,
    number: ChangeNumber,
    now: i64,
) -> Result<(), SubmitError> {
    if open.integ.as_ref().is_some_and(|i| !i.resolved) {
        return Err(SubmitError::MustResolve {
            path: open.path.to_string(),
        });
    }
    crate::locks::check_not_locked_elsewhere(txn, open)?;
    let head = txn.head_revision(&open.path)?;
    let head_rev = head.as_ref().map(|h| h.rev).unwrap_or(0);
    if head_rev != open.base_rev {
        return Err(SubmitError::OutOfDate {
            path: open.path.to_string(),
            head_rev,
            opened_at: open.base_rev,
        });
    }
    let contents = plan.contents;
    let uploaded = contents.was_uploaded(&open.path);
    // A lazy copy whose content a revision owns (read in this transaction).
    let owned = !uploaded && open.lazy.as_ref().is_some_and(|l| l.owned);
    let (digest, size, md5, mod_time) = match contents.content_of(open) {
        Some(content) => {
            // Obliterate may have purged this content since it was uploaded (or since the
            // lazy copy was opened); content a revision owns cannot have been purged.
            if !owned {
                check_present(blobs, &open.path, &content.digest)?;
            }
            (
                Some(content.digest),
                content.size,
                content.md5,
                content.mod_time,
            )
        }
        None => (None, 0, String::new(), 0),
    };
    let action = match (open.action, &head) {
        (FileAction::Add, Some(h)) if !h.action.is_delete() => {
            return Err(SubmitError::AddExisting {
                path: open.path.to_string(),
            });
        }
        (FileAction::Edit | FileAction::Delete, Some(h)) if h.action.is_delete() => {
            return Err(SubmitError::DeletedAtHead {
                path: open.path.to_string(),
                deleted_at: h.rev,
                action: open.action,
            });
        }
        (action, _) => action,
    };
    let revision = RevisionRow {
        path: open.path.clone(),
        rev: head_rev + 1,
        change: number,
        action,
        file_type: open.file_type,
        digest,
        size,
        md5,
        time: now,
        mod_time,
    };
    if owned {
        txn.insert_revision_owned(&revision)?;
    } else {
        txn.insert_revision(&revision)?;
    }
    if let Some(mut record) = integration_record(txn, plan, open, head_rev + 1, uploaded)? {
        record.change = number;
        txn.insert_integration(&record)?;
    }
    Ok(())
}

/// The history record a submitted open file leaves: integrations by how they were resolved
/// (a resolved copy that was then changed in the workspace becomes `edit from`), renames as
/// `moved from`. Resolves scheduled by sync (a file against its own newer head) leave none.
fn integration_record(
    txn: &dyn WriteTxn,
    plan: &Plan,
    open: &OpenedRow,
    to_rev: u32,
    uploaded: bool,
) -> Result<Option<IntegRow>, ServiceError> {
    // A record from the file itself is a resolve sync scheduled, which leaves none, or an
    // undo, which leaves `undid`.
    if let Some(integ) = open
        .integ
        .as_ref()
        .filter(|i| i.from_path != open.path || i.how == Some(IntegHow::Undid))
    {
        let how = match integ.how {
            Some(IntegHow::CopyFrom | IntegHow::BranchFrom) if uploaded => IntegHow::EditFrom,
            Some(how) => how,
            None => return Ok(None),
        };
        return Ok(Some(IntegRow {
            to_path: open.path.clone(),
            to_rev,
            from_path: integ.from_path.clone(),
            from_start: integ.from_start,
            from_end: integ.from_end,
            how,
            change: ChangeNumber(0),
        }));
    }
    match (open.action, &open.move_file) {
        (FileAction::MoveAdd, Some(from)) => {
            // The moved-from file's open record (move/delete) in the same change.
            let from_end = txn
                .opened_file(from)?
                .into_iter()
                .find(|f| f.workspace == plan.workspace && f.change.0 == plan.change)
                .map(|f| f.base_rev)
                .unwrap_or(0);
            Ok(Some(IntegRow {
                to_path: open.path.clone(),
                to_rev,
                from_path: from.clone(),
                from_start: 0,
                from_end,
                how: IntegHow::MovedFrom,
                change: ChangeNumber(0),
            }))
        }
        _ => Ok(None),
    }
}
