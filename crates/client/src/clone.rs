//! Filling a cloned workspace's root from its source workspace's files without copying bytes
//! (`keel workspace clone`): a reflink where the file system has them (`FICLONE`), a hard link
//! for a file that is read-only because it is not opened, a plain copy otherwise. The files are
//! made while the have list still arrives ([`Chunker`], [`populate_from`]), by a few threads,
//! each looking at and linking a file relative to handles on its directories (`statat`,
//! `linkat`), so a file costs two short system calls.
//!
//! **Invariant: the source never changes.** A hard link shares the source's inode, so a linked
//! file must never be written in place: every client path that makes a file writable goes
//! through [`crate::transfer::make_writable`], which first replaces a file with more than one
//! link by a private copy, and syncs replace files by renaming. Writable files (an `allwrite`
//! workspace, `+w` types) are never hard-linked, in either direction. Files opened in the
//! source, files whose content is not the have revision's, and files missing from the source
//! are left for the caller to fetch from the server at their have revision: a clone never
//! takes the source's edits.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, mpsc};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, IoContext, Result};
use crate::transfer;

/// One have-list entry of the clone.
#[derive(Debug, Clone)]
pub struct CloneEntry {
    /// The file's path relative to the workspace root (the same in source and clone).
    pub relative: String,
    /// The BLAKE3 digest (hex) of the have revision's content.
    pub digest: String,
    /// Opened in the source: taken from the server, never from the source's copy.
    pub opened_in_source: bool,
}

/// How the clone's files are to be made.
#[derive(Debug, Clone, Copy, Default)]
pub struct CloneOptions {
    /// The clone's files are writable (`allwrite`): nothing is hard-linked.
    pub writable: bool,
    /// Also take the files under the source's root that the depot does not track.
    pub with_untracked: bool,
}

/// What filling the clone did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloneTotals {
    pub reflinked: u64,
    pub hard_linked: u64,
    pub copied: u64,
    pub symlinks: u64,
    /// Untracked files taken (`with_untracked`), by whatever means.
    pub untracked: u64,
    /// Entries left to fetch from the server (their indices in the entry list).
    pub to_fetch: Vec<usize>,
}

/// Names in a workspace root that belong to the tools, never copied.
fn is_tool_file(name: &str) -> bool {
    matches!(
        name,
        ".keel" | ".keel-state" | ".keel-have" | ".keel_tickets"
    ) || name.starts_with(".keel-tmp-")
}

/// Most threads filling a clone at once: linking is system calls on distinct directories,
/// which run side by side.
const MAX_FILLERS: usize = 4;

/// Entries handed to a filling thread at a time, at least (a run ends with a directory).
pub const CHUNK_ENTRIES: usize = 1024;

/// A run of consecutive entries in path order: the index of its first in the whole list, and
/// the entries, whole directories only (a directory's files go to one thread, which opens its
/// directories once).
pub type Chunk = (usize, Vec<CloneEntry>);

/// Cuts entries arriving in path order into [`Chunk`]s of at least `size` entries, each ending
/// at a change of directory.
#[derive(Debug)]
pub struct Chunker {
    size: usize,
    next: usize,
    run: Vec<CloneEntry>,
}

impl Chunker {
    pub fn new(size: usize) -> Chunker {
        Chunker {
            size: size.max(1),
            next: 0,
            run: Vec::new(),
        }
    }

    /// Adds the next entry; returns the run it closes, if any.
    pub fn push(&mut self, entry: CloneEntry) -> Option<Chunk> {
        let closes = self.run.len() >= self.size
            && self
                .run
                .last()
                .is_some_and(|last| parent(&last.relative) != parent(&entry.relative));
        let done = closes.then(|| self.take());
        self.run.push(entry);
        done
    }

