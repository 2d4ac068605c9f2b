//! Opening files for add, edit and delete; move, revert, reopen and the opened listing.
//!
//! Each command plans on a snapshot (expanding wildcards, reading have lists) and then applies
//! the plan in one write job that re-checks what may have changed meanwhile (opens by others,
//! exclusive locks). Any refusal rolls the whole command back: nothing is half-opened.

use crate::access::Access;
use crate::args::FileArg;
use crate::context::{WorkspaceCtx, load_change};
use crate::fileinfo::{from_opened, set_head};
use crate::paging::Cursor;
use crate::reserved::check_reserved;
use crate::{Caller, FileInfo, FileOutcome, OpenError, Service, ServiceError, error::bad_argument};
use keel_core::{
    ChangeNumber, ChangeRef, DepotPath, FileAction, FileType, Right, TypeChange, typemap_lookup,
};
use keel_store::{ChangeStatus, OpenedRow, PathRange, ReadTxn, WriteTxn};
use std::collections::HashSet;

/// What to open files for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenAction {
    Add,
    Edit,
    Delete,
}

/// A request to open files.
#[derive(Clone, Debug, Default)]
pub struct OpenRequest {
    pub files: Vec<String>,
    /// The pending change to open the files in.
    pub change: ChangeRef,
    /// Type override (`-t`): a whole type or modifiers.
    pub file_type: Option<TypeChange>,
    /// For add: the type the client detected for each file (`text` where it names none).
    pub add_types: Vec<Option<FileType>>,
}

/// An added file's type when the client detected none.
const TEXT: FileType = FileType::TEXT;

fn apply_type(base: FileType, requested: Option<TypeChange>) -> FileType {
    requested.map_or(base, |change| change.apply(base))
}

/// Checks that `change` is a pending changelist of the workspace and of the user acting
/// through it (a super user may override the latter); 0 is always fine.
pub(crate) fn check_pending_change(
    snap: &dyn ReadTxn,
    ws: &WorkspaceCtx,
    change: u64,
) -> Result<(), ServiceError> {
    if change == 0 {
        return Ok(());
    }
    let row = load_change(snap, ChangeNumber(change))?;
    if row.status != ChangeStatus::Pending {
        return Err(ServiceError::ChangeSubmitted {
            change: ChangeNumber(change),
        });
    }
    if row.workspace != ws.name() {
        return Err(ServiceError::ChangeOfOtherWorkspace {
            change: ChangeNumber(change),
            owner: row.workspace,
            workspace: ws.name().to_string(),
        });
    }
    ws.check_change_owner(&row)
}

/// Refuses when another workspace holds an exclusive (+l) open on the file.
pub(crate) fn check_exclusive(txn: &dyn ReadTxn, row: &OpenedRow) -> Result<(), ServiceError> {
    for other in txn.opened_file(&row.path)? {
        if other.workspace != row.workspace
            && (other.file_type.exclusive || row.file_type.exclusive)
        {
            return Err(ServiceError::ExclusivelyOpened {
                path: row.path.to_string(),
                user: other.user,
                workspace: other.workspace,
            });
        }
    }
    Ok(())
}

/// The smallest prefix range holding every planned path (`None` for an empty plan).
fn covering_range(plan: &[(OpenedRow, FileInfo)]) -> Option<PathRange> {
    let mut paths = plan.iter().map(|(row, _)| row.path.as_str());
    let first = paths.next()?;
    let (lo, hi) = paths.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p)));
    let common = lo
        .char_indices()
        .zip(hi.chars())
        .find(|((_, a), b)| a != b)
        .map_or(lo.len().min(hi.len()), |((i, _), _)| i);
    Some(PathRange::prefix(&lo[..common]))
}

/// Opens the planned adds. When no workspace has anything open under the plan's paths (a
/// first import), no row can collide with an open record or an exclusive lock: the rows
/// are written set-based, journaled as integrate's are. Otherwise each file is checked.
fn apply_adds(
    txn: &mut dyn WriteTxn,
    plan: Vec<(OpenedRow, FileInfo)>,
) -> Result<Vec<FileInfo>, OpenError> {
    if let Some(range) = covering_range(&plan)
        && txn.opened_in_range(&range, None, 1)?.is_empty()
    {
        let (rows, infos): (Vec<OpenedRow>, Vec<FileInfo>) = plan.into_iter().unzip();
        // An added row names no lazy copy: `owned` decides nothing for it.
        txn.open_new(&rows, true)?;
        return Ok(infos);
    }
    apply_opens(txn, plan)
}

