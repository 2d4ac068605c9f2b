//! Resolve bookkeeping: which opened files wait for a resolve (with their source, theirs and
//! base revisions), recording a file's resolution, `resolved`, and `integrated` history.
//!
//! The merge itself runs where "yours" is: in Keel's client (the workspace file), or in the P4
//! front end after the P4 client sent it; the pure decision lives in `keel_core::resolve`.

use crate::args::FileArg;

use crate::fileinfo::{from_opened, set_head};
use crate::paging::Cursor;
use crate::{Caller, FileInfo, FileOutcome, IntegrateError, Service, ServiceError};
use keel_core::{ChangeNumber, DepotPath, IntegHow};
use keel_store::{LazyContent, OpenedRow, ReadTxn};

/// How the client resolved a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveOutcome {
    /// The workspace file now holds the source revision ("theirs").
    Theirs,
    /// The workspace file was kept ("yours").
    Yours,
    /// A clean 3-way merge.
    Merged,
    /// A merge with conflicts or edits written by the user.
    Edited,
}

/// One line of `integrated`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegInfo {
    pub to_file: DepotPath,
    pub to_rev: u32,
    pub from_file: DepotPath,
    pub start_from_rev: u32,
    pub end_from_rev: u32,
    pub how: IntegHow,
    /// Seen from the source (the file asked about is the record's source): `branch into`
    /// rather than `branch from`.
    pub reverse: bool,
    pub change: ChangeNumber,
}

impl Service {
    fn opened_matching(
        &self,
        snap: &dyn ReadTxn,
        caller: &Caller,
        files: &[String],
        keep: impl Fn(&OpenedRow) -> bool,
    ) -> Result<(crate::context::WorkspaceCtx, Vec<OpenedRow>), ServiceError> {
        let ws = self.caller_workspace(snap, caller)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap, Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let page = self.config.page_size;
        let name = ws.name().to_string();
        let mut cursor = Cursor::new(
            Box::new(move |after| Ok(snap.opened_in_workspace(&name, after, page)?)),
            |o: &OpenedRow| o.path.as_str(),
            page,
        );
        let mut rows = Vec::new();
        while let Some(row) = cursor.next_row()? {
            let selected = args.is_empty()
                || args.iter().any(|a| {
                    a.matches(row.path.as_str())
                        || a.exact_file().as_deref() == Some(row.path.as_str())
                });
            if selected && keep(&row) {
                rows.push(row);
            }
        }
        drop(cursor);
        Ok((ws, rows))
    }

