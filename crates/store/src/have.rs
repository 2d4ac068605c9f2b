//! Have lists: one small SQLite database per workspace (`ROOT/have/<workspace>.db`).
//!
//! Perforce keeps every workspace's have list in one table (`db.have`), so build farms syncing
//! many workspaces contend on it and bloat it. Here each workspace has its own file with its own
//! writer: syncs of different workspaces never touch the same database, and none touches the
//! main metadata writer. Deleting a workspace deletes its file. Have lists are recorded after the
//! client wrote the files, so a crash can only leave a have list *behind* the workspace (the next
//! sync transfers a few files again), never ahead of it.

use crate::{DatabaseError, HaveRow, PathRange, StoreConfig, StoreError};
use keel_core::DepotPath;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

pub struct SqliteHaveStore {
    dir: PathBuf,
    open: Mutex<HashMap<String, Arc<Mutex<Connection>>>>,
    /// Most connections kept open at once (`StoreConfig::max_open_have_lists`).
    max_open: usize,
    /// `StoreConfig::busy_timeout_ms`.
    busy_timeout_ms: u32,
}

impl SqliteHaveStore {
    /// Opens (creating when needed) the have lists under `dir`, with the default limit of
    /// open connections.
    pub fn open(dir: &Path) -> Result<SqliteHaveStore, StoreError> {
        Self::open_with(dir, &StoreConfig::default())
    }

    /// Opens the have lists under `dir`, keeping at most `config.max_open_have_lists` open.
    pub fn open_with(dir: &Path, config: &StoreConfig) -> Result<SqliteHaveStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.into(),
            source,
        })?;
        Ok(SqliteHaveStore {
            dir: dir.to_path_buf(),
            open: Mutex::new(HashMap::new()),
            max_open: config.max_open_have_lists.max(1),
            busy_timeout_ms: config.busy_timeout_ms,
        })
    }

    fn path_of(&self, workspace: &str) -> PathBuf {
        self.dir.join(format!("{workspace}.db"))
    }

    fn connection(&self, workspace: &str) -> Result<Arc<Mutex<Connection>>, StoreError> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(conn) = open.get(workspace) {
            return Ok(conn.clone());
        }
        if open.len() >= self.max_open {
            open.clear();
        }
        let path = self.path_of(workspace);
        let err = |e| StoreError::Have {
            path: path.clone(),
            source: DatabaseError::from_sqlite(e),
        };
        let conn = Connection::open(&path).map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        conn.pragma_update(None, "busy_timeout", self.busy_timeout_ms)
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS have (path TEXT PRIMARY KEY, rev INTEGER NOT NULL, client TEXT NOT NULL) WITHOUT ROWID",
        )
        .map_err(err)?;
        let conn = Arc::new(Mutex::new(conn));
        open.insert(workspace.to_string(), conn.clone());
        Ok(conn)
    }

    fn with<T>(
        &self,
        workspace: &str,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.connection(workspace)?;
        let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut conn).map_err(|e| StoreError::Have {
            path: self.path_of(workspace),
            source: DatabaseError::from_sqlite(e),
        })
    }

    /// Have entries in `range`, path order, after `after`.
    pub fn page(
        &self,
        workspace: &str,
        range: &PathRange,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<HaveRow>, StoreError> {
        self.with(workspace, |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT path, rev, client FROM have WHERE path >= ?1 AND path < ?2 AND path > ?3 \
                 ORDER BY path LIMIT ?4",
            )?;
            let rows = stmt.query_map(
                params![range.lo, range.hi, after.unwrap_or(""), limit as i64],
                |r| {
                    Ok(HaveRow {
                        path: DepotPath::from_stored(r.get(0)?),
                        rev: r.get(1)?,
                        client: r.get(2)?,
                    })
                },
            )?;
            rows.collect()
        })
    }

    /// The revision a workspace has of one file (0 when none).
    pub fn get(&self, workspace: &str, path: &DepotPath) -> Result<u32, StoreError> {
        self.with(workspace, |conn| {
            let rev = conn
                .prepare_cached("SELECT rev FROM have WHERE path = ?1")?
                .query_row([path.as_str()], |r| r.get(0))
                .optional()?;
            Ok(rev.unwrap_or(0))
        })
    }

    /// Records revisions (rev 0 removes the entry) in one transaction.
    pub fn apply(&self, workspace: &str, rows: &[HaveRow]) -> Result<(), StoreError> {
        self.with(workspace, |conn| {
            let tx = conn.transaction()?;
            {
                let mut put =
                    tx.prepare_cached("INSERT OR REPLACE INTO have VALUES (?1, ?2, ?3)")?;
                let mut del = tx.prepare_cached("DELETE FROM have WHERE path = ?1")?;
                for row in rows {
                    if row.rev == 0 {
                        del.execute([row.path.as_str()])?;
                    } else {
                        put.execute(params![row.path.as_str(), row.rev, row.client])?;
                    }
                }
            }
            tx.commit()
        })
    }

    /// Forgets a workspace's have list entirely.
    pub fn drop_workspace(&self, workspace: &str) -> Result<(), StoreError> {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(workspace);
        for suffix in ["", "-wal", "-shm"] {
            let path = PathBuf::from(format!("{}{suffix}", self.path_of(workspace).display()));
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(StoreError::Io { path, source }),
            }
        }
        Ok(())
    }
}
