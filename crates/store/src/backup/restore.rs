//! Rebuilding a root from a checkpoint and journals, offline: verify the checkpoint's digest,
//! load its rows into fresh databases, replay the journals' records after each database's
//! checkpointed position (each record atomically), and only then move the result into place.
//!
//! Everything is built in a sibling directory (`NEWROOT.restoring`) and renamed to NEWROOT at
//! the end, so an interrupted restore never leaves a root a server could start on.

use super::format::*;
use crate::have;
use crate::journal::apply::{HAVE_POSITION_SQL, MAIN_POSITION_SQL, apply_one};
use crate::journal::read::JournalFile;
use crate::journal::{JournalError, format::Target, sync_dir};
use crate::root::{HAVE_DIR, JOURNAL_DIR, METADATA_FILE};
use crate::sqlite::session::ApplyError;
use crate::sqlite::{MIGRATIONS, migrate_to, schema_version};
use crate::{StoreConfig, StoreError};
use rusqlite::Connection;
use rusqlite::types::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a restore did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RestoreReport {
    pub root: PathBuf,
    /// Rows loaded from the checkpoint.
    pub rows: u64,
    /// Databases in the checkpoint (main and have lists).
    pub databases: u64,
    /// Journal records applied.
    pub replayed: u64,
    /// Records skipped because the checkpoint already held them (or they were void).
    pub skipped: u64,
    /// The newest position restored.
    pub position: u64,
    /// Torn last records skipped: (journal file, what was wrong).
    pub torn: Vec<(PathBuf, String)>,
    pub seconds: f64,
}

/// How far a restore has got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreProgress {
    pub rows: u64,
    pub records: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("restore target {path} is not empty")]
    NotEmpty { path: PathBuf },
    #[error("checkpoint {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("checkpoint {path} is not a Keel checkpoint: {reason}")]
    NotACheckpoint { path: PathBuf, reason: String },
    #[error("checkpoint {path} is corrupt: its digest is {actual}, its trailer says {stored}")]
    Digest {
        path: PathBuf,
        stored: String,
        actual: String,
    },
    #[error("checkpoint {path} is damaged: {reason}")]
    Damaged { path: PathBuf, reason: String },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(
        "journal {path} starts at position {first} but the checkpoint and the journals before \
         it end at {covered}: records {covered_next} to {before_first} are missing",
        covered_next = covered + 1,
        before_first = first - 1
    )]
    Missing {
        path: PathBuf,
        first: u64,
        covered: u64,
    },
    #[error(
        "journal {path}, record at position {position} ({database}) does not apply: table \
         {table}: {kind}"
    )]
    Conflict {
        path: PathBuf,
        position: u64,
        database: String,
        table: String,
        kind: &'static str,
    },
    #[error("restoring into {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: StoreError,
    },
}

