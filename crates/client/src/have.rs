//! Recording have-list changes: streams UpdateHave batches of at most 1000 entries.

use keel_proto::v1::{HaveBatch, HaveEntry, UpdateHaveReply};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;

use crate::connect::Connection;
use crate::error::{Error, Result};

/// Maximum entries per UpdateHave batch.
pub const HAVE_BATCH: usize = 1000;

type Call = JoinHandle<std::result::Result<tonic::Response<UpdateHaveReply>, tonic::Status>>;

/// Collects have entries and sends them in batches over one UpdateHave call, opened lazily.
pub struct HaveUpdater {
    conn: Connection,
    batch: Vec<HaveEntry>,
    call: Option<(mpsc::Sender<HaveBatch>, Call)>,
}

impl HaveUpdater {
    pub fn new(conn: &Connection) -> HaveUpdater {
        HaveUpdater {
            conn: conn.clone(),
            batch: Vec::new(),
            call: None,
        }
    }

    /// Records that the workspace now has `depot_file#rev` (rev 0: no longer has it).
    pub async fn push(&mut self, depot_file: &str, rev: u32) -> Result<()> {
        self.batch.push(HaveEntry {
            depot_file: depot_file.to_string(),
            rev,
        });
        if self.batch.len() >= HAVE_BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let (tx, _) = self.call.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel(4);
            let mut client = self.conn.client();
            let task =
                tokio::spawn(async move { client.update_have(ReceiverStream::new(rx)).await });
            (tx, task)
        });
        let batch = HaveBatch {
            caller: self.conn.caller(),
            entries: std::mem::take(&mut self.batch),
        };
        if tx.send(batch).await.is_err() {
            // The call ended early; its status explains why.
            let (_, task) = self.call.take().expect("call was just created");
            return Err(self.finish_call(task).await.err().unwrap_or_else(|| {
                Error::Protocol("UpdateHave ended before all batches were sent".into())
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
        self.flush().await?;
        match self.call.take() {
            None => Ok(0),
            Some((tx, task)) => {
                drop(tx);
                self.finish_call(task).await
            }
        }
    }
}
