//! Making written files and renames durable: one fsync each, or one `syncfs` for many.

use crate::BlobError;
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

pub(crate) fn sync_path(path: &Path) -> Result<(), BlobError> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| BlobError::io(path, e))
}

/// Flushes the whole filesystem holding `anchor` (Linux `syncfs`).
#[cfg(target_os = "linux")]
fn syncfs(anchor: &Path) -> Result<(), BlobError> {
    use std::os::fd::AsRawFd;
    let dir = File::open(anchor).map_err(|e| BlobError::io(anchor, e))?;
    // SAFETY: `dir` is an open descriptor for the duration of the call.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(BlobError::io(anchor, std::io::Error::last_os_error()))
    }
}

/// Flushes `files`: one by one, or (Linux) with one `syncfs` when more than `threshold`.
pub(crate) fn flush_files<'a>(
    anchor: &Path,
    files: impl Iterator<Item = &'a Path>,
    threshold: usize,
) -> Result<(), BlobError> {
    let files: Vec<&Path> = files.collect();
    #[cfg(target_os = "linux")]
    if files.len() > threshold {
        return syncfs(anchor);
    }
    let _ = (anchor, threshold);
    files.into_iter().try_for_each(sync_path)
}

/// Flushes `dirs`: one by one, or (Linux) with one `syncfs` when more than `threshold`.
pub(crate) fn flush_dirs(
    anchor: &Path,
    dirs: &BTreeSet<PathBuf>,
    threshold: usize,
) -> Result<(), BlobError> {
    #[cfg(target_os = "linux")]
    if dirs.len() > threshold {
        return syncfs(anchor);
    }
    let _ = (anchor, threshold);
    dirs.iter().try_for_each(|d| sync_path(d))
}
