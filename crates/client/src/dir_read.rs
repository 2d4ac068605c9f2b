//! One directory of the scan's walk read on Linux with the system calls themselves: its entries
//! by `getdents64` into one buffer the walking thread reuses (no allocation per entry, and no
//! `fstat` of the directory as `opendir` makes), each file lstat'ed by `fstatat` relative to
//! the open directory with the name the entry already holds, NUL-terminated.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::local_state::FileStat;

/// Room for entries per `getdents64` call: a directory of about a thousand files in one call.
const DIRENT_ROOM: usize = 64 * 1024;

/// Offset of `d_name` in a `linux_dirent64` record (after `d_ino` u64, `d_off` i64,
/// `d_reclen` u16 and `d_type` u8).
const NAME_AT: usize = 19;

/// One directory's entries: their records as the kernel wrote them, and where each name is.
#[derive(Default)]
pub(crate) struct Entries {
    bytes: Vec<u8>,
    /// Per entry (`.` and `..` left out): its name's offset in `bytes` (the name ends with a
    /// NUL there), its length and its `d_type`.
    names: Vec<Name>,
}

/// Where an entry's name is, with its first eight bytes as a big-endian number (zeros after
/// a shorter name): compared first, they order most names of a directory without reading them.
#[derive(Clone, Copy)]
struct Name {
    prefix: u64,
    at: u32,
    len: u32,
    d_type: u8,
}

impl Name {
    fn new(at: usize, name: &[u8], d_type: u8) -> Name {
        let mut head = [0u8; 8];
        let n = name.len().min(8);
        head[..n].copy_from_slice(&name[..n]);
        Name {
            prefix: u64::from_be_bytes(head),
            at: at as u32,
            len: name.len() as u32,
            d_type,
        }
    }
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
        let bytes = &self.bytes;
        let name = |n: &Name| &bytes[n.at as usize..(n.at + n.len) as usize];
        // Equal prefixes of names that differ are of names longer than eight bytes (a shorter
        // name's zero padding sorts like its end, as a NUL cannot be in a name).
        self.names
            .sort_unstable_by(|a, b| a.prefix.cmp(&b.prefix).then_with(|| name(a).cmp(name(b))));
        self.names.iter().map(move |n| {
            let with_nul = &bytes[n.at as usize..=(n.at + n.len) as usize];
            let c = CStr::from_bytes_with_nul(with_nul).expect("a name ends at its first NUL");
            let kind = match n.d_type {
                libc::DT_DIR => Kind::Dir,
                libc::DT_UNKNOWN => Kind::Unknown,
                _ => Kind::NotDir,
            };
            (name(n), c, kind)
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
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: a NUL-terminated path and plain flags; the fd returned is ours alone.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Reads every entry into `out` (replacing what it held).
    pub(crate) fn read(&self, out: &mut Entries) -> io::Result<()> {
        out.bytes.clear();
        out.names.clear();
        loop {
            let start = out.bytes.len();
            out.bytes.reserve(DIRENT_ROOM);
            let room = out.bytes.capacity() - start;
            // SAFETY: the kernel writes at most `room` bytes into the spare capacity after
            // `start`, which `reserve` made.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    self.fd.as_raw_fd(),
                    out.bytes.as_mut_ptr().add(start),
                    room,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(());
            }
            // SAFETY: the kernel wrote `n` bytes after `start`.
            unsafe { out.bytes.set_len(start + n as usize) };
            let mut at = start;
            while at < out.bytes.len() {
                let record = &out.bytes[at..];
                let malformed = || io::Error::other("a malformed directory entry");
                if record.len() <= NAME_AT {
                    return Err(malformed());
                }
                let reclen = usize::from(u16::from_ne_bytes([record[16], record[17]]));
                if reclen <= NAME_AT || reclen > record.len() {
                    return Err(malformed());
                }
                let d_type = record[18];
                let name = &record[NAME_AT..reclen];
                let Some(len) = name.iter().position(|&b| b == 0) else {
                    return Err(malformed());
                };
                if !matches!(&name[..len], b"." | b"..") {
                    out.names
                        .push(Name::new(at + NAME_AT, &name[..len], d_type));
                }
                at += reclen;
            }
        }
    }

    /// The lstat of the entry `name` of this directory.
    pub(crate) fn lstat(&self, name: &CStr) -> io::Result<FileStat> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a NUL-terminated name relative to our open directory; the kernel fills `st`.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat succeeded, so it filled the whole struct.
        let st = unsafe { st.assume_init() };
        Ok(FileStat {
            size: st.st_size as u64,
            mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec,
            ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
            ino: st.st_ino,
            mode: st.st_mode,
        })
    }
}

/// Whether `stat` is a directory's.
pub(crate) fn is_dir(stat: &FileStat) -> bool {
    stat.mode & libc::S_IFMT == libc::S_IFDIR
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
