//! Where a received file's bytes go until it is verified: a temp file beside the target that
//! is renamed over it, or, for a new file in a directory the sync created, a file with no name
//! yet that is linked under the target's name once verified.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::transfer;

/// The file a received file's content is written to.
pub enum Landing {
    /// A temp file in the target's directory, renamed over the target once verified.
    Temp(tempfile::NamedTempFile),
    /// A file without a name in the target's directory (Linux `O_TMPFILE`): it gets the
    /// target's name only once verified, and vanishes with its descriptor otherwise, so a
    /// failed, abandoned or killed sync leaves nothing behind.
    Unnamed(UnnamedFile),
}

/// A file created without a name, see [`Landing::Unnamed`].
pub struct UnnamedFile {
    file: File,
    /// The BLAKE3 digest of the incoming content ("" unknown), for a name taken meanwhile.
    digest: String,
}

impl UnnamedFile {
    /// The open file.
    pub fn as_file(&self) -> &File {
        &self.file
    }

    /// Gives the verified file `target`'s name. The name cannot exist (the sync created its
    /// directory, and the have list holds no revision of it); when it was taken meanwhile, the
    /// file replaces it through a temp name only when that loses nothing (the taken name is
    /// read-only, or holds the incoming content); otherwise it is a clobber.
    pub fn link_as(self, target: &Path) -> Result<()> {
        match link_unnamed(&self.file, target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let same = transfer::hash_local(target)?.is_some_and(|local| {
                    !self.digest.is_empty() && local.eq_ignore_ascii_case(&self.digest)
                });
                if transfer::is_writable_file(target) && !same {
                    return Err(Error::CantClobber(target.to_path_buf()));
                }
                let dir = target.parent().unwrap_or(Path::new("."));
                let named = tempfile::Builder::new()
                    .prefix(".keel-tmp-")
                    .make_in(dir, |temp| link_unnamed(&self.file, temp))
                    .at(dir)?;
                named
                    .into_temp_path()
                    .persist(target)
                    .map_err(|e| Error::io(target, e.error))
            }
            Err(e) => Err(Error::io(target, e)),
        }
    }
}

impl Write for Landing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Landing::Temp(temp) => temp.write(buf),
            Landing::Unnamed(unnamed) => unnamed.file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Landing::Temp(temp) => temp.flush(),
            Landing::Unnamed(unnamed) => unnamed.file.flush(),
        }
    }
}

impl Landing {
    /// Where `target`'s content goes. `fresh` says the sync created the target's directory for
    /// it and the have list holds no revision of it: the content then goes to a file without a
    /// name, which needs no clobber check and no rename (see [`UnnamedFile::link_as`]), where
    /// the system and the filesystem offer one; otherwise to a temp file beside the target.
    pub fn for_target(target: &Path, fresh: bool, digest: &str) -> Result<Landing> {
        if fresh && let Some(dir) = target.parent() {
            match create_unnamed(dir) {
                Ok(Some(file)) => {
                    return Ok(Landing::Unnamed(UnnamedFile {
                        file,
                        digest: digest.to_string(),
                    }));
                }
                // No unnamed files here, or the directory went again (emptied by a delete with
                // `rmdir`): the temp file path creates it.
                Ok(None) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(target, e)),
            }
        }
        temp_beside(target).map(Landing::Temp)
    }
}

/// A file without a name in `dir`, read-write for its owner until its mode is set; `None` where
/// unnamed files cannot be made or linked (a filesystem without `O_TMPFILE`, no `/proc`).
#[cfg(target_os = "linux")]
fn create_unnamed(dir: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    if !proc_fd_available() {
        return Ok(None);
    }
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match opened {
        Ok(file) => Ok(Some(file)),
        Err(e) => match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL) => Ok(None),
            _ => Err(e),
        },
    }
}

#[cfg(not(target_os = "linux"))]
fn create_unnamed(_dir: &Path) -> io::Result<Option<File>> {
    Ok(None)
}

/// Whether `/proc/self/fd` is there, through which [`link_unnamed`] names a file (checked once).
#[cfg(target_os = "linux")]
fn proc_fd_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| Path::new("/proc/self/fd").is_dir())
}

/// Links an unnamed file under `name`, failing with `AlreadyExists` when the name is taken:
/// through the descriptor itself (`AT_EMPTY_PATH`, which needs Linux 6.10 or
/// `CAP_DAC_READ_SEARCH`), else through its `/proc/self/fd` entry, a path lookup more.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, name: &Path) -> io::Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    /// Whether `AT_EMPTY_PATH` was refused once (it then is for every file of this process).
    static EMPTY_PATH_REFUSED: AtomicBool = AtomicBool::new(false);
    if !EMPTY_PATH_REFUSED.load(Ordering::Relaxed) {
        match link_by_descriptor(file, name) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EPERM)) => {
                EMPTY_PATH_REFUSED.store(true, Ordering::Relaxed);
            }
            done => return done,
        }
    }
    link_through_proc(file, name)
}

/// `linkat(fd, "", ..., AT_EMPTY_PATH)`.
#[cfg(target_os = "linux")]
fn link_by_descriptor(file: &File, name: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    linkat(file.as_raw_fd(), c"", name, libc::AT_EMPTY_PATH)
}

/// `linkat("/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW)`.
#[cfg(target_os = "linux")]
fn link_through_proc(file: &File, name: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let source = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(io::Error::other)?;
    linkat(libc::AT_FDCWD, &source, name, libc::AT_SYMLINK_FOLLOW)
}

#[cfg(target_os = "linux")]
fn linkat(
    dir: libc::c_int,
    source: &std::ffi::CStr,
    name: &Path,
    flags: libc::c_int,
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(name.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call; `dir` is an open
    // descriptor or AT_FDCWD.
    let done = unsafe { libc::linkat(dir, source.as_ptr(), libc::AT_FDCWD, name.as_ptr(), flags) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _name: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
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
    fn fresh_file_gets_its_name_and_mode_only_once_verified() {
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
        // No name at all until it is verified: no temp name either.
        assert!(names(dir.path()).is_empty());
        assert_eq!(incoming.finish().unwrap(), 7);
        assert_eq!(names(dir.path()), ["f"]);
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

    /// Both ways of naming an unnamed file work, and neither replaces a taken name.
    #[cfg(target_os = "linux")]
    #[test]
    fn unnamed_file_is_linked_by_descriptor_or_through_proc() {
        let dir = tempfile::tempdir().unwrap();
        for (name, link) in [
            (
                "by-descriptor",
                link_by_descriptor as fn(&File, &Path) -> io::Result<()>,
            ),
            ("through-proc", link_through_proc),
        ] {
            let mut file = create_unnamed(dir.path()).unwrap().expect("O_TMPFILE here");
            file.write_all(name.as_bytes()).unwrap();
            let target = dir.path().join(name);
            match link(&file, &target) {
                Ok(()) => assert_eq!(std::fs::read(&target).unwrap(), name.as_bytes()),
                // Linux before 6.10 without CAP_DAC_READ_SEARCH: the caller falls back.
                Err(e)
                    if name == "by-descriptor"
                        && matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EPERM)) =>
                {
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            }
            let again = link(&file, &target).unwrap_err();
            assert_eq!(again.kind(), io::ErrorKind::AlreadyExists, "{name}");
        }
        assert!(names(dir.path()).contains(&"through-proc".to_string()));
    }

    #[test]
    fn vanished_directory_is_created_again() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("gone/f");
        write_fresh(&target, b"x", b"x", LocalMode::default()).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"x");
    }
}
