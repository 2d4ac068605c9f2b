//! Recording have-list changes as files land: one UpdateHave call carrying batches of at most
//! `TransferConfig::have_batch` entries, each sent once it is full or `TransferConfig::have_flush_after` after its first
//! entry, whichever comes first.
//!
//! The server records each batch as it arrives, so a sync that is cut off (the server killed,
//! the connection dropped) leaves a have list at most one batch interval behind the files it
//! placed, never ahead: an entry is pushed only after its file is in place.

use keel_proto::v1::{HaveBatch, HaveEntry, UpdateHaveReply};
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
    call: Option<(mpsc::Sender<HaveEntry>, Call)>,
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
        let (tx, _) = self.call.get_or_insert_with(|| {
            let tuning = self.conn.tuning();
            let (tx, rx) = mpsc::channel(tuning.have_batch);
            let caller = self.conn.caller();
            let batches = ReceiverStream::new(rx)
                .chunks_timeout(tuning.have_batch, tuning.have_flush_after)
                .map(move |entries| HaveBatch {
                    caller: caller.clone(),
                    entries,
                });
            let mut client = self.conn.client();
            let task = tokio::spawn(async move { client.update_have(batches).await });
            (tx, task)
        });
        let entry = HaveEntry {
            depot_file: depot_file.to_string(),
            rev,
        };
        if tx.send(entry).await.is_err() {
            // The call ended early; its status explains why.
            let (_, task) = self.call.take().expect("the call was just looked at");
            return Err(self.finish_call(task).await.err().unwrap_or_else(|| {
                Error::Protocol("UpdateHave ended before all entries were sent".into())
            }));
        }
        Ok(())
    }

    async fn finish_call(&self, task: Call) -> Result<u64> {
        let reply = task
            .await
            .map_err(|e| Error::Protocol(format!("UpdateHave task failed: {e}")))?
            .map_err(|s| self.conn.status(s))?;
        Ok(reply.into_inner().updated)
    }

    /// Sends what is left and waits for the server to record everything.
    pub async fn finish(mut self) -> Result<u64> {
        match self.call.take() {
            None => Ok(0),
            Some((tx, task)) => {
                // Closing the queue sends the last, partial batch at once.
                drop(tx);
                self.finish_call(task).await
            }
        }
    }
}
