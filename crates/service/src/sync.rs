//! Sync: merge the workspace's have list with the revisions its view (or the arguments) select,
//! and stream what must change — adds and updates with their stored content, and deletes.
//!
//! The server does not record the have list here: the client records it after the files are
//! safely written (UpdateHave), so a failed or interrupted sync never claims files it lacks.

use crate::access::Access;
use crate::args::{FileArg, view_scopes};
use crate::context::WorkspaceCtx;
use crate::expand::selection_of;
use crate::paging::Cursor;
use crate::{Caller, Content, Service, ServiceError};
use keel_blob::Encoding;
use keel_core::{DepotPath, Digest, FileType, RevSpec};
use keel_store::{HaveRow, OpenedRow, PathRange, PendingInteg, ReadTxn, RevisionRow};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, Default)]
pub struct SyncOptions {
    /// `-n`: report only.
    pub preview: bool,
    /// `-f`: transfer files even when the workspace has them.
    pub force: bool,
    /// `-k`: the client only records the have list; no content is sent.
    pub have_only: bool,
    /// `-p`: content is sent but the client records no have list.
    pub populate_only: bool,
}

/// What sync does to one workspace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncAction {
    Added,
    Updated,
    /// Rewritten at the revision it already has (`sync -f`).
    Refreshed,
    Deleted,
    /// An opened file whose head moved: nothing is transferred, the workspace file stays, a
    /// resolve is scheduled.
    Resolve,
}

impl SyncAction {
    /// Perforce's word: `added`, `updated`, `refreshed`, `deleted`, `resolve`.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncAction::Added => "added",
            SyncAction::Updated => "updated",
            SyncAction::Refreshed => "refreshed",
            SyncAction::Deleted => "deleted",
            SyncAction::Resolve => "resolve",
        }
    }
}

/// One file whose workspace state changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncItem {
    pub depot_file: DepotPath,
    pub client_file: String,
    /// 0 when the file is deleted from the workspace.
    pub rev: u32,
    pub action: SyncAction,
    /// The revision's type and content; `None` for a file that leaves the workspace (and no
    /// digest for a deleted revision).
    pub file_type: Option<FileType>,
    pub digest: Option<Digest>,
    pub size: u64,
    /// The MD5 of the stored content, as recorded at submit (hex; empty when not known).
    pub md5: String,
    /// When the revision was submitted (seconds since the epoch).
    pub time: i64,
    /// The file's own modification time recorded at submit (0: none): what a `+m` file, or
    /// any file of a `modtime` workspace, is given on sync.
    pub mod_time: i64,
    /// The content digest of the revision the workspace has, for an update or delete of a
    /// file the sync left writable (`allwrite`, `+w`): the client's clobber check recognises an
    /// unchanged file by it without reading the whole have list.
    pub have_digest: Option<Digest>,
    /// The revision's change (0 for a file that leaves the workspace).
    pub change: u64,
    /// Who submitted the revision, for a keyword-expanded (`+k`) file's `$Author$` (empty for
    /// other files: it costs a lookup).
    pub author: String,
}

impl SyncItem {
    /// The modification time a `+m` file (or any file of a `modtime` workspace) is given: the
    /// one recorded at submit, else the revision's submit time.
    pub fn kept_mod_time(&self) -> i64 {
        if self.mod_time > 0 {
            self.mod_time
        } else {
            self.time
        }
    }

    /// A file that leaves the workspace (no revision, no content).
    fn deleted(depot_file: DepotPath, client_file: String) -> SyncItem {
        SyncItem {
            depot_file,
            client_file,
            rev: 0,
            action: SyncAction::Deleted,
            file_type: None,
            digest: None,
            size: 0,
            md5: String::new(),
            change: 0,
            author: String::new(),
            time: 0,
            mod_time: 0,
            have_digest: None,
        }
    }
}