/// Opens the planned rows, skipping files already open for the same action.
pub(crate) fn apply_opens(
    txn: &mut dyn WriteTxn,
    plan: Vec<(OpenedRow, FileInfo)>,
) -> Result<Vec<FileInfo>, OpenError> {
    let mut out = Vec::with_capacity(plan.len());
    for (row, mut info) in plan {
        let mine = txn
            .opened_file(&row.path)?
            .into_iter()
            .find(|o| o.workspace == row.workspace);
        if let Some(existing) = mine {
            if existing.action == row.action {
                info.outcome = Some(FileOutcome::AlreadyOpened);
                out.push(info);
                continue;
            }
            return Err(OpenError::AlreadyOpened {
                path: row.path.into_string(),
                wanted: row.action,
                current: existing.action,
            });
        }
        check_exclusive(txn, &row)?;
        txn.put_opened(&row)?;
        out.push(info);
    }
    Ok(out)
}

impl Service {
    /// Opens files for add, edit or delete in the caller's workspace.
    pub fn open(
        &self,
        caller: &Caller,
        action: OpenAction,
        req: OpenRequest,
    ) -> Result<Vec<FileInfo>, OpenError> {
        self.touch_user(caller)?;
        let (plan, timer) = self.plan_open(caller, action, &req)?;
        keel_store::write(self.meta.as_ref(), move |txn| {
            let timer = timer.start();
            let opened = if action == OpenAction::Add {
                apply_adds(txn, plan)?
            } else {
                apply_opens(txn, plan)?
            };
            timer.check()?;
            Ok(opened)
        })
    }

    /// What [`Service::open`] would open, checked as it checks (rights, names, the view, the
    /// have list, the head) on a snapshot, opening nothing (`add -n`, `edit -n`, `delete -n`).
    /// Files already opened in this workspace are not looked at: the open would say so.
    pub fn open_preview(
        &self,
        caller: &Caller,
        action: OpenAction,
        req: OpenRequest,
    ) -> Result<Vec<FileInfo>, OpenError> {
        let (plan, _) = self.plan_open(caller, action, &req)?;
        Ok(plan.into_iter().map(|(_, info)| info).collect())
    }

    /// The open records `open` writes, planned on a snapshot.
    #[allow(clippy::type_complexity)]
    pub(crate) fn plan_open(
        &self,
        caller: &Caller,
        action: OpenAction,
        req: &OpenRequest,
    ) -> Result<(Vec<(OpenedRow, FileInfo)>, crate::access::LockTimer), OpenError> {
        {
            let snap = self.meta.snapshot()?;
            let who = self.access_of(caller)?;
            let ws = self.caller_workspace(snap.as_ref(), caller)?;
            check_pending_change(snap.as_ref(), &ws, req.change.number())?;
            let plan = match action {
                OpenAction::Add => self.plan_add(snap.as_ref(), &who, &ws, caller, req)?,
                OpenAction::Edit | OpenAction::Delete => {
                    self.plan_edit_delete(snap.as_ref(), &who, &ws, caller, action, req)?
                }
            };
            for (row, _) in &plan {
                who.require(Right::Open, row.path.as_str())?;
            }
            who.check_open_files(plan.len())?;
            Ok((plan, who.lock_timer()))
        }
    }

