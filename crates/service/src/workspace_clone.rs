//! `workspace clone`: a new workspace with another's view (mapped to the new name), options and
//! have list, made on the server in one call, so a build machine starts from a synced
//! workspace's state instead of a full sync (the client fills the new root from the source's
//! files as the entries arrive, see `keel_client::clone`).
//!
//! The clone belongs to the caller. Its have list holds only the source's entries the caller
//! may read: a clone never gives a user a file a sync would not. The have list is copied in one
//! transaction (a crash leaves no part of it). When the caller may read every entry, the copy
//! runs inside SQLite (`SqliteHaveStore::copy_list`) on a thread of its own while this one
//! streams the source's entries from one read of its list (`read_list`), so the client links
//! files during the copy; both reads return the source's write counter, and when the source was
//! synced between them the new list is rewritten from the entries streamed, so it always holds
//! what the client was sent. Otherwise the entries are copied one by one while the source's list
//! stays as it was (its write counter checked before and after; a source synced meanwhile makes
//! the copy start again, a few times at most), then streamed from the new list.

use crate::access::Access;
use crate::browse::send_have_rows;
use crate::context::{WorkspaceCtx, load_workspace};
use crate::{Caller, FileInfo, Service, ServiceError, SpecError, SpecKind, WorkspaceSpec};
use keel_core::{Right, View};
use keel_store::{HaveMark, HaveRow, HaveState, PathRange, ReadTxn};

/// Copies of the have list tried while the source keeps changing, before giving up.
const COPY_ATTEMPTS: usize = 3;

/// What a clone sends while it works, in this order: `Started` once, then the new have list's
/// entries.
#[derive(Debug, Clone)]
pub enum CloneEvent {
    /// The workspace is made: the client may start filling its root.
    Started {
        /// The new workspace's spec.
        spec: WorkspaceSpec,
        /// Depot files opened in the source (among those the caller may read): the client takes
        /// them at their have revision from the server, never with the source's edits.
        opened_in_source: Vec<String>,
    },
    /// One entry of the new have list, as `have` describes it (the client file through the new
    /// workspace's view).
    File(Box<FileInfo>),
}

/// What a clone made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloneOutcome {
    /// Have entries copied.
    pub files: u64,
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

/// Moves each row's client path from `//SOURCE/` to `//NEW/` (as `copy_list` does in SQL).
fn move_clients(rows: &mut [HaveRow], source: &str, new: &str) {
    let (from, to) = (format!("//{source}/"), format!("//{new}/"));
    for row in rows {
        if let Some(rest) = row.client.strip_prefix(&from) {
            row.client = format!("{to}{rest}");
        }
    }
}

impl Service {
    /// Creates workspace `new.name` (root, host and description from `new`) with the view,
    /// options and have list of workspace `source`, telling `sink` what it made as it goes
    /// ([`CloneEvent`]).
    pub fn clone_workspace(
        &self,
        caller: &Caller,
        source: &str,
        new: WorkspaceSpec,
        sink: &mut dyn FnMut(CloneEvent) -> Result<(), ServiceError>,
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
        let ws = load_workspace(self.meta.snapshot()?.as_ref(), &saved.name)?;
        sink(CloneEvent::Started {
            spec: saved,
            opened_in_source: opened,
        })?;
        let mut send = |info: FileInfo| sink(CloneEvent::File(Box::new(info)));
        if who.user.unrestricted() {
            return Ok(self.copy_while_streaming(
                src.name(),
                &ws,
                &src.row.view,
                &who,
                &mut send,
            )?);
        }
        let outcome = self.copy_have(src.name(), &ws, &src.row.view, &who)?;
        self.stream_list(ws.name(), &ws, &who, &mut send, None)?;
        Ok(outcome)
    }