pub struct SyncEvent {
    pub item: SyncItem,
    /// The stored content, when it is to be transferred.
    pub content: Option<Content>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncTotals {
    pub files: u64,
    pub bytes: u64,
    /// Given when the client, once it has recorded every file of this sync in the have list,
    /// may mark the have list as synced (`update_have`'s `mark`), so the next sync only looks
    /// at files changed since.
    pub mark: Option<SyncMark>,
    /// The change the sync looked at files from, when the have list's mark let it skip the
    /// whole-have-list merge (`sync_since.rs`); `None` after a full merge.
    pub since: Option<u64>,
}

/// What a whole-view sync tells the client to hand back with its last have-list update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncMark {
    /// The mark itself (see [`keel_store::HaveMark`]).
    pub change: u64,
    pub removed: u64,
    pub view: String,
    /// The have list's write counter when the sync began: the mark holds only when the
    /// client's own updates are the only writes since.
    pub writes: u64,
}

/// What a sync has done so far: counts, and the resolves it will schedule.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) totals: SyncTotals,
    pub(crate) schedule: Vec<Scheduled>,
    /// Some opened file keeps a revision other than the one the sync selects (an opened file
    /// is never touched), so the have list will not be what the sync's target says.
    pub(crate) unsettled: bool,
}

/// One file the view maps, with what the workspace has and what it should have.
pub(crate) struct FilePlan {
    pub(crate) path: DepotPath,
    pub(crate) client_file: String,
    pub(crate) target: Option<RevisionRow>,
    pub(crate) have: u32,
}

/// An opened file whose head moved: resolve against `head`, based on `have`.
#[derive(Clone, Debug)]
pub(crate) struct Scheduled {
    path: DepotPath,
    have: u32,
    head: u32,
    client: String,
}

/// What one pass of the merge selects and compares.
struct Pass<'a> {
    text: String,
    /// Ranges holding the targets, sorted and disjoint.
    target_scopes: Vec<PathRange>,
    /// Ranges of have entries to reconcile against.
    have_scopes: Vec<PathRange>,
    rev: Option<RevSpec>,
    arg: Option<FileArg>,
    ws: &'a WorkspaceCtx,
    /// The caller's access: files they may not list are absent (and leave the workspace).
    who: &'a Access,
}

impl Pass<'_> {
    fn selects(&self, depot: &str) -> bool {
        self.arg.as_ref().is_none_or(|a| a.matches(depot))
    }
}

