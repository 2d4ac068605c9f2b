//! Reader mappings of the database file, and what an I/O error under one becomes.
//!
//! A reader connection with `reader_mmap_bytes` set reads pages through a memory mapping. On
//! Linux an I/O error under a mapping (a failing disk, a file cut short) is a SIGBUS, not an
//! error code, and by default SIGBUS kills the process. The handler installed here bounds it:
//! a SIGBUS at an address inside a mapping of a watched database file maps a page of zeros over
//! the faulting page, so the read completes (SQLite then finds the page malformed and fails),
//! and counts the fault. From then on:
//! - a reply being produced when a fault happened fails instead of answering: callers compare
//!   [`faults`] before and after (the server does, before every message it sends);
//! - reader connections opened before the fault are closed instead of reused (their mappings
//!   may hold zero pages), and new ones read with `pread`, so later errors come back as errors.
//!
//! A SIGBUS anywhere else goes to the handler that was installed before (Rust's, or the
//! default, which ends the process as it would have without this module).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock, PoisonError};

/// Most database files watched at once (a process serves one root; tests open more).
const MAX_FILES: usize = 64;

/// SIGBUS faults turned into failed reads since the process started.
static FAULTS: AtomicU64 = AtomicU64::new(0);
/// Watched files as (device, inode) pairs, (0, 0) for a free slot. A device is
/// `major << 32 | minor`, as `/proc/self/maps` names it. The handler only reads these.
static FILES: [(AtomicU64, AtomicU64); MAX_FILES] =
    [const { (AtomicU64::new(0), AtomicU64::new(0)) }; MAX_FILES];
/// How many watches hold each slot; changed only under this lock.
static WATCHERS: Mutex<[usize; MAX_FILES]> = Mutex::new([0; MAX_FILES]);
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
/// The SIGBUS disposition before ours, to pass on faults that are not ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static INSTALL: Once = Once::new();

/// How many mapped reads have failed with SIGBUS in this process. A read is trustworthy only if
/// this did not change while it ran.
pub fn faults() -> u64 {
    FAULTS.load(Ordering::SeqCst)
}

/// Whether reader connections may still map the database: not after any fault.
pub(crate) fn mapping_allowed() -> bool {
    faults() == 0
}

/// A watched database file; dropping it stops watching (once no other watch holds the file).
pub(crate) struct Watch {
    slot: usize,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
        watchers[self.slot] -= 1;
        if watchers[self.slot] == 0 {
            FILES[self.slot].0.store(0, Ordering::SeqCst);
            FILES[self.slot].1.store(0, Ordering::SeqCst);
        }
    }
}

/// Watches `path` (a database file readers will map) and installs the SIGBUS handler once.
pub(crate) fn watch(path: &Path) -> std::io::Result<Watch> {
    let meta = std::fs::metadata(path)?;
    let dev = (u64::from(libc::major(meta.dev())) << 32) | u64::from(libc::minor(meta.dev()));
    let ino = meta.ino();
    let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
    let holds = |slot: usize, d: u64, i: u64| {
        FILES[slot].0.load(Ordering::SeqCst) == d && FILES[slot].1.load(Ordering::SeqCst) == i
    };
    let slot = match (0..MAX_FILES).find(|&s| watchers[s] > 0 && holds(s, dev, ino)) {
        Some(slot) => slot,
        None => {
            let slot = (0..MAX_FILES).find(|&s| watchers[s] == 0).ok_or_else(|| {
                std::io::Error::other(format!(
                    "cannot watch {}: {MAX_FILES} mapped database files are watched already",
                    path.display()
                ))
            })?;
            // The inode first: a half-written slot never matches a real mapping's pair.
            FILES[slot].1.store(ino, Ordering::SeqCst);
            FILES[slot].0.store(dev, Ordering::SeqCst);
            slot
        }
    };
    watchers[slot] += 1;
    drop(watchers);
    let mut installed = Ok(());
    INSTALL.call_once(|| installed = install());
    installed.map(|()| Watch { slot })
}

fn install() -> std::io::Result<()> {
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if let Ok(page) = usize::try_from(page)
        && page.is_power_of_two()
    {
        PAGE_SIZE.store(page, Ordering::SeqCst);
    }
    // SAFETY: a zeroed sigaction is a valid value to fill; sigaction reads `action` and writes
    // `previous`, both of which live through the call.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        // Not SA_ONSTACK: this is never a stack overflow, and the lookup needs a page of stack.
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &action, &mut previous) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = PREVIOUS.set(previous);
    }
    Ok(())
}

