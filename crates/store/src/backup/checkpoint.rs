//! Writing a checkpoint: rotate the journal, then dump every table of the metadata database
//! and every have list from read snapshots, while writers go on.
//!
//! The rotation waits only until every record appended so far is committed (a moment), so
//! each database's snapshot, taken after it, has applied every record of the closed journal
//! file; records a snapshot already holds that landed in the new file are skipped by a
//! restore, which compares positions per database. The file is written under a temporary
//! name, synced and renamed: a crash or a full disk leaves no file that looks complete.

use super::format::*;
use super::paced::PacedFile;
use crate::journal::{Journal, JournalError, sync_dir};
use crate::sqlite::{journal_position, schema_version};
use crate::{SqliteStore, StoreConfig, StoreError, have};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The directory of the checkpoint files under a root.
pub const CHECKPOINT_DIR: &str = "checkpoints";

/// How far a checkpoint has got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub rows: u64,
    /// Bytes written to the file so far.
    pub bytes: u64,
    /// The database being dumped ("main" or "have:WORKSPACE").
    pub database: String,
}

/// What a finished checkpoint holds.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointReport {
    pub path: PathBuf,
    /// N of `checkpoint.N`; with a journal, records after it start in `journal.N`.
    pub number: u64,
    pub databases: u64,
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// The journal file the rotation closed, when journaling.
    pub journal_closed: Option<PathBuf>,
    /// Every record up to this position is in the closed file or earlier ones.
    pub journal_position: u64,
    /// BLAKE3 of the file before its trailer, hex.
    pub digest: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot write checkpoint {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("checkpoint {path}: cannot read {database}: {source}")]
    Read {
        path: PathBuf,
        database: String,
        #[source]
        source: StoreError,
    },
    #[error("checkpoint: cannot rotate the journal: {0}")]
    Journal(#[source] JournalError),
}

