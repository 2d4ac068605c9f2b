//! Shelves: storing the opened files of a pending change on the server, deleting shelved files,
//! unshelving them into any workspace, and reading shelved content (`//depot/path@=N`).
//!
//! Shelving uploads content with the same streamed step as submit ([`Uploads`]); the shelf rows
//! are written in one write job that re-checks the opened files and that every referenced blob
//! is still present. Unshelving opens files whose open record carries the shelved digest as lazy
//! content, so an unchanged unshelved file is submitted without an upload.

use crate::args::FileArg;
use crate::context::{WorkspaceCtx, load_change};
use crate::open::{check_exclusive, check_pending_change};
use crate::paging::opened_pages;
use crate::upload::{Uploads, check_present};
use crate::{Caller, Content, FileInfo, FileOutcome, Service, ServiceError, ShelveError};
use keel_blob::Encoding;
use keel_core::{ChangeNumber, ChangeRef, DepotPath, Digest, Right};
use keel_store::{ChangeStatus, LazyContent, OpenedRow, ReadTxn, ShelvedRow, WriteTxn};
use std::collections::{BTreeMap, HashSet};

/// A shelve in progress: the selected opened files and their uploaded content.
pub struct ShelveSession {
    workspace: String,
    change: u64,
    replace: bool,
    uploads: Uploads,
}

/// Every shelved file of a change, path order, read `page` rows at a time.
pub(crate) fn whole_shelf(
    txn: &dyn ReadTxn,
    change: u64,
    page: usize,
) -> Result<BTreeMap<DepotPath, ShelvedRow>, ServiceError> {
    let mut out = BTreeMap::new();
    let mut after: Option<DepotPath> = None;
    loop {
        let rows = txn.shelved_in_change(
            ChangeNumber(change),
            after.as_ref().map(DepotPath::as_str),
            page,
        )?;
        let full = rows.len() == page;
        after = rows.last().map(|r| r.path.clone());
        out.extend(rows.into_iter().map(|r| (r.path.clone(), r)));
        if !full {
            return Ok(out);
        }
    }
}

/// A record describing one shelved file (head fields describe the shelved content).
pub(crate) fn shelved_info(row: &ShelvedRow, ws: Option<&WorkspaceCtx>) -> FileInfo {
    FileInfo {
        client_file: ws.and_then(|w| w.client_file(&row.path)),
        head_rev: row.base_rev,
        head_change: Some(row.change),
        head_action: Some(row.action),
        head_type: Some(row.file_type),
        head_size: row.size,
        head_digest: row.digest,
        head_md5: row.md5.clone(),
        head_mod_time: row.mod_time,
        action: Some(row.action),
        change: ChangeRef::from_number(row.change.0),
        file_type: Some(row.file_type),
        move_file: row.move_file.clone(),
        ..FileInfo::new(row.path.clone())
    }
}

/// Whether `path` is selected by `args` (every path when there are none).
pub(crate) fn selected(args: &[FileArg], path: &DepotPath) -> bool {
    let path = path.as_str();
    args.is_empty()
        || args
            .iter()
            .any(|a| a.matches(path) || a.exact_file().as_deref() == Some(path))
}

/// Queues each digest no longer referenced anywhere for the purge step; returns those queued.
pub(crate) fn queue_unused(
    txn: &mut dyn WriteTxn,
    digests: impl IntoIterator<Item = Digest>,
) -> Result<Vec<Digest>, ServiceError> {
    let mut queued = Vec::new();
    let mut seen = HashSet::new();
    for digest in digests {
        if seen.insert(digest) && !txn.digest_in_use(&digest)? {
            txn.queue_purge(&digest)?;
            queued.push(digest);
        }
    }
    Ok(queued)
}

