//! The follower: a thread of its own that streams the primary's journal from the replica's
//! next position, fetches the content each main-database record names before applying it
//! (unless content is on demand), applies the record atomically, deletes content the primary
//! purged, and connects again after any failure.

use super::content::{FetchError, fetch_pending};
use super::{ContentMode, Credentials, ReplicaStatus};
use keel_blob::BlobStore;
use keel_core::Digest;
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use keel_store::{MetaStore, SqliteStore};
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::Channel;

/// Content the primary did not have when a record named it, with how many times the replica
/// was idle since.
type Missing = std::collections::BTreeMap<Digest, u8>;

/// Why following stopped (the follower logs it, shows it in `keel info`, and tries again).
#[derive(Debug, thiserror::Error)]
enum FollowError {
    #[error("{primary} is not a usable address: {source}")]
    Address {
        primary: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("cannot reach the primary {primary}: {source}")]
    Connect {
        primary: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("{0}; the user running the replica must trust it (`keel trust -s {primary}`)", primary = .0.primary())]
    Refused(RefusedPrimary),
    #[error(transparent)]
    Trust(#[from] keel_tls::TrustFileError),
    #[error("the primary {primary} answered: {}", .status.message())]
    Primary {
        primary: String,
        status: tonic::Status,
    },
    #[error("the primary ended the journal stream")]
    Ended,
    #[error("content {digest}: {source}")]
    Content {
        digest: String,
        #[source]
        source: FetchError,
    },
    #[error(transparent)]
    Apply(#[from] keel_store::ReplicaApplyError),
    #[error(transparent)]
    Store(#[from] keel_store::StoreError),
    #[error(transparent)]
    Blob(#[from] keel_blob::BlobError),
}

/// A TLS primary the follower would not talk to (untrusted, changed fingerprint, wrong
/// protocol).
#[derive(Debug)]
struct RefusedPrimary(keel_tls::ConnectError);

impl RefusedPrimary {
    fn primary(&self) -> String {
        match &self.0 {
            keel_tls::ConnectError::SpeaksTls { addr } => addr.clone(),
            keel_tls::ConnectError::Untrusted { addr, .. }
            | keel_tls::ConnectError::Changed { addr, .. }
            | keel_tls::ConnectError::SpeaksPlain { addr } => format!("ssl:{addr}"),
        }
    }
}

impl std::fmt::Display for RefusedPrimary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What the follower works with.
pub(crate) struct Follower {
    pub(crate) primary: String,
    pub(crate) meta: Arc<SqliteStore>,
    pub(crate) blobs: Arc<dyn BlobStore>,
    /// Whether content is fetched before each record applies, or left to clients' requests.
    pub(crate) content: ContentMode,
    /// Stored bytes of fetched blobs published together (one flush).
    pub(crate) publish_batch_bytes: u64,
    /// Blobs of one record fetched at once.
    pub(crate) fetch_parallel: usize,
    pub(crate) status: Arc<ReplicaStatus>,
    pub(crate) retry: Duration,
    pub(crate) max_message_bytes: usize,
    /// Who the follower calls the primary as.
    pub(crate) credentials: Credentials,
    /// The trust file holding an `ssl:` primary's fingerprint.
    pub(crate) trust_file: Option<std::path::PathBuf>,
    /// Bumped after each main-database record applied: wakes `watch` subscriptions.
    pub(crate) applied: std::sync::Arc<tokio::sync::watch::Sender<crate::api_watch::Committed>>,
}

/// Starts following on a thread of its own (with its own single-threaded runtime, so applying
/// and writing content block nothing but the follower).
pub(crate) fn start_follower(follower: Follower) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("keel-replica".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    tracing::error!(error = %e, "replica: cannot start the follower's runtime");
                    return;
                }
            };
            runtime.block_on(follower.run());
        })
        .map(|_| ())
}

impl Follower {
    async fn run(self) {
        let mut missing = Missing::new();
        loop {
            let outcome = self.follow_once(&mut missing).await;
            let why = match outcome {
                Ok(()) => FollowError::Ended.to_string(),
                Err(e) => e.to_string(),
            };
            tracing::warn!(primary = %self.primary, error = %why, "replica: not following");
            self.status.lost(why);
            tokio::time::sleep(self.retry).await;
        }
    }

    fn primary_error(&self, status: tonic::Status) -> FollowError {
        FollowError::Primary {
            primary: self.primary.clone(),
            status,
        }
    }

    async fn follow_once(&self, missing: &mut Missing) -> Result<(), FollowError> {
        let dialer = super::dialer(
            &self.primary,
            self.trust_file.as_deref(),
            self.retry.max(Duration::from_secs(1)),
        )?;
        let endpoint = dialer.endpoint().map_err(|source| FollowError::Address {
            primary: self.primary.clone(),
            source,
        })?;
        let channel = dialer.connect(endpoint).await.map_err(|e| match e {
            keel_tls::DialError::Refused(why) => FollowError::Refused(RefusedPrimary(why)),
            keel_tls::DialError::Transport(source) => FollowError::Connect {
                primary: self.primary.clone(),
                source,
            },
        })?;
        let mut client = KeelClient::new(channel)
            .max_decoding_message_size(self.max_message_bytes)
            .max_encoding_message_size(self.max_message_bytes);
        let from = self.status.next_position();
        let mut stream = client
            .journal(self.credentials.request(pb::JournalRequest {
                caller: Some(self.credentials.caller()),
                from_position: from,
            }))
            .await
            .map_err(|s| self.primary_error(s))?
            .into_inner();
        self.status.connected();
        tracing::info!(primary = %self.primary, from, "replica: following the primary's journal");
        // The newest have-list record passed over and not yet recorded as passed.
        let mut passed = None;
        while let Some(message) = stream.message().await.map_err(|s| self.primary_error(s))? {
            self.status.heard(message.committed_position);
            let Some(record) = message.record else {
                // Idle: the replica holds everything the primary had committed.
                if let Some(position) = passed.take() {
                    self.meta.mark_replicated(position)?;
                }
                self.check_missing(missing)?;
                continue;
            };
            let position = record.position;
            // Have lists of the primary's workspaces are not the replica's: it keeps its own.
            if record.kind == 1 {
                self.apply_main(&client, position, record, missing).await?;
                passed = None;
            } else {
                passed = Some(position);
            }
            self.status.applied(position);
        }
        Ok(())
    }

