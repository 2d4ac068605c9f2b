//! Pooled reader connections, each handing out one snapshot at a time.

use super::{StoreConfig, mapped, open_connection};
use crate::StoreError;
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

pub(crate) struct ReaderPool {
    path: PathBuf,
    config: StoreConfig,
    /// Idle connections, and the mapped-read fault count when they were last known usable.
    idle: Mutex<(Vec<Connection>, u64)>,
    /// Held while readers may map the file.
    _watch: Option<mapped::Watch>,
}

impl ReaderPool {
    /// A pool reading `path`; with `reader_mmap_bytes` set, the file is watched for faults
    /// under its mappings (see [`mapped`]).
    pub(crate) fn new(path: PathBuf, config: StoreConfig) -> Result<ReaderPool, StoreError> {
        let watch = if config.reader_mmap_bytes > 0 {
            Some(mapped::watch(&path).map_err(|source| StoreError::Io {
                path: path.clone(),
                source,
            })?)
        } else {
            None
        };
        Ok(ReaderPool {
            path,
            config,
            idle: Mutex::new((Vec::new(), mapped::faults())),
            _watch: watch,
        })
    }

    /// Begins a read transaction pinned to the current committed state.
    pub(crate) fn snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        let faults = mapped::faults();
        let pooled = {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if idle.1 != faults {
                // A mapped read failed since these were pooled: their mappings may hold zero
                // pages, so they are closed.
                *idle = (Vec::new(), faults);
            }
            idle.0.pop()
        };
        let conn = match pooled {
            Some(conn) => conn,
            None => {
                let conn = open_connection(&self.path, &self.config)?;
                conn.pragma_update(None, "query_only", true)?;
                conn.pragma_update(None, "cache_size", -self.config.reader_cache_kib)?;
                // After a mapped read failed, readers use pread for the rest of the process.
                let map = if mapped::mapping_allowed() {
                    self.config.reader_mmap_bytes
                } else {
                    0
                };
                conn.pragma_update(None, "mmap_size", map)?;
                conn
            }
        };
        // Cached statements: a snapshot costs no SQL parsing.
        conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        // The snapshot is taken by the first read, so read now to pin it.
        conn.prepare_cached("SELECT value FROM counters WHERE name = 'change'")?
            .query_row([], |_| Ok(()))?;
        Ok(Snapshot {
            conn: Some(conn),
            pool: self,
            faults,
        })
    }
}

/// A read transaction; returns its connection to the pool when dropped.
pub(crate) struct Snapshot<'p> {
    conn: Option<Connection>,
    pool: &'p ReaderPool,
    /// [`mapped::faults`] when the snapshot began.
    faults: u64,
}

impl Snapshot<'_> {
    pub(crate) fn conn(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("connection is present until drop")
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && conn
                .prepare_cached("COMMIT")
                .and_then(|mut commit| commit.execute([]))
                .is_ok()
        {
            let mut idle = self
                .pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // A connection that read while a mapped read failed is not reused.
            if idle.1 == self.faults && idle.0.len() < self.pool.config.reader_pool_size {
                idle.0.push(conn);
            }
        }
    }
}
