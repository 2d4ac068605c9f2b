//! The content store's size and object count for the metrics: a thread of its own counts
//! `ROOT/content` (`keel_blob::usage`) at the lowest CPU priority every `metrics_content_scan_secs` and keeps the
//! totals of the last complete walk. A scrape only reads them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The totals of the last complete walk (zero until the first one ends).
#[derive(Debug, Default)]
pub(crate) struct ContentTotals {
    pub(crate) objects: AtomicU64,
    pub(crate) bytes: AtomicU64,
    /// Completed walks; 0 means the totals are not known yet.
    pub(crate) scans: AtomicU64,
}

/// Starts the walking thread; it stops with the process.
pub(crate) fn start(content: PathBuf, every: Duration) -> std::io::Result<Arc<ContentTotals>> {
    let totals = Arc::new(ContentTotals::default());
    let shared = totals.clone();
    std::thread::Builder::new()
        .name("keel-metrics-content".into())
        .spawn(move || {
            if let Err(e) = keel_store::thread_priority::lower_current_thread(19) {
                tracing::debug!(error = %e, "metrics content scan keeps its priority");
            }
            loop {
                let (objects, bytes) = walk(&content);
                shared.objects.store(objects, Ordering::Relaxed);
                shared.bytes.store(bytes, Ordering::Relaxed);
                shared.scans.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(every);
            }
        })?;
    Ok(totals)
}

/// The content store's blobs and bytes on disk (`keel_blob::usage`); a store it cannot read
/// right now (a pack being sealed) counts as empty until the next walk, and says why.
fn walk(dir: &Path) -> (u64, u64) {
    match keel_blob::usage(dir) {
        Ok(usage) => (usage.blobs, usage.disk_bytes),
        Err(e) => {
            tracing::warn!(error = %e, "metrics: cannot count the content store");
            (0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};

    #[test]
    fn counts_what_the_blob_store_holds() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(walk(&dir.path().join("missing")), (0, 0));
        let store = FsBlobStore::open(dir.path(), CompressionPolicy::default()).expect("store");
        for text in ["one", "two", "three"] {
            let mut w = store.writer().expect("writer");
            w.write(text.as_bytes()).expect("write");
            store
                .publish(vec![w.finish().expect("finish")])
                .expect("publish");
        }
        let (blobs, bytes) = walk(dir.path());
        assert_eq!(blobs, 3);
        assert!(bytes > 0);
    }
}
