//! `Checkpoint`: an online checkpoint of the root's metadata, written on a thread of its own at
//! lower CPU priority while its progress streams back.

use crate::streams::Sink;
use keel_proto::v1 as pb;
use keel_store::backup::{CheckpointError, CheckpointReport, Progress, write_checkpoint};
use keel_store::journal::Journal;
use keel_store::{SqliteStore, StoreConfig};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::channel;

/// What a checkpoint needs of the root's stores.
pub(crate) struct Backup {
    pub(crate) meta: Arc<SqliteStore>,
    pub(crate) have_dir: PathBuf,
    pub(crate) journal: Option<Arc<Journal>>,
    pub(crate) root: PathBuf,
    pub(crate) config: StoreConfig,
}

impl Backup {
    /// Writes a checkpoint, streaming progress and then the report. A client that goes away
    /// does not stop it: a checkpoint is finished or not written at all.
    pub(crate) fn checkpoint(
        self: Arc<Self>,
        sink: &Sink<pb::CheckpointMessage>,
    ) -> Result<(), CheckpointError> {
        let (tx, rx) = channel::<Progress>();
        let backup = self.clone();
        let worker = std::thread::Builder::new()
            .name("keel-checkpoint-dump".into())
            .spawn(move || {
                if let Err(e) = keel_store::thread_priority::lower_current_thread(
                    backup.config.checkpoint_dump_nice,
                ) {
                    tracing::debug!(error = %e, "checkpoint keeps normal priority");
                }
                write_checkpoint(
                    &backup.meta,
                    &backup.have_dir,
                    backup.journal.as_deref(),
                    &backup.root,
                    &backup.config,
                    &mut |p| {
                        let _ = tx.send(p.clone());
                    },
                )
            })
            .map_err(|source| CheckpointError::Write {
                path: self.root.join(keel_store::backup::CHECKPOINT_DIR),
                source,
            })?;
        for p in rx {
            let _ = sink.send(pb::CheckpointMessage {
                body: Some(pb::checkpoint_message::Body::Progress(
                    pb::CheckpointProgress {
                        rows: p.rows,
                        bytes: p.bytes,
                        database: p.database,
                    },
                )),
            });
        }
        let report = worker.join().unwrap_or_else(|_| {
            Err(CheckpointError::Write {
                path: self.root.join(keel_store::backup::CHECKPOINT_DIR),
                source: std::io::Error::other("the checkpoint thread panicked"),
            })
        })?;
        tracing::info!(
            path = %report.path.display(), rows = report.rows, bytes = report.bytes,
            seconds = report.seconds, "checkpoint written"
        );
        let _ = sink.send(pb::CheckpointMessage {
            body: Some(pb::checkpoint_message::Body::Done(done(report))),
        });
        Ok(())
    }
}

fn done(r: CheckpointReport) -> pb::CheckpointDone {
    pb::CheckpointDone {
        path: r.path.display().to_string(),
        number: r.number,
        databases: r.databases,
        rows: r.rows,
        bytes: r.bytes,
        seconds: r.seconds,
        journal_closed: r
            .journal_closed
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        journal_position: r.journal_position,
        digest: r.digest,
    }
}
