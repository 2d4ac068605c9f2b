//! The journal: every committed metadata write, recorded in an append-only file under the root
//! (`journal/journal.N`, N = checkpoints taken so far), in the same durable step as its commit.
//!
//! Writers (the main database's writer thread and each have list's writer) capture their
//! transaction's changes as an SQLite changeset (the session extension), [`Journal::append`]
//! it, which writes the record and waits for an `fsync` that covers it (appends that arrive
//! together share one), and only then COMMIT, storing the record's position in the same
//! transaction. A record whose commit never happened (the process died between the two, or
//! the COMMIT failed) is cut off or marked void, at the next open ([`Journal::open`]) or at
//! once ([`Journal::void`]), so every live record in the journal is a commit that happened.
//! The layout is in `format.rs` and `JOURNAL.md`.

pub(crate) mod apply;
pub mod follow;
pub mod format;
pub mod read;

use format::{Encoding, FILE_HEADER_LEN, FileHeader, NewRecord, STATE_OFFSET, STATE_VOID, Target};
use read::JournalFile;
use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Failures of the journal, each naming the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a usable journal file: {reason}")]
    BadFile { path: PathBuf, reason: String },
    #[error("journal {path} is damaged at byte {offset}: {reason}")]
    Damaged {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("journal {path} has a gap: expected position {expected}, found {found}")]
    Gap {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error(
        "journal {path} ends at position {journal_end} but {database} has applied position \
         {applied}: the journal is missing records"
    )]
    Behind {
        path: PathBuf,
        database: String,
        journal_end: u64,
        applied: u64,
    },
    #[error("the journal stopped accepting records after an earlier failure: {0}")]
    Broken(String),
    #[error("cannot compress a journal record: {0}")]
    Compress(#[source] std::io::Error),
}

/// The name of journal file `number` in `dir`.
pub fn file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("journal.{number}"))
}

/// A record's body, captured before it is appended.
pub struct Body {
    pub encoding: Encoding,
    /// Bytes of the changeset before compression.
    pub raw_len: u64,
    pub bytes: Vec<u8>,
}

/// Streams a changeset into a record body: kept raw while small, zstd-compressed once it
/// passes `compress_min` bytes.
pub struct BodyWriter {
    raw: Vec<u8>,
    encoder: Option<zstd::stream::Encoder<'static, Vec<u8>>>,
    raw_len: u64,
    compress_min: usize,
    level: i32,
}

impl BodyWriter {
    pub fn new(compress_min: usize, level: i32) -> BodyWriter {
        BodyWriter {
            raw: Vec::new(),
            encoder: None,
            raw_len: 0,
            compress_min,
            level,
        }
    }

    /// The finished body; `None` when nothing was written (an empty changeset).
    /// Whether nothing has been written yet.
    pub fn is_empty(&self) -> bool {
        self.raw_len == 0
    }

    pub fn finish(self) -> Result<Option<Body>, JournalError> {
        if self.raw_len == 0 {
            return Ok(None);
        }
        Ok(Some(match self.encoder {
            Some(encoder) => Body {
                encoding: Encoding::Zstd,
                raw_len: self.raw_len,
                bytes: encoder.finish().map_err(JournalError::Compress)?,
            },
            None => Body {
                encoding: Encoding::Raw,
                raw_len: self.raw_len,
                bytes: self.raw,
            },
        }))
    }
}