/// The SIGBUS handler. Only async-signal-safe calls: open, read, close, mmap, sigaction.
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    if in_watched_mapping(address) {
        let page = address & !(PAGE_SIZE.load(Ordering::Relaxed) - 1);
        // SAFETY: replaces one page of a read-only file mapping, which only SQLite's reader
        // reads, with a private page of zeros; the faulting read then completes on it.
        let zeros = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                PAGE_SIZE.load(Ordering::Relaxed),
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            FAULTS.fetch_add(1, Ordering::SeqCst);
            return;
        }
    }
    pass_on(signal, info, context);
}

/// Hands a fault that is not ours to the previous handler, or restores the default action so
/// that the faulting instruction, run again, ends the process.
fn pass_on(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    if let Some(previous) = PREVIOUS.get() {
        let handler = previous.sa_sigaction;
        if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            if previous.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed with SA_SIGINFO, so it has this
                // signature.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(handler) };
                f(signal, info, context);
            } else {
                // SAFETY: a handler installed without SA_SIGINFO takes the signal number only.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
                f(signal);
            }
            return;
        }
    }
    // SAFETY: a zeroed sigaction with SIG_DFL is the default disposition.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
    }
}

/// Whether `address` lies in a mapping of a watched file, by `/proc/self/maps`.
fn in_watched_mapping(address: usize) -> bool {
    // SAFETY: open/read/close on a stack buffer; the path is a NUL-terminated literal.
    let fd = unsafe {
        libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 4096];
    let mut filled = 0;
    let mut skipping = false;
    let mut found = false;
    loop {
        // SAFETY: reads into the unfilled tail of `buf`.
        let n = unsafe { libc::read(fd, buf[filled..].as_mut_ptr().cast(), buf.len() - filled) };
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            break;
        }
        filled += n;
        let mut start = 0;
        while let Some(end) = buf[start..filled].iter().position(|&b| b == b'\n') {
            let line = &buf[start..start + end];
            if !skipping && line_matches(line, address) {
                found = true;
            }
            skipping = false;
            start += end + 1;
        }
        if found {
            break;
        }
        if start == 0 && filled == buf.len() {
            // A line longer than the buffer (a very long path): not one of ours.
            skipping = true;
            filled = 0;
        } else {
            buf.copy_within(start..filled, 0);
            filled -= start;
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    found
}

/// Whether a `/proc/self/maps` line (`start-end perms offset major:minor inode path`) maps a
/// watched file over `address`.
fn line_matches(line: &[u8], address: usize) -> bool {
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let (Some(range), Some(_perms), Some(_offset), Some(dev), Some(inode)) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return false;
    };
    let Some((start, end)) = split_pair(range, b'-') else {
        return false;
    };
    let (Some(start), Some(end)) = (hex(start), hex(end)) else {
        return false;
    };
    if !(start..end).contains(&(address as u64)) {
        return false;
    }
    let Some((major, minor)) = split_pair(dev, b':') else {
        return false;
    };
    let (Some(major), Some(minor), Some(inode)) = (hex(major), hex(minor), decimal(inode)) else {
        return false;
    };
    let dev = (major << 32) | minor;
    dev != 0
        && FILES
            .iter()
            .any(|(d, i)| d.load(Ordering::SeqCst) == dev && i.load(Ordering::SeqCst) == inode)
}

fn split_pair(field: &[u8], at: u8) -> Option<(&[u8], &[u8])> {
    let i = field.iter().position(|&b| b == at)?;
    Some((&field[..i], &field[i + 1..]))
}

fn hex(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, &b| {
        let d = char::from(b).to_digit(16)?;
        n.checked_mul(16)?.checked_add(u64::from(d))
    })
}

fn decimal(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, &b| {
        let d = char::from(b).to_digit(10)?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_matches_only_a_watched_file_over_the_address() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("db");
        std::fs::write(&path, b"x").expect("file written");
        let _watch = watch(&path).expect("watched");
        let meta = std::fs::metadata(&path).expect("metadata");
        let (major, minor) = (libc::major(meta.dev()), libc::minor(meta.dev()));
        let line = format!(
            "7f0000001000-7f0000003000 r--s 00000000 {major:02x}:{minor:02x} {} {}",
            meta.ino(),
            path.display()
        );
        assert!(line_matches(line.as_bytes(), 0x7f00_0000_2000));
        assert!(!line_matches(line.as_bytes(), 0x7f00_0000_3000));
        let other = line.replace(
            &format!(" {} ", meta.ino()),
            &format!(" {} ", meta.ino() + 1),
        );
        assert!(!line_matches(other.as_bytes(), 0x7f00_0000_2000));
        assert!(!line_matches(b"garbage", 0));
    }
}
