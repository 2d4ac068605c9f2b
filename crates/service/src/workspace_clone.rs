//! `workspace clone`: a new workspace with another's view (mapped to the new name), options and
//! have list, made on the server in one call, so a build machine starts from a synced
//! workspace's state instead of a full sync (the client then fills the new root from the
//! source's files, see `keel_client::clone`).
//!
//! The clone belongs to the caller. Its have list holds only the source's entries the caller
//! may read: a clone never gives a user a file a sync would not. The have list is copied in one
//! transaction (a crash leaves no part of it): inside SQLite (`SqliteHaveStore::copy_list`)
//! when the caller may read every entry, which also reads the source's write counter and mark
//! with the entries; else entry by entry while the source's list stays as it was (its write
//! counter is checked before and after). A source synced meanwhile makes the copy start again,
//! a few times at most.

use crate::context::load_workspace;
use crate::{Caller, Service, ServiceError, SpecError, SpecKind, WorkspaceSpec};
use keel_core::{Right, View};
use keel_store::{HaveMark, HaveRow, HaveState, PathRange};

/// Copies of the have list tried while the source keeps changing, before giving up.
const COPY_ATTEMPTS: usize = 3;

/// What a clone made.
#[derive(Debug, Clone)]
pub struct CloneOutcome {
    /// The new workspace's spec.
    pub spec: WorkspaceSpec,
    /// Have entries copied.
    pub files: u64,
    /// Depot files opened in the source (among those copied): the client takes them at their
    /// have revision from the server, never with the source's edits.
    pub opened_in_source: Vec<String>,
    /// Whether the clone carries the source's sync mark (its next sync looks only at newer
    /// changes).
    pub marked: bool,
}

/// `view` with each right side's `//SOURCE/` made `//NEW/`.
fn remap_view(view: &View, source: &str, new: &str) -> Vec<String> {
    let from = format!("//{source}/");
    let to = format!("//{new}/");
    view.lines()
        .iter()
        .map(|line| {
            let mut line = line.clone();
            if let Some(rest) = line.right.strip_prefix(&from) {
                line.right = format!("{to}{rest}");
            }
            line.to_string()
        })
        .collect()
}

impl Service {
    /// Creates workspace `new.name` (root, host and description from `new`) with the view,
    /// options and have list of workspace `source`.
    pub fn clone_workspace(
        &self,
        caller: &Caller,
        source: &str,
        new: WorkspaceSpec,
    ) -> Result<CloneOutcome, SpecError> {
        let (snap, who) = self.read_as(caller)?;
        let src = load_workspace(snap.as_ref(), source)?;
        if new.name == src.row.name {
            return Err(SpecError::AlreadyExists {
                kind: SpecKind::Workspace,
                name: new.name,
            });
        }
        let opened: Vec<String> = {
            let mut rows = Vec::new();
            let page = self.config.page_size;
            let mut after: Option<String> = None;
            loop {
                let batch = snap.opened_in_workspace(src.name(), after.as_deref(), page)?;
                let full = batch.len() == page;
                after = batch.last().map(|r| r.path.as_str().to_string());
                rows.extend(
                    batch
                        .into_iter()
                        .filter(|r| who.user.allows(Right::Read, r.path.as_str()))
                        .map(|r| r.path.into_string()),
                );
                if !full {
                    break;
                }
            }
            rows
        };
        drop(snap);
        let spec = WorkspaceSpec {
            name: new.name.clone(),
            owner: caller.user.clone(),
            host: new.host,
            root: new.root,
            description: if new.description.is_empty() {
                format!("Cloned from {}.", src.row.name)
            } else {
                new.description
            },
            options: src.row.options.to_string(),
            view: remap_view(&src.view, &src.row.name, &new.name),
            updated: 0,
            accessed: 0,
        };
        let saved = self.save_workspace(caller, spec, true)?;
        let (files, marked) = self.copy_have(src.name(), &saved, &src.row.view, &who)?;
        Ok(CloneOutcome {
            spec: saved,
            files,
            opened_in_source: opened,
            marked,
        })
    }

