//! Obliterate: permanently removing files' history, and the purge queue that reclaims content.
//!
//! Metadata goes first, in bounded write jobs of at most `ServiceConfig::obliterate_batch` revisions each: a job deletes
//! revisions, the files' integration records (both directions) and label entries, and queues
//! every digest no revision, shelf or lazily-copied open file refers to any more. Blobs go
//! second, in a separate write job per batch of queued digests that re-checks `digest_in_use`
//! *inside the writer* before deleting the blob and unqueuing the digest. Every command that adds
//! a reference to existing content checks, in its own write job, that the blob is still present,
//! so the writer orders it against the purge and content is never referenced after deletion.
//! A crash between the two steps leaves digests queued; the server purges them on start.

use crate::args::FileArg;

use crate::fileinfo::from_revision;
use crate::shelve::queue_unused;
use crate::{Caller, FileInfo, FileOutcome, ObliterateError, Service, ServiceError};
use keel_core::{DepotPath, Digest};
use keel_store::{ReadTxn, RevisionRow, WriteTxn};
use std::collections::{BTreeSet, HashSet};

/// What an obliterate removed (or, in report mode, would remove).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObliterateTotals {
    pub revisions: u64,
    pub integrations: u64,
    pub label_entries: u64,
    /// Blobs deleted from the content store (0 in report mode).
    pub blobs_deleted: u64,
    /// Stored bytes reclaimed (0 in report mode).
    pub bytes_reclaimed: u64,
    pub executed: bool,
}

/// What one metadata batch did.
struct BatchOutcome {
    /// Files of the batch whose every revision is gone (a prefix of the batch).
    finished: usize,
    deleted: Vec<RevisionRow>,
    integrations: u64,
    label_entries: u64,
    queued: Vec<Digest>,
}

/// Deletes up to `batch` revisions of `paths` (in order, newest revisions first); a file's
/// integration records and label entries go with its last revision.
fn obliterate_batch(
    txn: &mut dyn WriteTxn,
    paths: &[DepotPath],
    batch: usize,
) -> Result<BatchOutcome, ServiceError> {
    let mut out = BatchOutcome {
        finished: 0,
        deleted: Vec::new(),
        integrations: 0,
        label_entries: 0,
        queued: Vec::new(),
    };
    for path in paths {
        let budget = batch - out.deleted.len();
        if budget == 0 {
            break;
        }
        let revisions = txn.file_revisions(path)?;
        let whole = revisions.len() <= budget;
        for rev in revisions.into_iter().take(budget) {
            txn.delete_revision(&rev.path, rev.rev)?;
            out.deleted.push(rev);
        }
        if !whole {
            break;
        }
        out.integrations += txn.delete_integrations_of(path)? as u64;
        out.label_entries += txn.delete_label_revs_of(path)? as u64;
        out.finished += 1;
    }
    let digests: Vec<Digest> = out.deleted.iter().filter_map(|r| r.digest).collect();
    // A surviving lazy copy of deleted content becomes its owner before anything is queued.
    txn.adopt_lazy_copies(&digests)?;
    out.queued = queue_unused(txn, digests)?;
    Ok(out)
}

/// Label entries naming `path`, counted over every label (report mode).
fn count_label_entries(
    snap: &dyn ReadTxn,
    paths: &BTreeSet<DepotPath>,
    page: usize,
) -> Result<u64, ServiceError> {
    let mut count = 0;
    let mut after: Option<String> = None;
    loop {
        let labels = snap.list_labels(after.as_deref(), page)?;
        for label in &labels {
            for path in paths {
                if snap.label_rev(&label.name, path)? != 0 {
                    count += 1;
                }
            }
        }
        match labels.last() {
            Some(last) if labels.len() == page => after = Some(last.name.clone()),
            _ => return Ok(count),
        }
    }
}