/// Rebuilds `new_root` from `checkpoint` and `journals` (applied in the order given).
pub fn restore(
    checkpoint: &Path,
    journals: &[PathBuf],
    new_root: &Path,
    config: &StoreConfig,
    progress: &mut dyn FnMut(&RestoreProgress),
) -> Result<RestoreReport, RestoreError> {
    let started = Instant::now();
    if let Ok(mut entries) = std::fs::read_dir(new_root)
        && entries.next().is_some()
    {
        return Err(RestoreError::NotEmpty {
            path: new_root.into(),
        });
    }
    let body_len = verify_digest(checkpoint)?;
    let staging = staging_dir(new_root);
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source: StoreError| RestoreError::Write { path, source }
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source: std::io::Error| RestoreError::Write {
            path: path.clone(),
            source: StoreError::Io { path, source },
        }
    };
    if staging.exists() {
        // Left by an interrupted restore of the same target: nothing else uses this name.
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    std::fs::create_dir_all(staging.join(HAVE_DIR)).map_err(io(&staging))?;
    let result = (|| {
        let mut state = load_checkpoint(checkpoint, body_len, &staging, config, progress)?;
        let mut report = RestoreReport {
            rows: state.rows,
            databases: state.databases,
            ..RestoreReport::default()
        };
        replay(journals, &mut state, &staging, &mut report, progress)?;
        report.position = state.covered;
        state.finish(&staging).map_err(werr(&staging))?;
        // The restored root's journal continues the positions, so its own records follow on.
        let number = state.number;
        crate::journal::create_journal_file(&staging.join(JOURNAL_DIR), number, state.covered + 1)
            .map_err(RestoreError::Journal)?;
        Ok(report)
    })();
    let mut report = match result {
        Ok(report) => report,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if new_root.exists() {
        std::fs::remove_dir(new_root).map_err(io(new_root))?;
    }
    std::fs::rename(&staging, new_root).map_err(io(new_root))?;
    if let Some(parent) = new_root.parent().filter(|p| !p.as_os_str().is_empty()) {
        sync_dir(parent).map_err(io(parent))?;
    }
    report.root = new_root.into();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

fn staging_dir(new_root: &Path) -> PathBuf {
    let mut name = new_root
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "root".into());
    name.push(".restoring");
    new_root.with_file_name(name)
}

/// Checks the file's prefix and its digest; returns the length of the compressed body.
pub fn verify_digest(path: &Path) -> Result<u64, RestoreError> {
    let open = |source| RestoreError::Open {
        path: path.into(),
        source,
    };
    let not = |reason: &str| RestoreError::NotACheckpoint {
        path: path.into(),
        reason: reason.into(),
    };
    let mut file = File::open(path).map_err(open)?;
    let len = file.metadata().map_err(open)?.len();
    if len < PREFIX_LEN + TRAILER_LEN {
        return Err(not("too short"));
    }
    let mut prefix = [0u8; PREFIX_LEN as usize];
    file.read_exact(&mut prefix).map_err(open)?;
    if &prefix[..8] != MAGIC {
        return Err(not("bad magic bytes"));
    }
    let version = u32::from_le_bytes(prefix[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(not(&format!(
            "format version {version}, this keel reads {FORMAT_VERSION}"
        )));
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(&prefix);
    let mut reader =
        BufReader::with_capacity(1 << 20, &mut file).take(len - PREFIX_LEN - TRAILER_LEN);
    std::io::copy(&mut reader, &mut hasher).map_err(open)?;
    let mut trailer = [0u8; TRAILER_LEN as usize];
    file.seek(SeekFrom::Start(len - TRAILER_LEN))
        .map_err(open)?;
    file.read_exact(&mut trailer).map_err(open)?;
    let actual = hasher.finalize();
    if &trailer[..8] != TRAILER_MAGIC || trailer[8..] != actual.as_bytes()[..] {
        return Err(RestoreError::Digest {
            path: path.into(),
            stored: hex(&trailer[8..]),
            actual: actual.to_hex().to_string(),
        });
    }
    Ok(len - PREFIX_LEN - TRAILER_LEN)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The databases being rebuilt and the positions each has applied.
struct State {
    main: Connection,
    main_position: u64,
    have: HashMap<String, u64>,
    /// Every position up to here is covered by the checkpoint and the journals read so far.
    covered: u64,
    /// The journal number the checkpoint started.
    number: u64,
    /// Page cache of each database being rebuilt (`StoreConfig::cache_kib`).
    cache_kib: i64,
    rows: u64,
    databases: u64,
}

impl State {
    fn finish(&mut self, staging: &Path) -> Result<(), StoreError> {
        // Every record up to `covered` is in the restored databases or belongs to another one
        // (a have list), so the main database has applied everything up to there: a replica
        // seeded from this root asks for what follows, even when the records just before were
        // have-list records in a journal the primary no longer keeps.
        if self.covered > self.main_position {
            self.main
                .execute(MAIN_POSITION_SQL, [self.covered as i64])?;
            self.main_position = self.covered;
        }
        // The restored database gets the newest schema.
        migrate_to(&mut self.main, MIGRATIONS.len() as u16)?;
        self.main.pragma_update(None, "synchronous", "FULL")?;
        self.main
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        let db = staging.join(METADATA_FILE);
        File::open(&db)
            .and_then(|f| f.sync_all())
            .map_err(|source| StoreError::Io { path: db, source })?;
        // Have lists were written unsynced and closed (which folds their WAL in): sync them.
        let have_dir = staging.join(HAVE_DIR);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        for entry in std::fs::read_dir(&have_dir).map_err(io(&have_dir))? {
            let path = entry.map_err(io(&have_dir))?.path();
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(io(&path))?;
        }
        sync_dir(&have_dir).map_err(io(&have_dir))?;
        Ok(())
    }
}

/// Opens a database being rebuilt. `bulk`: for loading the checkpoint's rows, with no
/// rollback journal at all (a failed load discards the whole staging directory, and pages are
/// written once instead of to the WAL and again into the file).
fn open_db(path: &Path, cache_kib: i64, bulk: bool) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", if bulk { "OFF" } else { "WAL" })?;
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    // Nothing is durable until the whole root is renamed into place; the end syncs each file.
    conn.pragma_update(None, "synchronous", "OFF")?;
    Ok(conn)
}

fn load_checkpoint(
    path: &Path,
    body_len: u64,
    staging: &Path,
    config: &StoreConfig,
    progress: &mut dyn FnMut(&RestoreProgress),
) -> Result<State, RestoreError> {
    let damaged = |e: std::io::Error| RestoreError::Damaged {
        path: path.into(),
        reason: e.to_string(),
    };
    let werr = |source: StoreError| RestoreError::Write {
        path: staging.into(),
        source,
    };
    let mut file = File::open(path).map_err(|source| RestoreError::Open {
        path: path.into(),
        source,
    })?;
    file.seek(SeekFrom::Start(PREFIX_LEN)).map_err(damaged)?;
    let body = BufReader::with_capacity(1 << 20, file).take(body_len);
    // Items are read a few bytes at a time: buffer the decoder's output.
    let mut r = ItemReader::new(BufReader::with_capacity(
        1 << 16,
        zstd::stream::Decoder::new(body).map_err(damaged)?,
    ));
    if r.byte().map_err(damaged)? != TAG_INFO {
        return Err(damaged(bad("no info item first")));
    }
    let info: serde_json::Value = serde_json::from_slice(&r.bytes().map_err(damaged)?)
        .map_err(|e| damaged(bad(&e.to_string())))?;
    let number = info["number"].as_u64().unwrap_or(0);
    let covered = info["journal_position"].as_u64().unwrap_or(0);
    let main_path = staging.join(METADATA_FILE);
    let mut main = open_db(&main_path, config.cache_kib, true).map_err(werr)?;
    let mut state = State {
        main: Connection::open_in_memory().map_err(|e| werr(e.into()))?,
        main_position: 0,
        have: HashMap::new(),
        covered,
        number,
        cache_kib: config.cache_kib,
        rows: 0,
        databases: 0,
    };
    // The database items load into, and its name.
    let mut current: Option<(String, Connection)> = None;
    // The main database's secondary indexes, dropped for the load.
    let mut indexes: Vec<String> = Vec::new();
    let batch = config.checkpoint_batch_rows.max(1) as u64;
    loop {
        let tag = r.byte().map_err(damaged)?;
        match tag {
            TAG_DATABASE => {
                if let Some((name, conn)) = current.take() {
                    close_loaded(&name, conn, &mut main, &indexes).map_err(werr)?;
                }
                let name = r.string().map_err(damaged)?;
                let schema = r.varint().map_err(damaged)? as u16;
                let position = r.varint().map_err(damaged)?;
                state.databases += 1;
                let conn = if name == "main" {
                    state.main_position = position;
                    migrate_to(&mut main, schema).map_err(werr)?;
                    // The migrations seed a few rows; the checkpoint holds the real ones.
                    for table in table_names(&main).map_err(werr)? {
                        main.execute(&format!("DELETE FROM \"{table}\""), [])
                            .map_err(|e| werr(e.into()))?;
                    }
                    // Secondary indexes are built once after the load (a sort), not row by
                    // row (random inserts into every index).
                    indexes = drop_indexes(&main).map_err(werr)?;
                    std::mem::replace(
                        &mut main,
                        Connection::open_in_memory().map_err(|e| werr(e.into()))?,
                    )
                } else if let Some(ws) = name.strip_prefix("have:") {
                    state.have.insert(ws.to_string(), position);
                    let conn = open_db(
                        &have::file_of(&staging.join(HAVE_DIR), ws),
                        config.cache_kib,
                        true,
                    )
                    .map_err(werr)?;
                    conn.execute_batch(have::CREATE_TABLES)
                        .map_err(|e| werr(e.into()))?;
                    conn.execute(HAVE_POSITION_SQL, [position as i64])
                        .map_err(|e| werr(e.into()))?;
                    conn
                } else {
                    return Err(damaged(bad(&format!("unknown database '{name}'"))));
                };
                conn.execute_batch("BEGIN").map_err(|e| werr(e.into()))?;
                current = Some((name, conn));
            }
            TAG_TABLE => {
                let Some((_, conn)) = &current else {
                    return Err(damaged(bad("a table before any database")));
                };
                let table = r.string().map_err(damaged)?;
                let ncols = r.varint().map_err(damaged)? as usize;
                let mut columns = Vec::with_capacity(ncols);
                for _ in 0..ncols {
                    columns.push(format!("\"{}\"", r.string().map_err(damaged)?));
                }
                let sql = format!(
                    "INSERT INTO \"{table}\" ({}) VALUES ({})",
                    columns.join(", "),
                    vec!["?"; ncols].join(", ")
                );
                let mut insert = conn.prepare(&sql).map_err(|e| werr(e.into()))?;
                let mut values: Vec<Value> = Vec::with_capacity(ncols);
                let mut count = 0u64;
                loop {
                    match r.byte().map_err(damaged)? {
                        TAG_ROW => {
                            values.clear();
                            for _ in 0..ncols {
                                values.push(read_value(&mut r).map_err(damaged)?);
                            }
                            insert
                                .execute(rusqlite::params_from_iter(values.iter()))
                                .map_err(|e| werr(e.into()))?;
                            count += 1;
                            state.rows += 1;
                            if state.rows.is_multiple_of(batch) {
                                progress(&RestoreProgress {
                                    rows: state.rows,
                                    records: 0,
                                });
                            }
                        }
                        TAG_TABLE_END => {
                            let expected = r.varint().map_err(damaged)?;
                            if expected != count {
                                return Err(damaged(bad(&format!(
                                    "table {table} holds {count} rows, its end says {expected}"
                                ))));
                            }
                            break;
                        }
                        other => {
                            return Err(damaged(bad(&format!(
                                "unexpected item {other} in a table"
                            ))));
                        }
                    }
                }
            }
            TAG_END => {
                if let Some((name, conn)) = current.take() {
                    close_loaded(&name, conn, &mut main, &indexes).map_err(werr)?;
                }
                let rows = r.varint().map_err(damaged)?;
                let databases = r.varint().map_err(damaged)?;
                if rows != state.rows || databases != state.databases {
                    return Err(damaged(bad("its totals do not match its rows")));
                }
                break;
            }
            other => return Err(damaged(bad(&format!("unexpected item {other}")))),
        }
    }
    // The replay applies each record in a transaction that a conflict rolls back.
    main.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| werr(e.into()))?;
    state.main = main;
    progress(&RestoreProgress {
        rows: state.rows,
        records: 0,
    });
    Ok(state)
}

/// Commits a loaded database; the main one gets its indexes back and returns to `main` for
/// the replay.
fn close_loaded(
    name: &str,
    conn: Connection,
    main: &mut Connection,
    indexes: &[String],
) -> Result<(), StoreError> {
    if name == "main" {
        for sql in indexes {
            conn.execute_batch(sql)?;
        }
    }
    conn.execute_batch("COMMIT")?;
    if name == "main" {
        *main = conn;
    }
    Ok(())
}

/// Drops the secondary indexes of a database; returns the statements that recreate them.
fn drop_indexes(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL")?;
    let found = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut sqls = Vec::with_capacity(found.len());
    for (name, sql) in found {
        conn.execute_batch(&format!("DROP INDEX \"{name}\""))?;
        sqls.push(sql);
    }
    Ok(sqls)
}

fn table_names(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )?;
    let names = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(names)
}

fn read_value<R: Read>(r: &mut ItemReader<R>) -> std::io::Result<Value> {
    Ok(match r.byte()? {
        VALUE_NULL => Value::Null,
        VALUE_INTEGER => Value::Integer(r.signed()?),
        VALUE_REAL => Value::Real(r.f64()?),
        VALUE_TEXT => Value::Text(r.string()?),
        VALUE_BLOB => Value::Blob(r.bytes()?),
        other => return Err(bad(&format!("unknown value tag {other}"))),
    })
}

/// Applies every journal's records past the databases' positions, in order.
fn replay(
    journals: &[PathBuf],
    state: &mut State,
    staging: &Path,
    report: &mut RestoreReport,
    progress: &mut dyn FnMut(&RestoreProgress),
) -> Result<(), RestoreError> {
    let have_dir = staging.join(HAVE_DIR);
    let werr = |source: StoreError| RestoreError::Write {
        path: staging.into(),
        source,
    };
    for path in journals {
        let mut file = JournalFile::open(path)?;
        let first = file.header().first_position;
        state.number = state.number.max(file.header().number);
        if first > state.covered + 1 {
            return Err(RestoreError::Missing {
                path: path.clone(),
                first,
                covered: state.covered,
            });
        }
        while let Some(record) = file.next_record()? {
            let applied = match &record.target {
                Target::Main => state.main_position,
                Target::Have(ws) | Target::DropHave(ws) => {
                    state.have.get(ws.as_str()).copied().unwrap_or(0)
                }
            };
            if record.void || record.position <= applied {
                report.skipped += 1;
                continue;
            }
            let changeset = record.changeset(path)?;
            let conflict = |database: String| {
                let path = path.clone();
                let position = record.position;
                move |e: ApplyError| match e {
                    ApplyError::Conflict { table, kind } => RestoreError::Conflict {
                        path,
                        position,
                        database,
                        table,
                        kind,
                    },
                    ApplyError::Database(e) => RestoreError::Write {
                        path,
                        source: e.into(),
                    },
                }
            };
            match &record.target {
                Target::Main => {
                    if record.schema > schema_version(&state.main).map_err(werr)? {
                        migrate_to(&mut state.main, record.schema).map_err(werr)?;
                    }
                    apply_one(&state.main, &changeset, record.position, MAIN_POSITION_SQL)
                        .map_err(conflict("main".into()))?;
                    state.main_position = record.position;
                }
                Target::Have(ws) => {
                    let conn = open_db(&have::file_of(&have_dir, ws), state.cache_kib, false)
                        .map_err(werr)?;
                    conn.execute_batch(have::CREATE_TABLES)
                        .map_err(|e| werr(e.into()))?;
                    apply_one(&conn, &changeset, record.position, HAVE_POSITION_SQL)
                        .map_err(conflict(format!("have:{ws}")))?;
                    state.have.insert(ws.clone(), record.position);
                }
                Target::DropHave(ws) => {
                    have::remove_files(&have_dir, ws).map_err(werr)?;
                    state.have.insert(ws.clone(), record.position);
                }
            }
            report.replayed += 1;
            progress(&RestoreProgress {
                rows: state.rows,
                records: report.replayed,
            });
        }
        if let Some(torn) = file.torn_tail() {
            report.torn.push((path.clone(), torn.reason.clone()));
        }
        state.covered = state.covered.max(file.next_position() - 1);
    }
    Ok(())
}
