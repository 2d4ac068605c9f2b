//! Have lists: one small SQLite database per workspace (`ROOT/have/<workspace>.db`).
//!
//! Perforce keeps every workspace's have list in one table (`db.have`), so build farms syncing
//! many workspaces contend on it and bloat it. Here each workspace has its own file with its own
//! writer: syncs of different workspaces never touch the same database, and none touches the
//! main metadata writer. Deleting a workspace deletes its file. Have lists are recorded after the
//! client wrote the files, so a crash can only leave a have list *behind* the workspace (the next
//! sync transfers a few files again), never ahead of it.
//!
//! With a journal, each write is journaled like the main writer's (a changeset of the `have`
//! table, appended before COMMIT, its position stored in the file's `journal_position` table),
//! and deleting a have list appends a record saying so first.

use crate::have_idle::IdleTruncator;
use crate::journal::format::Target;
use crate::journal::{Body, Journal, format::Encoding};
use crate::sqlite::session::Session;
use crate::{DatabaseError, HaveRow, PathRange, StoreConfig, StoreError};
use keel_core::DepotPath;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub struct SqliteHaveStore {
    dir: PathBuf,
    open: Mutex<HashMap<String, Arc<Mutex<Connection>>>>,
    /// Held while a list's connection is opened (its file and tables made, milliseconds of
    /// work) or its files deleted: one at a time, and never both for one list, while callers
    /// of lists already open go on.
    opening: Mutex<()>,
    /// Most connections kept open at once (`StoreConfig::max_open_have_lists`).
    max_open: usize,
    /// `StoreConfig::busy_timeout_ms`.
    busy_timeout_ms: u32,
    /// `StoreConfig::have_wal_size_limit_bytes`.
    wal_size_limit_bytes: i64,
    /// `StoreConfig::have_change_rows`.
    change_rows: usize,
    journal: Option<Arc<Journal>>,
    /// Empties the logs of lists not written for a while (see `have_idle`).
    idle: IdleTruncator,
}

/// A have list's claim that it is exactly what a whole-view sync at head gave: every file its
/// view maps was in sync at `change` (`SqliteHaveStore::state`). Sync then only re-examines files
/// changed from `change` on. Kept in the have list's own `sync_state` table, which is neither
/// journaled nor checkpointed: a restored or replayed have list has no mark, which is always
/// safe (the next sync diffs the whole have list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaveMark {
    /// The newest change number the marked sync could see; revisions submitted later have a
    /// change number at least this.
    pub change: u64,
    /// The store's `revisions_removed` counter then: an obliterate since voids the mark.
    pub removed: u64,
    /// The workspace's view then, one line per mapping: another view voids the mark.
    pub view: String,
}

/// Which version of a have list's entries this is: `uid` is drawn at random when the file first
/// counts a change, and `counter` goes up with every transaction that writes entries (marks
/// aside). Two equal generations are the same entries, even across a deleted and re-created
/// workspace or a restored root (a new file, a new `uid`). Local to the file, like the mark:
/// neither journaled nor checkpointed.
///
/// The file also remembers which paths the latest writes touched (table `changed`, at most
/// `StoreConfig::have_change_rows`), so a client holding the list as of an older counter can be
/// sent only those paths' entries ([`HaveDelta`]). A write of more rows than that forgets
/// them all and is not remembered itself; `complete_after` is the oldest counter whose later
/// writes are all remembered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaveGeneration {
    pub uid: String,
    pub counter: u64,
}

/// What changed in a have list since a generation (`SqliteHaveStore::delta_since`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HaveDelta {
    /// Nothing: the generation is the current one.
    Current,
    /// Every path written since, with its entry now (`None`: no longer in the have list),
    /// in path order.
    Changed(Vec<(DepotPath, Option<HaveRow>)>),
    /// Not known (another file, or writes since that are no longer remembered): only the
    /// whole list answers.
    Unknown,
}

/// The have list's write counter and its mark.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HaveState {
    /// How many `apply` calls have changed this have list.
    pub writes: u64,
    pub mark: Option<HaveMark>,
}

/// Schema version recorded with have-list changesets.
const HAVE_SCHEMA: u16 = 1;

