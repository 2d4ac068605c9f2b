//! The SQLite backend: WAL mode, one writer thread with group commit, pooled snapshot readers.

mod checkpoint;
mod codec;
mod pool;
mod queries;
mod schema;
mod writer;

use crate::{MetaStore, ReadTxn, StoreError, WriteJob};
use checkpoint::Checkpointer;
use pool::ReaderPool;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use writer::Writer;

/// Tuning knobs of the SQLite store.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Idle reader connections kept open.
    pub reader_pool_size: usize,
    /// Most write jobs grouped into one transaction.
    pub max_group: usize,
    /// SQLite page cache per connection, in KiB.
    pub cache_kib: i64,
    /// Prepared statements kept per connection.
    pub statement_cache: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            reader_pool_size: 16,
            max_group: 256,
            cache_kib: 64 * 1024,
            statement_cache: 128,
        }
    }
}

/// Metadata in one SQLite database file.
pub struct SqliteStore {
    path: PathBuf,
    readers: ReaderPool,
    /// Declared before the checkpointer: the writer holds its nudge, so it must stop first.
    writer: Writer,
    _checkpointer: Checkpointer,
}

impl SqliteStore {
    /// Opens (creating and migrating when needed) the database at `path`.
    pub fn open(path: &Path, config: &StoreConfig) -> Result<SqliteStore, StoreError> {
        let mut conn = open_connection(path, config)?;
        schema::migrate(&mut conn)?;
        // Checkpoints run on their own thread (see `checkpoint`), not inside a commit.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let (checkpointer, nudge) = Checkpointer::start(open_connection(path, config)?);
        let writer = Writer::start(conn, config.max_group, nudge);
        let readers = ReaderPool::new(path.to_path_buf(), config.clone());
        Ok(SqliteStore {
            path: path.to_path_buf(),
            readers,
            writer,
            _checkpointer: checkpointer,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

pub(crate) fn open_connection(path: &Path, config: &StoreConfig) -> Result<Connection, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.into(),
        source,
    };
    let conn = Connection::open(path).map_err(open_err)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(open_err)?;
    conn.pragma_update(None, "busy_timeout", 10_000)
        .map_err(open_err)?;
    conn.pragma_update(None, "cache_size", -config.cache_kib)
        .map_err(open_err)?;
    // Every statement the store uses stays prepared (rusqlite keeps 16 by default).
    conn.set_prepared_statement_cache_capacity(config.statement_cache);
    Ok(conn)
}

impl MetaStore for SqliteStore {
    fn snapshot(&self) -> Result<Box<dyn ReadTxn + '_>, StoreError> {
        Ok(Box::new(self.readers.snapshot()?))
    }

    fn run_write(&self, job: WriteJob) -> Result<(), StoreError> {
        self.writer.run(job)
    }
}
