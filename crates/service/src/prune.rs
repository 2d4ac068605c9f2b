//! `prune`: removes the unmodified branched files under paths, those whose every revision is
//! still the content it was branched or copied from another file (the lazy copy a branch,
//! `populate` or a copying integrate left), no later edit. Without `execute` it previews; with
//! it, the files go through [`Service::obliterate`], so the removal is batched, crash-safe,
//! journaled and keeps content other revisions still share. It needs obliterate's right (admin
//! on every file) and refuses whole, naming the file, when any candidate is opened.

use crate::args::FileArg;
use crate::{Caller, ObliterateTotals, PruneError, Service, ServiceError};
use keel_core::{DepotPath, FileAction, IntegHow, Right};
use keel_store::{IntegRow, ReadTxn, RevisionRow};
use std::collections::BTreeMap;

/// One file `prune` removes (or, previewing, would remove).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrunedFile {
    pub path: DepotPath,
    /// Its head revision, and how many revisions it has (every one a copy).
    pub rev: u32,
    pub revisions: u32,
    /// The file and revision its head was copied from.
    pub from: DepotPath,
    pub from_rev: u32,
}

/// The source `from#from_rev` that revision `rev` is an unchanged copy of, if it is one: a
/// `branch from` or `copy from` record of another file, and the same content.
fn copied_from(
    snap: &dyn ReadTxn,
    rev: &RevisionRow,
    into: &[IntegRow],
) -> Result<Option<(DepotPath, u32)>, ServiceError> {
    if !matches!(rev.action, FileAction::Branch | FileAction::Integrate) || rev.digest.is_none() {
        return Ok(None);
    }
    for record in into.iter().filter(|r| {
        r.to_rev == rev.rev
            && r.from_path != rev.path
            && matches!(r.how, IntegHow::BranchFrom | IntegHow::CopyFrom)
    }) {
        let source = snap.revision(&record.from_path, record.from_end)?;
        if source.is_some_and(|s| s.digest == rev.digest) {
            return Ok(Some((record.from_path.clone(), record.from_end)));
        }
    }
    Ok(None)
}

/// The file as `prune` would remove it, or `None` when some revision is its own work.
fn unmodified_copy(
    snap: &dyn ReadTxn,
    path: &DepotPath,
) -> Result<Option<PrunedFile>, ServiceError> {
    let revisions = snap.file_revisions(path)?;
    let into = snap.integrations_into(path)?;
    let mut head = None;
    for rev in &revisions {
        let Some(from) = copied_from(snap, rev, &into)? else {
            return Ok(None);
        };
        if head.as_ref().is_none_or(|(r, _)| rev.rev > *r) {
            head = Some((rev.rev, from));
        }
    }
    Ok(head.map(|(rev, (from, from_rev))| PrunedFile {
        path: path.clone(),
        rev,
        revisions: revisions.len() as u32,
        from,
        from_rev,
    }))
}

impl Service {
    /// Removes (with `execute`; else previews) the unmodified branched files `files` select.
    /// `sink` gets each file, in path order, before anything is removed; the totals are
    /// obliterate's (all zero in a preview but `revisions`).
    pub fn prune(
        &self,
        caller: &Caller,
        files: &[String],
        execute: bool,
        sink: &mut dyn FnMut(PrunedFile) -> Result<(), ServiceError>,
    ) -> Result<ObliterateTotals, PruneError> {
        if files.is_empty() {
            return Err(PruneError::NoFiles);
        }
        let (snap, who) = self.read_as(caller)?;
        who.require_anywhere("prune", Right::Admin)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let mut found: BTreeMap<DepotPath, PrunedFile> = BTreeMap::new();
        for text in files {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            if arg.rev.is_some() {
                return Err(PruneError::RevisionGiven { arg: text.clone() });
            }
            let mut matched = false;
            for scope in &arg.scopes {
                let mut heads = self.head_cursor(snap.as_ref(), scope.clone(), None);
                while let Some(head) = heads.next_row()? {
                    who.scan()?;
                    if !arg.matches(head.path.as_str()) || !who.lists(head.path.as_str()) {
                        continue;
                    }
                    matched = true;
                    who.require(Right::Admin, head.path.as_str())?;
                    if found.contains_key(&head.path) {
                        continue;
                    }
                    if let Some(file) = unmodified_copy(snap.as_ref(), &head.path)? {
                        found.insert(head.path, file);
                    }
                }
            }
            if !matched {
                return Err(ServiceError::NoSuchFiles { arg: text.clone() }.into());
            }
        }
        for path in found.keys() {
            if let Some(open) = snap.opened_file(path)?.into_iter().next() {
                return Err(PruneError::Opened {
                    path: path.to_string(),
                    user: open.user,
                    workspace: open.workspace,
                });
            }
        }
        drop(snap);
        let mut totals = ObliterateTotals::default();
        let paths: Vec<String> = found.keys().map(|p| p.to_string()).collect();
        for file in found.into_values() {
            totals.revisions += u64::from(file.revisions);
            sink(file)?;
        }
        if !execute || paths.is_empty() {
            return Ok(totals);
        }
        Ok(self.obliterate(caller, &paths, true, &mut |_| Ok(()))?)
    }
}