impl SqliteHaveStore {
    /// Opens (creating when needed) the have lists under `dir`, with the default limit of
    /// open connections.
    pub fn open(dir: &Path) -> Result<SqliteHaveStore, StoreError> {
        Self::open_with(dir, &StoreConfig::default())
    }

    /// Opens the have lists under `dir`, keeping at most `config.max_open_have_lists` open.
    pub fn open_with(dir: &Path, config: &StoreConfig) -> Result<SqliteHaveStore, StoreError> {
        Self::open_journaled(dir, config, None)
    }

    /// Opens the have lists under `dir`; with a journal, every write is journaled.
    pub fn open_journaled(
        dir: &Path,
        config: &StoreConfig,
        journal: Option<Arc<Journal>>,
    ) -> Result<SqliteHaveStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.into(),
            source,
        })?;
        Ok(SqliteHaveStore {
            dir: dir.to_path_buf(),
            open: Mutex::new(HashMap::new()),
            opening: Mutex::new(()),
            max_open: config.max_open_have_lists.max(1),
            busy_timeout_ms: config.busy_timeout_ms,
            wal_size_limit_bytes: config.have_wal_size_limit_bytes,
            change_rows: config.have_change_rows,
            journal,
            idle: IdleTruncator::start(
                Duration::from_millis(config.checkpoint_interval_ms),
                config.busy_timeout_ms,
            )?,
        })
    }

    /// The directory holding the have lists.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, workspace: &str) -> PathBuf {
        file_of(&self.dir, workspace)
    }

    /// `workspace`'s connection, opened when it is not open yet.
    fn connection(&self, workspace: &str) -> Result<Arc<Mutex<Connection>>, StoreError> {
        if let Some(conn) = self.already_open(workspace) {
            return Ok(conn);
        }
        let _opening = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
        // Opened by another caller while this one waited.
        if let Some(conn) = self.already_open(workspace) {
            return Ok(conn);
        }
        let conn = Arc::new(Mutex::new(self.open_connection(workspace)?));
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.len() >= self.max_open {
            open.clear();
        }
        open.insert(workspace.to_string(), conn.clone());
        Ok(conn)
    }

    fn already_open(&self, workspace: &str) -> Option<Arc<Mutex<Connection>>> {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(workspace).cloned()
    }

    /// A new connection to `workspace`'s list, its file and tables made when it has none.
    fn open_connection(&self, workspace: &str) -> Result<Connection, StoreError> {
        let path = self.path_of(workspace);
        let err = |e| StoreError::Have {
            path: path.clone(),
            source: DatabaseError::from_sqlite(e),
        };
        let conn = Connection::open(&path).map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        // SQLite's defaults (a checkpoint at 1,000 pages, the file never cut back) would leave
        // every workspace's WAL at ~4 MB for good, as large as a 70,000-file have list.
        conn.pragma_update(None, "journal_size_limit", self.wal_size_limit_bytes)
            .map_err(err)?;
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(err)?;
        conn.pragma_update(
            None,
            "wal_autocheckpoint",
            (self.wal_size_limit_bytes / page_size.max(512)).max(1),
        )
        .map_err(err)?;
        // Journaled, a commit must be as durable as its journal record: the journal says the
        // record's commit happened exactly when the file's position reached it.
        let synchronous = if self.journal.is_some() {
            "FULL"
        } else {
            "NORMAL"
        };
        conn.pragma_update(None, "synchronous", synchronous)
            .map_err(err)?;
        conn.pragma_update(None, "busy_timeout", self.busy_timeout_ms)
            .map_err(err)?;
        conn.execute_batch(CREATE_TABLES).map_err(err)?;
        Ok(conn)
    }

    fn with<T>(
        &self,
        workspace: &str,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.connection(workspace)?;
        self.run_on(workspace, &conn, f)
    }

    /// [`Self::with`] for a job that may write: the list's log is emptied once it is idle.
    fn with_writing<T>(
        &self,
        workspace: &str,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.connection(workspace)?;
        let result = self.run_on(workspace, &conn, f);
        self.idle.wrote(workspace, &conn);
        result
    }

    /// Runs `f` on `workspace`'s connection `conn`, holding it meanwhile.
    fn run_on<T>(
        &self,
        workspace: &str,
        conn: &Mutex<Connection>,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let mut guard = conn.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard).map_err(|e| StoreError::Have {
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
        // One lower bound for the seek: given both `path >= lo` and `path > after`, SQLite
        // seeks on the first and steps over every row before `after`, so paging through a
        // list read it from the start once per page.
        let (sql, from) = match after {
            Some(after) if after >= range.lo.as_str() => (
                "SELECT path, rev, client FROM have WHERE path > ?1 AND path < ?2 \
                 ORDER BY path LIMIT ?3",
                after,
            ),
            _ => (
                "SELECT path, rev, client FROM have WHERE path >= ?1 AND path < ?2 \
                 ORDER BY path LIMIT ?3",
                range.lo.as_str(),
            ),
        };
        self.with(workspace, |conn| {
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt.query_map(params![from, range.hi, limit as i64], |r| {
                Ok(HaveRow {
                    path: DepotPath::from_stored(r.get(0)?),
                    rev: r.get(1)?,
                    client: r.get(2)?,
                })
            })?;
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

    /// The write counter and mark of a workspace's have list.
    pub fn state(&self, workspace: &str) -> Result<HaveState, StoreError> {
        self.with(workspace, |conn| {
            let row = conn
                .prepare_cached(
                    "SELECT writes, change, removed, view FROM sync_state WHERE id = 0",
                )?
                .query_row([], state_of)
                .optional()?;
            Ok(row.unwrap_or_default())
        })
    }

    /// The generation of a workspace's have list (creating its identity if it has none yet).
    pub fn generation(&self, workspace: &str) -> Result<HaveGeneration, StoreError> {
        self.with(workspace, |conn| {
            let read = |conn: &Connection| {
                conn.prepare_cached("SELECT uid, counter FROM generation WHERE id = 0")?
                    .query_row([], |r| {
                        Ok(HaveGeneration {
                            uid: r.get(0)?,
                            counter: r.get::<_, i64>(1)? as u64,
                        })
                    })
                    .optional()
            };
            if let Some(generation) = read(conn)? {
                return Ok(generation);
            }
            conn.prepare_cached(START_GENERATION_SQL)?.execute([])?;
            read(conn)?.ok_or(rusqlite::Error::QueryReturnedNoRows)
        })
    }

    /// The have list's current generation and what changed since `uid`'s generation `since`,
    /// read together under the file's lock (no write can land between them).
    pub fn delta_since(
        &self,
        workspace: &str,
        uid: &str,
        since: u64,
    ) -> Result<(HaveGeneration, HaveDelta), StoreError> {
        // Makes the generation row of a have list never written.
        self.generation(workspace)?;
        self.with(workspace, |conn| {
            let (now_uid, counter, complete_after): (String, i64, i64) = conn
                .prepare_cached("SELECT uid, counter, complete_after FROM generation WHERE id = 0")?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            let now = HaveGeneration {
                uid: now_uid,
                counter: counter as u64,
            };
            let since = i64::try_from(since).unwrap_or(i64::MAX);
            if now.uid != uid || since > counter || since < complete_after {
                return Ok((now, HaveDelta::Unknown));
            }
            if since == counter {
                return Ok((now, HaveDelta::Current));
            }
            let mut paths = conn.prepare_cached(
                "SELECT DISTINCT path FROM changed WHERE counter > ?1 ORDER BY path",
            )?;
            let paths: Vec<String> = paths
                .query_map([since], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut entry = conn.prepare_cached("SELECT rev, client FROM have WHERE path = ?1")?;
            let mut changed = Vec::with_capacity(paths.len());
            for path in paths {
                let row = entry
                    .query_row([&path], |r| {
                        Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?))
                    })
                    .optional()?;
                let path = DepotPath::from_stored(path);
                let row = row.map(|(rev, client)| HaveRow {
                    path: path.clone(),
                    rev,
                    client,
                });
                changed.push((path, row));
            }
            Ok((now, HaveDelta::Changed(changed)))
        })
    }

    /// Marks the have list as synced (see [`HaveMark`]) when its write counter is still
    /// `writes`, i.e. nothing but the marking sync's own updates changed it since that sync
    /// began; returns whether it did.
    pub fn set_mark(
        &self,
        workspace: &str,
        mark: &HaveMark,
        writes: u64,
    ) -> Result<bool, StoreError> {
        self.with_writing(workspace, |conn| {
            let changed = conn.prepare_cached(SET_MARK_SQL)?.execute(params![
                mark.change as i64,
                mark.removed as i64,
                mark.view,
                writes as i64
            ])?;
            if changed == 0 && writes == 0 {
                // A have list never written has no state row yet.
                let inserted = conn.prepare_cached(INSERT_MARK_SQL)?.execute(params![
                    mark.change as i64,
                    mark.removed as i64,
                    mark.view
                ])?;
                return Ok(inserted == 1);
            }
            Ok(changed == 1)
        })
    }

    /// Records revisions (rev 0 removes the entry) in one transaction, counting the write and
    /// clearing the have list's mark: the entries may be anything (a partial sync, `-k`, ...).
    pub fn apply(&self, workspace: &str, rows: &[HaveRow]) -> Result<(), StoreError> {
        self.apply_with(workspace, rows, true)
    }

    /// Records revisions of files changed at or after any mark's change (a submit's own files,
    /// a sync's scheduled resolves) and keeps the mark: the next sync looks at those files
    /// anyway.
    pub fn apply_keeping_mark(&self, workspace: &str, rows: &[HaveRow]) -> Result<(), StoreError> {
        self.apply_with(workspace, rows, false)
    }

    fn apply_with(
        &self,
        workspace: &str,
        rows: &[HaveRow],
        unmark: bool,
    ) -> Result<(), StoreError> {
        let change_rows = self.change_rows;
        let shared = self.connection(workspace)?;
        let conn = shared.lock().unwrap_or_else(PoisonError::into_inner);
        let result = self.write_on(workspace, &conn, unmark, |conn| {
            write_rows(conn, rows, change_rows)
        });
        drop(conn);
        self.idle.wrote(workspace, &shared);
        result
    }

    /// Reads `workspace`'s whole have list in path order, `page` entries at a time handed to
    /// `each`, in one read transaction on a read-only connection of its own: its writers never
    /// wait for the reader, and the entries and the returned state (write counter and mark) are
    /// of one moment. Compare the state's `writes` with another reader's to know both read the
    /// same list.
    pub fn read_list<E: From<StoreError>>(
        &self,
        workspace: &str,
        page: usize,
        mut each: impl FnMut(Vec<HaveRow>) -> Result<(), E>,
    ) -> Result<HaveState, E> {
        // Opening the list's own connection makes its file and tables when it has none.
        self.connection(workspace)?;
        let path = self.path_of(workspace);
        let db_err = |e| StoreError::Have {
            path: path.clone(),
            source: DatabaseError::from_sqlite(e),
        };
        let conn = Connection::open_with_flags(
            read_only_uri(&path),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(db_err)?;
        conn.busy_timeout(Duration::from_millis(self.busy_timeout_ms.into()))
            .map_err(db_err)?;
        conn.execute_batch("BEGIN").map_err(db_err)?;
        let state = conn
            .query_row(
                "SELECT writes, change, removed, view FROM sync_state WHERE id = 0",
                [],
                state_of,
            )
            .optional()
            .map_err(db_err)?
            .unwrap_or_default();
        let mut stmt = conn
            .prepare("SELECT path, rev, client FROM have WHERE path > ?1 ORDER BY path LIMIT ?2")
            .map_err(db_err)?;
        let mut after = String::new();
        loop {
            let rows = stmt
                .query_map(params![after, page as i64], |r| {
                    Ok(HaveRow {
                        path: DepotPath::from_stored(r.get(0)?),
                        rev: r.get(1)?,
                        client: r.get(2)?,
                    })
                })
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<HaveRow>>>())
                .map_err(db_err)?;
            let full = rows.len() == page;
            let Some(last) = rows.last() else { break };
            after = last.path.as_str().to_string();
            each(rows)?;
            if !full {
                break;
            }
        }
        Ok(state)
    }

    /// Copies `source`'s whole have list into `workspace`'s (which it replaces) inside SQLite,
    /// in one transaction journaled like any write (so a crash leaves the old list or the whole
    /// copy, never part of it), each entry's client path moved from `//SOURCE/` to
    /// `//WORKSPACE/`. Returns the entries copied and the source's state (write counter and
    /// mark) as of the entries copied: read in the same transaction, so they belong together.
    pub fn copy_list(&self, source: &str, workspace: &str) -> Result<(u64, HaveState), StoreError> {
        // Opening the source's connection makes its file and tables when it has none.
        self.connection(source)?;
        let shared = self.connection(workspace)?;
        let attach = format!(
            "ATTACH DATABASE '{}' AS copy_source",
            read_only_uri(&self.path_of(source))
        );
        // Held from the attachment to the detachment: nothing else uses the connection meanwhile.
        let conn = shared.lock().unwrap_or_else(PoisonError::into_inner);
        conn.execute_batch(&attach).map_err(|e| StoreError::Have {
            path: self.path_of(source),
            source: DatabaseError::from_sqlite(e),
        })?;
        let (from, to) = (format!("//{source}/"), format!("//{workspace}/"));
        let result = self.write_on(workspace, &conn, true, |conn| {
            let (counter, _) = bump_generation(conn)?;
            forget_changes(conn, counter)?;
            let state = conn
                .query_row(
                    "SELECT writes, change, removed, view FROM copy_source.sync_state WHERE id = 0",
                    [],
                    state_of,
                )
                .optional()?
                .unwrap_or_default();
            conn.execute("DELETE FROM have", [])?;
            let copied = conn.execute(
                "INSERT INTO have SELECT path, rev, \
                 CASE WHEN substr(client, 1, length(?1)) = ?1 \
                 THEN ?2 || substr(client, length(?1) + 1) ELSE client END \
                 FROM copy_source.have ORDER BY path",
                params![from, to],
            )?;
            Ok((copied as u64, state))
        });
        let detached = conn.execute_batch("DETACH DATABASE copy_source").is_ok();
        drop(conn);
        if !detached {
            // Never leave a connection reading another list: the next use opens a fresh one.
            self.open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(workspace);
        }
        self.idle.wrote(workspace, &shared);
        result
    }

    /// Runs the writing `job` on `workspace`'s connection `conn` (held by the caller) in one
    /// transaction that also counts the write (and clears the mark when `unmark`); journaled
    /// when the store has a journal (the `have` table's changeset, appended before COMMIT).
    fn write_on<T>(
        &self,
        workspace: &str,
        conn: &Connection,
        unmark: bool,
        job: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let db_err = |e| StoreError::Have {
            path: self.path_of(workspace),
            source: DatabaseError::from_sqlite(e),
        };
        conn.execute_batch("BEGIN IMMEDIATE").map_err(db_err)?;
        let result = (|| {
            let Some(journal) = &self.journal else {
                let out = job(conn).map_err(db_err)?;
                if unmark {
                    conn.execute_batch(UNMARK_SQL).map_err(db_err)?;
                }
                conn.execute_batch("COMMIT").map_err(db_err)?;
                return Ok(out);
            };
            let mut session = Session::new(conn).map_err(db_err)?;
            session.attach(Some("have")).map_err(db_err)?;
            let out = job(conn).map_err(db_err)?;
            if unmark {
                // Not in the changeset (the session follows only `have`): marks stay local.
                conn.execute_batch(UNMARK_SQL).map_err(db_err)?;
            }
            let mut body = journal.body_writer();
            session.changeset_to(&mut body).map_err(db_err)?;
            drop(session);
            let Some(body) = body.finish()? else {
                conn.execute_batch("COMMIT").map_err(db_err)?;
                return Ok(out);
            };
            let ticket = journal.append(&Target::Have(workspace.into()), HAVE_SCHEMA, &body)?;
            let committed = conn
                .execute(
                    "INSERT OR REPLACE INTO journal_position VALUES (0, ?1)",
                    [ticket.position as i64],
                )
                .and_then(|_| conn.execute_batch("COMMIT"));
            match committed {
                Ok(()) => {
                    journal.settle(ticket);
                    Ok(out)
                }
                Err(e) => {
                    if let Err(void) = journal.void(ticket) {
                        tracing::error!(error = %void, "journal record of a failed commit not voided");
                    }
                    Err(db_err(e))
                }
            }
        })();
        if result.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        result
    }

    /// Forgets a workspace's have list entirely (journaled first, so a restore forgets it too
    /// and an open after a crash finishes the deletion).
    pub fn drop_workspace(&self, workspace: &str) -> Result<(), StoreError> {
        // No connection to the list is opened (making its file again) until the files are gone.
        let _opening = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(workspace);
        let ticket = match &self.journal {
            Some(journal) => {
                let body = Body {
                    encoding: Encoding::Raw,
                    raw_len: 0,
                    bytes: Vec::new(),
                };
                Some(journal.append(&Target::DropHave(workspace.into()), HAVE_SCHEMA, &body)?)
            }
            None => None,
        };
        let removed = remove_files(&self.dir, workspace);
        if let (Some(journal), Some(ticket)) = (&self.journal, ticket) {
            // Failed or not, the deletion is decided: the next open finishes it.
            journal.settle(ticket);
        }
        removed
    }

    /// Workspaces that have a have list, in name order.
    pub fn workspaces(&self) -> Result<Vec<String>, StoreError> {
        let io = |source| StoreError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(io)? {
            let name = entry
                .map_err(io)?
                .file_name()
                .to_string_lossy()
                .into_owned();
            if let Some(ws) = name.strip_suffix(".db") {
                names.push(ws.to_string());
            }
        }
        names.sort();
        Ok(names)
    }
}

/// Tables of a have-list database.
pub(crate) const CREATE_TABLES: &str = "CREATE TABLE IF NOT EXISTS have (path TEXT PRIMARY KEY, rev INTEGER NOT NULL, client TEXT NOT NULL) WITHOUT ROWID; \
     CREATE TABLE IF NOT EXISTS journal_position (id INTEGER PRIMARY KEY CHECK (id = 0), position INTEGER NOT NULL); \
     CREATE TABLE IF NOT EXISTS sync_state (id INTEGER PRIMARY KEY CHECK (id = 0), writes INTEGER NOT NULL, change INTEGER, removed INTEGER, view TEXT); \
     CREATE TABLE IF NOT EXISTS generation (id INTEGER PRIMARY KEY CHECK (id = 0), uid TEXT NOT NULL, counter INTEGER NOT NULL, complete_after INTEGER NOT NULL, changed INTEGER NOT NULL); \
     CREATE TABLE IF NOT EXISTS changed (counter INTEGER NOT NULL, path TEXT NOT NULL, PRIMARY KEY (counter, path)) WITHOUT ROWID;";

/// Counts a change of the have list's entries (see [`HaveGeneration`]); returns the new
/// counter and how many paths `changed` holds.
const BUMP_GENERATION_SQL: &str = "INSERT INTO generation VALUES (0, lower(hex(randomblob(16))), 1, 0, 0) \
     ON CONFLICT (id) DO UPDATE SET counter = counter + 1 RETURNING counter, changed;";

/// Gives a have list never written since its file was made its identity.
const START_GENERATION_SQL: &str =
    "INSERT OR IGNORE INTO generation VALUES (0, lower(hex(randomblob(16))), 0, 0, 0);";

/// Counts a write and clears the mark.
const UNMARK_SQL: &str = "INSERT INTO sync_state VALUES (0, 1, NULL, NULL, NULL) \
     ON CONFLICT (id) DO UPDATE SET writes = writes + 1, change = NULL, removed = NULL, view = NULL;";

/// Sets the mark when the write counter is as expected.
const SET_MARK_SQL: &str =
    "UPDATE sync_state SET change = ?1, removed = ?2, view = ?3 WHERE id = 0 AND writes = ?4";

/// Sets the mark of a have list that was never written.
const INSERT_MARK_SQL: &str = "INSERT OR IGNORE INTO sync_state VALUES (0, 0, ?1, ?2, ?3)";

/// The database file of a workspace's have list.
pub(crate) fn file_of(dir: &Path, workspace: &str) -> PathBuf {
    dir.join(format!("{workspace}.db"))
}

/// A `sync_state` row (`SELECT writes, change, removed, view`) as a [`HaveState`].
fn state_of(r: &rusqlite::Row) -> rusqlite::Result<HaveState> {
    let mark = match (r.get::<_, Option<i64>>(1)?, r.get::<_, Option<i64>>(2)?) {
        (Some(change), Some(removed)) => Some(HaveMark {
            change: change as u64,
            removed: removed as u64,
            view: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(HaveState {
        writes: r.get::<_, i64>(0)? as u64,
        mark,
    })
}

/// A read-only SQLite URI for the database file `path` (`%`, `?` and `#` escaped, `'` doubled
/// for the SQL string it goes into).
fn read_only_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            '\'' => uri.push_str("''"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro");
    uri
}

/// Counts a change of the entries (see [`HaveGeneration`]): the new counter and how many
/// paths `changed` remembers.
fn bump_generation(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.prepare_cached(BUMP_GENERATION_SQL)?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
}

/// Forgets every remembered path: copies of the list older than `complete_after` get it whole.
fn forget_changes(conn: &Connection, complete_after: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE generation SET complete_after = ?1, changed = 0 WHERE id = 0")?
        .execute([complete_after])?;
    conn.prepare_cached("DELETE FROM changed")?.execute([])?;
    Ok(())
}

/// Writes `rows`, counts the change and remembers its paths (at most `change_rows` in all);
/// called inside every writing transaction.
fn write_rows(conn: &Connection, rows: &[HaveRow], change_rows: usize) -> rusqlite::Result<()> {
    let (counter, remembered) = bump_generation(conn)?;
    let forget = |complete_after: i64| forget_changes(conn, complete_after);
    if rows.len() > change_rows {
        // Too big to remember: copies older than this write get the whole list.
        forget(counter)?;
    } else {
        if remembered as usize + rows.len() > change_rows {
            // Room for this write: the earlier ones are forgotten.
            forget(counter - 1)?;
        }
        let mut remember = conn.prepare_cached("INSERT OR IGNORE INTO changed VALUES (?1, ?2)")?;
        for row in rows {
            remember.execute(params![counter, row.path.as_str()])?;
        }
        conn.prepare_cached("UPDATE generation SET changed = changed + ?1 WHERE id = 0")?
            .execute([rows.len() as i64])?;
    }
    let mut put = conn.prepare_cached("INSERT OR REPLACE INTO have VALUES (?1, ?2, ?3)")?;
    let mut del = conn.prepare_cached("DELETE FROM have WHERE path = ?1")?;
    for row in rows {
        if row.rev == 0 {
            del.execute([row.path.as_str()])?;
        } else {
            put.execute(params![row.path.as_str(), row.rev, row.client])?;
        }
    }
    Ok(())
}

/// Deletes a have list's files (those already gone are fine).
pub(crate) fn remove_files(dir: &Path, workspace: &str) -> Result<(), StoreError> {
    for suffix in ["", "-wal", "-shm"] {
        let path = PathBuf::from(format!("{}{suffix}", file_of(dir, workspace).display()));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(StoreError::Io { path, source }),
        }
    }
    Ok(())
}

/// The journal position a have list has applied (0 when it has none or does not exist).
pub(crate) fn applied_position(dir: &Path, workspace: &str) -> Result<u64, StoreError> {
    let path = file_of(dir, workspace);
    if !path.exists() {
        return Ok(0);
    }
    let err = |e| StoreError::Have {
        path: path.clone(),
        source: DatabaseError::from_sqlite(e),
    };
    let conn =
        Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(err)?;
    conn.execute_batch(CREATE_TABLES).map_err(err)?;
    let position: Option<i64> = conn
        .query_row(
            "SELECT position FROM journal_position WHERE id = 0",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)?;
    Ok(position.unwrap_or(0) as u64)
}
