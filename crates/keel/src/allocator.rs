//! The process's allocator (mimalloc), the knob the server sets on it, and the transparent
//! huge pages a short command does without.

use std::os::raw::c_long;
use std::sync::atomic::{AtomicBool, Ordering};

use libmimalloc_sys::{mi_option_set, mi_option_t};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of `mi_option_e` in mimalloc.h; the bindings name no constant for it.
const PURGE_DELAY: mi_option_t = 15;

/// Sets how long freed memory stays with the allocator before it goes back to the system
/// (milliseconds; -1 never). Call it while the process has a single thread: mimalloc's options
/// are not synchronised.
pub fn set_purge_delay(ms: i64) {
    let ms = c_long::try_from(ms).unwrap_or(c_long::MAX);
    // SAFETY: a plain store into mimalloc's option table; the caller runs it before any other
    // thread exists.
    unsafe { mi_option_set(PURGE_DELAY, ms) }
}

/// Whether [`hold_huge_pages`] turned transparent huge pages off (so [`release_huge_pages`]
/// turns them back on, and leaves a setting the process inherited alone).
static HUGE_PAGES_HELD: AtomicBool = AtomicBool::new(false);

/// Runs [`hold_huge_pages`] as the executable is loaded, before mimalloc's own constructor
/// (priority 101) and the first allocation: the ranges touched before `main` are the first to
/// fault in. On ELF, `.init_array.NNNNN` entries run in ascending priority.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array.00100")]
static HOLD_HUGE_PAGES_AT_LOAD: extern "C" fn() = {
    extern "C" fn at_load() {
        hold_huge_pages();
    }
    at_load
};

/// Turns transparent huge pages off for this process, unless they already are. mimalloc asks
/// for huge pages on its arena (`MADV_HUGEPAGE`), so each 2 MiB range a process first touches
/// there is one huge page the kernel zeroes whole: a command that uses a few hundred kilobytes
/// pays for megabytes. A process that runs long enough to profit from them (a server) calls
/// [`release_huge_pages`] once its command is known.
pub fn hold_huge_pages() {
    if thp_disabled() == 0 && set_thp_disabled(1) == 0 {
        HUGE_PAGES_HELD.store(true, Ordering::Relaxed);
    }
}

/// Gives transparent huge pages back to the process (and to the programs it starts, which
/// inherit the setting) when [`hold_huge_pages`] turned them off; otherwise does nothing.
pub fn release_huge_pages() {
    if HUGE_PAGES_HELD.swap(false, Ordering::Relaxed) {
        set_thp_disabled(0);
    }
}

/// The process's "no transparent huge pages" flag: 1 set, 0 clear, -1 unknown.
#[cfg(target_os = "linux")]
fn thp_disabled() -> i32 {
    const NONE: libc::c_ulong = 0;
    // SAFETY: prctl with integer arguments only, reading a flag of this process.
    unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, NONE, NONE, NONE, NONE) }
}

/// Sets the flag (for memory faulted from now on); 0 on success.
#[cfg(target_os = "linux")]
fn set_thp_disabled(value: libc::c_ulong) -> i32 {
    const NONE: libc::c_ulong = 0;
    // SAFETY: prctl with integer arguments only, setting a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, value, NONE, NONE, NONE) }
}

/// Other systems have no such flag: nothing is held.
#[cfg(not(target_os = "linux"))]
fn thp_disabled() -> i32 {
    -1
}

#[cfg(not(target_os = "linux"))]
fn set_thp_disabled(_value: u64) -> i32 {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;

    /// The allocator's purge delay now in effect (milliseconds).
    fn purge_delay() -> c_long {
        // SAFETY: a plain read of mimalloc's option table.
        unsafe { mi_option_get(PURGE_DELAY) }
    }

    /// The option index is mimalloc's purge delay: before anything sets it, it reads as the
    /// environment's `MIMALLOC_PURGE_DELAY` or mimalloc's documented default of 1000 ms.
    #[test]
    fn purge_delay_is_the_option_set() {
        let expected = std::env::var("MIMALLOC_PURGE_DELAY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        assert_eq!(purge_delay(), expected);
        set_purge_delay(10);
        assert_eq!(purge_delay(), 10);
    }

    /// The process starts with huge pages off (held as it was loaded, or inherited so);
    /// releasing turns them on only when the hold turned them off, and holding turns them off
    /// again.
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_held_from_load_until_released() {
        assert_eq!(thp_disabled(), 1);
        let held_at_load = HUGE_PAGES_HELD.load(Ordering::Relaxed);
        release_huge_pages();
        assert_eq!(thp_disabled(), if held_at_load { 0 } else { 1 });
        hold_huge_pages();
        assert_eq!(thp_disabled(), 1);
    }
}
