//! On-demand content for a replica (`--content on-demand`): a content store decorator that,
//! the first time a client needs a blob the replica does not hold (sync, print, diff2, a
//! proxy's `Content`, ...), fetches it from the primary, verifies its digest, stores it and
//! serves it. Concurrent requests for one blob share one fetch. `verify` sees only what is
//! held (`open_held`) and reports the rest as not fetched yet.

use super::Credentials;
use super::content::fetch_content;
use keel_blob::{BlobError, BlobStore, BlobWriter, PendingBlob, StoredBlob};
use keel_core::Digest;
use keel_proto::v1::keel_client::KeelClient;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use tonic::transport::Channel;

/// One fetch's outcome, shared by every request that waited for it: the blob is held now, or
/// why fetching it failed (the primary's refusal, or that it does not hold the blob either).
type Fetched = Arc<OnceLock<Result<(), String>>>;

/// The replica's content store, fetching what it lacks from the primary.
pub(crate) struct OnDemandBlobs {
    local: Arc<dyn BlobStore>,
    primary: String,
    /// The fetching runtime (its own threads; requests wait on it from any thread).
    runtime: tokio::runtime::Handle,
    client: KeelClient<Channel>,
    /// Who the fetches call the primary as (the follower's service user and ticket).
    credentials: Credentials,
    /// Blobs being fetched now.
    inflight: Mutex<HashMap<Digest, Fetched>>,
    /// Dropped with the store: the runtime's thread then ends and takes the runtime down.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl OnDemandBlobs {
    /// Wraps `local`, fetching through `dialer` (the primary's address, plain or TLS) as
    /// `credentials` on `threads` threads of a runtime of its own.
    pub(crate) fn start(
        local: Arc<dyn BlobStore>,
        dialer: &keel_tls::Dialer,
        endpoint: tonic::transport::Endpoint,
        credentials: Credentials,
        threads: usize,
        max_message_bytes: usize,
    ) -> std::io::Result<OnDemandBlobs> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("keel-fetch")
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("keel-fetch-runtime".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        // The channel's worker task lives on the fetching runtime; it connects when first used
        // and again after the primary went away.
        let channel = {
            let _entered = handle.enter();
            dialer.connect_lazy(endpoint)
        };
        let client = KeelClient::new(channel)
            .max_decoding_message_size(max_message_bytes)
            .max_encoding_message_size(max_message_bytes);
        Ok(OnDemandBlobs {
            local,
            primary: dialer.addr().to_string(),
            credentials,
            runtime: handle,
            client,
            inflight: Mutex::new(HashMap::new()),
            _stop: stop,
        })
    }

    /// Makes sure the local store holds `digest`, or says why the primary did not send it. One
    /// fetch per blob at a time; the others wait for it.
    fn fetch(&self, digest: &Digest) -> Result<(), BlobError> {
        let cell: Fetched = self
            .inflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(*digest)
            .or_default()
            .clone();
        let outcome = cell
            .get_or_init(|| match self.local.contains(digest) {
                // A fetch that just finished published it.
                Ok(true) => Ok(()),
                Ok(false) => self.fetch_now(*digest),
                Err(e) => Err(e.to_string()),
            })
            .clone();
        {
            let mut inflight = self.inflight.lock().unwrap_or_else(PoisonError::into_inner);
            if inflight.get(digest).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                inflight.remove(digest);
            }
        }
        outcome.map_err(|reason| BlobError::Unavailable {
            digest: digest.to_hex(),
            from: self.primary.clone(),
            reason,
        })
    }

    /// Runs one fetch on the fetching runtime and waits for it.
    fn fetch_now(&self, digest: Digest) -> Result<(), String> {
        let (done, outcome) = std::sync::mpsc::sync_channel(1);
        let (mut client, local) = (self.client.clone(), self.local.clone());
        let credentials = self.credentials.clone();
        self.runtime.spawn(async move {
            let fetched = fetch_content(&mut client, &credentials, local.as_ref(), digest).await;
            let _ = done.send(fetched);
        });
        match outcome.recv() {
            Ok(Ok(bytes)) => {
                tracing::debug!(digest = %digest.to_hex(), bytes, "replica: fetched content on demand");
                Ok(())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the fetching runtime stopped".into()),
        }
    }
}

impl BlobStore for OnDemandBlobs {
    fn writer(&self) -> Result<BlobWriter, BlobError> {
        self.local.writer()
    }

    fn publish(&self, pending: Vec<PendingBlob>) -> Result<(), BlobError> {
        self.local.publish(pending)
    }

    fn open(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError> {
        if let Some(blob) = self.local.open(digest)? {
            return Ok(Some(blob));
        }
        self.fetch(digest)?;
        self.local.open(digest)
    }

    fn contains(&self, digest: &Digest) -> Result<bool, BlobError> {
        self.local.contains(digest)
    }

    fn delete(&self, digest: &Digest) -> Result<u64, BlobError> {
        self.local.delete(digest)
    }

    fn open_held(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError> {
        self.local.open(digest)
    }

    fn fetches_on_demand(&self) -> bool {
        true
    }
}