    fn plan_add(
        &self,
        snap: &dyn ReadTxn,
        who: &Access,
        ws: &WorkspaceCtx,
        caller: &Caller,
        req: &OpenRequest,
    ) -> Result<Vec<(OpenedRow, FileInfo)>, OpenError> {
        let mut plan = Vec::new();
        let mut seen = HashSet::new();
        // The typemap gives the type of files added without `-t`, over the detected one.
        let typemap = match req.file_type {
            Some(_) => Vec::new(),
            None => snap.typemap()?,
        };
        for (i, file) in req.files.iter().enumerate() {
            let arg = FileArg::parse(file, snap, Some(ws))?;
            let depot = arg
                .exact_file()
                .ok_or_else(|| OpenError::AddNeedsFiles { arg: file.clone() })?;
            let depot = DepotPath::parse_owned(depot).map_err(|e| bad_argument(file, e))?;
            let client_file = ws
                .client_file(&depot)
                .ok_or_else(|| OpenError::NotInView { path: file.clone() })?;
            if !seen.insert(depot.clone()) {
                continue;
            }
            // Rights and the name first: a refusal must not tell whether the file exists.
            who.require(Right::Open, depot.as_str())?;
            check_reserved(depot.as_str())?;
            let base = req.add_types.get(i).copied().flatten().unwrap_or(TEXT);
            let requested = req
                .file_type
                .or_else(|| typemap_lookup(&typemap, depot.as_str()));
            let file_type = apply_type(base, requested);
            let head = snap.head_revision(&depot)?;
            if let Some(head) = &head
                && !head.action.is_delete()
            {
                return Err(OpenError::AddExisting {
                    path: depot.into_string(),
                    head_rev: head.rev,
                });
            }
            let row = OpenedRow {
                workspace: ws.name().to_string(),
                path: depot.clone(),
                user: caller.user.clone(),
                change: ChangeNumber(req.change.number()),
                action: FileAction::Add,
                file_type,
                base_rev: head.map(|h| h.rev).unwrap_or(0),
                move_file: None,
                lazy: None,
                integ: None,
                locked: false,
            };
            let mut info = from_opened(&row, Some(ws));
            info.client_file = Some(client_file);
            info.outcome = Some(FileOutcome::Opened);
            plan.push((row, info));
        }
        Ok(plan)
    }

    fn plan_edit_delete(
        &self,
        snap: &dyn ReadTxn,
        who: &Access,
        ws: &WorkspaceCtx,
        caller: &Caller,
        action: OpenAction,
        req: &OpenRequest,
    ) -> Result<Vec<(OpenedRow, FileInfo)>, OpenError> {
        let mut plan = Vec::new();
        let file_action = if action == OpenAction::Edit {
            FileAction::Edit
        } else {
            FileAction::Delete
        };
        for file in &req.files {
            let arg = FileArg::parse(file, snap, Some(ws))?;
            let mut not_on_client = None;
            let matched =
                self.for_each_selected(snap, who, &arg, Some(ws.name()), &mut |head| {
                    let Some(client_file) = ws.client_file(&head.path) else {
                        return Ok(());
                    };
                    if head.action.is_delete() {
                        return Ok(());
                    }
                    let have = self.have.get(ws.name(), &head.path)?;
                    if have == 0 {
                        not_on_client.get_or_insert_with(|| head.path.to_string());
                        return Ok(());
                    }
                    let file_type = if action == OpenAction::Edit {
                        apply_type(head.file_type, req.file_type)
                    } else {
                        head.file_type
                    };
                    let row = OpenedRow {
                        workspace: ws.name().to_string(),
                        path: head.path.clone(),
                        user: caller.user.clone(),
                        change: ChangeNumber(req.change.number()),
                        action: file_action,
                        file_type,
                        base_rev: have,
                        move_file: None,
                        lazy: None,
                        integ: None,
                        locked: false,
                    };
                    let mut info = from_opened(&row, Some(ws));
                    info.client_file = Some(client_file);
                    info.have_rev = have;
                    set_head(&mut info, &head);
                    info.outcome = Some(FileOutcome::Opened);
                    plan.push((row, info));
                    Ok(())
                })?;
            if let Some(path) = not_on_client {
                return Err(OpenError::NotOnClient { path });
            }
            if matched == 0 {
                return Err(OpenError::NoSuchFiles {
                    pattern: file.clone(),
                });
            }
        }
        if plan.is_empty() {
            return Err(OpenError::NothingToOpen {
                patterns: req.files.join(" "),
                action: file_action,
            });
        }
        Ok(plan)
    }

    /// Moves an opened file to a new depot path (`move/delete` + `move/add`).
    pub fn move_file(
        &self,
        caller: &Caller,
        from: &str,
        to: &str,
        change: ChangeRef,
    ) -> Result<Vec<FileInfo>, OpenError> {
        self.move_or_preview(caller, from, to, change, false)
    }