/// Refuses unless `change` is still a pending change of `workspace` (checked inside a job).
fn check_still_pending(txn: &dyn ReadTxn, change: u64, workspace: &str) -> Result<(), ShelveError> {
    match txn.get_change(ChangeNumber(change))? {
        Some(row) if row.status == ChangeStatus::Pending && row.workspace == workspace => Ok(()),
        _ => Err(ShelveError::NoLongerPending {
            change: ChangeNumber(change),
            workspace: workspace.to_string(),
        }),
    }
}

impl Service {
    /// Starts shelving the opened files of pending change `change` selected by `files`
    /// (all when empty). With `replace`, the shelf becomes exactly the selected files.
    pub fn shelve_begin(
        &self,
        caller: &Caller,
        change: ChangeRef,
        files: &[String],
        replace: bool,
    ) -> Result<ShelveSession, ShelveError> {
        let change = change.number();
        self.touch_user(caller)?;
        if change == 0 {
            return Err(ShelveError::DefaultChangelist);
        }
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, change)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut chosen = BTreeMap::new();
        opened_pages(
            snap.as_ref(),
            ws.name(),
            ChangeNumber(change),
            self.config.page_size,
            &mut |rows| {
                for row in rows {
                    if selected(&args, &row.path) {
                        who.require(Right::Open, row.path.as_str())?;
                        chosen.insert(row.path.clone(), row);
                    }
                }
                Ok::<_, ShelveError>(())
            },
        )?;
        if chosen.is_empty() {
            return Err(ShelveError::NothingToShelve {
                change: ChangeNumber(change),
                patterns: files.join(" "),
            });
        }
        Ok(ShelveSession {
            workspace: ws.name().to_string(),
            change,
            replace,
            uploads: Uploads::new(chosen),
        })
    }

    /// Deletes shelved files of `change` selected by `files` (all when empty).
    pub fn delete_shelved(
        &self,
        caller: &Caller,
        change: ChangeNumber,
        files: &[String],
    ) -> Result<Vec<FileInfo>, ShelveError> {
        let change = change.0;
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        if change == 0 {
            return Err(ShelveError::DefaultChangelist);
        }
        check_pending_change(snap.as_ref(), &ws, change)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let shelf = whole_shelf(snap.as_ref(), change, self.config.shelf_page)?;
        // Files the caller may not list stay shelved and unnamed; the rest need open access.
        let doomed: Vec<ShelvedRow> = shelf
            .into_values()
            .filter(|r| selected(&args, &r.path) && who.lists(r.path.as_str()))
            .collect();
        for row in &doomed {
            who.require(Right::Open, row.path.as_str())?;
        }
        if doomed.is_empty() {
            return Err(ShelveError::NothingShelved {
                change: ChangeNumber(change),
                patterns: files.join(" "),
            });
        }
        let infos = doomed
            .iter()
            .map(|r| {
                let mut info = shelved_info(r, Some(&ws));
                info.outcome = Some(FileOutcome::ShelvedDeleted);
                info
            })
            .collect();
        drop(snap);
        let queued = keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &doomed {
                txn.delete_shelved(row.change, &row.path)?;
            }
            queue_unused(txn, doomed.iter().filter_map(|r| r.digest))
        })?;
        self.purge(&queued)?;
        Ok(infos)
    }

    /// Opens shelved files of `shelved_change` in the caller's workspace, in pending change
    /// `change`, with the shelved action and type and the shelved content as lazy content.
    pub fn unshelve(
        &self,
        caller: &Caller,
        shelved_change: ChangeNumber,
        change: ChangeRef,
        files: &[String],
    ) -> Result<Vec<FileInfo>, ShelveError> {
        let (shelved_change, change) = (shelved_change.0, change.number());
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, change)?;
        let source = load_change(snap.as_ref(), ChangeNumber(shelved_change))?;
        if source.status != ChangeStatus::Pending {
            return Err(ShelveError::Submitted {
                change: ChangeNumber(shelved_change),
            });
        }
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let rows: Vec<ShelvedRow> =
            whole_shelf(snap.as_ref(), shelved_change, self.config.shelf_page)?
                .into_values()
                .filter(|r| selected(&args, &r.path) && who.lists(r.path.as_str()))
                .collect();
        for row in &rows {
            who.require(Right::Read, row.path.as_str())?;
            who.require(Right::Open, row.path.as_str())?;
        }
        who.check_open_files(rows.len())?;
        if rows.is_empty() {
            return Err(ShelveError::NothingShelved {
                change: ChangeNumber(shelved_change),
                patterns: files.join(" "),
            });
        }
        let mut plan = Vec::with_capacity(rows.len());
        for row in &rows {
            let Some(client_file) = ws.client_file(&row.path) else {
                return Err(ShelveError::NotInView {
                    path: row.path.to_string(),
                    workspace: ws.name().to_string(),
                });
            };
            let open = OpenedRow {
                workspace: ws.name().to_string(),
                path: row.path.clone(),
                user: caller.user.clone(),
                change: ChangeNumber(change),
                action: row.action,
                file_type: row.file_type,
                base_rev: row.base_rev,
                move_file: row.move_file.clone(),
                lazy: row.digest.map(|digest| LazyContent {
                    digest,
                    size: row.size,
                    md5: row.md5.clone(),
                    mod_time: row.mod_time,
                    owned: false,
                }),
                integ: None,
                locked: false,
            };
            let mut info = shelved_info(row, Some(&ws));
            info.client_file = Some(client_file);
            info.change = ChangeRef::from_number(change);
            info.user = caller.user.clone();
            info.workspace = ws.name().to_string();
            info.lazy_digest = info.head_digest;
            info.have_rev = self.have.get(ws.name(), &row.path)?;
            info.outcome = Some(FileOutcome::Unshelved);
            plan.push((open, row.clone(), info));
        }
        drop(snap);
        let blobs = self.blobs.clone();
        let ws_name = ws.name().to_string();
        let page = self.config.shelf_page;
        keel_store::write(self.meta.as_ref(), move |txn| {
            let shelf = whole_shelf(txn, shelved_change, page)?;
            if change != 0 {
                check_still_pending(txn, change, &ws_name)?;
            }
            let mut out = Vec::with_capacity(plan.len());
            for (open, row, info) in plan {
                if shelf.get(&row.path) != Some(&row) {
                    return Err(ShelveError::Raced {
                        path: row.path.into_string(),
                    });
                }
                if let Some(existing) = txn
                    .opened_file(&open.path)?
                    .into_iter()
                    .find(|o| o.workspace == ws_name)
                {
                    return Err(ShelveError::AlreadyOpened {
                        path: open.path.into_string(),
                        action: existing.action,
                        workspace: ws_name,
                    });
                }
                check_exclusive(txn, &open)?;
                if let Some(lazy) = &open.lazy {
                    check_present(blobs.as_ref(), &open.path, &lazy.digest)?;
                }
                txn.put_opened(&open)?;
                out.push(info);
            }
            Ok(out)
        })
    }

    /// `print //path@=N`: the shelved content of each matching file shelved in change N.
    pub(crate) fn print_shelved(
        &self,
        caller: &Caller,
        text: &str,
        sink: &mut dyn FnMut(FileInfo, Content) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let Some((path, number)) = text.split_once("@=") else {
            return Err(ServiceError::NotShelvedRevision {
                arg: text.to_string(),
            });
        };
        let change: u64 = number.parse().map_err(|_| ServiceError::BadShelvedChange {
            arg: text.to_string(),
            change: number.to_string(),
        })?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let arg = FileArg::parse(path, snap.as_ref(), ws.as_ref())?;
        let mut printed = 0;
        for row in whole_shelf(snap.as_ref(), change, self.config.shelf_page)?.into_values() {
            if !selected(std::slice::from_ref(&arg), &row.path) || !who.lists(row.path.as_str()) {
                continue;
            }
            who.require(Right::Read, row.path.as_str())?;
            let Some(digest) = row.digest else {
                continue;
            };
            let file = || format!("{}@={change}", row.path);
            let blob = self
                .blobs
                .open(&digest)
                .map_err(ServiceError::opening(file))?
                .ok_or_else(|| ServiceError::ContentMissing {
                    file: file(),
                    digest,
                })?;
            printed += 1;
            sink(
                shelved_info(&row, ws.as_ref()),
                Content {
                    compressed: blob.encoding == Encoding::Zstd,
                    size: row.size,
                    digest,
                    blob,
                },
            )?;
        }
        if printed == 0 {
            // A change being submitted, whose change-content triggers are running.
            printed = self.print_in_flight(&arg, change, ws.as_ref(), sink)?;
        }
        if printed == 0 {
            return Err(ServiceError::NoSuchShelvedFiles {
                arg: text.to_string(),
            });
        }
        Ok(())
    }
}