    /// The last run, if any entries are left.
    pub fn finish(mut self) -> Option<Chunk> {
        (!self.run.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> Chunk {
        let run = std::mem::take(&mut self.run);
        let first = self.next;
        self.next += run.len();
        (first, run)
    }
}

/// A relative path's directory part ("" at the root).
fn parent(relative: &str) -> &str {
    relative.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Makes files under `dest` from the files under `source` for `entries` (in path order).
/// See [`populate_from`].
pub fn populate(
    source: &Path,
    dest: &Path,
    entries: &[CloneEntry],
    options: CloneOptions,
) -> Result<CloneTotals> {
    let (sender, chunks) = mpsc::channel();
    let mut chunker = Chunker::new(CHUNK_ENTRIES);
    for entry in entries {
        if let Some(chunk) = chunker.push(entry.clone()) {
            // The receiver lives until `populate_from` returns, below.
            let _ = sender.send(chunk);
        }
    }
    if let Some(chunk) = chunker.finish() {
        let _ = sender.send(chunk);
    }
    drop(sender);
    populate_from(source, dest, chunks, options)
}

/// Makes files under `dest` from the files under `source` for the entries arriving as
/// [`Chunk`]s (from a [`Chunker`], in path order), while they arrive: the caller may still be
/// reading the list. Returns once the sender is dropped and everything is made.
///
/// Regular files go first, the chunks shared among threads, each file looked at and linked
/// relative to its directories' handles; then the untracked files; symlinks last, so nothing
/// is ever created through a link the clone made.
pub fn populate_from(
    source: &Path,
    dest: &Path,
    chunks: mpsc::Receiver<Chunk>,
    options: CloneOptions,
) -> Result<CloneTotals> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_FILLERS);
    let chunks = Mutex::new(chunks);
    let filled: Vec<Result<Filled>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| fill(source, dest, &chunks, options)))
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut filler = Filler::new(options.writable);
    let mut links = Vec::new();
    let mut runs = Vec::new();
    for part in filled {
        let part = part?;
        filler.totals.add(part.filler.totals);
        links.extend(part.links);
        runs.extend(part.runs);
    }
    runs.sort_unstable_by_key(|(first, _)| *first);
    let entries: Vec<CloneEntry> = runs.into_iter().flat_map(|(_, run)| run).collect();
    if options.with_untracked {
        let tracked: HashSet<&str> = entries.iter().map(|e| e.relative.as_str()).collect();
        filler.untracked(source, dest, &tracked)?;
    }
    filler.symlinks(dest, &entries, links)?;
    filler.totals.to_fetch.sort_unstable();
    Ok(filler.totals)
}

/// One thread's work: chunks taken from `chunks` until none are left.
fn fill(
    source: &Path,
    dest: &Path,
    chunks: &Mutex<mpsc::Receiver<Chunk>>,
    options: CloneOptions,
) -> Result<Filled> {
    let mut filler = Filler::new(options.writable);
    let mut links = Vec::new();
    let mut runs = Vec::new();
    loop {
        let next = chunks.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((first, run)) = next else {
            break;
        };
        for (offset, entry) in run.iter().enumerate() {
            let index = first + offset;
            if entry.opened_in_source {
                filler.totals.to_fetch.push(index);
                continue;
            }
            match filler.take(source, dest, entry)? {
                Taken::Made => {}
                Taken::Fetch => filler.totals.to_fetch.push(index),
                Taken::Symlink(target) => links.push((index, target)),
            }
        }
        runs.push((first, run));
    }
    Ok(Filled {
        filler,
        links,
        runs,
    })
}

/// One thread's share of the files.
struct Filled {
    filler: Filler,
    /// Symlinks to make once every other file is there: (entry index, target).
    links: Vec<(usize, PathBuf)>,
    /// The chunks it took, given back to put the whole list together.
    runs: Vec<Chunk>,
}

/// What became of one tracked entry.
enum Taken {
    Made,
    /// To fetch from the server.
    Fetch,
    /// A symlink to this target, made last.
    Symlink(PathBuf),
}

impl CloneTotals {
    fn add(&mut self, other: CloneTotals) {
        self.reflinked += other.reflinked;
        self.hard_linked += other.hard_linked;
        self.copied += other.copied;
        self.symlinks += other.symlinks;
        self.untracked += other.untracked;
        self.to_fetch.extend(other.to_fetch);
    }
}

/// The directory a filler is working in: handles on it in the source and (once a file was
/// made there) in the clone, so each file costs a lookup of its name only.
struct Dir {
    /// Relative to the roots ("" for the roots themselves).
    relative: String,
    /// `None`: not a directory in the source (every file there is fetched).
    source: Option<OwnedFd>,
    dest: Option<OwnedFd>,
}

