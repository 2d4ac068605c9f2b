//! The directories a sync creates for new files, and whether it created each itself: a
//! directory this sync made holds nothing but what the sync puts there.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

/// Directories a sync has created or found existing, remembered up to a limit.
pub struct SyncDirs {
    /// Created by this sync (a `mkdir` that succeeded).
    created: HashSet<PathBuf>,
    /// Found existing, or failed to create (the writer then reports why).
    other: HashSet<PathBuf>,
    /// Most directories remembered before both sets start over.
    limit: usize,
}

impl SyncDirs {
    /// A tracker remembering at most `limit` directories before it starts over; forgetting
    /// costs one `mkdir` per directory met again, and a directory created by the sync and
    /// then forgotten counts as found existing.
    pub fn with_limit(limit: usize) -> SyncDirs {
        SyncDirs {
            created: HashSet::new(),
            other: HashSet::new(),
            limit: limit.max(1),
        }
    }

    /// Makes sure `dir` exists, creating it and its missing parents; true when this sync
    /// created `dir` (now or earlier). Errors are not reported here: the file's writer meets
    /// them again and names them.
    pub fn prepare(&mut self, dir: &Path) -> bool {
        if self.created.contains(dir) {
            return true;
        }
        if self.other.contains(dir) {
            return false;
        }
        let created = match std::fs::create_dir(dir) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => match dir.parent() {
                // Path depth bounds the recursion.
                Some(parent) if parent != dir => {
                    self.prepare(parent);
                    std::fs::create_dir(dir).is_ok()
                }
                _ => false,
            },
            Err(_) => false,
        };
        if self.created.len() + self.other.len() >= self.limit {
            self.created.clear();
            self.other.clear();
        }
        if created {
            self.created.insert(dir.to_path_buf());
        } else {
            self.other.insert(dir.to_path_buf());
        }
        created
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_directories_are_told_from_existing_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("old")).unwrap();
        let mut dirs = SyncDirs::with_limit(16);
        assert!(!dirs.prepare(&dir.path().join("old")));
        assert!(dirs.prepare(&dir.path().join("new/a/b")));
        assert!(dir.path().join("new/a/b").is_dir());
        // Parents created on the way count as created too.
        assert!(dirs.prepare(&dir.path().join("new/a")));
        assert!(dirs.prepare(&dir.path().join("new/a/b")));
        // A file in the way is not a directory this sync made.
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        assert!(!dirs.prepare(&dir.path().join("file/sub")));
    }

    #[test]
    fn forgotten_directories_count_as_existing() {
        let dir = tempfile::tempdir().unwrap();
        let mut dirs = SyncDirs::with_limit(1);
        assert!(dirs.prepare(&dir.path().join("a")));
        assert!(dirs.prepare(&dir.path().join("b")));
        assert!(!dirs.prepare(&dir.path().join("a")));
    }
}