    /// Applies one main-database record: its content first (with all content), then the
    /// record; then deletes the content the record says the primary purged, when nothing on
    /// the replica refers to it.
    async fn apply_main(
        &self,
        client: &KeelClient<Channel>,
        position: u64,
        record: pb::JournalRecord,
        missing: &mut Missing,
    ) -> Result<(), FollowError> {
        if self.content == ContentMode::All {
            self.fetch_record_content(client, position, &record.changeset, missing)
                .await?;
        }
        let purged = self.meta.unqueued_purges(&record.changeset)?;
        let schema = u16::try_from(record.schema).unwrap_or(u16::MAX);
        self.meta
            .apply_replicated(position, schema, record.changeset)?;
        // Which paths the record touched is not known here: every subscription reads.
        self.applied.send_modify(|c| c.bump(None));
        if !purged.is_empty() {
            let snap = self.meta.snapshot()?;
            for digest in purged {
                missing.remove(&digest);
                if !snap.digest_in_use(&digest)? {
                    self.blobs.delete(&digest)?;
                }
            }
        }
        Ok(())
    }

    /// Fetches the content a main-database record names that the replica lacks, up to
    /// `fetch_parallel` blobs at once, and publishes it in batches (one flush per batch, not
    /// per blob).
    async fn fetch_record_content(
        &self,
        client: &KeelClient<Channel>,
        position: u64,
        changeset: &[u8],
        missing: &mut Missing,
    ) -> Result<(), FollowError> {
        let mut wanted = Vec::new();
        for digest in self.meta.content_digests(changeset)? {
            if !self.blobs.contains(&digest)? {
                wanted.push(digest);
            }
        }
        let mut wanted = wanted.into_iter();
        let mut running = tokio::task::JoinSet::new();
        let (mut batch, mut batch_bytes) = (Vec::new(), 0u64);
        loop {
            while running.len() < self.fetch_parallel.max(1) {
                let Some(digest) = wanted.next() else { break };
                let (mut client, blobs) = (client.clone(), self.blobs.clone());
                let credentials = self.credentials.clone();
                running.spawn(async move {
                    let fetched =
                        fetch_pending(&mut client, &credentials, blobs.as_ref(), digest).await;
                    (digest, fetched)
                });
            }
            let Some(done) = running.join_next().await else {
                break;
            };
            let (digest, fetched) = done.map_err(|e| FollowError::Content {
                digest: "(a fetch task)".into(),
                source: FetchError::Content {
                    digest: String::new(),
                    reason: e.to_string(),
                },
            })?;
            match fetched {
                Ok((pending, _)) => {
                    batch_bytes += pending.info.stored_size;
                    batch.push(pending);
                    if batch_bytes >= self.publish_batch_bytes {
                        self.blobs.publish(std::mem::take(&mut batch))?;
                        batch_bytes = 0;
                    }
                }
                // The primary purges a blob only after committing the record that removed
                // its last reference (an obliterate), so that record follows this one in the
                // journal: apply this one without the content. Until then reading the file
                // says its content is missing, as it would once the record is applied.
                Err(e) if e.not_on_primary() => {
                    tracing::info!(
                        position,
                        digest = %digest.to_hex(),
                        "replica: content purged on the primary, applying without it"
                    );
                    missing.insert(digest, 0);
                }
                Err(source) => {
                    return Err(FollowError::Content {
                        digest: digest.to_hex(),
                        source,
                    });
                }
            }
        }
        self.blobs.publish(batch)?;
        Ok(())
    }

    /// Content the primary did not have when a record named it: once the replica has been
    /// idle twice since (so it has applied every record the primary committed before the
    /// fetch failed), content that nothing refers to any more was purged as expected; content
    /// still referred to was lost on the primary, which is reported.
    fn check_missing(&self, missing: &mut Missing) -> Result<(), FollowError> {
        if missing.is_empty() {
            return Ok(());
        }
        let snap = self.meta.snapshot()?;
        let mut lost = Vec::new();
        for (digest, idle) in missing.iter_mut() {
            if !snap.digest_in_use(digest)? {
                *idle = u8::MAX;
            } else {
                *idle += 1;
                if *idle >= 2 {
                    lost.push(*digest);
                    *idle = u8::MAX;
                }
            }
        }
        missing.retain(|_, idle| *idle != u8::MAX);
        for digest in lost {
            let why = format!(
                "content {} that revisions refer to is missing on the primary {} too: run \
                 keel verify there",
                digest.to_hex(),
                self.primary
            );
            tracing::error!(error = %why, "replica: content lost on the primary");
            self.status.problem(why);
        }
        Ok(())
    }
}