struct Filler {
    writable: bool,
    /// Whether reflinks are still worth trying (false after the file system refused one).
    reflinks: bool,
    made_dirs: HashSet<PathBuf>,
    dir: Option<Dir>,
    totals: CloneTotals,
}

impl Filler {
    fn new(writable: bool) -> Filler {
        Filler {
            writable,
            reflinks: true,
            made_dirs: HashSet::new(),
            dir: None,
            totals: CloneTotals::default(),
        }
    }

    /// The handles of `relative`'s directory (opening the source's when it changed).
    fn enter(&mut self, source: &Path, relative: &str) -> Result<&mut Dir> {
        if self.dir.as_ref().is_none_or(|d| d.relative != relative) {
            let path = source.join(relative);
            let handle = match rustix::fs::open(
                &path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => Some(fd),
                Err(Errno::NOENT | Errno::NOTDIR) => None,
                Err(e) => return Err(Error::io(&path, e.into())),
            };
            self.dir = Some(Dir {
                relative: relative.to_string(),
                source: handle,
                dest: None,
            });
        }
        Ok(self.dir.as_mut().expect("entered above"))
    }

    /// Takes one tracked file from the source (a symlink is only read: it is made last).
    fn take(&mut self, source: &Path, dest: &Path, entry: &CloneEntry) -> Result<Taken> {
        let (relative_dir, name) = entry
            .relative
            .rsplit_once('/')
            .unwrap_or(("", entry.relative.as_str()));
        let dir = self.enter(source, relative_dir)?;
        let Some(source_dir) = &dir.source else {
            return Ok(Taken::Fetch);
        };
        let stat = match rustix::fs::statat(source_dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT | Errno::NOTDIR) => return Ok(Taken::Fetch),
            Err(e) => return Err(Error::io(source.join(&entry.relative), e.into())),
        };
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind == FileType::Directory {
            return Ok(Taken::Fetch);
        }
        let permissions = stat.st_mode & 0o7777;
        // Only the have revision's content is taken: a writable file may have been edited.
        let read_only = permissions & 0o222 == 0;
        let symlink = kind == FileType::Symlink;
        if symlink || !read_only {
            let from = source.join(&entry.relative);
            let same = transfer::hash_local(&from)?
                .is_some_and(|local| local.eq_ignore_ascii_case(&entry.digest));
            if !same {
                return Ok(Taken::Fetch);
            }
            if symlink {
                return Ok(Taken::Symlink(std::fs::read_link(&from).at(&from)?));
            }
        }
        let mode = if self.writable {
            permissions | 0o200
        } else {
            permissions & !0o222
        };
        self.place_at(source, dest, entry, name, mode, read_only && !self.writable)?;
        Ok(Taken::Made)
    }

    /// [`Self::place`] for a tracked file, relative to the current directory's handles.
    fn place_at(
        &mut self,
        source: &Path,
        dest: &Path,
        entry: &CloneEntry,
        name: &str,
        mode: u32,
        linkable: bool,
    ) -> Result<()> {
        let to = || dest.join(&entry.relative);
        let dir = self.dir.as_mut().expect("entered by take");
        if dir.dest.is_none() {
            let path = dest.join(&dir.relative);
            std::fs::create_dir_all(&path).at(&path)?;
            let handle = rustix::fs::open(
                &path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| Error::io(&path, e.into()))?;
            dir.dest = Some(handle);
        }
        let (Some(from_dir), Some(to_dir)) = (&dir.source, &dir.dest) else {
            unreachable!("take returns early without a source directory");
        };
        if self.reflinks {
            match reflink_at(from_dir, to_dir, name, mode) {
                Ok(()) => {
                    self.totals.reflinked += 1;
                    return Ok(());
                }
                Err(Refused::Unsupported) => self.reflinks = false,
                Err(Refused::Failed(e)) => return Err(Error::io(to(), e)),
            }
        }
        if linkable {
            rustix::fs::linkat(from_dir, name, to_dir, name, AtFlags::empty())
                .map_err(|e| Error::io(to(), e.into()))?;
            self.totals.hard_linked += 1;
            return Ok(());
        }
        let (from, to) = (source.join(&entry.relative), to());
        std::fs::copy(&from, &to).at(&to)?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).at(&to)?;
        self.totals.copied += 1;
        Ok(())
    }

    /// Makes the tracked symlinks, in path order, after every other file: one whose path is
    /// taken, or lies under a symlink made before it, is left to fetch (the server's sync
    /// refuses what it must).
    fn symlinks(
        &mut self,
        dest: &Path,
        entries: &[CloneEntry],
        mut links: Vec<(usize, PathBuf)>,
    ) -> Result<()> {
        links.sort_unstable_by_key(|(index, _)| *index);
        let mut made: Vec<&str> = Vec::new();
        for (index, target) in links {
            let relative = entries[index].relative.as_str();
            let under_link = made.iter().any(|link| {
                relative
                    .strip_prefix(link)
                    .is_some_and(|rest| rest.starts_with('/'))
            });
            let to = dest.join(relative);
            if under_link {
                self.totals.to_fetch.push(index);
                continue;
            }
            self.parent_of(&to)?;
            match std::os::unix::fs::symlink(&target, &to) {
                Ok(()) => {
                    self.totals.symlinks += 1;
                    made.push(relative);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    self.totals.to_fetch.push(index);
                }
                Err(e) => return Err(Error::io(&to, e)),
            }
        }
        Ok(())
    }

    /// Puts `from`'s content at `to` with `mode`: a reflink, else a copy (untracked files,
    /// which are never hard-linked).
    fn place(&mut self, from: &Path, to: &Path, mode: u32) -> Result<()> {
        if self.reflinks {
            match reflink(from, to, mode) {
                Ok(()) => {
                    self.totals.reflinked += 1;
                    return Ok(());
                }
                Err(Refused::Unsupported) => self.reflinks = false,
                Err(Refused::Failed(e)) => return Err(Error::io(to, e)),
            }
        }
        std::fs::copy(from, to).at(to)?;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode)).at(to)?;
        self.totals.copied += 1;
        Ok(())
    }

    /// Creates `path`'s parent directories, once each.
    fn parent_of(&mut self, path: &Path) -> Result<()> {
        let Some(dir) = path.parent() else {
            return Ok(());
        };
        if self.made_dirs.contains(dir) {
            return Ok(());
        }
        std::fs::create_dir_all(dir).at(dir)?;
        self.made_dirs.insert(dir.to_path_buf());
        Ok(())
    }

    /// Takes every file under `source` that is not tracked (build outputs), keeping its mode;
    /// never hard-linked, since such files are written in place by the tools that make them.
    fn untracked(&mut self, source: &Path, dest: &Path, tracked: &HashSet<&str>) -> Result<()> {
        let mut stack = vec![PathBuf::new()];
        while let Some(rel_dir) = stack.pop() {
            let dir = source.join(&rel_dir);
            for item in std::fs::read_dir(&dir).at(&dir)? {
                let item = item.at(&dir)?;
                let name = item.file_name();
                let Some(name_text) = name.to_str() else {
                    continue;
                };
                if rel_dir.as_os_str().is_empty() && is_tool_file(name_text) {
                    continue;
                }
                let rel = rel_dir.join(&name);
                let from = source.join(&rel);
                let meta = std::fs::symlink_metadata(&from).at(&from)?;
                if meta.is_dir() {
                    stack.push(rel);
                    continue;
                }
                let Some(rel_text) = rel.to_str() else {
                    continue;
                };
                if tracked.contains(rel_text) {
                    continue;
                }
                let to = dest.join(&rel);
                self.parent_of(&to)?;
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&from).at(&from)?;
                    std::os::unix::fs::symlink(&target, &to).at(&to)?;
                } else {
                    self.place(&from, &to, meta.permissions().mode())?;
                }
                self.totals.untracked += 1;
            }
        }
        Ok(())
    }
}

