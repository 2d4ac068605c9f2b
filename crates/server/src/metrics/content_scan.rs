//! The content store's size and object count for the metrics: a thread of its own walks
//! `ROOT/content` at the lowest CPU priority every `metrics_content_scan_secs` and keeps the
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

/// Stored blobs (`*.zst`, `*.raw`) under `dir` and their bytes on disk. Unreadable
/// directories are passed over (a blob being published, a directory just created).
fn walk(dir: &Path) -> (u64, u64) {
    let (mut objects, mut bytes) = (0, 0);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() {
                if name != "tmp" {
                    pending.push(entry.path());
                }
            } else if kind.is_file() {
                let name = name.to_string_lossy();
                if name.ends_with(".zst") || name.ends_with(".raw") {
                    objects += 1;
                    bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
                }
            }
        }
    }
    (objects, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stored_blobs_and_skips_temporaries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sub = dir.path().join("ab").join("cd");
        std::fs::create_dir_all(&sub).expect("dirs");
        std::fs::create_dir_all(dir.path().join("tmp")).expect("tmp");
        std::fs::write(sub.join("x.zst"), b"12345").expect("blob");
        std::fs::write(sub.join("y.raw"), b"123").expect("blob");
        std::fs::write(dir.path().join("tmp").join("z.zst"), b"1").expect("temp");
        std::fs::write(sub.join("notes.txt"), b"1").expect("other");
        assert_eq!(walk(dir.path()), (2, 8));
        assert_eq!(walk(&dir.path().join("missing")), (0, 0));
    }
}
