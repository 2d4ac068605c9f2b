//! Rotating a log's file: `FILE` → `FILE.1` → ... → `FILE.keep`, the oldest removed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Opens `path` for appending, creating it.
pub(super) fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// When the file's age began: its creation (or last change) time when the system tells it.
pub(super) fn file_age_start(file: &std::fs::File) -> SystemTime {
    file.metadata()
        .and_then(|m| m.created().or_else(|_| m.modified()))
        .unwrap_or_else(|_| SystemTime::now())
}

/// `path` → `path.1` → ... → `path.keep` (the oldest removed); returns the new, empty `path`.
pub(super) fn rotate(path: &Path, keep: usize) -> std::io::Result<std::fs::File> {
    let numbered = |n: usize| {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    };
    if keep == 0 {
        std::fs::remove_file(path)?;
    } else {
        match std::fs::remove_file(numbered(keep)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        for n in (1..keep).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        std::fs::rename(path, numbered(1))?;
    }
    open_append(path)
}

#[cfg(test)]
mod tests {
    use super::rotate;

    /// Rotation shifts the numbered files up and keeps at most `keep` of them.
    #[test]
    fn rotation_keeps_the_newest_files_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("commands.jsonl");
        for i in 0..5 {
            std::fs::write(&path, format!("{i}\n")).expect("write");
            rotate(&path, 3).expect("rotate");
        }
        let read =
            |n: usize| std::fs::read_to_string(dir.path().join(format!("commands.jsonl.{n}")));
        assert_eq!(read(1).expect(".1"), "4\n");
        assert_eq!(read(2).expect(".2"), "3\n");
        assert_eq!(read(3).expect(".3"), "2\n");
        assert!(read(4).is_err(), "a fourth rotated file was kept");
        assert_eq!(std::fs::read_to_string(&path).expect("new file"), "");
    }
}
