//! The process's allocator (mimalloc) and the knob the server sets on it.

use std::os::raw::c_long;

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
}