/// Writes `ROOT/checkpoints/checkpoint.N` for the stores of a root.
pub fn write_checkpoint(
    meta: &SqliteStore,
    have_dir: &Path,
    journal: Option<&Journal>,
    root: &Path,
    config: &StoreConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<CheckpointReport, CheckpointError> {
    let started = Instant::now();
    let dir = root.join(CHECKPOINT_DIR);
    std::fs::create_dir_all(&dir).map_err(|source| CheckpointError::Write {
        path: dir.clone(),
        source,
    })?;
    let (number, closed, last_position) = match journal {
        Some(journal) => {
            let rotation = journal.rotate().map_err(CheckpointError::Journal)?;
            (
                rotation.number,
                Some(rotation.closed),
                rotation.last_position,
            )
        }
        None => (next_number(&dir)?, None, 0),
    };
    let path = dir.join(format!("checkpoint.{number}"));
    let tmp = dir.join(format!("checkpoint.{number}.tmp"));
    let result = write_file(
        meta,
        have_dir,
        &tmp,
        &path,
        number,
        (closed.as_deref(), last_position),
        config,
        progress,
    );
    let (databases, rows, bytes, digest) = match result {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let renamed = std::fs::rename(&tmp, &path).and_then(|()| sync_dir(&dir));
    if let Err(source) = renamed {
        let _ = std::fs::remove_file(&tmp);
        return Err(CheckpointError::Write { path, source });
    }
    Ok(CheckpointReport {
        path,
        number,
        databases,
        rows,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        journal_closed: closed,
        journal_position: last_position,
        digest,
    })
}

/// One more than the newest `checkpoint.N` in `dir` (1 when there is none).
fn next_number(dir: &Path) -> Result<u64, CheckpointError> {
    let io = |source| CheckpointError::Write {
        path: dir.into(),
        source,
    };
    let mut newest = 0;
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let name = entry
            .map_err(io)?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if let Some(n) = name
            .strip_prefix("checkpoint.")
            .and_then(|n| n.parse::<u64>().ok())
        {
            newest = newest.max(n);
        }
    }
    Ok(newest + 1)
}

#[allow(clippy::too_many_arguments)]
fn write_file(
    meta: &SqliteStore,
    have_dir: &Path,
    tmp: &Path,
    path: &Path,
    number: u64,
    (closed, last_position): (Option<&Path>, u64),
    config: &StoreConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(u64, u64, u64, String), CheckpointError> {
    let werr = |source| CheckpointError::Write {
        path: path.into(),
        source,
    };
    let file = File::create(tmp).map_err(werr)?;
    let mut out = HashingWriter {
        inner: BufWriter::with_capacity(
            1 << 20,
            PacedFile::new(file, config.checkpoint_writeback_bytes),
        ),
        hasher: blake3::Hasher::new(),
        written: 0,
    };
    out.write_all(MAGIC).map_err(werr)?;
    out.write_all(&FORMAT_VERSION.to_le_bytes()).map_err(werr)?;
    let mut dump = Dump {
        encoder: zstd::stream::Encoder::new(&mut out, config.checkpoint_zstd_level)
            .map_err(werr)?,
        buf: Vec::with_capacity(1 << 16),
        rows: 0,
        batch: config.checkpoint_batch_rows.max(1) as u64,
    };
    let snapshot = meta
        .raw_snapshot()
        .map_err(|source| CheckpointError::Read {
            path: path.into(),
            database: "main".into(),
            source,
        })?;
    let main = snapshot.conn();
    let rerr = |database: &str| {
        let database = database.to_string();
        move |source| CheckpointError::Read {
            path: path.into(),
            database,
            source,
        }
    };
    let schema = schema_version(main).map_err(rerr("main"))?;
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let info = serde_json::json!({
        "format": FORMAT_VERSION,
        "number": number,
        "schema": schema,
        "created": created,
        "journal_closed": closed.and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()),
        "journal_position": last_position,
    });
    dump.buf.push(TAG_INFO);
    put_bytes(&mut dump.buf, info.to_string().as_bytes());

    let mut report = |dump: &Dump<'_>, database: &str| {
        progress(&Progress {
            rows: dump.rows,
            bytes: dump.written(),
            database: database.into(),
        })
    };
    let position = journal_position(main).map_err(rerr("main"))?;
    dump.database("main", schema, position).map_err(werr)?;
    for table in tables(main).map_err(rerr("main"))? {
        dump.table(main, &table, &mut |d| report(d, "main"))
            .map_err(|e| e.into_checkpoint(path, "main"))?;
    }
    drop(snapshot);
    let mut databases = 1;
    let workspaces = list_have(have_dir).map_err(werr)?;
    for ws in workspaces {
        let database = format!("have:{ws}");
        let opened = open_have(have_dir, &ws, config.busy_timeout_ms);
        let Some(conn) = opened.map_err(rerr(&database))? else {
            continue;
        };
        conn.execute_batch("BEGIN")
            .map_err(|e| rerr(&database)(e.into()))?;
        let position = read_have_position(&conn).map_err(rerr(&database))?;
        dump.database(&database, 1, position).map_err(werr)?;
        dump.table(&conn, "have", &mut |d| report(d, &database))
            .map_err(|e| e.into_checkpoint(path, &database))?;
        databases += 1;
    }
    dump.buf.push(TAG_END);
    put_varint(&mut dump.buf, dump.rows);
    put_varint(&mut dump.buf, databases);
    dump.flush().map_err(werr)?;
    let Dump { encoder, rows, .. } = dump;
    encoder.finish().map_err(werr)?;
    let digest = out.hasher.finalize();
    let mut file = out
        .inner
        .into_inner()
        .map_err(|e| werr(e.into_error()))?
        .into_inner();
    file.write_all(TRAILER_MAGIC).map_err(werr)?;
    file.write_all(digest.as_bytes()).map_err(werr)?;
    file.sync_all().map_err(werr)?;
    let bytes = out.written + TRAILER_LEN;
    progress(&Progress {
        rows,
        bytes,
        database: String::new(),
    });
    Ok((databases, rows, bytes, digest.to_hex().to_string()))
}

type Out = HashingWriter<BufWriter<PacedFile>>;

/// The tables of a database, in name order.
fn tables(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )?;
    let names = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(names)
}

