//! Opening files a workspace moved outside Keel (`reconcile` pairing a missing file with a new
//! file of the same content): each source opened for edit and moved to its target, as `edit`
//! then `move` would, in one write: all the moves or none.

use crate::fileinfo::from_opened;
use crate::open::{apply_opens, move_path, plan_move, plan_move_of};
use crate::reserved::check_reserved;
use crate::{Caller, FileInfo, FileOutcome, OpenAction, OpenError, OpenRequest, Service};
use keel_core::{ChangeRef, DepotPath, Right};
use std::collections::HashMap;

impl Service {
    /// Opens each `(from, to)` (exact files, depot or workspace syntax) as a move: `from`, a
    /// file the workspace has, as move/delete, `to`, a path the depot has no live file at, as
    /// move/add. With `preview`, checks as it would and writes nothing.
    pub fn open_moved(
        &self,
        caller: &Caller,
        moves: &[(String, String)],
        change: ChangeRef,
        preview: bool,
    ) -> Result<Vec<FileInfo>, OpenError> {
        if moves.is_empty() {
            return Ok(Vec::new());
        }
        self.touch_user(caller)?;
        let req = OpenRequest {
            files: moves.iter().map(|(from, _)| from.clone()).collect(),
            change,
            file_type: None,
            add_types: Vec::new(),
        };
        let (plan, timer) = self.plan_open(caller, OpenAction::Edit, &req)?;
        // Each source's target, checked as `move` checks it.
        let targets: HashMap<DepotPath, DepotPath> = {
            let snap = self.meta.snapshot()?;
            let ws = self.caller_workspace(snap.as_ref(), caller)?;
            let who = self.access_of(caller)?;
            let exact = |text: &str| move_path(snap.as_ref(), &ws, text);
            let mut out = HashMap::new();
            for (from, to) in moves {
                let (from_path, to_path) = (exact(from)?, exact(to)?);
                who.require(Right::Open, to_path.as_str())?;
                check_reserved(to_path.as_str())?;
                if ws.client_file(&to_path).is_none() {
                    return Err(OpenError::NotInView { path: to.clone() });
                }
                out.insert(from_path, to_path);
            }
            out
        };
        // Each planned source with its target (the plan holds only the sources asked for).
        let planned = plan
            .into_iter()
            .map(|(row, info)| match targets.get(&row.path) {
                Some(to) => Ok((row, info, to.clone())),
                None => Err(OpenError::MoveNotOpened {
                    path: row.path.to_string(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ws_name = caller.workspace.clone();
        let number = change.number();
        let rows = if preview {
            let snap = self.meta.snapshot()?;
            let mut out = Vec::new();
            for (row, _, to) in planned {
                out.extend(plan_move_of(snap.as_ref(), &ws_name, row, &to, number)?.put);
            }
            out
        } else {
            keel_store::write(self.meta.as_ref(), move |txn| {
                let timer = timer.start();
                let mut out = Vec::new();
                for (row, info, to) in planned {
                    let from = row.path.clone();
                    apply_opens(txn, vec![(row, info)])?;
                    let moved = plan_move(&*txn, &ws_name, &from, &to, number)?;
                    for r in &moved.put {
                        txn.put_opened(r)?;
                    }
                    out.extend(moved.put);
                }
                timer.check()?;
                Ok::<_, OpenError>(out)
            })?
        };
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        Ok(rows
            .iter()
            .map(|r| {
                let mut info = from_opened(r, Some(&ws));
                info.outcome = Some(FileOutcome::Opened);
                info
            })
            .collect())
    }
}