    /// `move -n`: what [`Service::move_file`] would open, checked the same way, written
    /// nowhere.
    pub fn move_file_preview(
        &self,
        caller: &Caller,
        from: &str,
        to: &str,
        change: ChangeRef,
    ) -> Result<Vec<FileInfo>, OpenError> {
        self.move_or_preview(caller, from, to, change, true)
    }

    fn move_or_preview(
        &self,
        caller: &Caller,
        from: &str,
        to: &str,
        change: ChangeRef,
        preview: bool,
    ) -> Result<Vec<FileInfo>, OpenError> {
        let change = change.number();
        self.touch_user(caller)?;
        let (ws, from_path, to_path) = {
            let snap = self.meta.snapshot()?;
            let ws = self.caller_workspace(snap.as_ref(), caller)?;
            let exact = |text: &str| move_path(snap.as_ref(), &ws, text);
            let (from_path, to_path) = (exact(from)?, exact(to)?);
            let who = self.access_of(caller)?;
            who.require(Right::Open, from_path.as_str())?;
            who.require(Right::Open, to_path.as_str())?;
            check_reserved(to_path.as_str())?;
            if ws.client_file(&to_path).is_none() {
                return Err(OpenError::NotInView {
                    path: to.to_string(),
                });
            }
            (ws, from_path, to_path)
        };
        let ws_name = ws.name().to_string();
        let rows = if preview {
            let snap = self.meta.snapshot()?;
            plan_move(snap.as_ref(), &ws_name, &from_path, &to_path, change)?.put
        } else {
            keel_store::write(self.meta.as_ref(), move |txn| {
                let plan = plan_move(&*txn, &ws_name, &from_path, &to_path, change)?;
                if let Some(gone) = &plan.delete {
                    txn.delete_opened(&ws_name, gone)?;
                }
                for row in &plan.put {
                    txn.put_opened(row)?;
                }
                Ok::<_, OpenError>(plan.put)
            })?
        };
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        Ok(rows
            .iter()
            .map(|r| {
                let mut info = from_opened(r, Some(&ws));
                info.outcome = Some(if r.action == FileAction::MoveDelete {
                    FileOutcome::MovedTo
                } else {
                    FileOutcome::MovedFrom
                });
                info
            })
            .collect())
    }