/// Workspaces with a have-list file, in name order.
fn list_have(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let name = entry?.file_name().to_string_lossy().into_owned();
                if let Some(ws) = name.strip_suffix(".db") {
                    names.push(ws.to_string());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    names.sort();
    Ok(names)
}

/// A read connection to a have list (`None` when it was deleted meanwhile).
fn open_have(dir: &Path, ws: &str, busy_timeout_ms: u32) -> Result<Option<Connection>, StoreError> {
    let path = have::file_of(dir, ws);
    if !path.exists() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    // A have list from before the journal lacks its position table: creating it waits for
    // the list's writer like any other write.
    conn.pragma_update(None, "busy_timeout", busy_timeout_ms)?;
    conn.execute_batch(have::CREATE_TABLES)?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(Some(conn))
}

fn read_have_position(conn: &Connection) -> Result<u64, StoreError> {
    use rusqlite::OptionalExtension;
    let position: Option<i64> = conn
        .query_row(
            "SELECT position FROM journal_position WHERE id = 0",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(position.unwrap_or(0) as u64)
}

enum DumpError {
    Read(StoreError),
    Write(std::io::Error),
}

impl DumpError {
    fn into_checkpoint(self, path: &Path, database: &str) -> CheckpointError {
        match self {
            DumpError::Read(source) => CheckpointError::Read {
                path: path.into(),
                database: database.into(),
                source,
            },
            DumpError::Write(source) => CheckpointError::Write {
                path: path.into(),
                source,
            },
        }
    }
}

/// The compressed body being written: items collect in `buf` and go to the encoder in
/// blocks of about 64 KiB.
struct Dump<'w> {
    encoder: zstd::stream::Encoder<'static, &'w mut Out>,
    buf: Vec<u8>,
    rows: u64,
    batch: u64,
}

impl Dump<'_> {
    /// Bytes written to the file so far.
    fn written(&self) -> u64 {
        self.encoder.get_ref().written
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.encoder.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn database(&mut self, name: &str, schema: u16, position: u64) -> std::io::Result<()> {
        self.buf.push(TAG_DATABASE);
        put_bytes(&mut self.buf, name.as_bytes());
        put_varint(&mut self.buf, u64::from(schema));
        put_varint(&mut self.buf, position);
        Ok(())
    }

    /// Streams every row of `table` (one query, one row in memory at a time).
    fn table(
        &mut self,
        conn: &Connection,
        table: &str,
        tick: &mut dyn FnMut(&Self),
    ) -> Result<(), DumpError> {
        let read = |e: rusqlite::Error| DumpError::Read(e.into());
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .map_err(read)?;
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        self.buf.push(TAG_TABLE);
        put_bytes(&mut self.buf, table.as_bytes());
        put_varint(&mut self.buf, columns.len() as u64);
        for c in &columns {
            put_bytes(&mut self.buf, c.as_bytes());
        }
        let mut rows = stmt.query([]).map_err(read)?;
        let mut count = 0u64;
        while let Some(row) = rows.next().map_err(read)? {
            self.buf.push(TAG_ROW);
            for i in 0..columns.len() {
                match row.get_ref(i).map_err(read)? {
                    ValueRef::Null => self.buf.push(VALUE_NULL),
                    ValueRef::Integer(v) => {
                        self.buf.push(VALUE_INTEGER);
                        put_signed(&mut self.buf, v);
                    }
                    ValueRef::Real(v) => {
                        self.buf.push(VALUE_REAL);
                        self.buf.extend_from_slice(&v.to_le_bytes());
                    }
                    ValueRef::Text(t) => {
                        self.buf.push(VALUE_TEXT);
                        put_bytes(&mut self.buf, t);
                    }
                    ValueRef::Blob(b) => {
                        self.buf.push(VALUE_BLOB);
                        put_bytes(&mut self.buf, b);
                    }
                }
            }
            count += 1;
            self.rows += 1;
            if self.buf.len() >= 1 << 16 {
                self.flush().map_err(DumpError::Write)?;
            }
            if self.rows.is_multiple_of(self.batch) {
                tick(self);
            }
        }
        self.buf.push(TAG_TABLE_END);
        put_varint(&mut self.buf, count);
        Ok(())
    }
}