/// Why a reflink was not made.
enum Refused {
    /// The file system (or the pair of file systems) has no reflinks: stop trying.
    Unsupported,
    Failed(io::Error),
}

/// Makes `to` share `from`'s blocks (`FICLONE`), with `mode`.
fn reflink(from: &Path, to: &Path, mode: u32) -> std::result::Result<(), Refused> {
    let src = File::open(from).map_err(Refused::Failed)?;
    let dst = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode | 0o200)
        .open(to)
        .map_err(Refused::Failed)?;
    match rustix::fs::ioctl_ficlone(&dst, &src) {
        Ok(()) => {
            drop(dst);
            std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
                .map_err(Refused::Failed)
        }
        Err(e) => {
            drop(dst);
            let _ = std::fs::remove_file(to);
            if UNSUPPORTED.contains(&e) {
                Err(Refused::Unsupported)
            } else {
                Err(Refused::Failed(e.into()))
            }
        }
    }
}

/// [`reflink`] of `name` from directory `from_dir` to directory `to_dir`.
fn reflink_at(
    from_dir: &OwnedFd,
    to_dir: &OwnedFd,
    name: &str,
    mode: u32,
) -> std::result::Result<(), Refused> {
    let failed = |e: Errno| Refused::Failed(e.into());
    let src = rustix::fs::openat(
        from_dir,
        name,
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(failed)?;
    let dst = rustix::fs::openat(
        to_dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode | 0o200),
    )
    .map_err(failed)?;
    match rustix::fs::ioctl_ficlone(&dst, &src) {
        Ok(()) => rustix::fs::fchmod(&dst, Mode::from_raw_mode(mode)).map_err(failed),
        Err(e) => {
            drop(dst);
            let _ = rustix::fs::unlinkat(to_dir, name, AtFlags::empty());
            if UNSUPPORTED.contains(&e) {
                Err(Refused::Unsupported)
            } else {
                Err(failed(e))
            }
        }
    }
}