impl Service {
    /// Works out and streams a sync of the caller's workspace.
    pub fn sync(
        &self,
        caller: &Caller,
        files: &[String],
        opts: SyncOptions,
        sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
    ) -> Result<SyncTotals, ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let who = self.access_of(caller)?;
        let opened = self.opened_paths(snap.as_ref(), ws.name())?;
        // The dry run counts its rows on counters of its own (group limits apply to the sync).
        let dry_who = Access::for_user(who.user.clone());
        self.refuse_resolves_on_replica(snap.as_ref(), &ws, &dry_who, files, &opened, opts)?;
        let mut tally = Tally::default();
        // Only a whole-view sync of a caller without a protections table uses or hands out the
        // have list's mark (`sync_since.rs`): a table may hide files, and a change of it, of the
        // caller's groups or of the caller's address changes which, without a change number.
        let marks = files.is_empty() && who.user.unrestricted();
        // A whole-view sync reads the have list's mark first: a have-list write after this
        // point changes the counter the client's mark must match.
        let marking = if marks {
            Some(self.marking_of(snap.as_ref(), &ws)?)
        } else {
            None
        };
        let shortcut = match &marking {
            Some(m) if !opts.force => self.changed_since(snap.as_ref(), &ws, m)?,
            _ => None,
        };
        let scanned = match shortcut {
            Some(changed) => {
                tally.totals.since = Some(changed.from);
                let scanned = (changed.scanned, changed.paths.len());
                self.sync_changed(
                    snap.as_ref(),
                    &ws,
                    &who,
                    changed,
                    &opened,
                    opts,
                    &mut tally,
                    sink,
                )?;
                Some(scanned)
            }
            None => {
                self.sync_full(
                    snap.as_ref(),
                    &ws,
                    &who,
                    files,
                    &opened,
                    opts,
                    &mut tally,
                    sink,
                )?;
                None
            }
        };
        let ws_name = ws.name().to_string();
        drop(snap);
        if !tally.schedule.is_empty() && !opts.preview && !opts.have_only && !opts.populate_only {
            self.schedule_resolves(&ws_name, std::mem::take(&mut tally.schedule))?;
        }
        if let Some(m) = marking
            && !opts.preview
            && !opts.populate_only
            && !tally.unsettled
            && self.worth_marking(scanned, tally.totals.files)
        {
            tally.totals.mark = Some(m.into_mark());
        }
        Ok(tally.totals)
    }

    /// The whole-have-list merge: each argument (or the whole view) against the have list.
    #[allow(clippy::too_many_arguments)]
    fn sync_full(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        who: &Access,
        files: &[String],
        opened: &HashMap<DepotPath, OpenedRow>,
        opts: SyncOptions,
        tally: &mut Tally,
        sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let mut passes = Vec::new();
        if files.is_empty() {
            let target_scopes = view_scopes(&ws.view, |l| &l.left);
            passes.push(Pass {
                text: format!("//{}/...", ws.name()),
                target_scopes,
                have_scopes: vec![PathRange::prefix("//")],
                rev: None,
                arg: None,
                ws,
                who,
            });
        } else {
            for text in files {
                let arg = FileArg::parse(text, snap, Some(ws))?;
                passes.push(Pass {
                    text: text.clone(),
                    target_scopes: arg.scopes.clone(),
                    have_scopes: arg.scopes.clone(),
                    rev: arg.rev.clone(),
                    arg: Some(arg),
                    ws,
                    who,
                });
            }
        }
        for pass in &passes {
            self.sync_pass(snap, pass, opened, opts, tally, sink)?;
        }
        Ok(())
    }

    /// On a read-only replica, refuses (before anything is synced) a sync that would schedule
    /// a resolve: that writes the primary's metadata. Only workspaces with files opened for
    /// edit pay for the extra planning pass.
    fn refuse_resolves_on_replica(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        who: &Access,
        files: &[String],
        opened: &HashMap<DepotPath, OpenedRow>,
        opts: SyncOptions,
    ) -> Result<(), ServiceError> {
        let Some(primary) = self.meta.read_only_primary() else {
            return Ok(());
        };
        let may_schedule = opened
            .values()
            .any(|o| o.action == keel_core::FileAction::Edit && o.integ.is_none());
        if !may_schedule || opts.preview || opts.have_only || opts.populate_only {
            return Ok(());
        }
        // The whole merge (never the have list's since-the-mark shortcut) as a preview: it
        // sees every file the real sync could schedule a resolve for.
        let mut dry = Tally::default();
        let preview = SyncOptions {
            preview: true,
            ..opts
        };
        self.sync_full(snap, ws, who, files, opened, preview, &mut dry, &mut |_| {
            Ok(())
        })?;
        match dry.schedule.first() {
            None => Ok(()),
            Some(first) => Err(ServiceError::ResolveOnReplica {
                file: first.path.to_string(),
                count: dry.schedule.len(),
                primary: primary.to_string(),
            }),
        }
    }

    /// Opened files whose head moved get a pending resolve against the new head, and the have
    /// list moves to that head (the workspace file stays as the user left it).
    fn schedule_resolves(&self, ws: &str, schedule: Vec<Scheduled>) -> Result<(), ServiceError> {
        let ws_name = ws.to_string();
        let todo = schedule.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            for item in &todo {
                let Some(mut row) = txn
                    .opened_file(&item.path)?
                    .into_iter()
                    .find(|o| o.workspace == ws_name)
                else {
                    continue;
                };
                if row.integ.is_some() {
                    continue;
                }
                row.integ = Some(PendingInteg {
                    from_path: item.path.clone(),
                    from_start: item.have,
                    from_end: item.head,
                    base: Some((item.path.clone(), item.have)),
                    resolved: false,
                    how: None,
                });
                txn.put_opened(&row)?;
            }
            Ok::<_, ServiceError>(())
        })?;
        let have: Vec<HaveRow> = schedule
            .into_iter()
            .map(|s| HaveRow {
                path: s.path,
                rev: s.head,
                client: s.client,
            })
            .collect();
        // The files' head moved on since any mark, so the next sync looks at them anyway.
        self.have.apply_keeping_mark(ws, &have)?;
        Ok(())
    }

    fn opened_paths(
        &self,
        snap: &dyn ReadTxn,
        ws: &str,
    ) -> Result<HashMap<DepotPath, OpenedRow>, ServiceError> {
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.opened_in_workspace(ws, after, page)?)),
            |o: &keel_store::OpenedRow| o.path.as_str(),
            page,
        );
        let mut out = HashMap::new();
        while let Some(row) = cursor.next_row()? {
            out.insert(row.path.clone(), row);
        }
        Ok(out)
    }

    fn have_cursor<'a>(&'a self, ws: &'a str, range: PathRange) -> Cursor<'a, HaveRow> {
        let page = self.config.page_size;
        Cursor::new(
            Box::new(move |after| Ok(self.have.page(ws, &range, after, page)?)),
            |h: &HaveRow| h.path.as_str(),
            page,
        )
    }

    fn sync_pass(
        &self,
        snap: &dyn ReadTxn,
        pass: &Pass<'_>,
        opened: &HashMap<DepotPath, OpenedRow>,
        opts: SyncOptions,
        tally: &mut Tally,
        sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let ws = pass.ws;
        let Tally {
            totals,
            schedule,
            unsettled,
        } = tally;
        let selection = selection_of(snap, &pass.text, &pass.rev)?;
        let mut haves: Vec<Cursor<'_, HaveRow>> = pass
            .have_scopes
            .iter()
            .map(|r| self.have_cursor(ws.name(), r.clone()))
            .collect();
        let mut have_index = 0;
        // Emits deletes for have entries before `upto` (all when None); returns the entry at `upto`.
        let mut drain_haves = |upto: Option<&str>,
                               totals: &mut SyncTotals,
                               unsettled: &mut bool,
                               sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>|
         -> Result<Option<u32>, ServiceError> {
            while have_index < haves.len() {
                let cursor = &mut haves[have_index];
                let Some(next) = cursor.peek()? else {
                    have_index += 1;
                    continue;
                };
                match upto {
                    Some(limit) if next.path.as_str() > limit => return Ok(None),
                    Some(limit) if next.path == limit => {
                        let rev = next.rev;
                        cursor.next_row()?;
                        return Ok(Some(rev));
                    }
                    _ => {}
                }
                let have = cursor.next_row()?.expect("peeked row exists");
                if !pass.selects(have.path.as_str()) {
                    continue;
                }
                if opened.contains_key(&have.path) {
                    // The workspace keeps a file the view no longer selects.
                    *unsettled = true;
                    continue;
                }
                let item = SyncItem::deleted(have.path, have.client);
                emit(item, None, totals, sink)?;
            }
            Ok(None)
        };
        for scope in &pass.target_scopes {
            let mut heads = self.selected_cursor(snap, scope.clone(), &selection);
            while let Some(head) = heads.next_row()? {
                pass.who.scan()?;
                let Some(client_file) = ws.client_file(&head.path) else {
                    continue;
                };
                // Files the selection cannot pick (outside an automatic label's View), and
                // files the caller may not list, are skipped here, so the have-list drain
                // removes them like any unselected file.
                if !pass.selects(head.path.as_str())
                    || !selection.admits(head.path.as_str())
                    || !pass.who.lists(head.path.as_str())
                {
                    continue;
                }
                pass.who.result()?;
                let have =
                    drain_haves(Some(head.path.as_str()), totals, unsettled, sink)?.unwrap_or(0);
                let path = head.path.clone();
                let target = self
                    .select_revision(snap, &pass.text, &pass.rev, head, Some(ws.name()))?
                    .filter(|r| !r.action.is_delete());
                let file = FilePlan {
                    path,
                    client_file,
                    target,
                    have,
                };
                self.plan_file(
                    snap,
                    ws.row.options.allwrite,
                    file,
                    pass.who,
                    opened,
                    opts,
                    totals,
                    schedule,
                    unsettled,
                    sink,
                )?;
            }
        }
        drain_haves(None, totals, unsettled, sink)?;
        Ok(())
    }

    /// Decides and emits what sync does to one file the view maps: `have` is the revision the
    /// workspace has (0: none), `target` the one it should have (`None`: none). Both the
    /// whole-have-list merge and the changed-files shortcut (`sync_since.rs`) decide here.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan_file(
        &self,
        snap: &dyn ReadTxn,
        allwrite: bool,
        file: FilePlan,
        who: &Access,
        opened: &HashMap<DepotPath, OpenedRow>,
        opts: SyncOptions,
        totals: &mut SyncTotals,
        schedule: &mut Vec<Scheduled>,
        unsettled: &mut bool,
        sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let FilePlan {
            path,
            client_file,
            target,
            have,
        } = file;
        if let Some(open) = opened.get(&path) {
            // An opened file is never overwritten; an edit whose head moved on is
            // scheduled for resolve instead.
            if let Some(t) = &target
                && open.action == keel_core::FileAction::Edit
                && open.integ.is_none()
                && have > 0
                && t.rev > have
            {
                schedule.push(Scheduled {
                    path: path.clone(),
                    have,
                    head: t.rev,
                    client: client_file.clone(),
                });
                let item = SyncItem {
                    depot_file: path,
                    client_file,
                    rev: t.rev,
                    action: SyncAction::Resolve,
                    file_type: Some(t.file_type),
                    digest: t.digest,
                    size: t.size,
                    md5: t.md5.clone(),
                    time: t.time,
                    mod_time: t.mod_time,
                    have_digest: None,
                    change: t.change.0,
                    author: String::new(),
                };
                return emit(item, None, totals, sink);
            }
            if have != target.as_ref().map_or(0, |t| t.rev) {
                // Left behind its target: no later sync may assume it is in step.
                *unsettled = true;
            }
            return Ok(());
        }
        // The have revision's digest, when the file on disk may be writable.
        let have_digest = |writable: bool| -> Result<Option<keel_core::Digest>, ServiceError> {
            if !writable || have == 0 {
                return Ok(None);
            }
            Ok(snap.revision(&path, have)?.and_then(|r| r.digest))
        };
        let Some(target) = target else {
            if have != 0 {
                let mut item = SyncItem::deleted(path.clone(), client_file);
                item.have_digest = have_digest(allwrite)?;
                emit(item, None, totals, sink)?;
            }
            return Ok(());
        };
        let action = match have {
            0 => SyncAction::Added,
            h if h == target.rev && opts.force => SyncAction::Refreshed,
            h if h == target.rev => return Ok(()),
            _ => SyncAction::Updated,
        };
        who.require(keel_core::Right::Read, target.path.as_str())?;
        let content = if opts.preview || opts.have_only {
            None
        } else {
            Some(self.content_of(&target)?)
        };
        let have_digest = if action == SyncAction::Updated {
            have_digest(allwrite || target.file_type.writable)?
        } else {
            None
        };
        let author = if target.file_type.expanded_keywords() != keel_core::Keywords::None {
            snap.get_change(target.change)?
                .map(|c| c.user)
                .unwrap_or_default()
        } else {
            String::new()
        };
        let item = SyncItem {
            depot_file: target.path,
            client_file,
            rev: target.rev,
            action,
            file_type: Some(target.file_type),
            digest: target.digest,
            size: target.size,
            md5: target.md5,
            time: target.time,
            mod_time: target.mod_time,
            have_digest,
            change: target.change.0,
            author,
        };
        emit(item, content, totals, sink)
    }

    /// Opens a revision's stored content.
    pub(crate) fn content_of(&self, rev: &RevisionRow) -> Result<Content, ServiceError> {
        let digest = rev.digest.ok_or_else(|| ServiceError::DeletedRevision {
            path: rev.path.to_string(),
            rev: rev.rev,
        })?;
        let file = || format!("{}#{}", rev.path, rev.rev);
        let blob = self
            .blobs
            .open(&digest)
            .map_err(ServiceError::opening(file))?
            .ok_or_else(|| ServiceError::ContentMissing {
                file: file(),
                digest,
            })?;
        Ok(Content {
            compressed: blob.encoding == Encoding::Zstd,
            size: rev.size,
            digest,
            blob,
        })
    }
}

fn emit(
    item: SyncItem,
    content: Option<Content>,
    totals: &mut SyncTotals,
    sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
) -> Result<(), ServiceError> {
    totals.files += 1;
    totals.bytes += item.size;
    sink(SyncEvent { item, content })
}
