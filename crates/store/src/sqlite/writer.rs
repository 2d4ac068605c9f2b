//! The single writer thread: groups queued jobs into one transaction, one savepoint per job.

use super::checkpoint::Nudge;
use super::queries::Tx;
use crate::{DatabaseError, StoreError, WriteJob};
use rusqlite::Connection;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Mutex, PoisonError};

type Reply = SyncSender<Result<(), StoreError>>;

pub(crate) struct Writer {
    queue: Mutex<Option<SyncSender<(WriteJob, Reply)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Starts the writer thread; after each commit it nudges the checkpoint thread.
    pub(crate) fn start(
        conn: Connection,
        max_group: usize,
        checkpoint: Nudge,
    ) -> Result<Writer, StoreError> {
        let (tx, rx) = sync_channel::<(WriteJob, Reply)>(max_group.max(1) * 4);
        let thread = std::thread::Builder::new()
            .name("keel-store-writer".into())
            .spawn(move || writer_loop(conn, rx, max_group.max(1), checkpoint))
            .map_err(|source| StoreError::Thread {
                name: "writer",
                source,
            })?;
        Ok(Writer {
            queue: Mutex::new(Some(tx)),
            thread: Some(thread),
        })
    }

    /// Queues a job and waits until its group transaction has committed.
    pub(crate) fn run(&self, job: WriteJob) -> Result<(), StoreError> {
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
        reply_rx.recv().map_err(|_| StoreError::WriterGone)?
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

fn writer_loop(
    conn: Connection,
    rx: Receiver<(WriteJob, Reply)>,
    max_group: usize,
    checkpoint: Nudge,
) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < max_group {
            match rx.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let outcome = run_group(&conn, &mut group);
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

fn run_group(conn: &Connection, group: &mut [(WriteJob, Reply)]) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
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
        conn.execute_batch("COMMIT")?;
        Ok(())
    })();
    if result.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}
