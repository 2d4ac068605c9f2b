//! `unlock -x`: release the holds of users or workspaces that no longer exist. A deleted user
//! (or workspace) can leave open records behind that still block everyone: a lock (no one else
//! may submit the file) or an exclusive open of a `+l` file (no one else may open it). An
//! admin on each file releases them: a lock is cleared, and an orphaned `+l` open record, the
//! hold itself, is removed.

use crate::args::FileArg;
use crate::fileinfo::from_opened;
use crate::{Caller, FileInfo, Service, ServiceError};
use keel_core::Right;
use keel_store::{OpenedRow, PathRange, ReadTxn};
use std::collections::HashMap;

impl Service {
    /// Releases the orphaned locks and exclusive opens on the files `files` name (every depot
    /// when empty). Returns the records released (`locked` false; an exclusive open's action
    /// as it was). Refused whole, naming the file, when the caller lacks admin on one.
    pub fn unlock_orphaned(
        &self,
        caller: &Caller,
        files: &[String],
    ) -> Result<Vec<FileInfo>, ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let all: Vec<String> = match files.is_empty() {
            true => snap
                .list_depots()?
                .iter()
                .map(|d| format!("//{}/...", d.name))
                .collect(),
            false => Vec::new(),
        };
        let files = if files.is_empty() { &all[..] } else { files };
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), ws.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let scopes: Vec<PathRange> = args.iter().flat_map(|a| a.scopes.clone()).collect();
        let mut known: HashMap<(bool, String), bool> = HashMap::new();
        let mut orphaned = |snap: &dyn ReadTxn, row: &OpenedRow| -> Result<bool, ServiceError> {
            for (is_user, name) in [(true, &row.user), (false, &row.workspace)] {
                let key = (is_user, name.clone());
                let exists = match known.get(&key) {
                    Some(e) => *e,
                    None => {
                        let e = if is_user {
                            snap.get_user(name)?.is_some()
                        } else {
                            snap.get_workspace(name)?.is_some()
                        };
                        known.insert(key, e);
                        e
                    }
                };
                if !exists {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let page = self.config.page_size.max(1);
        let mut rows: Vec<OpenedRow> = Vec::new();
        for scope in scopes {
            let mut after: Option<(String, String)> = None;
            loop {
                let batch = snap.opened_in_range(
                    &scope,
                    after.as_ref().map(|(p, w)| (p.as_str(), w.as_str())),
                    page,
                )?;
                for row in &batch {
                    who.scan()?;
                    let holds = row.locked || row.file_type.exclusive;
                    if holds
                        && who.lists(row.path.as_str())
                        && args.iter().any(|a| a.matches(row.path.as_str()))
                        && !rows
                            .iter()
                            .any(|o| o.path == row.path && o.workspace == row.workspace)
                        && orphaned(snap.as_ref(), row)?
                    {
                        who.require(Right::Admin, row.path.as_str())?;
                        who.result()?;
                        rows.push(row.clone());
                    }
                }
                match batch.last() {
                    Some(last) if batch.len() == page => {
                        after = Some((last.path.to_string(), last.workspace.clone()))
                    }
                    _ => break,
                }
            }
        }
        let infos = rows
            .iter()
            .map(|r| {
                let mut info = from_opened(r, None);
                info.locked = false;
                info
            })
            .collect();
        drop(snap);
        keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &rows {
                let Some(mut current) = txn
                    .opened_file(&row.path)?
                    .into_iter()
                    .find(|o| o.workspace == row.workspace)
                else {
                    continue;
                };
                if current.file_type.exclusive {
                    txn.delete_opened(&current.workspace, &current.path)?;
                } else if current.locked {
                    current.locked = false;
                    txn.put_opened(&current)?;
                }
            }
            Ok::<_, ServiceError>(())
        })?;
        Ok(infos)
    }
}
