//! The SQLite backend: WAL mode, one writer thread with group commit, pooled snapshot readers.

mod access;
mod bulk_journal;
mod checkpoint;
mod codec;
mod counters;
mod mapped;
mod pool;
mod queries;
mod schema;
mod submit;
pub use mapped::faults as mapped_read_faults;
mod jobs;
pub(crate) mod session;
mod users;
mod webhooks;
mod writer;
mod writer_stats;

use crate::journal::Journal;
use crate::{DatabaseError, MetaStore, ReadTxn, StoreConfig, StoreError, WriteJob};
use checkpoint::Checkpointer;
use pool::ReaderPool;
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use writer::{JournalSink, Writer};
pub use writer_stats::WriterStats;

pub(crate) use pool::Snapshot;
pub(crate) use schema::{MIGRATIONS, migrate_to, schema_version};

/// Metadata in one SQLite database file.
pub struct SqliteStore {
    path: PathBuf,
    readers: ReaderPool,
    /// Declared before the checkpointer: the writer holds its nudge, so it must stop first.
    writer: Writer,
    _checkpointer: Checkpointer,
}

impl SqliteStore {
    /// Opens (creating and migrating when needed) the database at `path`, without a journal.
    pub fn open(path: &Path, config: &StoreConfig) -> Result<SqliteStore, StoreError> {
        Self::open_with(path, config, None)
    }

    /// Opens the database at `path`; with a journal, every group commit is journaled (see
    /// [`crate::journal`]). Open the journal first ([`crate::open_root`] does both).
    pub fn open_with(
        path: &Path,
        config: &StoreConfig,
        journal: Option<Arc<Journal>>,
    ) -> Result<SqliteStore, StoreError> {
        let mut conn = open_connection(path, config)?;
        schema::migrate(&mut conn)?;
        // Checkpoints run on their own thread (see `checkpoint`), not inside a commit.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let (checkpointer, nudge) = Checkpointer::start(open_connection(path, config)?, config)?;
        let sink = match journal {
            Some(journal) => Some(JournalSink {
                journal,
                schema: schema_version(&conn)?,
            }),
            None => None,
        };
        let writer = Writer::start(conn, config.max_group, nudge, sink)?;
        let readers = ReaderPool::new(path.to_path_buf(), config.clone())?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            readers,
            writer,
            _checkpointer: checkpointer,
        })
    }

    /// The writer's queue and transaction counters since the store opened.
    pub fn writer_stats(&self) -> WriterStats {
        self.writer.stats()
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `job` alone on the writer's connection (it manages its own transaction).
    pub(crate) fn run_raw(&self, job: writer::RawJob) -> Result<(), StoreError> {
        self.writer.run_raw(job)
    }

    /// A snapshot with its connection, for the checkpoint's table dump.
    pub(crate) fn raw_snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        self.readers.snapshot()
    }
}

/// Opens (creating and migrating) the database at `path` and reads the journal position it
/// has applied (0 when none).
pub(crate) fn applied_position(path: &Path, config: &StoreConfig) -> Result<u64, StoreError> {
    let mut conn = open_connection(path, config)?;
    schema::migrate(&mut conn)?;
    journal_position(&conn)
}

/// The `journal_position` counter of a database (0 when unset).
pub(crate) fn journal_position(conn: &Connection) -> Result<u64, StoreError> {
    use rusqlite::OptionalExtension;
    let value: Option<i64> = conn
        .query_row(
            "SELECT value FROM counters WHERE name = 'journal_position'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(value.unwrap_or(0) as u64)
}

pub(crate) fn open_connection(path: &Path, config: &StoreConfig) -> Result<Connection, StoreError> {
    let open_err = |e| StoreError::Open {
        path: path.into(),
        source: DatabaseError::from_sqlite(e),
    };
    let conn = Connection::open(path).map_err(open_err)?;
    // Takes effect only while the file is still empty, so before WAL mode writes its header.
    conn.pragma_update(None, "page_size", config.page_size)
        .map_err(open_err)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(open_err)?;
    // Without a limit the WAL file keeps the size of the largest burst it ever held.
    conn.pragma_update(None, "journal_size_limit", config.wal_size_limit_bytes)
        .map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(open_err)?;
    conn.pragma_update(None, "busy_timeout", config.busy_timeout_ms)
        .map_err(open_err)?;
    conn.pragma_update(None, "cache_size", -config.cache_kib)
        .map_err(open_err)?;
    // Every statement the store uses stays prepared (rusqlite keeps 16 by default).
    conn.set_prepared_statement_cache_capacity(config.statement_cache);
    // Plans must not depend on bound values. Without this, SQLite marks a statement whose
    // `LIMIT ?` (or range bound) it planned with for re-preparation whenever that parameter is
    // bound again, so every paged query would be parsed and planned anew on every call.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(open_err)?;
    Ok(conn)
}

impl MetaStore for SqliteStore {
    fn snapshot(&self) -> Result<Box<dyn ReadTxn + '_>, StoreError> {
        Ok(Box::new(self.readers.snapshot()?))
    }

    fn run_write(&self, job: WriteJob) -> Result<(), StoreError> {
        self.writer.run(job)
    }

    fn commit_epoch(&self) -> u64 {
        self.writer.epoch()
    }
}