impl Service {
    /// Obliterates every revision of the files `files` select. Without `execute` only reports.
    /// `sink` gets one record per selected revision.
    pub fn obliterate(
        &self,
        caller: &Caller,
        files: &[String],
        execute: bool,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<ObliterateTotals, ObliterateError> {
        self.touch_user(caller)?;
        if files.is_empty() {
            return Err(ObliterateError::NoFiles);
        }
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        who.require_anywhere("obliterate", keel_core::Right::Admin)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let mut paths = BTreeSet::new();
        for text in files {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            if arg.rev.is_some() {
                return Err(ObliterateError::RevisionGiven { arg: text.clone() });
            }
            let before = paths.len();
            for scope in &arg.scopes {
                let mut heads = self.head_cursor(snap.as_ref(), scope.clone(), None);
                while let Some(head) = heads.next_row()? {
                    who.scan()?;
                    if arg.matches(head.path.as_str()) && who.lists(head.path.as_str()) {
                        who.require(keel_core::Right::Admin, head.path.as_str())?;
                        paths.insert(head.path);
                    }
                }
            }
            if paths.len() == before {
                return Err(ServiceError::NoSuchFiles { arg: text.clone() }.into());
            }
        }
        if !execute {
            return Ok(self.obliterate_report(snap.as_ref(), &paths, sink)?);
        }
        drop(snap);
        let mut totals = ObliterateTotals {
            executed: true,
            ..ObliterateTotals::default()
        };
        let pending: Vec<DepotPath> = paths.into_iter().collect();
        let mut start = 0;
        while start < pending.len() {
            let size = self.config.obliterate_batch;
            let batch: Vec<DepotPath> = pending[start..].iter().take(size).cloned().collect();
            let outcome = keel_store::write(self.meta.as_ref(), move |txn| {
                obliterate_batch(txn, &batch, size)
            })?;
            start += outcome.finished;
            totals.revisions += outcome.deleted.len() as u64;
            totals.integrations += outcome.integrations;
            totals.label_entries += outcome.label_entries;
            let (blobs, bytes) = self.purge(&outcome.queued)?;
            totals.blobs_deleted += blobs;
            totals.bytes_reclaimed += bytes;
            for rev in &outcome.deleted {
                let mut info = from_revision(rev);
                info.outcome = Some(FileOutcome::Purged);
                sink(info)?;
            }
        }
        Ok(totals)
    }

    fn obliterate_report(
        &self,
        snap: &dyn ReadTxn,
        paths: &BTreeSet<DepotPath>,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<ObliterateTotals, ServiceError> {
        let mut totals = ObliterateTotals::default();
        let mut integrations = HashSet::new();
        for path in paths {
            for rev in snap.file_revisions(path)? {
                totals.revisions += 1;
                let mut info = from_revision(&rev);
                info.outcome = Some(FileOutcome::WouldBePurged);
                sink(info)?;
            }
            for integ in snap
                .integrations_into(path)?
                .into_iter()
                .chain(snap.integrations_from(path)?)
            {
                integrations.insert((
                    integ.to_path,
                    integ.to_rev,
                    integ.from_path,
                    integ.from_start,
                    integ.from_end,
                ));
            }
        }
        totals.integrations = integrations.len() as u64;
        totals.label_entries = count_label_entries(snap, paths, self.config.obliterate_batch)?;
        Ok(totals)
    }

    /// Deletes the blobs of queued digests nothing refers to any more; each batch re-checks
    /// references inside the writer, then deletes and unqueues. Returns (blobs, stored bytes).
    pub(crate) fn purge(&self, digests: &[Digest]) -> Result<(u64, u64), ServiceError> {
        let mut totals = (0, 0);
        for chunk in digests.chunks(self.config.obliterate_batch) {
            let chunk = chunk.to_vec();
            let blobs = self.blobs.clone();
            let (count, bytes) = keel_store::write(self.meta.as_ref(), move |txn| {
                let (mut count, mut bytes) = (0u64, 0u64);
                for digest in &chunk {
                    if !txn.digest_in_use(digest)? {
                        let reclaimed = blobs.delete(digest)?;
                        crate::failpoints::hit(crate::failpoints::OBLITERATE_IN_PURGE);
                        if reclaimed > 0 {
                            count += 1;
                            bytes += reclaimed;
                        }
                    }
                    txn.unqueue_purge(digest)?;
                }
                Ok::<_, ServiceError>((count, bytes))
            })?;
            totals.0 += count;
            totals.1 += bytes;
        }
        Ok(totals)
    }

    /// Finishes purges a crash interrupted: processes the whole purge queue. Returns
    /// (blobs deleted, stored bytes reclaimed).
    pub fn recover_purges(&self) -> Result<(u64, u64), ServiceError> {
        let mut totals = (0, 0);
        loop {
            let queued = self
                .meta
                .snapshot()?
                .queued_purges(self.config.obliterate_batch)?;
            if queued.is_empty() {
                return Ok(totals);
            }
            let (count, bytes) = self.purge(&queued)?;
            totals.0 += count;
            totals.1 += bytes;
        }
    }
}
