//! Lowering a thread's CPU priority, for background work that must yield to requests (the
//! store's checkpoint thread, the server's long reads).

/// The thread priority could not be changed.
#[derive(Debug, thiserror::Error)]
#[error("cannot set this thread's nice value to {nice}: {source}")]
pub struct PriorityError {
    pub nice: i32,
    #[source]
    pub source: std::io::Error,
}

/// Sets the calling thread's nice value to `nice` (Linux keeps nice values per thread; higher
/// is lower priority). Best effort by nature: callers log a failure and carry on at normal
/// priority. Elsewhere than Linux it does nothing.
pub fn lower_current_thread(nice: i32) -> Result<(), PriorityError> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
        let result = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice)
        };
        if result != 0 {
            return Err(PriorityError {
                nice,
                source: std::io::Error::last_os_error(),
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A thread lowers its own priority and no other thread's.
    #[cfg(target_os = "linux")]
    #[test]
    fn lowers_only_the_calling_thread() {
        let nice_of = |tid: libc::pid_t| {
            // SAFETY: getpriority takes plain integers and touches no memory of ours.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) }
        };
        // SAFETY: gettid takes no arguments.
        let main = unsafe { libc::gettid() };
        let before = nice_of(main);
        let lowered = std::thread::spawn(move || {
            super::lower_current_thread(before + 5).expect("raising nice needs no privilege");
            // SAFETY: gettid takes no arguments.
            nice_of(unsafe { libc::gettid() })
        })
        .join()
        .expect("thread ends");
        assert_eq!(lowered, (before + 5).min(19));
        assert_eq!(nice_of(main), before);
    }
}
