//! The single writer thread: groups queued jobs into one transaction, one savepoint per job.
//! With a journal, each group's changes (an SQLite session's changeset) become one journal
//! record, on disk before the group's COMMIT; the record's position is stored in the same
//! transaction (`counters.journal_position`).

use super::bulk_journal::BulkJournal;
use super::checkpoint::Nudge;
use super::queries::Tx;
use super::session::Session;
use super::writer_stats::{WriterCounters, WriterStats};
use crate::journal::{Journal, format::Target};
use crate::{DatabaseError, StoreError, WriteJob, failpoints};
use rusqlite::Connection;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::command::{CommandCounters, CommandState};

type Reply = SyncSender<Result<(), StoreError>>;

/// The command a write job works for (see [`crate::command`]) and when it was queued.
struct Origin {
    counters: Option<Arc<CommandCounters>>,
    queued: Instant,
}

/// A job that runs alone on the writer's connection and manages its own transaction (a
/// replica applying a primary's journal record).
pub(crate) type RawJob = Box<dyn FnOnce(&Connection) -> Result<(), StoreError> + Send>;

enum Job {
    /// Grouped with the other queued write jobs, one savepoint each.
    Txn(WriteJob, Origin),
    Raw(RawJob),
}

pub(crate) struct Writer {
    queue: Mutex<Option<SyncSender<(Job, Reply)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    counters: Arc<WriterCounters>,
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
            counters: Arc::default(),
            epoch: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Queues a job and waits until its group transaction has committed.
    pub(crate) fn run(&self, job: WriteJob) -> Result<(), StoreError> {
        let counters = crate::command::current();
        if let Some(c) = &counters {
            c.set_state(CommandState::WriterQueued);
        }
        let origin = Origin {
            counters: counters.clone(),
            queued: Instant::now(),
        };
        let result = self.send(Job::Txn(job, origin));
        if let Some(c) = &counters {
            c.set_state(CommandState::Running);
        }
        result
    }

    /// Runs a job alone on the writer's connection and returns its result.
    pub(crate) fn run_raw(&self, job: RawJob) -> Result<(), StoreError> {
        self.send(Job::Raw(job))
    }

    /// The queue's and the transactions' counters so far.
    pub(crate) fn stats(&self) -> WriterStats {
        self.counters.snapshot()
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        let queue = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let queue = queue.ok_or(StoreError::WriterGone)?;
        let (reply_tx, reply_rx) = sync_channel(1);
        // The job marks its own start, so the wait and the hold are told apart here.
        let (at, mark) = self.counters.queue();
        let (counters, started) = (self.counters.clone(), mark.clone());
        let job = match job {
            Job::Txn(job, origin) => Job::Txn(
                Box::new(move |tx| {
                    counters.start(at, &started);
                    job(tx)
                }),
                origin,
            ),
            Job::Raw(job) => Job::Raw(Box::new(move |conn| {
                counters.start(at, &started);
                job(conn)
            })),
        };
        let sent = queue.send((job, reply_tx));
        let reply = match sent {
            Ok(()) => reply_rx.recv().map_err(|_| StoreError::WriterGone),
            Err(_) => Err(StoreError::WriterGone),
        };
        self.counters.done(at, &mark);
        // After the job's transaction ended, committed or not: whatever it changed is visible
        // to snapshots taken from now on.
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        reply?
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
            (Job::Txn(job, origin), reply) => vec![(job, origin, reply)],
        };
        while group.len() < max_group {
            match rx.try_recv() {
                Ok((Job::Txn(job, origin), reply)) => group.push((job, origin, reply)),
                Ok((Job::Raw(job), reply)) => {
                    carried = Some((job, reply));
                    break;
                }
                Err(_) => break,
            }
        }
        let began = Instant::now();
        let mut terminated = vec![false; group.len()];
        let outcome = run_group(&conn, &mut group, &mut terminated, journal.as_ref());
        if outcome.is_ok() {
            checkpoint.nudge();
        }
        let held = began.elapsed();
        for ((_, origin, reply), terminated) in group.into_iter().zip(terminated) {
            if let Some(c) = &origin.counters {
                c.add_writer(began.saturating_duration_since(origin.queued), held);
            }
            let result = match &outcome {
                Ok(()) if terminated => Err(StoreError::Terminated),
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

/// Runs a group in one transaction; a job whose command was terminated by the time it ran is
/// rolled back and marked in `terminated`.
fn run_group(
    conn: &Connection,
    group: &mut [(WriteJob, Origin, Reply)],
    terminated: &mut [bool],
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
        // The group's journal record: the records kept jobs journaled themselves (see
        // `bulk_journal`), in job order, then the session's changeset.
        let mut body = journal.map(|sink| sink.journal.body_writer());
        for ((job, origin, _), terminated) in group.iter_mut().zip(terminated.iter_mut()) {
            let job = std::mem::replace(job, Box::new(|_| false));
            if let Some(c) = &origin.counters {
                c.set_state(CommandState::Writing);
            }
            conn.execute_batch("SAVEPOINT job")?;
            let changes = conn.total_changes();
            // Only the first job of the group to change anything may journal rows itself.
            let bulk = match (session.as_ref(), body.as_mut()) {
                (Some(session), Some(body)) if session.is_empty() && body.is_empty() => {
                    Some(BulkJournal::new(session, body))
                }
                _ => None,
            };
            let mut tx = Tx { conn, bulk };
            let keep = catch_unwind(AssertUnwindSafe(|| job(&mut tx))).unwrap_or(false);
            if conn.is_autocommit() {
                // The database gave up the group's transaction over the job's error: its
                // savepoint, and every earlier job's work, are gone.
                return Err(StoreError::GroupRolledBack);
            }
            let journaled = tx.bulk.take().is_some_and(|b| b.wrote());
            // The last moment a terminated command can still be abandoned with nothing kept.
            *terminated = origin.counters.as_ref().is_some_and(|c| c.is_cancelled());
            if keep && !*terminated {
                if let Some(c) = &origin.counters {
                    c.add_rows_written(conn.total_changes().saturating_sub(changes));
                }
                tx.count_job()?;
            } else {
                conn.execute_batch("ROLLBACK TO job")?;
                if journaled {
                    // The body held only this job's records.
                    body = journal.map(|sink| sink.journal.body_writer());
                }
            }
            conn.execute_batch("RELEASE job")?;
        }
        let ticket = match (journal, session.take(), body) {
            (Some(sink), Some(session), Some(body)) => journal_group(conn, sink, session, body)?,
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

/// Appends the group's changeset (when it changed anything) to the journal, after the records
/// already in `body`, and stores the record's position in the transaction.
fn journal_group(
    conn: &Connection,
    sink: &JournalSink,
    mut session: Session<'_>,
    mut body: crate::journal::BodyWriter,
) -> Result<Option<crate::journal::Ticket>, StoreError> {
    let began = std::time::Instant::now();
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
