//! `+S` / `+Sn` file types: only the newest n revisions of such a file keep their content.
//! After a submit, older revisions are purged the way obliterate reclaims content: in one
//! write job each loses its digest (it stays in the history, its content gone), a branch
//! still holding that content lazily becomes its owner (`adopt_lazy_copies`), and the
//! digests nothing refers to any more are queued; the blobs go afterwards, each re-checked
//! inside the writer (`Service::purge`). A crash in between leaves them queued for the
//! server's start-up purge.

use crate::shelve::queue_unused;
use crate::{Service, ServiceError};
use keel_core::DepotPath;

impl Service {
    /// Purges the content of the revisions of each `(file, n)` older than its newest `n`.
    /// Returns (revisions purged, blobs deleted).
    pub(crate) fn reclaim_beyond_keep(
        &self,
        files: Vec<(DepotPath, u16)>,
    ) -> Result<(u64, u64), ServiceError> {
        if files.is_empty() {
            return Ok((0, 0));
        }
        let (purged, queued) = keel_store::write(self.meta.as_ref(), move |txn| {
            let mut digests = Vec::new();
            let mut purged = 0u64;
            for (path, keep) in &files {
                // Newest first: every revision past the newest `keep` loses its content.
                for rev in txn
                    .file_revisions(path)?
                    .into_iter()
                    .skip(usize::from(*keep))
                {
                    if rev.digest.is_none() {
                        continue;
                    }
                    if let Some(digest) = txn.purge_revision_content(&rev.path, rev.rev)? {
                        digests.push(digest);
                        purged += 1;
                    }
                }
            }
            txn.adopt_lazy_copies(&digests)?;
            let queued = queue_unused(txn, digests)?;
            Ok::<_, ServiceError>((purged, queued))
        })?;
        let (blobs, _) = self.purge(&queued)?;
        Ok((purged, blobs))
    }
}