/// What `FICLONE` answers where the file system (or the pair) has no reflinks.
const UNSUPPORTED: [Errno; 5] = [
    Errno::OPNOTSUPP,
    Errno::XDEV,
    Errno::INVAL,
    Errno::NOTTY,
    Errno::PERM,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn digest_of(bytes: &[u8]) -> String {
        blake3::hash(bytes).to_hex().to_string()
    }

    fn write(path: &Path, bytes: &[u8], mode: u32) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn read_only_files_are_shared_and_edits_are_left_to_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
        write(&src.join("a/ro.txt"), b"have\n", 0o444);
        write(&src.join("rw.txt"), b"edited\n", 0o644);
        write(&src.join("same.txt"), b"same\n", 0o644);
        write(&src.join("opened.txt"), b"mine\n", 0o644);
        write(&src.join("build/out.o"), b"obj", 0o644);
        std::os::unix::fs::symlink("a/ro.txt", src.join("link")).unwrap();
        let entries = vec![
            CloneEntry {
                relative: "a/ro.txt".into(),
                digest: digest_of(b"have\n"),
                opened_in_source: false,
            },
            CloneEntry {
                relative: "rw.txt".into(),
                digest: digest_of(b"have\n"),
                opened_in_source: false,
            },
            CloneEntry {
                relative: "same.txt".into(),
                digest: digest_of(b"same\n"),
                opened_in_source: false,
            },
            CloneEntry {
                relative: "opened.txt".into(),
                digest: digest_of(b"have\n"),
                opened_in_source: true,
            },
            CloneEntry {
                relative: "missing.txt".into(),
                digest: digest_of(b"x"),
                opened_in_source: false,
            },
            CloneEntry {
                relative: "link".into(),
                digest: digest_of(b"a/ro.txt"),
                opened_in_source: false,
            },
        ];
        let options = CloneOptions {
            writable: false,
            with_untracked: true,
        };
        let totals = populate(&src, &dst, &entries, options).unwrap();
        assert_eq!(totals.to_fetch, vec![1, 3, 4]);
        assert_eq!(totals.symlinks, 1);
        assert_eq!(totals.untracked, 1);
        assert_eq!(totals.hard_linked + totals.reflinked, 1, "{totals:?}");
        // The writable but unchanged file is never hard-linked, and comes out read-only.
        let same = std::fs::metadata(dst.join("same.txt")).unwrap();
        assert_eq!(same.nlink(), 1);
        assert_eq!(same.permissions().mode() & 0o222, 0);
        assert_eq!(std::fs::read(dst.join("build/out.o")).unwrap(), b"obj");
        assert_eq!(
            std::fs::read_link(dst.join("link")).unwrap(),
            Path::new("a/ro.txt")
        );
        assert!(!dst.join("rw.txt").exists() && !dst.join("opened.txt").exists());
    }

    /// Making a shared file writable (an `edit` in either workspace) first gives it its own
    /// copy, so writing it leaves the other workspace's file as it was.
    #[test]
    fn making_a_linked_file_writable_unshares_it() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        write(&a, b"have\n", 0o444);
        std::fs::hard_link(&a, &b).unwrap();
        transfer::make_writable(&b).unwrap();
        std::fs::write(&b, b"edited\n").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"have\n");
        let meta = std::fs::metadata(&a).unwrap();
        assert_eq!((meta.nlink(), meta.permissions().mode() & 0o222), (1, 0));
        assert_eq!(std::fs::metadata(&b).unwrap().nlink(), 1);
    }

    fn entry(relative: &str, digest: &str) -> CloneEntry {
        CloneEntry {
            relative: relative.into(),
            digest: digest.into(),
            opened_in_source: false,
        }
    }

    #[test]
    fn chunks_cover_every_entry_and_never_split_a_directory() {
        let names = ["a/1", "a/2", "a/3", "b/1", "b/c/1", "b/c/2", "d", "e"];
        for size in 1..=9 {
            let mut chunker = Chunker::new(size);
            let mut chunks: Vec<Chunk> = names
                .iter()
                .filter_map(|n| chunker.push(entry(n, "")))
                .collect();
            chunks.extend(chunker.finish());
            let mut next = 0;
            for (first, run) in &chunks {
                assert_eq!(*first, next, "contiguous: {chunks:?}");
                assert!(!run.is_empty());
                next += run.len();
            }
            assert_eq!(next, names.len());
            for pair in chunks.windows(2) {
                let before = &pair[0].1;
                assert!(before.len() >= size, "{size}: {chunks:?}");
                assert_ne!(
                    parent(&before[before.len() - 1].relative),
                    parent(&pair[1].1[0].relative),
                    "{size} split a directory: {chunks:?}"
                );
            }
        }
        assert!(Chunker::new(4).finish().is_none());
    }

    /// A symlink is made after the files, and never where a directory was made or under
    /// another symlink: the clone writes nothing through a link.
    #[test]
    fn symlinks_come_last_and_never_lead_files_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
        write(&src.join("d/x"), b"x\n", 0o444);
        std::os::unix::fs::symlink("d", src.join("l")).unwrap();
        std::os::unix::fs::symlink("d", src.join("m")).unwrap();
        let entries = vec![
            entry("d/x", &digest_of(b"x\n")),
            entry("l", &digest_of(b"d")),
            entry("l/x", &digest_of(b"x\n")),
            entry("m", &digest_of(b"d")),
        ];
        let totals = populate(&src, &dst, &entries, CloneOptions::default()).unwrap();
        assert_eq!(
            totals.to_fetch,
            vec![1],
            "the link whose path is a directory"
        );
        assert_eq!(totals.symlinks, 1);
        assert!(std::fs::symlink_metadata(dst.join("l")).unwrap().is_dir());
        assert_eq!(std::fs::read_link(dst.join("m")).unwrap(), Path::new("d"));
    }

    #[test]
    fn a_writable_clone_links_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
        write(&src.join("ro.txt"), b"have\n", 0o444);
        let entries = vec![CloneEntry {
            relative: "ro.txt".into(),
            digest: digest_of(b"have\n"),
            opened_in_source: false,
        }];
        let options = CloneOptions {
            writable: true,
            with_untracked: false,
        };
        let totals = populate(&src, &dst, &entries, options).unwrap();
        assert_eq!(totals.hard_linked, 0);
        let meta = std::fs::metadata(dst.join("ro.txt")).unwrap();
        assert_eq!(meta.nlink(), 1);
        assert_ne!(meta.permissions().mode() & 0o200, 0);
    }
}