    /// The copy of `source`'s list inside SQLite, on a thread of its own, while this thread
    /// streams the source's entries to `send` (as `ws`'s); when the source was synced between
    /// the two reads (their write counters differ), `ws`'s list is rewritten from the entries
    /// streamed, in one transaction, so it holds what the client was sent.
    fn copy_while_streaming(
        &self,
        source: &str,
        ws: &WorkspaceCtx,
        source_view: &[String],
        who: &Access,
        send: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<CloneOutcome, ServiceError> {
        let new = ws.name();
        let mut streamed = Vec::new();
        let (copied, listed) = std::thread::scope(|scope| {
            let copy = scope.spawn(|| self.have.copy_list(source, new));
            let listed = self.stream_list(source, ws, who, send, Some(&mut streamed));
            let copied = copy
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (copied, listed)
        });
        let listed = listed?;
        let (mut files, mut state) = copied?;
        if state.writes != listed.writes {
            move_clients(&mut streamed, source, new);
            self.have.drop_workspace(new)?;
            if !streamed.is_empty() {
                self.have.apply(new, &streamed)?;
            }
            files = streamed.len() as u64;
            state = listed;
        }
        let marked = self.inherit_mark(ws, &state, files, source_view, false)?;
        Ok(CloneOutcome { files, marked })
    }

    /// Sends have list `list`'s entries that the caller may read and list to `send`, as entries
    /// of `ws` (client files through its view), from one read of the list, keeping the entries
    /// it may read in `kept` when given. Returns the list's state as of that read.
    fn stream_list(
        &self,
        list: &str,
        ws: &WorkspaceCtx,
        who: &Access,
        send: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
        mut kept: Option<&mut Vec<HaveRow>>,
    ) -> Result<HaveState, ServiceError> {
        let mut snap: Option<Box<dyn ReadTxn + '_>> = None;
        self.have.read_list(
            list,
            self.config.page_size,
            |rows| -> Result<(), ServiceError> {
                // Taken once the list is being read: it holds every revision an entry names.
                let snap = match &mut snap {
                    Some(snap) => snap,
                    None => snap.insert(self.meta.snapshot()?),
                };
                let mut shown = Vec::with_capacity(rows.len());
                for row in &rows {
                    who.scan()?;
                    let path = row.path.as_str();
                    if who.user.allows(Right::Read, path) && who.lists(path) {
                        who.result()?;
                        shown.push(row);
                    }
                }
                send_have_rows(snap.as_ref(), ws, &shown, send)?;
                if let Some(kept) = kept.as_deref_mut() {
                    kept.extend(
                        rows.into_iter()
                            .filter(|r| who.user.allows(Right::Read, r.path.as_str())),
                    );
                }
                Ok(())
            },
        )
    }

    /// Gives `ws`'s new list the source's mark when the mark was made for the source's view as
    /// it is, the list holds entries, and none were withheld: a list missing entries the caller
    /// may not read claims no whole-view sync.
    fn inherit_mark(
        &self,
        ws: &WorkspaceCtx,
        state: &HaveState,
        files: u64,
        source_view: &[String],
        withheld: bool,
    ) -> Result<bool, ServiceError> {
        match &state.mark {
            Some(mark) if mark.view == source_view.join("\n") && files > 0 && !withheld => {
                let writes = self.have.state(ws.name())?.writes;
                let mark = HaveMark {
                    change: mark.change,
                    removed: mark.removed,
                    view: ws.row.view.join("\n"),
                };
                Ok(self.have.set_mark(ws.name(), &mark, writes)?)
            }
            _ => Ok(false),
        }
    }

    /// Copies `source`'s have list (the entries `who` may read) into `ws`'s, and its mark when
    /// [`Self::inherit_mark`] allows.
    fn copy_have(
        &self,
        source: &str,
        ws: &WorkspaceCtx,
        source_view: &[String],
        who: &Access,
    ) -> Result<CloneOutcome, ServiceError> {
        for _ in 0..COPY_ATTEMPTS {
            let Some(copy) = self.copy_have_once(source, ws.name(), who)? else {
                // The source was synced meanwhile: start again from an empty list.
                self.have.drop_workspace(ws.name())?;
                continue;
            };
            let marked =
                self.inherit_mark(ws, &copy.state, copy.files, source_view, copy.withheld)?;
            return Ok(CloneOutcome {
                files: copy.files,
                marked,
            });
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
        who: &Access,
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
            move_clients(&mut readable, source, new);
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