    /// Files opened in the caller's workspace selected by `files` (all when empty).
    pub(crate) fn select_opened(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        files: &[String],
    ) -> Result<Vec<OpenedRow>, ServiceError> {
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap, Some(ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.opened_in_workspace(ws.name(), after, page)?)),
            |o: &OpenedRow| o.path.as_str(),
            page,
        );
        let mut out = Vec::new();
        while let Some(row) = cursor.next_row()? {
            if args.is_empty()
                || args.iter().any(|a| {
                    a.matches(row.path.as_str())
                        || a.exact_file().as_deref() == Some(row.path.as_str())
                })
            {
                out.push(row);
            }
        }
        if out.is_empty() && !files.is_empty() {
            return Err(ServiceError::NotOpened {
                patterns: files.join(" "),
            });
        }
        Ok(out)
    }

    /// Reverts opened files; the records describe the have revision so the client can restore it.
    pub fn revert(
        &self,
        caller: &Caller,
        files: &[String],
        unchanged_only: bool,
        unchanged: &[String],
    ) -> Result<Vec<FileInfo>, OpenError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let mut rows = self.select_opened(snap.as_ref(), &ws, files)?;
        // Files the caller may not list stay opened and unnamed; the rest need open access.
        rows.retain(|r| who.lists(r.path.as_str()));
        if rows.is_empty() && !files.is_empty() {
            return Err(ServiceError::NotOpened {
                patterns: files.join(" "),
            }
            .into());
        }
        for row in &rows {
            who.require(Right::Open, row.path.as_str())?;
        }
        if unchanged_only {
            let keep: HashSet<&str> = unchanged.iter().map(String::as_str).collect();
            rows.retain(|r| r.action == FileAction::Edit && keep.contains(r.path.as_str()));
        }
        // A move is reverted as a pair.
        let mut paths: HashSet<DepotPath> = rows.iter().map(|r| r.path.clone()).collect();
        for row in rows.clone() {
            if let Some(partner) = &row.move_file
                && matches!(row.action, FileAction::MoveAdd | FileAction::MoveDelete)
                && !who.user.allows(Right::Open, partner.as_str())
            {
                // Half a move cannot be reverted; the partner is not named.
                return Err(ServiceError::PermissionDenied {
                    file: row.path.to_string(),
                    needed: Right::Open,
                }
                .into());
            }
            if let Some(partner) = &row.move_file
                && matches!(row.action, FileAction::MoveAdd | FileAction::MoveDelete)
                && paths.insert(partner.clone())
                && let Some(p) = snap
                    .opened_file(partner)?
                    .into_iter()
                    .find(|o| o.workspace == ws.name())
            {
                rows.push(p);
            }
        }
        let mut infos = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut info = from_opened(row, Some(&ws));
            info.have_rev = self.have.get(ws.name(), &row.path)?;
            if info.have_rev > 0
                && let Some(have) = snap.revision(&row.path, info.have_rev)?
            {
                set_head(&mut info, &have);
            }
            info.outcome = Some(FileOutcome::Reverted);
            infos.push(info);
        }
        drop(snap);
        let ws_name = ws.name().to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &rows {
                txn.delete_opened(&ws_name, &row.path)?;
            }
            Ok::<_, ServiceError>(())
        })?;
        Ok(infos)
    }

    /// Moves opened files to another pending change and/or changes their type.
    pub fn reopen(
        &self,
        caller: &Caller,
        files: &[String],
        change: Option<ChangeRef>,
        file_type: Option<TypeChange>,
    ) -> Result<Vec<FileInfo>, OpenError> {
        let change = change.map(ChangeRef::number);
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        if let Some(change) = change {
            check_pending_change(snap.as_ref(), &ws, change)?;
        }
        let mut rows = self.select_opened(snap.as_ref(), &ws, files)?;
        // As in revert: files the caller may not list stay as they are, unnamed.
        rows.retain(|r| who.lists(r.path.as_str()));
        if rows.is_empty() && !files.is_empty() {
            return Err(ServiceError::NotOpened {
                patterns: files.join(" "),
            }
            .into());
        }
        for row in &mut rows {
            if let Some(change) = change {
                row.change = ChangeNumber(change);
            }
            row.file_type = apply_type(row.file_type, file_type);
        }
        let infos = rows
            .iter()
            .map(|r| {
                let mut info = from_opened(r, Some(&ws));
                info.outcome = Some(FileOutcome::Reopened);
                info
            })
            .collect();
        drop(snap);
        keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &rows {
                check_exclusive(txn, row)?;
                txn.put_opened(row)?;
            }
            Ok::<_, ServiceError>(())
        })?;
        Ok(infos)
    }

    /// Lists opened files: the caller's workspace, or every workspace with `all`.
    pub fn opened(
        &self,
        caller: &Caller,
        files: &[String],
        all: bool,
        user: &str,
        change: Option<ChangeRef>,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let change = change.map(ChangeRef::number);
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let keep = |row: &OpenedRow| {
            (user.is_empty() || row.user == user)
                && change.is_none_or(|c| row.change.0 == c)
                && who.lists(row.path.as_str())
        };
        if !all {
            let ws = ws.ok_or(ServiceError::OpenedNeedsWorkspace)?;
            for row in self
                .select_opened(snap.as_ref(), &ws, files)
                .or_else(|e| match e {
                    ServiceError::NotOpened { .. } => Ok(Vec::new()),
                    e => Err(e),
                })?
            {
                if keep(&row) {
                    let mut info = from_opened(&row, Some(&ws));
                    // The revision the workspace has, as `opened` reports it (`haveRev`).
                    info.have_rev = self.have.get(ws.name(), &row.path)?;
                    sink(info)?;
                }
            }
            return Ok(());
        }
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), ws.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let scopes: Vec<PathRange> = if args.is_empty() {
            vec![PathRange::prefix("//")]
        } else {
            args.iter().flat_map(|a| a.scopes.clone()).collect()
        };
        let page = self.config.page_size;
        for scope in scopes {
            let mut after: Option<(DepotPath, String)> = None;
            loop {
                let rows = snap.opened_in_range(
                    &scope,
                    after.as_ref().map(|(p, w)| (p.as_str(), w.as_str())),
                    page,
                )?;
                for row in &rows {
                    if keep(row)
                        && (args.is_empty()
                            || args.iter().any(|a| {
                                a.matches(row.path.as_str())
                                    || a.exact_file().as_deref() == Some(row.path.as_str())
                            }))
                    {
                        let owner = if ws.as_ref().is_some_and(|w| w.name() == row.workspace) {
                            ws.as_ref()
                        } else {
                            None
                        };
                        sink(from_opened(row, owner))?;
                    }
                }
                match rows.last() {
                    Some(last) if rows.len() == page => {
                        after = Some((last.path.clone(), last.workspace.clone()))
                    }
                    _ => break,
                }
            }
        }
        Ok(())
    }
}