impl ShelveSession {
    /// The content being received for the selected files.
    pub fn uploads(&mut self) -> &mut Uploads {
        &mut self.uploads
    }

    /// Writes the shelf in one write job; returns the change and one record per shelved file.
    pub fn commit(self, service: &Service) -> Result<(ChangeNumber, Vec<FileInfo>), ShelveError> {
        let ShelveSession {
            workspace,
            change,
            replace,
            uploads,
        } = self;
        let contents = uploads.finish(service)?;
        let blobs = service.blobs.clone();
        let ws_name = workspace.clone();
        let page = service.config.shelf_page;
        let (rows, queued) = keel_store::write(service.meta.as_ref(), move |txn| {
            check_still_pending(txn, change, &workspace)?;
            let existing = whole_shelf(txn, change, page)?;
            let mut released = Vec::new();
            if replace {
                for row in existing.values() {
                    if !contents.files.contains_key(&row.path) {
                        txn.delete_shelved(row.change, &row.path)?;
                        released.extend(row.digest);
                    }
                }
            }
            let mut rows = Vec::with_capacity(contents.files.len());
            for (path, planned) in &contents.files {
                let current = txn
                    .opened_file(path)?
                    .into_iter()
                    .find(|o| o.workspace == workspace);
                if current.as_ref() != Some(planned) {
                    return Err(ShelveError::Raced {
                        path: path.to_string(),
                    });
                }
                let content = contents.content_of(planned);
                if let Some(content) = &content {
                    check_present(blobs.as_ref(), path, &content.digest)?;
                }
                let row = ShelvedRow {
                    change: ChangeNumber(change),
                    path: path.clone(),
                    action: planned.action,
                    file_type: planned.file_type,
                    digest: content.as_ref().map(|c| c.digest),
                    size: content.as_ref().map(|c| c.size).unwrap_or(0),
                    mod_time: content.as_ref().map(|c| c.mod_time).unwrap_or(0),
                    md5: content.map(|c| c.md5).unwrap_or_default(),
                    base_rev: planned.base_rev,
                    move_file: planned.move_file.clone(),
                };
                if let Some(old) = existing.get(path)
                    && old.digest != row.digest
                {
                    released.extend(old.digest);
                }
                txn.put_shelved(&row)?;
                rows.push(row);
            }
            let queued = queue_unused(txn, released)?;
            Ok::<_, ShelveError>((rows, queued))
        })?;
        service.purge(&queued)?;
        let snap = service.meta.snapshot()?;
        let ws = snap
            .get_workspace(&ws_name)?
            .map(WorkspaceCtx::new)
            .transpose()?;
        let infos = rows
            .iter()
            .map(|r| {
                let mut info = shelved_info(r, ws.as_ref());
                info.outcome = Some(FileOutcome::Shelved);
                info
            })
            .collect();
        Ok((ChangeNumber(change), infos))
    }
}