    /// Opened files waiting for a resolve: head fields describe "theirs" (the source revision),
    /// `base_*` the merge base.
    pub fn resolve_list(
        &self,
        caller: &Caller,
        files: &[String],
    ) -> Result<Vec<FileInfo>, IntegrateError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let (ws, rows) = self.opened_matching(snap.as_ref(), caller, files, |r| {
            r.integ.as_ref().is_some_and(|i| !i.resolved)
        })?;
        if rows.is_empty() {
            return Err(IntegrateError::NothingToResolve {
                patterns: files.join(" "),
            });
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let integ = row.integ.as_ref().expect("filtered on integ");
            let mut info = from_opened(&row, Some(&ws));
            let theirs_rev = theirs_rev(integ);
            let theirs = snap
                .revision(&integ.from_path, theirs_rev)?
                .ok_or_else(|| IntegrateError::SourceGone {
                    path: integ.from_path.to_string(),
                    rev: theirs_rev,
                })?;
            set_head(&mut info, &theirs);
            if integ.how == Some(IntegHow::Undid) {
                info.source_start = theirs_rev.saturating_sub(1);
                info.source_end = theirs_rev;
            }
            if let Some((base_path, base_rev)) = &integ.base
                && *base_rev > 0
                && let Some(base) = snap.revision(base_path, *base_rev)?
            {
                info.base_digest = base.digest;
            }
            out.push(info);
        }
        Ok(out)
    }

    /// Records how the client resolved one file.
    pub fn resolve_done(
        &self,
        caller: &Caller,
        file: &str,
        outcome: ResolveOutcome,
    ) -> Result<FileInfo, IntegrateError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let (ws, mut rows) =
            self.opened_matching(snap.as_ref(), caller, &[file.to_string()], |r| {
                r.integ.as_ref().is_some_and(|i| !i.resolved)
            })?;
        let mut row = match rows.len() {
            1 => rows.remove(0),
            0 => {
                return Err(IntegrateError::NothingToResolve {
                    patterns: file.to_string(),
                });
            }
            _ => {
                return Err(IntegrateError::Ambiguous {
                    pattern: file.to_string(),
                });
            }
        };
        let mut integ = row.integ.clone().expect("filtered on integ");
        let theirs = snap.revision(&integ.from_path, theirs_rev(&integ))?;
        integ.resolved = true;
        if integ.how == Some(IntegHow::Undid) {
            // An undo merged into later revisions: it still records what it undid.
        } else if integ.from_path == row.path {
            // A resolve scheduled by sync: the file is now based on the head it merged.
            row.base_rev = integ.from_end;
            integ.how = None;
        } else {
            integ.how = Some(match outcome {
                ResolveOutcome::Theirs => IntegHow::CopyFrom,
                ResolveOutcome::Yours => IntegHow::Ignored,
                ResolveOutcome::Merged => IntegHow::MergeFrom,
                ResolveOutcome::Edited => IntegHow::EditFrom,
            });
        }
        row.lazy = match (outcome, theirs) {
            (ResolveOutcome::Theirs, Some(t)) => t.digest.map(|digest| LazyContent {
                digest,
                size: t.size,
                md5: t.md5.clone(),
                mod_time: t.mod_time,
                owned: true,
            }),
            _ => None,
        };
        row.integ = Some(integ);
        let mut info = from_opened(&row, Some(&ws));
        info.outcome = Some(FileOutcome::Resolved {
            how: row.integ.as_ref().and_then(|i| i.how),
            outcome,
        });
        drop(snap);
        let ws_name = ws.name().to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let current = txn
                .opened_file(&row.path)?
                .into_iter()
                .find(|o| o.workspace == ws_name);
            if current
                .as_ref()
                .and_then(|c| c.integ.as_ref())
                .is_none_or(|i| i.resolved)
            {
                return Err(IntegrateError::NoLongerNeedsResolve {
                    path: row.path.into_string(),
                });
            }
            txn.put_opened(&row)?;
            Ok::<_, IntegrateError>(())
        })?;
        Ok(info)
    }

    /// `resolved`: opened files whose integration has been resolved but not yet submitted.
    pub fn resolved(
        &self,
        caller: &Caller,
        files: &[String],
    ) -> Result<Vec<FileInfo>, ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let (ws, rows) = self.opened_matching(snap.as_ref(), caller, files, |r| {
            r.integ.as_ref().is_some_and(|i| i.resolved)
        })?;
        Ok(rows.iter().map(|r| from_opened(r, Some(&ws))).collect())
    }

    /// `integrated`: every integration record touching the selected files, both directions,
    /// but for records whose other file the caller may not list.
    pub fn integrated(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(IntegInfo) -> Result<(), ServiceError>,
    ) -> Result<(), IntegrateError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        if files.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("integrated"),
            }
            .into());
        }
        for text in files {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            let mut found = 0;
            self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |head| {
                    // A record naming a file the caller may not list is left out.
                    for row in snap.integrations_into(&head.path)? {
                        if !who.lists(row.from_path.as_str()) {
                            continue;
                        }
                        found += 1;
                        sink(IntegInfo {
                            to_file: row.to_path,
                            to_rev: row.to_rev,
                            from_file: row.from_path,
                            start_from_rev: row.from_start + 1,
                            end_from_rev: row.from_end,
                            how: row.how,
                            reverse: false,
                            change: row.change,
                        })?;
                    }
                    for row in snap.integrations_from(&head.path)? {
                        if !who.lists(row.to_path.as_str()) {
                            continue;
                        }
                        found += 1;
                        sink(IntegInfo {
                            to_file: row.from_path,
                            to_rev: row.from_end,
                            from_file: row.to_path,
                            start_from_rev: row.to_rev,
                            end_from_rev: row.to_rev,
                            how: row.how,
                            reverse: true,
                            change: row.change,
                        })?;
                    }
                    Ok(())
                },
            )?;
            if found == 0 {
                return Err(IntegrateError::NoIntegrations { arg: text.clone() });
            }
        }
        Ok(())
    }
}

/// The revision a resolve takes as "theirs": the integration's newest source revision, or for
/// an undo (`undid` `(from_start, from_end]` of the file itself) the one before the undone
/// revisions, merged into the head with the last undone revision as base.
fn theirs_rev(integ: &keel_store::PendingInteg) -> u32 {
    if integ.how == Some(IntegHow::Undid) {
        integ.from_start
    } else {
        integ.from_end
    }
}