/// What a move writes: the opened record it drops (an add's or a moved add's source), and the
/// records it puts, in order (also what it reports).
pub(crate) struct MovePlan {
    pub(crate) delete: Option<DepotPath>,
    pub(crate) put: Vec<OpenedRow>,
}

/// Plans moving `from_path` (opened in `ws_name`) to `to_path`, with the same checks either
/// way: the source opened here, the target neither live nor opened here.
pub(crate) fn plan_move(
    txn: &dyn ReadTxn,
    ws_name: &str,
    from_path: &DepotPath,
    to_path: &DepotPath,
    change: u64,
) -> Result<MovePlan, OpenError> {
    let source = txn
        .opened_file(from_path)?
        .into_iter()
        .find(|o| o.workspace == ws_name)
        .ok_or_else(|| OpenError::MoveNotOpened {
            path: from_path.to_string(),
        })?;
    plan_move_of(txn, ws_name, source, to_path, change)
}

/// [`plan_move`] of the open record `source` (which need not be written yet).
pub(crate) fn plan_move_of(
    txn: &dyn ReadTxn,
    ws_name: &str,
    source: OpenedRow,
    to_path: &DepotPath,
    change: u64,
) -> Result<MovePlan, OpenError> {
    let from_path = &source.path.clone();
    if let Some(head) = txn.head_revision(to_path)?
        && !head.action.is_delete()
    {
        return Err(OpenError::MoveOntoExisting {
            path: to_path.to_string(),
        });
    }
    if txn
        .opened_file(to_path)?
        .iter()
        .any(|o| o.workspace == ws_name)
    {
        return Err(OpenError::MoveTargetOpened {
            path: to_path.to_string(),
        });
    }
    let change = if change == 0 {
        source.change
    } else {
        ChangeNumber(change)
    };
    let target_base = txn.head_revision(to_path)?.map(|h| h.rev).unwrap_or(0);
    let mut target = OpenedRow {
        path: to_path.clone(),
        change,
        base_rev: target_base,
        ..source.clone()
    };
    let mut out = Vec::new();
    let mut delete = None;
    match source.action {
        FileAction::Add => {
            delete = Some(from_path.clone());
        }
        FileAction::Edit => {
            let mut gone = source.clone();
            gone.action = FileAction::MoveDelete;
            gone.move_file = Some(to_path.clone());
            gone.change = change;
            out.push(gone);
            target.action = FileAction::MoveAdd;
            target.move_file = Some(from_path.clone());
        }
        FileAction::MoveAdd => {
            delete = Some(from_path.clone());
            if let Some(original) = &source.move_file
                && let Some(mut orig) = txn
                    .opened_file(original)?
                    .into_iter()
                    .find(|o| o.workspace == ws_name)
            {
                orig.move_file = Some(to_path.clone());
                out.push(orig);
            }
        }
        other => {
            return Err(OpenError::CannotMove {
                path: from_path.to_string(),
                action: other,
            });
        }
    }
    out.push(target);
    Ok(MovePlan { delete, put: out })
}

/// The one file `text` (depot or workspace syntax) names, as `move` takes each of its paths.
pub(crate) fn move_path(
    snap: &dyn ReadTxn,
    ws: &WorkspaceCtx,
    text: &str,
) -> Result<DepotPath, OpenError> {
    let arg = FileArg::parse(text, snap, Some(ws))?;
    let depot = arg
        .exact_file()
        .ok_or_else(|| OpenError::MoveNeedsOneFile {
            arg: text.to_string(),
        })?;
    Ok(DepotPath::parse_owned(depot).map_err(|e| bad_argument(text, e))?)
}
