//! The follower: a thread of its own that streams the primary's journal from the replica's
//! next position, fetches the content each main-database record names before applying it,
//! applies the record atomically, and connects again after any failure.

use super::{REPLICA_USER, ReplicaStatus};
use keel_blob::BlobStore;
use keel_core::Digest;
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use keel_store::SqliteStore;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::Channel;

/// Why following stopped (the follower logs it, shows it in `keel info`, and tries again).
#[derive(Debug, thiserror::Error)]
enum FollowError {
    #[error("the ticket of service user {user} is not ASCII text; log in again")]
    Ticket { user: String },
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
    #[error("content {digest} from the primary: {reason}")]
    Content { digest: String, reason: String },
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
    pub(crate) status: Arc<ReplicaStatus>,
    pub(crate) retry: Duration,
    pub(crate) max_message_bytes: usize,
    /// Who the follower calls the primary as.
    pub(crate) login: Option<super::ServiceLogin>,
    /// The trust file holding an `ssl:` primary's fingerprint.
    pub(crate) trust_file: Option<std::path::PathBuf>,
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
        loop {
            let outcome = self.follow_once().await;
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

    async fn follow_once(&self) -> Result<(), FollowError> {
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
            .journal(self.request(pb::JournalRequest {
                caller: Some(self.caller()),
                from_position: from,
            })?)
            .await
            .map_err(|s| self.primary_error(s))?
            .into_inner();
        self.status.connected();
        tracing::info!(primary = %self.primary, from, "replica: following the primary's journal");
        while let Some(message) = stream.message().await.map_err(|s| self.primary_error(s))? {
            self.status.heard(message.committed_position);
            let Some(record) = message.record else {
                continue;
            };
            // Have lists of the primary's workspaces are not the replica's: it keeps its own.
            if record.kind == 1 {
                let digests = self.meta.content_digests(&record.changeset)?;
                for digest in digests {
                    if !self.blobs.contains(&digest)? {
                        self.fetch(&mut client, digest).await?;
                    }
                }
                let schema = u16::try_from(record.schema).unwrap_or(u16::MAX);
                self.meta
                    .apply_replicated(record.position, schema, record.changeset)?;
            }
            self.status.applied(record.position);
        }
        Ok(())
    }

    /// Fetches one blob from the primary and publishes it into the replica's content store
    /// (its digest recomputed on the way: content that does not match is refused).
    async fn fetch(
        &self,
        client: &mut KeelClient<Channel>,
        digest: Digest,
    ) -> Result<(), FollowError> {
        use pb::content_message::Body;
        let hex = digest.to_hex();
        let bad = |reason: String| FollowError::Content {
            digest: hex.clone(),
            reason,
        };
        let mut stream = client
            .content(self.request(pb::ContentRequest {
                caller: Some(self.caller()),
                digest: hex.clone(),
            })?)
            .await
            .map_err(|s| self.primary_error(s))?
            .into_inner();
        let mut sink: Option<ContentSink> = None;
        while let Some(message) = stream.message().await.map_err(|s| self.primary_error(s))? {
            match message.body {
                Some(Body::Header(header)) => {
                    let writer = BlobSink(self.blobs.writer()?);
                    sink = Some(if header.compressed {
                        ContentSink::Zstd(
                            zstd::stream::write::Decoder::new(writer)
                                .map_err(|e| bad(e.to_string()))?,
                        )
                    } else {
                        ContentSink::Raw(writer)
                    });
                }
                Some(Body::Chunk(bytes)) => {
                    let sink = sink.as_mut().ok_or_else(|| bad("no header first".into()))?;
                    sink.write_all(&bytes).map_err(|e| bad(e.to_string()))?;
                }
                Some(Body::File(_)) | None => {}
            }
        }
        let writer = match sink.ok_or_else(|| bad("no content sent".into()))? {
            ContentSink::Raw(writer) => writer,
            ContentSink::Zstd(mut decoder) => {
                decoder.flush().map_err(|e| bad(e.to_string()))?;
                decoder.into_inner()
            }
        };
        let pending = writer.0.finish()?;
        if pending.info.digest != digest {
            return Err(bad(format!(
                "the bytes sent have digest {}",
                pending.info.digest.to_hex()
            )));
        }
        self.blobs.publish(vec![pending])?;
        Ok(())
    }
}

impl Follower {
    /// The identity the follower calls the primary with: its service user, if it has one.
    fn caller(&self) -> pb::Caller {
        pb::Caller {
            user: self
                .login
                .as_ref()
                .map_or(REPLICA_USER, |l| l.user.as_str())
                .to_string(),
            workspace: String::new(),
            host: String::new(),
        }
    }

    /// A request to the primary carrying the service user's ticket.
    fn request<T>(&self, message: T) -> Result<tonic::Request<T>, FollowError> {
        let mut req = tonic::Request::new(message);
        if let Some(login) = &self.login {
            let ticket = login.ticket.parse().map_err(|_| FollowError::Ticket {
                user: login.user.clone(),
            })?;
            req.metadata_mut()
                .insert(crate::identity::TICKET_METADATA, ticket);
        }
        Ok(req)
    }
}

/// A blob writer as an `io::Write`, for the zstd decoder to write content into.
struct BlobSink(keel_blob::BlobWriter);

impl Write for BlobSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum ContentSink {
    Raw(BlobSink),
    Zstd(zstd::stream::write::Decoder<'static, BlobSink>),
}

impl Write for ContentSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            ContentSink::Raw(w) => w.write(buf),
            ContentSink::Zstd(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            ContentSink::Raw(w) => w.flush(),
            ContentSink::Zstd(w) => w.flush(),
        }
    }
}
