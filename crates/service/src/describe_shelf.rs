//! `describe -S`: a pending change's shelved files, with diffs against their base revisions.

use crate::changes::{DescribePart, change_info};
use crate::context::load_change;
use crate::shelve::{shelved_info, whole_shelf};
use crate::{Caller, Service, ServiceError};
use keel_core::{ChangeNumber, unified_diff};
use keel_store::{RevisionRow, ShelvedRow};

/// A shelved file as a revision row, so the revision text helpers can read it.
fn as_revision(row: &ShelvedRow) -> RevisionRow {
    RevisionRow {
        path: row.path.clone(),
        rev: row.base_rev,
        change: row.change,
        action: row.action,
        file_type: row.file_type,
        digest: row.digest,
        size: row.size,
        md5: row.md5.clone(),
        time: 0,
        mod_time: row.mod_time,
    }
}

impl Service {
    /// Describes the shelf of `change`: header, shelved files, then (unless `summary`) unified
    /// diffs of text files against the revision they were opened at.
    pub fn describe_shelved(
        &self,
        caller: &Caller,
        change: ChangeNumber,
        summary: bool,
        sink: &mut dyn FnMut(DescribePart) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let change = change.0;
        let (snap, who) = self.read_as(caller)?;
        let row = load_change(snap.as_ref(), ChangeNumber(change))?;
        let mut shelf = whole_shelf(snap.as_ref(), change, self.config.shelf_page)?;
        shelf.retain(|path, _| who.lists(path.as_str()));
        sink(DescribePart::Change(change_info(row)))?;
        for shelved in shelf.values() {
            sink(DescribePart::File(Box::new(shelved_info(shelved, None))))?;
        }
        if summary {
            return Ok(());
        }
        for shelved in shelf.values() {
            // Diffs show content: only of files the caller may read.
            if !shelved.file_type.base.is_line_text()
                || !who
                    .user
                    .allows(keel_core::Right::Read, shelved.path.as_str())
            {
                continue;
            }
            let base = if shelved.base_rev > 0 {
                snap.revision(&shelved.path, shelved.base_rev)?
            } else {
                None
            };
            let old_label = base
                .as_ref()
                .map(|b| format!("{}#{}", b.path, b.rev))
                .unwrap_or_else(|| "/dev/null".into());
            let new_label = format!("{}@={change}", shelved.path);
            let diff = match (
                self.revision_text(base.as_ref())?,
                self.revision_text(Some(&as_revision(shelved)))?,
            ) {
                (Some(a), Some(b)) => unified_diff(&a, &b, &old_label, &new_label),
                _ => format!("==== {old_label} vs {new_label}: too large to diff ====\n"),
            };
            if !diff.is_empty() {
                sink(DescribePart::Diff(diff))?;
            }
        }
        Ok(())
    }
}
