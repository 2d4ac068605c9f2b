//! The single writer thread: groups queued jobs into one transaction, one savepoint per job.
//! With a journal, each group's changes (an SQLite session's changeset) become one journal
//! record, on disk before the group's COMMIT; the record's position is stored in the same
//! transaction (`counters.journal_position`).

use super::checkpoint::Nudge;
use super::queries::Tx;
use super::session::Session;
use crate::journal::{Journal, format::Target};
use crate::{DatabaseError, StoreError, WriteJob, failpoints};
use rusqlite::Connection;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Mutex, PoisonError};

type Reply = SyncSender<Result<(), StoreError>>;

/// A job that runs alone on the writer's connection and manages its own transaction (a
/// replica applying a primary's journal record).
pub(crate) type RawJob = Box<dyn FnOnce(&Connection) -> Result<(), StoreError> + Send>;

enum Job {
    /// Grouped with the other queued write jobs, one savepoint each.
    Txn(WriteJob),
    Raw(RawJob),
}

pub(crate) struct Writer {
    queue: Mutex<Option<SyncSender<(Job, Reply)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Bumped each time a job's transaction has ended (see `MetaStore::commit_epoch`).
    epoch: std::sync::atomic::AtomicU64,
}

impl Writer {
    /// Starts the writer thread; after each commit it nudges the checkpoint thread.
    pub(crate) fn start(
        conn: Connection,
        max_group: usize,
        checkpoint: Nudge,
        journal: Option<JournalSink>,
    ) -> Result<Writer, StoreError> {
        let (tx, rx) = sync_channel::<(Job, Reply)>(max_group.max(1) * 4);
        let thread = std::thread::Builder::new()
            .name("keel-store-writer".into())
            .spawn(move || writer_loop(conn, rx, max_group.max(1), checkpoint, journal))
            .map_err(|source| StoreError::Thread {
                name: "writer",
                source,
            })?;
        Ok(Writer {
            queue: Mutex::new(Some(tx)),
            thread: Some(thread),
            epoch: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Queues a job and waits until its group transaction has committed.
    pub(crate) fn run(&self, job: WriteJob) -> Result<(), StoreError> {
        self.send(Job::Txn(job))
    }

    /// Runs a job alone on the writer's connection and returns its result.
    pub(crate) fn run_raw(&self, job: RawJob) -> Result<(), StoreError> {
        self.send(Job::Raw(job))
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        let queue = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let queue = queue.ok_or(StoreError::WriterGone)?;
        let (reply_tx, reply_rx) = sync_channel(1);
        queue
            .send((job, reply_tx))
            .map_err(|_| StoreError::WriterGone)?;
        let result = reply_rx.recv().map_err(|_| StoreError::WriterGone);
        // After the job's transaction ended, committed or not: whatever it changed is visible
        // to snapshots taken from now on.
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        result?
    }

    /// See `MetaStore::commit_epoch`.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where the writer journals its groups.
pub(crate) struct JournalSink {
    pub(crate) journal: Arc<Journal>,
    /// The database's schema version, recorded with each changeset.
    pub(crate) schema: u16,
}

fn writer_loop(
    conn: Connection,
    rx: Receiver<(Job, Reply)>,
    max_group: usize,
    checkpoint: Nudge,
    journal: Option<JournalSink>,
) {
    // A raw job met while gathering a group runs after that group.
    let mut carried: Option<(RawJob, Reply)> = None;
    loop {
        let first = match carried.take() {
            Some(raw) => {
                run_raw(&conn, raw, &checkpoint);
                continue;
            }
            None => match rx.recv() {
                Ok(first) => first,
                Err(_) => return,
            },
        };
        let mut group = match first {
            (Job::Raw(job), reply) => {
                run_raw(&conn, (job, reply), &checkpoint);
                continue;
            }
            (Job::Txn(job), reply) => vec![(job, reply)],
        };
        while group.len() < max_group {
            match rx.try_recv() {
                Ok((Job::Txn(job), reply)) => group.push((job, reply)),
                Ok((Job::Raw(job), reply)) => {
                    carried = Some((job, reply));
                    break;
                }
                Err(_) => break,
            }
        }
        let outcome = run_group(&conn, &mut group, journal.as_ref());
        if outcome.is_ok() {
            checkpoint.nudge();
        }
        for (_, reply) in group {
            let result = match &outcome {
                Ok(()) => Ok(()),
                Err(e) => Err(StoreError::Commit(DatabaseError::copy_of(e))),
            };
            let _ = reply.send(result);
        }
    }
}

fn run_raw(conn: &Connection, (job, reply): (RawJob, Reply), checkpoint: &Nudge) {
    let result = catch_unwind(AssertUnwindSafe(|| job(conn))).unwrap_or(Err(StoreError::JobLost));
    if !conn.is_autocommit() {
        // A job that failed or panicked inside its transaction leaves nothing behind.
        let _ = conn.execute_batch("ROLLBACK");
    }
    if result.is_ok() {
        checkpoint.nudge();
    }
    let _ = reply.send(result);
}

fn run_group(
    conn: &Connection,
    group: &mut [(WriteJob, Reply)],
    journal: Option<&JournalSink>,
) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        // Records every table's changes from here on (a job rolled back to its savepoint
        // leaves nothing: the changeset compares each touched row with its state at the end).
        let mut session = match journal {
            Some(_) => {
                let mut session = Session::new(conn)?;
                session.attach(None)?;
                Some(session)
            }
            None => None,
        };
        for (job, _) in group.iter_mut() {
            let job = std::mem::replace(job, Box::new(|_| false));
            conn.execute_batch("SAVEPOINT job")?;
            let mut tx = Tx { conn };
            let keep = catch_unwind(AssertUnwindSafe(|| job(&mut tx))).unwrap_or(false);
            if keep {
                tx.count_job()?;
            } else {
                conn.execute_batch("ROLLBACK TO job")?;
            }
            conn.execute_batch("RELEASE job")?;
        }
        let ticket = match (journal, session.take()) {
            (Some(sink), Some(session)) => journal_group(conn, sink, session)?,
            _ => None,
        };
        if let Some(ticket) = ticket {
            failpoints::hit(failpoints::JOURNAL_BEFORE_COMMIT);
            let journal = &journal.expect("a ticket comes from the journal").journal;
            if let Err(e) = conn.execute_batch("COMMIT") {
                // The record is on disk but its commit did not happen: readers must skip it.
                if let Err(void) = journal.void(ticket) {
                    tracing::error!(error = %void, "journal record of a failed commit not voided");
                }
                return Err(e.into());
            }
            journal.settle(ticket);
        } else {
            conn.execute_batch("COMMIT")?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// Appends the group's changeset (when it changed anything) to the journal and stores the
/// record's position in the transaction.
fn journal_group(
    conn: &Connection,
    sink: &JournalSink,
    mut session: Session<'_>,
) -> Result<Option<crate::journal::Ticket>, StoreError> {
    let began = std::time::Instant::now();
    let mut body = sink.journal.body_writer();
    session.changeset_to(&mut body)?;
    // The position row below is not part of the changeset: a restore sets it itself.
    drop(session);
    let Some(body) = body.finish()? else {
        return Ok(None);
    };
    let captured = began.elapsed();
    let ticket = sink.journal.append(&Target::Main, sink.schema, &body)?;
    tracing::debug!(
        position = ticket.position,
        raw = body.raw_len,
        stored = body.bytes.len(),
        changeset_us = captured.as_micros() as u64,
        append_us = (began.elapsed() - captured).as_micros() as u64,
        "journal record"
    );
    let stored = conn
        .prepare_cached("INSERT OR REPLACE INTO counters VALUES ('journal_position', ?1)")
        .and_then(|mut stmt| stmt.execute([ticket.position as i64]));
    if let Err(e) = stored {
        if let Err(void) = sink.journal.void(ticket) {
            tracing::error!(error = %void, "journal record of a failed commit not voided");
        }
        return Err(e.into());
    }
    Ok(Some(ticket))
}
