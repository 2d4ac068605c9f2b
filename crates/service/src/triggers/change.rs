//! Change triggers in a submit: `change-submit` once the file list is planned (before any
//! content arrives), `change-content` once the content is stored (before the commit; the
//! change's files print as `//...@=N` meanwhile), `change-commit` after the commit. A change
//! trigger runs when its path lines select at least one of the change's files.

use crate::args::FileArg;
use crate::context::WorkspaceCtx;
use crate::error::TriggerFailure;
use crate::paging::opened_pages;
use crate::shelve::selected;
use crate::upload::FileContents;
use crate::{Caller, Content, FileInfo, Service, ServiceError, SubmitError};
use keel_blob::Encoding;
use keel_core::trigger::{Trigger, TriggerVars, triggers_of};
use keel_core::{ChangeNumber, ChangeRef, DepotPath, TriggerKind, TriggerLine};
use keel_store::{ChangeRow, ChangeStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The change triggers of the table and whether the change's files select each one.
pub(crate) struct ChangeTriggers {
    /// Per kind (submit, content, commit): each trigger and whether a file selected it.
    kinds: Vec<(TriggerKind, Vec<(Trigger, bool)>)>,
}

impl ChangeTriggers {
    /// The table's change triggers; `None` when it has none (a submit then skips all this).
    pub(crate) fn from_table(table: &[TriggerLine]) -> Option<ChangeTriggers> {
        let kinds: Vec<_> = [
            TriggerKind::ChangeSubmit,
            TriggerKind::ChangeContent,
            TriggerKind::ChangeCommit,
        ]
        .into_iter()
        .map(|kind| {
            let triggers = triggers_of(table, kind).into_iter().map(|t| (t, false));
            (kind, triggers.collect::<Vec<_>>())
        })
        .collect();
        kinds
            .iter()
            .any(|(_, t)| !t.is_empty())
            .then_some(ChangeTriggers { kinds })
    }

    /// Notes one file of the change.
    pub(crate) fn observe(&mut self, path: &DepotPath) {
        for (_, triggers) in &mut self.kinds {
            for (trigger, hit) in triggers.iter_mut() {
                *hit = *hit || trigger.selects_file(path.as_str());
            }
        }
    }

    /// The triggers of `kind` some file selected, in table order.
    pub(crate) fn selected(&self, kind: TriggerKind) -> Vec<Trigger> {
        self.kinds
            .iter()
            .filter(|(k, _)| *k == kind)
            .flat_map(|(_, t)| t.iter().filter(|(_, hit)| *hit).map(|(t, _)| t.clone()))
            .collect()
    }
}

/// Submits between their content upload and their commit, by change number: what
/// `//...@=N` prints while a change-content trigger runs.
pub(crate) type InFlight = Mutex<HashMap<u64, (String, Arc<FileContents>)>>;

/// Removes a change from [`InFlight`] when its content triggers are done, however they end.
struct InFlightEntry<'a> {
    service: &'a Service,
    change: u64,
}

impl Drop for InFlightEntry<'_> {
    fn drop(&mut self) {
        self.service
            .in_flight
            .lock()
            .expect("in-flight lock is never poisoned")
            .remove(&self.change);
    }
}

impl Service {
    /// Moves the files of the workspace's default changelist into a new pending change (as
    /// Perforce does when a submit meets triggers) and returns its number; 0 when the default
    /// changelist is empty (the submit then refuses as usual). One write job.
    pub(crate) fn number_default_change(
        &self,
        caller: &Caller,
        workspace: &str,
        description: &str,
    ) -> Result<u64, SubmitError> {
        let now = self.now();
        let (user, workspace, description) = (
            caller.user.clone(),
            workspace.to_string(),
            description.to_string(),
        );
        let batch = self.config.submit_batch.max(1);
        keel_store::write(self.meta.as_ref(), move |txn| {
            if txn
                .opened_in_change(&workspace, ChangeNumber(0), None, 1)?
                .is_empty()
            {
                return Ok(0);
            }
            let number = txn.allocate_change()?;
            txn.put_change(&ChangeRow {
                change: number,
                status: ChangeStatus::Pending,
                user,
                workspace: workspace.clone(),
                description,
                time: now,
            })?;
            // Each page read is moved out of the default changelist before the next read.
            loop {
                let page = txn.opened_in_change(&workspace, ChangeNumber(0), None, batch)?;
                if page.is_empty() {
                    return Ok::<_, SubmitError>(number.0);
                }
                for mut open in page {
                    open.change = number;
                    txn.put_opened(&open)?;
                }
            }
        })
    }

