//! One server per root: an exclusive lock on `ROOT/server.lock`, held while serving.

use crate::ServeError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

pub(crate) struct RootLock {
    _file: File,
}

impl RootLock {
    pub(crate) fn acquire(root: &Path) -> Result<RootLock, ServeError> {
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
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(ServeError::Locked(format!(
                    "another keel server is already using {} ({}); stop it first",
                    root.display(),
                    holder.trim()
                )));
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(ServeError::Root { path, source });
            }
        }
        file.set_len(0).map_err(|source| ServeError::Root {
            path: path.clone(),
            source,
        })?;
        let _ = write!(file, "pid {}", std::process::id());
        Ok(RootLock { _file: file })
    }
}
