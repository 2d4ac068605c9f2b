//! Pooled reader connections, each handing out one snapshot at a time.

use super::{StoreConfig, open_connection};
use crate::StoreError;
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

pub(crate) struct ReaderPool {
    path: PathBuf,
    config: StoreConfig,
    idle: Mutex<Vec<Connection>>,
}

impl ReaderPool {
    pub(crate) fn new(path: PathBuf, config: StoreConfig) -> ReaderPool {
        ReaderPool {
            path,
            config,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Begins a read transaction pinned to the current committed state.
    pub(crate) fn snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        let pooled = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => {
                let conn = open_connection(&self.path, &self.config)?;
                conn.pragma_update(None, "query_only", true)?;
                conn.pragma_update(None, "cache_size", -self.config.reader_cache_kib)?;
                // Off by default: see `StoreConfig::reader_mmap_bytes` (SIGBUS on an I/O error).
                conn.pragma_update(None, "mmap_size", self.config.reader_mmap_bytes)?;
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
        })
    }
}

/// A read transaction; returns its connection to the pool when dropped.
pub(crate) struct Snapshot<'p> {
    conn: Option<Connection>,
    pool: &'p ReaderPool,
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
            if idle.len() < self.pool.config.reader_pool_size {
                idle.push(conn);
            }
        }
    }
}
