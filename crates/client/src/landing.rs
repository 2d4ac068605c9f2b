//! Where a received file's bytes go until it is verified: a temp file beside the target that
//! is renamed over it, or, for a new file in a directory the sync created, the target itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::transfer;

/// The file a received file's content is written to.
pub enum Landing {
    /// A temp file in the target's directory, renamed over the target once verified.
    Temp(tempfile::NamedTempFile),
    /// The target itself, created by this sync: removed again unless it is kept.
    Direct(DirectFile),
}

/// A file created under its final name, removed on drop unless [`DirectFile::keep`] was called,
/// so a failed or abandoned file leaves nothing under that name.
pub struct DirectFile {
    file: File,
    path: PathBuf,
    kept: bool,
}

impl DirectFile {
    /// The open file.
    pub fn as_file(&self) -> &File {
        &self.file
    }

    /// Leaves the file in place.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for DirectFile {
    fn drop(&mut self) {
        if !self.kept {
            // A file that cannot be removed is left: nothing more can be done about it here.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Write for Landing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Landing::Temp(temp) => temp.write(buf),
            Landing::Direct(direct) => direct.file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Landing::Temp(temp) => temp.flush(),
            Landing::Direct(direct) => direct.file.flush(),
        }
    }
}

impl Landing {
    /// Where `target`'s content goes. `fresh` says the sync created the target's directory for
    /// it and the have list holds no revision of it: the target is then created directly,
    /// read-only until it is verified and given its mode, so that a sync killed in the middle
    /// leaves at worst a read-only partial file the have list does not claim, which the next
    /// sync replaces like any read-only file. The creation is exclusive: a name taken since the
    /// directory was created is replaced through a temp file only when that loses nothing (it
    /// is read-only, or holds the incoming content, `digest`); otherwise it is a clobber.
    pub fn for_target(target: &Path, fresh: bool, digest: &str) -> Result<Landing> {
        if fresh {
            match create_new(target) {
                Ok(file) => {
                    return Ok(Landing::Direct(DirectFile {
                        file,
                        path: target.to_path_buf(),
                        kept: false,
                    }));
                }
                // The directory went again (emptied by a delete with `rmdir`): the temp file
                // path creates it.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let same = || {
                        transfer::hash_local(target).map(|local| {
                            local.is_some_and(|l| {
                                !digest.is_empty() && l.eq_ignore_ascii_case(digest)
                            })
                        })
                    };
                    if transfer::is_writable_file(target) && !same()? {
                        return Err(Error::CantClobber(target.to_path_buf()));
                    }
                }
                Err(e) => return Err(Error::io(target, e)),
            }
        }
        temp_beside(target).map(Landing::Temp)
    }
}

/// Creates `target`, failing when the name exists; read-only, so a partial file is never taken
/// for a user's work.
fn create_new(target: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o444);
    }
    options.open(target)
}

/// A temp file in `target`'s directory, creating the directory only when it is missing (the
/// common case, an existing directory, costs one file creation and nothing more).
pub fn temp_beside(target: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = target
        .parent()
        .ok_or_else(|| Error::io(target, io::Error::other("no parent directory")))?;
    let create = || {
        tempfile::Builder::new()
            .prefix(".keel-tmp-")
            .tempfile_in(dir)
    };
    match create() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Safe when another writer creates the same directory meanwhile: an existing
            // directory counts as created.
            std::fs::create_dir_all(dir).at(dir)?;
            create().at(dir)
        }
        other => other.at(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::{Decompressor, IncomingFile, LocalMode};

    fn digest(bytes: &[u8]) -> String {
        blake3::hash(bytes).to_hex().to_string()
    }

    /// Writes `content` as a fresh file at `target` (checked against `expected`).
    fn write_fresh(target: &Path, content: &[u8], expected: &[u8], mode: LocalMode) -> Result<u64> {
        let mut context = Decompressor::create();
        let mut incoming = IncomingFile::begin_with(
            target.to_path_buf(),
            false,
            &digest(expected),
            mode,
            true,
            &mut context,
        )?;
        incoming.write_chunk(content)?;
        incoming.finish()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn fresh_file_is_created_under_its_name_with_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        let mut context = Decompressor::create();
        let mut incoming = IncomingFile::begin_with(
            target.clone(),
            false,
            &digest(b"content"),
            LocalMode {
                writable: true,
                ..LocalMode::default()
            },
            true,
            &mut context,
        )
        .unwrap();
        incoming.write_chunk(b"content").unwrap();
        // Under its own name from the start, read-only until it is verified.
        assert_eq!(names(dir.path()), ["f"]);
        assert!(!transfer::is_writable_file(&target));
        assert_eq!(incoming.finish().unwrap(), 7);
        assert_eq!(std::fs::read(&target).unwrap(), b"content");
        assert!(transfer::is_writable_file(&target));
    }

    #[test]
    fn failed_or_abandoned_fresh_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        let err = write_fresh(&target, b"content", b"other", LocalMode::default()).unwrap_err();
        assert!(matches!(err, Error::DigestMismatch { .. }));
        let mut context = Decompressor::create();
        let mut incoming = IncomingFile::begin_with(
            target.clone(),
            false,
            "",
            LocalMode::default(),
            true,
            &mut context,
        )
        .unwrap();
        incoming.write_chunk(b"half").unwrap();
        drop(incoming);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn taken_name_is_replaced_only_when_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        // Read-only (a file this sync wrote for another depot file): replaced.
        std::fs::write(&target, b"earlier").unwrap();
        transfer::make_read_only(&target).unwrap();
        write_fresh(&target, b"new", b"new", LocalMode::default()).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // Writable with other content (a user's file): kept, and the file is a clobber.
        transfer::make_writable(&target).unwrap();
        std::fs::write(&target, b"mine").unwrap();
        let err = write_fresh(&target, b"new", b"new", LocalMode::default()).unwrap_err();
        assert!(matches!(err, Error::CantClobber(ref p) if p == &target));
        assert_eq!(std::fs::read(&target).unwrap(), b"mine");
        // Writable with the incoming content: replaced.
        std::fs::write(&target, b"new").unwrap();
        write_fresh(&target, b"new", b"new", LocalMode::default()).unwrap();
        assert!(!transfer::is_writable_file(&target));
        assert_eq!(names(dir.path()), ["f"]);
    }

    #[test]
    fn vanished_directory_is_created_again() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("gone/f");
        write_fresh(&target, b"x", b"x", LocalMode::default()).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"x");
    }
}