    /// Copies `source`'s have list (the entries `who` may read) into the new workspace, and
    /// its mark when the mark was made for the source's view as it is.
    fn copy_have(
        &self,
        source: &str,
        new: &WorkspaceSpec,
        source_view: &[String],
        who: &crate::access::Access,
    ) -> Result<(u64, bool), ServiceError> {
        for _ in 0..COPY_ATTEMPTS {
            let Some(copy) = self.copy_have_once(source, &new.name, who)? else {
                // The source was synced meanwhile: start again from an empty list.
                self.have.drop_workspace(&new.name)?;
                continue;
            };
            let marked = match copy.state.mark {
                // A list missing entries the caller may not read claims no whole-view sync.
                Some(mark)
                    if mark.view == source_view.join("\n") && copy.files > 0 && !copy.withheld =>
                {
                    let writes = self.have.state(&new.name)?.writes;
                    let mark = HaveMark {
                        change: mark.change,
                        removed: mark.removed,
                        view: new.view.join("\n"),
                    };
                    self.have.set_mark(&new.name, &mark, writes)?
                }
                _ => false,
            };
            return Ok((copy.files, marked));
        }
        Err(ServiceError::SourceKeepsChanging {
            workspace: source.to_string(),
        })
    }

    /// One try at the copy, in one transaction: inside SQLite when the caller may read every
    /// entry (no protections table, or none of the list's paths withheld), else entry by
    /// entry. `None`: the source changed while its entries were checked.
    fn copy_have_once(
        &self,
        source: &str,
        new: &str,
        who: &crate::access::Access,
    ) -> Result<Option<HaveCopy>, ServiceError> {
        if who.user.unrestricted() {
            let (files, state) = self.have.copy_list(source, new)?;
            return Ok(Some(HaveCopy {
                files,
                state,
                withheld: false,
            }));
        }
        let before = self.have.state(source)?;
        let mut readable: Vec<HaveRow> = Vec::new();
        let mut withheld = false;
        let page = self.config.page_size;
        let all = PathRange::prefix("//");
        let mut after: Option<String> = None;
        loop {
            let rows = self.have.page(source, &all, after.as_deref(), page)?;
            let full = rows.len() == page;
            after = rows.last().map(|r| r.path.as_str().to_string());
            for row in rows {
                if who.user.allows(Right::Read, row.path.as_str()) {
                    readable.push(row);
                } else {
                    withheld = true;
                }
            }
            if !full {
                break;
            }
        }
        let (files, state) = if withheld {
            let (from, to) = (format!("//{source}/"), format!("//{new}/"));
            for row in &mut readable {
                if let Some(rest) = row.client.strip_prefix(&from) {
                    row.client = format!("{to}{rest}");
                }
            }
            if !readable.is_empty() {
                self.have.apply(new, &readable)?;
            }
            (readable.len() as u64, self.have.state(source)?)
        } else {
            // Every entry readable: the same copy as an unrestricted caller's.
            self.have.copy_list(source, new)?
        };
        if state.writes != before.writes {
            return Ok(None);
        }
        Ok(Some(HaveCopy {
            files,
            state: before,
            withheld,
        }))
    }
}

/// One copy of a have list.
struct HaveCopy {
    /// Entries copied.
    files: u64,
    /// The source's write counter and mark as of the entries copied.
    state: HaveState,
    /// Whether entries the caller may not read were left out.
    withheld: bool,
}

#[cfg(test)]
mod tests {
    use super::remap_view;
    use keel_core::View;

    #[test]
    fn the_view_is_mapped_to_the_new_name() {
        let view = View::parse_lines(&[
            "//depot/main/... //src/...".to_string(),
            "-//depot/main/big/... //src/big/...".to_string(),
            "\"//depot/a b/...\" \"//src/a b/...\"".to_string(),
        ])
        .unwrap();
        assert_eq!(
            remap_view(&view, "src", "ci-7"),
            vec![
                "//depot/main/... //ci-7/...",
                "-//depot/main/big/... //ci-7/big/...",
                "\"//depot/a b/...\" \"//ci-7/a b/...\"",
            ]
        );
    }
}