#[cfg(test)]
mod tests {
    use super::open_connection;
    use crate::StoreConfig;
    use rusqlite::StatementStatus;

    /// A paged query run again with other bounds and another `LIMIT` reuses its plan: SQLite
    /// would re-prepare it on every call without the query planner stability guarantee.
    #[test]
    fn paged_queries_are_not_reprepared_when_rebound() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let conn = open_connection(&dir.path().join("db"), &StoreConfig::default())
            .expect("connection opens");
        conn.execute_batch(
            "CREATE TABLE r (path TEXT NOT NULL, rev INTEGER NOT NULL, PRIMARY KEY (path, rev))
             WITHOUT ROWID;
             INSERT INTO r VALUES ('//a/1', 1), ('//a/2', 1), ('//a/3', 1);",
        )
        .expect("table created");
        let sql = "SELECT path FROM r WHERE path >= ?1 AND path < ?2 ORDER BY path LIMIT ?3";
        let mut seen = Vec::new();
        for (lo, limit) in [("//a/", 1), ("//a/2", 2), ("//a/", 3)] {
            let mut stmt = conn.prepare_cached(sql).expect("statement prepares");
            let rows = stmt
                .query_map(rusqlite::params![lo, "//a0", limit], |r| {
                    r.get::<_, String>(0)
                })
                .expect("query runs")
                .collect::<Result<Vec<_>, _>>()
                .expect("rows read");
            seen.push(rows.len());
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0);
        }
        assert_eq!(seen, [1, 2, 3]);
    }

    /// A statement that makes SQLite roll back the whole transaction (here a trigger's
    /// `RAISE(ROLLBACK)`; in the field a full disk or memory) fails its own job with its own
    /// error, not with the writer's lost savepoint, and the writer goes on.
    #[test]
    fn a_transaction_the_database_gave_up_fails_with_the_jobs_own_error() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = super::SqliteStore::open(&dir.path().join("db"), &StoreConfig::default())
            .expect("store opens");
        let trigger = |sql: &'static str| {
            store
                .run_raw(Box::new(move |conn| Ok(conn.execute_batch(sql)?)))
                .expect("trigger changed");
        };
        trigger(
            "CREATE TEMP TRIGGER give_up BEFORE INSERT ON users
             BEGIN SELECT RAISE(ROLLBACK, 'the database gives up'); END;",
        );
        let err = crate::write(&store, |tx| tx.ensure_user("ann", 1)).unwrap_err();
        assert!(err.to_string().contains("the database gives up"), "{err}");
        assert!(!err.to_string().contains("savepoint"), "{err}");
        trigger("DROP TRIGGER give_up");
        assert!(crate::write(&store, |tx| tx.ensure_user("ann", 2)).expect("writer goes on"));
    }

    /// The bundled SQLite is built as `.cargo/config.toml` asks: no process-wide page-cache
    /// mutex (memory management) and no memory accounting under a global lock.
    #[test]
    fn sqlite_is_built_without_global_locks() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let conn = open_connection(&dir.path().join("db"), &StoreConfig::default())
            .expect("connection opens");
        let mut stmt = conn
            .prepare("PRAGMA compile_options")
            .expect("pragma prepares");
        let options = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .expect("pragma runs")
            .collect::<Result<Vec<_>, _>>()
            .expect("options read");
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "{options:?}"
        );
    }

    /// A new database gets the configured page size; an existing one opens, migrates and keeps
    /// the page size it was created with.
    #[test]
    fn page_size_applies_to_new_databases_only() {
        let page_size = |path: &std::path::Path| -> i64 {
            let conn = rusqlite::Connection::open(path).expect("connection opens");
            conn.query_row("PRAGMA page_size", [], |r| r.get(0))
                .expect("page size read")
        };
        let large = StoreConfig {
            page_size: 16 * 1024,
            ..StoreConfig::default()
        };
        let dir = tempfile::tempdir().expect("temporary directory");
        let new = dir.path().join("new.db");
        drop(super::SqliteStore::open(&new, &large).expect("store opens"));
        assert_eq!(page_size(&new), 16 * 1024);

        let old = dir.path().join("old.db");
        drop(super::SqliteStore::open(&old, &StoreConfig::default()).expect("store opens"));
        assert_eq!(page_size(&old), 4096);
        drop(super::SqliteStore::open(&old, &large).expect("store reopens"));
        assert_eq!(page_size(&old), 4096);
    }

    /// Reader connections read through a mapping by default, and with `reader_mmap_bytes`
    /// set to 0 they read with `pread`.
    #[test]
    fn readers_map_the_file_unless_configured_not_to() {
        let mapped = |config: &StoreConfig| -> i64 {
            let dir = tempfile::tempdir().expect("temporary directory");
            let store =
                super::SqliteStore::open(&dir.path().join("db"), config).expect("store opens");
            let snap = store.readers.snapshot().expect("snapshot");
            snap.conn()
                .query_row("PRAGMA mmap_size", [], |r| r.get(0))
                .expect("mmap size read")
        };
        assert!(mapped(&StoreConfig::default()) >= 1 << 30);
        let opted_out = StoreConfig {
            reader_mmap_bytes: 0,
            ..StoreConfig::default()
        };
        assert_eq!(mapped(&opted_out), 0);
    }
}
