//! Recording have-list changes as files land: one UpdateHave call carrying batches of at most
//! `TransferConfig::have_batch` entries, each sent once it is full or `TransferConfig::have_flush_after` after its first
//! entry, whichever comes first.
//!
//! A whole-view sync's mark (`SyncSummary.mark`) goes last, in a batch of its own, once every
//! file of that sync is recorded.
//!
//! The server records each batch as it arrives, so a sync that is cut off (the server killed,
//! the connection dropped) leaves a have list at most one batch interval behind the files it
//! placed, never ahead: an entry is pushed only after its file is in place.

use keel_proto::v1::{HaveBatch, HaveEntry, SyncMark, UpdateHaveReply};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use crate::connect::Connection;
use crate::error::{Error, Result};

type Call = JoinHandle<std::result::Result<tonic::Response<UpdateHaveReply>, tonic::Status>>;

/// Sends have entries over one UpdateHave call, opened with the first entry.
pub struct HaveUpdater {
    conn: Connection,
    call: Option<Open>,
}

/// The open call: its entry queue, the queue for the mark that follows the entries, and the
/// call itself.
struct Open {
    entries: mpsc::Sender<HaveEntry>,
    mark: mpsc::Sender<SyncMark>,
    call: Call,
}

impl HaveUpdater {
    pub fn new(conn: &Connection) -> HaveUpdater {
        HaveUpdater {
            conn: conn.clone(),
            call: None,
        }
    }

    /// Records that the workspace now has `depot_file#rev` (rev 0: no longer has it). Waits
    /// while a batch's worth of entries is queued and not yet taken by the call.
    pub async fn push(&mut self, depot_file: &str, rev: u32) -> Result<()> {
        let open = self.open();
        let entry = HaveEntry {
            depot_file: depot_file.to_string(),
            rev,
        };
        if open.entries.send(entry).await.is_err() {
            // The call ended early; its status explains why.
            let open = self.call.take().expect("the call was just looked at");
            return Err(self.finish_call(open.call).await.err().unwrap_or_else(|| {
                Error::Protocol("UpdateHave ended before all entries were sent".into())
            }));
        }
        Ok(())
    }

    /// The call, opened when first needed: batches of entries, then at most one batch
    /// carrying the sync's mark.
    fn open(&mut self) -> &mut Open {
        self.call.get_or_insert_with(|| {
            let tuning = self.conn.tuning();
            let (tx, rx) = mpsc::channel(tuning.have_batch);
            let (mark_tx, mark_rx) = mpsc::channel(1);
            let caller = self.conn.caller();
            let mark_caller = caller.clone();
            let batches = ReceiverStream::new(rx)
                .chunks_timeout(tuning.have_batch, tuning.have_flush_after)
                .map(move |entries| HaveBatch {
                    caller: caller.clone(),
                    entries,
                    mark: None,
                })
                .chain(ReceiverStream::new(mark_rx).map(move |mark| HaveBatch {
                    caller: mark_caller.clone(),
                    entries: Vec::new(),
                    mark: Some(mark),
                }));
            let mut client = self.conn.client();
            let call = tokio::spawn(async move { client.update_have(batches).await });
            Open {
                entries: tx,
                mark: mark_tx,
                call,
            }
        })
    }

    async fn finish_call(&self, task: Call) -> Result<u64> {
        let reply = task
            .await
            .map_err(|e| Error::Protocol(format!("UpdateHave task failed: {e}")))?
            .map_err(|s| self.conn.status(s))?;
        Ok(reply.into_inner().updated)
    }

    /// Sends what is left and waits for the server to record everything.
    pub async fn finish(self) -> Result<u64> {
        self.finish_marked(None).await
    }

    /// Sends what is left, then the sync's mark when given (every file of that sync is
    /// recorded: the server may mark the have list as synced), and waits for the server.
    pub async fn finish_marked(mut self, mark: Option<SyncMark>) -> Result<u64> {
        if mark.is_some() {
            self.open();
        }
        match self.call.take() {
            None => Ok(0),
            Some(open) => {
                // Closing the entry queue sends the last, partial batch at once; the mark
                // follows it.
                drop(open.entries);
                if let Some(mark) = mark {
                    // A call that already ended reports why below.
                    let _ = open.mark.send(mark).await;
                }
                drop(open.mark);
                self.finish_call(open.call).await
            }
        }
    }
}