impl Write for BodyWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.raw_len += buf.len() as u64;
        match &mut self.encoder {
            Some(encoder) => encoder.write_all(buf)?,
            None => {
                self.raw.extend_from_slice(buf);
                if self.raw.len() >= self.compress_min {
                    let mut encoder = zstd::stream::Encoder::new(Vec::new(), self.level)?;
                    encoder.write_all(&self.raw)?;
                    self.raw = Vec::new();
                    self.encoder = Some(encoder);
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An appended record, durable in the journal, whose commit is yet to be reported with
/// [`Journal::settle`] (committed) or [`Journal::void`] (the commit failed).
#[derive(Debug)]
pub struct Ticket {
    pub position: u64,
    path: PathBuf,
    offset: u64,
}

/// The journal files a rotation closed and opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rotation {
    /// The file that now holds no more records.
    pub closed: PathBuf,
    /// Its last position (records up to here are in it or in earlier files).
    pub last_position: u64,
    /// Number of the new file (`journal.N`).
    pub number: u64,
    /// The new file.
    pub opened: PathBuf,
}

/// What opening the journal found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// A torn last record cut off (file, bytes removed, what was wrong).
    pub torn_tail: Option<(PathBuf, u64, String)>,
    /// Records whose commit never happened: (position, database), cut off or marked void.
    pub voided: Vec<(u64, String)>,
    /// Whether they were cut off (they were the file's last records) rather than marked.
    pub cut: bool,
    /// Have lists whose deletion a crash interrupted, deleted now.
    pub dropped: Vec<String>,
}

/// Applied positions of the databases, which decide which journal records really committed.
pub trait AppliedPositions {
    fn main(&self) -> u64;
    /// A have list's applied position (0 when it has none).
    fn have(&self, workspace: &str) -> Result<u64, crate::StoreError>;
    /// Deletes a have list whose journaled deletion a crash interrupted.
    fn drop_have(&self, workspace: &str) -> Result<(), crate::StoreError>;
}

/// The shared appender of one root's journal.
pub struct Journal {
    dir: PathBuf,
    /// zstd level of record bodies (`StoreConfig::journal_zstd_level`).
    pub(crate) level: i32,
    /// Bodies smaller than this stay raw (`StoreConfig::journal_compress_min_bytes`).
    pub(crate) compress_min: usize,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    file: Arc<File>,
    number: u64,
    path: PathBuf,
    /// Where the next record goes.
    end: u64,
    next_position: u64,
    /// Every position up to here is on disk.
    synced: u64,
    syncing: bool,
    rotating: bool,
    /// Appended records whose commit is not yet reported.
    in_flight: BTreeSet<u64>,
    broken: Option<String>,
}

impl Journal {
    /// Opens the journal in `dir` (creating `journal.0` when there is none), cuts a torn tail,
    /// and cuts off or voids every record whose commit never happened according to `applied`.
    pub fn open(
        dir: &Path,
        level: i32,
        compress_min: usize,
        applied: &dyn AppliedPositions,
    ) -> Result<(Journal, Recovery), crate::StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| JournalError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut newest: Option<u64> = None;
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                // A rotation that did not finish: its file never received a record.
                std::fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
            } else if let Some(n) = name
                .strip_prefix("journal.")
                .and_then(|n| n.parse::<u64>().ok())
            {
                newest = Some(newest.map_or(n, |m| m.max(n)));
            }
        }
        let number = match newest {
            Some(n) => n,
            None => {
                create_file(dir, 0, applied.main() + 1)?;
                0
            }
        };
        let path = file_path(dir, number);
        let mut recovery = Recovery::default();
        let mut reader = JournalFile::open(&path)?;
        // The last live record of each database.
        let mut last: HashMap<String, (u64, u64, Target)> = HashMap::new();
        let mut offsets: Vec<(u64, u64)> = Vec::new();
        while let Some(record) = reader.next_record()? {
            offsets.push((record.position, record.offset));
            if !record.void {
                last.insert(
                    record.target.database(),
                    (record.position, record.offset, record.target),
                );
            }
        }
        let mut end = reader.complete_len();
        let next_position = reader.next_position();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        if let Some(torn) = reader.torn_tail() {
            file.set_len(torn.offset).map_err(io(&path))?;
            file.sync_all().map_err(io(&path))?;
            tracing::warn!(
                path = %path.display(), offset = torn.offset, bytes = torn.bytes,
                reason = %torn.reason, "journal: cut off a torn last record"
            );
            recovery.torn_tail = Some((path.clone(), torn.bytes, torn.reason.clone()));
        }
        drop(reader);
        let journal_end = next_position - 1;
        if applied.main() > journal_end {
            return Err(JournalError::Behind {
                path,
                database: "main".into(),
                journal_end,
                applied: applied.main(),
            }
            .into());
        }
        // Records past their database's applied position never committed.
        let mut void: Vec<(u64, u64, String)> = Vec::new();
        for (database, (position, offset, target)) in &last {
            let committed = match target {
                Target::Main => applied.main(),
                Target::Have(ws) => applied.have(ws)?,
                Target::DropHave(ws) => {
                    applied.drop_have(ws)?;
                    recovery.dropped.push(ws.clone());
                    continue;
                }
            };
            if *position > committed {
                void.push((*position, *offset, database.clone()));
            }
        }
        void.sort();
        let mut next_position = next_position;
        if let Some((first, first_offset, _)) = void.first() {
            let tail = offsets.iter().filter(|(p, _)| p >= first).count();
            if tail == void.len() {
                file.set_len(*first_offset).map_err(io(&path))?;
                end = *first_offset;
                next_position = *first;
                recovery.cut = true;
            } else {
                for (_, offset, _) in &void {
                    file.write_all_at(&[STATE_VOID], offset + STATE_OFFSET)
                        .map_err(io(&path))?;
                }
            }
            file.sync_all().map_err(io(&path))?;
            recovery.voided = void.into_iter().map(|(p, _, d)| (p, d)).collect();
            tracing::warn!(
                records = ?recovery.voided, cut = recovery.cut,
                "journal: records whose commit never happened were removed"
            );
        }
        let journal = Journal {
            dir: dir.to_path_buf(),
            level,
            compress_min,
            state: Mutex::new(State {
                file: Arc::new(file),
                number,
                path,
                end,
                next_position,
                synced: next_position - 1,
                syncing: false,
                rotating: false,
                in_flight: BTreeSet::new(),
                broken: None,
            }),
            changed: Condvar::new(),
        };
        Ok((journal, recovery))
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A new body writer with this journal's compression settings.
    pub fn body_writer(&self) -> BodyWriter {
        BodyWriter::new(self.compress_min, self.level)
    }

    /// Writes a record and returns once it is on disk (one `fsync` covers every record
    /// appended meanwhile). The caller commits next, then calls [`Journal::settle`], or
    /// [`Journal::void`] when the commit fails.
    pub fn append(
        &self,
        target: &Target,
        schema: u16,
        body: &Body,
    ) -> Result<Ticket, JournalError> {
        let mut st = self.lock();
        while st.rotating {
            st = self.wait(st);
        }
        if let Some(why) = &st.broken {
            return Err(JournalError::Broken(why.clone()));
        }
        let position = st.next_position;
        let head = NewRecord {
            position,
            target,
            schema,
            encoding: body.encoding,
            raw_len: body.raw_len,
            body: &body.bytes,
        }
        .encode_head();
        let offset = st.end;
        let written = st.file.write_all_at(&head, offset).and_then(|()| {
            st.file
                .write_all_at(&body.bytes, offset + head.len() as u64)
        });
        if let Err(source) = written {
            // Leave no partial record behind for the next one to follow.
            let _ = st.file.set_len(offset);
            return Err(JournalError::Io {
                path: st.path.clone(),
                source,
            });
        }
        st.end = offset + head.len() as u64 + body.bytes.len() as u64;
        st.next_position += 1;
        st.in_flight.insert(position);
        let ticket = Ticket {
            position,
            path: st.path.clone(),
            offset,
        };
        // Group commit: one thread syncs everything written so far; the others wait for it.
        loop {
            if st.synced >= position {
                return Ok(ticket);
            }
            if let Some(why) = &st.broken {
                return Err(JournalError::Broken(why.clone()));
            }
            if st.syncing {
                st = self.wait(st);
                continue;
            }
            st.syncing = true;
            let upto = st.next_position - 1;
            let file = st.file.clone();
            let path = st.path.clone();
            drop(st);
            let result = file.sync_data();
            st = self.lock();
            st.syncing = false;
            match result {
                Ok(()) => st.synced = st.synced.max(upto),
                Err(e) => st.broken = Some(format!("fsync of {} failed: {e}", path.display())),
            }
            self.changed.notify_all();
        }
    }

    /// Reports that the record's commit happened.
    pub fn settle(&self, ticket: Ticket) {
        let mut st = self.lock();
        st.in_flight.remove(&ticket.position);
        self.changed.notify_all();
    }

    /// Marks the record void: its commit failed, so readers must skip it. When even that
    /// fails, the journal stops accepting records (the next open voids it).
    pub fn void(&self, ticket: Ticket) -> Result<(), JournalError> {
        let result = OpenOptions::new()
            .write(true)
            .open(&ticket.path)
            .and_then(|f| {
                f.write_all_at(&[STATE_VOID], ticket.offset + STATE_OFFSET)?;
                f.sync_data()
            });
        let mut st = self.lock();
        st.in_flight.remove(&ticket.position);
        self.changed.notify_all();
        result.map_err(|source| {
            st.broken = Some(format!(
                "cannot mark record {} void in {}: {source}",
                ticket.position,
                ticket.path.display()
            ));
            JournalError::Io {
                path: ticket.path.clone(),
                source,
            }
        })
    }

    /// The newest position every record up to which is committed (or void): what a reader of
    /// the live journal may pass on.
    pub fn committed_position(&self) -> u64 {
        let st = self.lock();
        match st.in_flight.first() {
            Some(first) => first - 1,
            None => st.next_position - 1,
        }
    }

    /// Waits until [`Journal::committed_position`] passes `position` or `timeout` ends (woken
    /// by each commit, not by polling); returns the committed position.
    pub fn wait_committed_beyond(&self, position: u64, timeout: std::time::Duration) -> u64 {
        let deadline = std::time::Instant::now() + timeout;
        let mut st = self.lock();
        loop {
            let committed = match st.in_flight.first() {
                Some(first) => first - 1,
                None => st.next_position - 1,
            };
            let now = std::time::Instant::now();
            if committed > position || now >= deadline {
                return committed;
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The current file's number and path.
    pub fn current(&self) -> (u64, PathBuf) {
        let st = self.lock();
        (st.number, st.path.clone())
    }

    /// Closes the current file and starts `journal.N+1`, once every record appended so far
    /// is committed or void, so the closed file holds no record whose commit is undecided.
    pub fn rotate(&self) -> Result<Rotation, JournalError> {
        let mut st = self.lock();
        while st.rotating {
            st = self.wait(st);
        }
        st.rotating = true;
        while !st.in_flight.is_empty() || st.syncing {
            st = self.wait(st);
        }
        let result = (|| {
            st.file.sync_data().map_err(|source| JournalError::Io {
                path: st.path.clone(),
                source,
            })?;
            let number = st.number + 1;
            let (file, path) = create_file(&self.dir, number, st.next_position)?;
            let rotation = Rotation {
                closed: st.path.clone(),
                last_position: st.next_position - 1,
                number,
                opened: path.clone(),
            };
            st.synced = st.next_position - 1;
            st.file = Arc::new(file);
            st.number = number;
            st.path = path;
            st.end = FILE_HEADER_LEN as u64;
            Ok(rotation)
        })();
        st.rotating = false;
        self.changed.notify_all();
        result
    }
}

/// Creates `journal.NUMBER` holding only its header (written under a temporary name, synced
/// and renamed, so a crash leaves either no file or a whole header).
fn create_file(
    dir: &Path,
    number: u64,
    first_position: u64,
) -> Result<(File, PathBuf), JournalError> {
    let path = file_path(dir, number);
    let tmp = dir.join(format!("journal.{number}.tmp"));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| JournalError::Io { path, source }
    };
    let mut file = File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(
        &FileHeader {
            number,
            first_position,
        }
        .encode(),
    )
    .map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(io(&path))?;
    sync_dir(dir).map_err(io(dir))?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    Ok((file, path))
}

/// Creates `dir` and an empty `journal.NUMBER` in it whose first record will have
/// `first_position` (a restored root's journal continues the positions it restored).
pub(crate) fn create_journal_file(
    dir: &Path,
    number: u64,
    first_position: u64,
) -> Result<PathBuf, JournalError> {
    std::fs::create_dir_all(dir).map_err(|source| JournalError::Io {
        path: dir.into(),
        source,
    })?;
    create_file(dir, number, first_position).map(|(_, path)| path)
}

/// Makes a rename or a new file in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}
