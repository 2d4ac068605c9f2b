//! One directory of the scan's walk read on Linux with rustix: its entries by `getdents64`
//! (`RawDir`) into a buffer the walking thread reuses, their names kept in one arena (no
//! allocation per entry, and no `fstat` of the directory as `opendir` makes), each file
//! lstat'ed by `fstatat` relative to the open directory with its NUL-terminated name.

use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

use crate::local_state::FileStat;

/// Room for entries per `getdents64` call: a directory of about a thousand files in one call.
const DIRENT_ROOM: usize = 64 * 1024;

/// One directory's entries, and the walking thread's buffers, reused from one directory to
/// the next.
pub(crate) struct Entries {
    /// What `getdents64` writes into.
    dirents: Vec<MaybeUninit<u8>>,
    /// The entries' names, each followed by its NUL.
    names: Vec<u8>,
    /// Per entry (`.` and `..` left out): where its name is in `names`, and its kind.
    index: Vec<Name>,
}

impl Default for Entries {
    fn default() -> Entries {
        let mut dirents = Vec::with_capacity(DIRENT_ROOM);
        dirents.resize(DIRENT_ROOM, MaybeUninit::uninit());
        Entries {
            dirents,
            names: Vec::new(),
            index: Vec::new(),
        }
    }
}

/// Where an entry's name is, with its first eight bytes as a big-endian number (zeros after
/// a shorter name): compared first, they order most names of a directory without reading them.
#[derive(Clone, Copy)]
struct Name {
    prefix: u64,
    at: u32,
    len: u32,
    kind: Kind,
}

/// What an entry's `d_type` says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    /// A file, symlink or anything else that is not a directory.
    NotDir,
    /// The filesystem does not say; the entry's lstat does.
    Unknown,
}

impl Entries {
    /// The entries in bytewise order of their names: each name (without its NUL, and with it)
    /// and its kind.
    pub(crate) fn sorted(&mut self) -> impl Iterator<Item = (&[u8], &CStr, Kind)> {
        let names = &self.names;
        let name = |n: &Name| &names[n.at as usize..(n.at + n.len) as usize];
        // Equal prefixes of names that differ are of names longer than eight bytes (a shorter
        // name's zero padding sorts like its end, as a NUL cannot be in a name).
        self.index
            .sort_unstable_by(|a, b| a.prefix.cmp(&b.prefix).then_with(|| name(a).cmp(name(b))));
        self.index.iter().map(move |n| {
            let with_nul = &names[n.at as usize..=(n.at + n.len) as usize];
            let c = CStr::from_bytes_with_nul(with_nul).expect("a name is stored with its NUL");
            (name(n), c, n.kind)
        })
    }
}

/// An open directory.
pub(crate) struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Opens the directory at `path`.
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Dir {
            fd: rustix::fs::open(path, flags, Mode::empty())?,
        })
    }

    /// Reads every entry into `out` (replacing what it held).
    pub(crate) fn read(&self, out: &mut Entries) -> io::Result<()> {
        out.names.clear();
        out.index.clear();
        let mut dir = RawDir::new(&self.fd, &mut out.dirents);
        while let Some(entry) = dir.next() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if matches!(name, b"." | b"..") {
                continue;
            }
            let too_long = || io::Error::other("a directory's names exceed 4 GiB");
            let at = u32::try_from(out.names.len()).map_err(|_| too_long())?;
            let len = u32::try_from(name.len()).map_err(|_| too_long())?;
            out.names
                .extend_from_slice(entry.file_name().to_bytes_with_nul());
            let mut head = [0u8; 8];
            let n = name.len().min(8);
            head[..n].copy_from_slice(&name[..n]);
            let kind = match entry.file_type() {
                FileType::Directory => Kind::Dir,
                FileType::Unknown => Kind::Unknown,
                _ => Kind::NotDir,
            };
            out.index.push(Name {
                prefix: u64::from_be_bytes(head),
                at,
                len,
                kind,
            });
        }
        Ok(())
    }

    /// The lstat of the entry `name` of this directory.
    pub(crate) fn lstat(&self, name: &CStr) -> io::Result<FileStat> {
        let st = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(FileStat {
            size: st.st_size as u64,
            mtime_ns: st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
            ctime_ns: st.st_ctime as i64 * 1_000_000_000 + st.st_ctime_nsec as i64,
            ino: st.st_ino as u64,
            mode: st.st_mode as u32,
        })
    }
}

/// Whether `stat` is a directory's.
pub(crate) fn is_dir(stat: &FileStat) -> bool {
    FileType::from_raw_mode(stat.mode as _) == FileType::Directory
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_sorted_with_their_kind_and_the_stat_std_gives() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b"), b"xy").unwrap();
        // Names alike in their first eight bytes, and shorter than eight.
        for name in [
            "longname-b",
            "longname-a",
            "longname",
            "longnam",
            "longname\u{e9}",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        std::os::unix::fs::symlink("b", dir.path().join("a-link")).unwrap();
        // More names than one call's room holds: the read loops.
        for i in 0..3000 {
            std::fs::write(dir.path().join(format!("f{i:05}-{}", "n".repeat(20))), b"").unwrap();
        }
        let open = Dir::open(dir.path()).unwrap();
        let mut entries = Entries::default();
        open.read(&mut entries).unwrap();
        let seen: Vec<(Vec<u8>, Kind)> = entries
            .sorted()
            .map(|(name, c, kind)| {
                assert_eq!(name, c.to_bytes());
                (name.to_vec(), kind)
            })
            .collect();
        assert_eq!(seen.len(), 3008);
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(&seen[0].0, b"a-link");
        assert_ne!(seen[0].1, Kind::Dir);
        assert_eq!(&seen[1].0, b"b");
        let sub = seen.iter().find(|(n, _)| n == b"sub").unwrap();
        assert!(matches!(sub.1, Kind::Dir | Kind::Unknown));
        for name in ["a-link", "b", "sub"] {
            let c = std::ffi::CString::new(name).unwrap();
            let meta = std::fs::symlink_metadata(dir.path().join(name)).unwrap();
            let stat = open.lstat(&c).unwrap();
            assert_eq!(stat, FileStat::of(&meta), "{name}");
            assert_eq!(is_dir(&stat), name == "sub");
        }
        let gone = open.lstat(c"gone").unwrap_err();
        assert_eq!(gone.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_missing_directory_or_a_file_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        assert!(Dir::open(&dir.path().join("file")).is_err());
        let missing = Dir::open(&dir.path().join("missing")).err().unwrap();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
