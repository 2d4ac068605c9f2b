//! One server per root: an exclusive lock on `ROOT/server.lock`, held while serving.

use crate::ServeError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) struct RootLock {
    _file: File,
}

impl RootLock {
    pub(crate) fn acquire(root: &Path) -> Result<RootLock, ServeError> {
        RootLock::acquire_waiting(root, Duration::ZERO)
    }

    /// Like [`RootLock::acquire`], but while another process holds the root, tries again
    /// until `wait` has passed (an `rsh:` port's connections, each a process of its own).
    pub(crate) fn acquire_waiting(root: &Path, wait: Duration) -> Result<RootLock, ServeError> {
        let path = root.join("server.lock");
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(&path)
            .map_err(|source| ServeError::Root {
                path: path.clone(),
                source,
            })?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break Self::locked(root, &path, other)?,
            }
        }
        file.set_len(0).map_err(|source| ServeError::Root {
            path: path.clone(),
            source,
        })?;
        let _ = write!(file, "pid {}", std::process::id());
        Ok(RootLock { _file: file })
    }

    /// The outcome of the last try: a refusal naming the holder when the root is taken.
    fn locked(
        root: &Path,
        path: &Path,
        tried: Result<(), std::fs::TryLockError>,
    ) -> Result<(), ServeError> {
        let path = path.to_path_buf();
        match tried {
            Ok(()) => Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                Err(ServeError::Locked(format!(
                    "another keel server is already using {} ({}); stop it first",
                    root.display(),
                    holder.trim()
                )))
            }
            Err(std::fs::TryLockError::Error(source)) => Err(ServeError::Root { path, source }),
        }
    }
}