    /// Runs a submit's `change-submit` or `change-content` triggers on pending `change`: the
    /// first that fails refuses the submit with its output.
    pub(crate) fn run_change_triggers(
        &self,
        caller: &Caller,
        triggers: &[Trigger],
        change: u64,
    ) -> Result<(), SubmitError> {
        if triggers.is_empty() {
            return Ok(());
        }
        self.run_triggers(
            caller,
            triggers,
            &format!("change {change}"),
            Some(change),
            &change_vars(caller, change),
            &mut |_, _, _| Ok(()),
        )
        .map_err(|failure| SubmitError::Service(ServiceError::TriggerFailed(failure)))
    }

    /// Runs `change-content` triggers while `//...@=change` prints `contents`.
    pub(crate) fn run_content_triggers(
        &self,
        caller: &Caller,
        triggers: &[Trigger],
        workspace: &str,
        change: u64,
        contents: Arc<FileContents>,
    ) -> Result<(), SubmitError> {
        if triggers.is_empty() {
            return Ok(());
        }
        self.in_flight
            .lock()
            .expect("in-flight lock is never poisoned")
            .insert(change, (workspace.to_string(), contents));
        let _entry = InFlightEntry {
            service: self,
            change,
        };
        self.run_change_triggers(caller, triggers, change)
    }

    /// Runs `change-commit` triggers on submitted `change`: each runs whatever the others
    /// did; the failures are returned (and logged), the change stays submitted.
    pub(crate) fn run_commit_triggers(
        &self,
        caller: &Caller,
        triggers: &[Trigger],
        change: ChangeNumber,
    ) -> Vec<TriggerFailure> {
        let vars = change_vars(caller, change.0);
        let subject = format!("change {change}");
        triggers
            .iter()
            .filter_map(|trigger| {
                self.run_triggers(
                    caller,
                    std::slice::from_ref(trigger),
                    &subject,
                    Some(change.0),
                    &vars,
                    &mut |_, _, _| Ok(()),
                )
                .err()
                .map(|failure| *failure)
            })
            .collect()
    }

    /// `print //...@=N` of a change whose submit is running its content triggers: the files
    /// the submit carries (uploaded or lazy). Returns how many were printed (0 when `change`
    /// is not being submitted).
    pub(crate) fn print_in_flight(
        &self,
        arg: &FileArg,
        change: u64,
        ws: Option<&WorkspaceCtx>,
        sink: &mut dyn FnMut(FileInfo, Content) -> Result<(), ServiceError>,
    ) -> Result<usize, ServiceError> {
        let Some((workspace, contents)) = self
            .in_flight
            .lock()
            .expect("in-flight lock is never poisoned")
            .get(&change)
            .cloned()
        else {
            return Ok(0);
        };
        let snap = self.meta.snapshot()?;
        let mut printed = 0;
        opened_pages(
            snap.as_ref(),
            &workspace,
            ChangeNumber(change),
            self.config.page_size,
            &mut |rows| {
                for row in rows {
                    if !selected(std::slice::from_ref(arg), &row.path) {
                        continue;
                    }
                    let Some(content) = contents.content_of(&row) else {
                        continue;
                    };
                    let file = format!("{}@={change}", row.path);
                    let blob = self.blobs.open(&content.digest)?.ok_or_else(|| {
                        ServiceError::ContentMissing {
                            file,
                            digest: content.digest,
                        }
                    })?;
                    printed += 1;
                    let info = FileInfo {
                        client_file: ws.and_then(|w| w.client_file(&row.path)),
                        head_rev: row.base_rev,
                        head_change: Some(ChangeNumber(change)),
                        head_action: Some(row.action),
                        head_type: Some(row.file_type),
                        head_size: content.size,
                        head_digest: Some(content.digest),
                        head_md5: content.md5.clone(),
                        action: Some(row.action),
                        change: ChangeRef::from_number(change),
                        file_type: Some(row.file_type),
                        move_file: row.move_file.clone(),
                        ..FileInfo::new(row.path.clone())
                    };
                    sink(
                        info,
                        Content {
                            compressed: blob.encoding == Encoding::Zstd,
                            size: content.size,
                            digest: content.digest,
                            blob,
                        },
                    )?;
                }
                Ok::<_, ServiceError>(())
            },
        )?;
        Ok(printed)
    }
}

fn change_vars(caller: &Caller, change: u64) -> TriggerVars {
    TriggerVars {
        change: change.to_string(),
        user: caller.user.clone(),
        client: caller.workspace.clone(),
        ..TriggerVars::default()
    }
}
