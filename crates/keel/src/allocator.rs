//! The process's allocator (mimalloc), the knob the server sets on it, and the transparent
//! huge pages and the large first arena a short command does without. `keel-server` puts the
//! allocator and the load-time settings in place with [`process_start!`](crate::process_start);
//! `keel` keeps the system's allocator and links no mimalloc (nothing here names a mimalloc
//! function: the executable that has it hands [`at_load`] its option setter).

use std::os::raw::c_long;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

pub use libmimalloc_sys;
use libmimalloc_sys::mi_option_t;

/// Makes mimalloc the executable's allocator and runs [`at_load`] as the executable is loaded,
/// before mimalloc's own constructor (priority 101) and the first allocation: the ranges touched
/// before `main` are the first to fault in. On ELF, `.init_array.NNNNN` entries run in
/// ascending priority. Expanded in the executable's root (a static in this library would be
/// linked only if something referred to it), which then links mimalloc.
#[macro_export]
macro_rules! process_start {
    () => {
        #[global_allocator]
        static ALLOCATOR: ::mimalloc::MiMalloc = ::mimalloc::MiMalloc;

        #[cfg(target_os = "linux")]
        #[used]
        #[unsafe(link_section = ".init_array.00100")]
        static AT_LOAD: extern "C" fn() = {
            extern "C" fn at_load() {
                $crate::allocator::at_load($crate::allocator::libmimalloc_sys::mi_option_set);
            }
            at_load
        };
    };
}

/// mimalloc's `mi_option_set`, as the executable that links mimalloc handed it to [`at_load`].
type OptionSetter = unsafe extern "C" fn(mi_option_t, c_long);

/// The running executable's mimalloc option setter; unset in one without mimalloc (`keel`),
/// where every option below is a no-op.
static OPTION_SET: OnceLock<OptionSetter> = OnceLock::new();

/// Sets a mimalloc option, when the process runs on mimalloc.
fn set_option(option: mi_option_t, value: c_long) {
    if let Some(set) = OPTION_SET.get() {
        // SAFETY: a plain store into mimalloc's option table; every caller runs it while the
        // process has one thread (options are not synchronised).
        unsafe { set(option, value) }
    }
}

/// `mi_option_purge_delay` of `mi_option_e` in mimalloc.h; the bindings name no constant for it.
const PURGE_DELAY: mi_option_t = 15;

/// `mi_option_arena_reserve` of `mi_option_e`: the address space mimalloc reserves for its
/// first arena (KiB; later arenas grow from it).
const ARENA_RESERVE: mi_option_t = 23;

/// mimalloc's own first-arena reservation on 64-bit systems (1 GiB, in KiB).
const ARENA_RESERVE_DEFAULT_KIB: c_long = 1024 * 1024;

/// The first arena a process starts with (32 MiB in KiB, mimalloc's smallest arena): its
/// bitmaps are what the first allocation initialises, 1/32 of a 1 GiB arena's.
const ARENA_RESERVE_AT_START_KIB: c_long = 32 * 1024;

/// Whether [`shrink_first_arena`] set the smaller first arena (so [`restore_arena_reserve`]
/// puts mimalloc's default back, and leaves a value from the environment alone).
static ARENA_SHRUNK: AtomicBool = AtomicBool::new(false);

/// Starts the process with a 32 MiB first arena instead of mimalloc's 1 GiB, unless
/// `MIMALLOC_ARENA_RESERVE` is set. The first allocation reserves the first arena and writes
/// its bitmaps: for 1 GiB that is ~40 pages faulted in, a tenth of what a short command's whole
/// run faults. Runs at load, before the first allocation (see [`at_load`]).
fn shrink_first_arena() {
    // SAFETY: getenv of a constant C string, before any other thread exists; no allocation.
    let from_env = unsafe { !libc::getenv(c"MIMALLOC_ARENA_RESERVE".as_ptr()).is_null() };
    if !from_env {
        set_option(ARENA_RESERVE, ARENA_RESERVE_AT_START_KIB);
        ARENA_SHRUNK.store(true, Ordering::Relaxed);
    }
}

/// Puts mimalloc's default arena size back for the arenas a process reserves from now on (a
/// server, a command moving many files): the arena after the first is 1 GiB again. Call it
/// while the process has a single thread, like [`set_purge_delay`].
pub fn restore_arena_reserve() {
    if ARENA_SHRUNK.swap(false, Ordering::Relaxed) {
        set_option(ARENA_RESERVE, ARENA_RESERVE_DEFAULT_KIB);
    }
}

/// Sets how long freed memory stays with the allocator before it goes back to the system
/// (milliseconds; -1 never). Call it while the process has a single thread: mimalloc's options
/// are not synchronised.
pub fn set_purge_delay(ms: i64) {
    set_option(PURGE_DELAY, c_long::try_from(ms).unwrap_or(c_long::MAX));
}

/// Whether [`hold_huge_pages`] turned transparent huge pages off (so [`release_huge_pages`]
/// turns them back on, and leaves a setting the process inherited alone).
static HUGE_PAGES_HELD: AtomicBool = AtomicBool::new(false);

/// Keeps mimalloc's option setter, then [`hold_huge_pages`] and [`shrink_first_arena`]: run by
/// [`process_start!`](crate::process_start) as the executable is loaded. Allocates nothing.
pub fn at_load(option_set: OptionSetter) {
    let _ = OPTION_SET.set(option_set);
    hold_huge_pages();
    shrink_first_arena();
}

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

    /// The process starts with a 32 MiB first arena (or the environment's setting), and
    /// restoring puts mimalloc's 1 GiB default back only when the start shrank it.
    #[cfg(target_os = "linux")]
    #[test]
    fn first_arena_is_small_until_restored() {
        // SAFETY: plain reads of mimalloc's option table.
        let reserve = || unsafe { mi_option_get(ARENA_RESERVE) };
        let from_env = std::env::var_os("MIMALLOC_ARENA_RESERVE").is_some();
        if !from_env {
            assert_eq!(reserve(), ARENA_RESERVE_AT_START_KIB);
        }
        let before = reserve();
        let shrunk = ARENA_SHRUNK.load(Ordering::Relaxed);
        restore_arena_reserve();
        assert_eq!(
            reserve(),
            if shrunk {
                ARENA_RESERVE_DEFAULT_KIB
            } else {
                before
            }
        );
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
