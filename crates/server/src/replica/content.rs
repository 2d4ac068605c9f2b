//! Fetching one blob from the primary (`Content`): its stored bytes are decoded as they
//! stream in, the digest is recomputed by the blob writer, and only matching content is
//! published into the replica's content store. The follower (which publishes a record's
//! blobs in batches, one flush each) and on-demand content share it.

use super::Credentials;
use keel_blob::{BlobStore, PendingBlob};
use keel_core::Digest;
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use std::io::Write;
use tonic::transport::Channel;

/// Why a blob was not fetched.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// The primary refused or failed the call (NOT_FOUND: it does not hold the blob).
    #[error("{}", refusal(.0))]
    Primary(tonic::Status),
    #[error("content {digest} from the primary: {reason}")]
    Content { digest: String, reason: String },
    #[error(transparent)]
    Blob(#[from] keel_blob::BlobError),
}

impl FetchError {
    /// The primary does not hold the blob (an obliterate purged it, or it was lost there).
    pub(crate) fn not_on_primary(&self) -> bool {
        matches!(self, FetchError::Primary(s) if s.code() == tonic::Code::NotFound)
    }
}

/// What a failed call to the primary means for the replica, with the primary's own words (and,
/// when it could not be reached, the transport's cause).
fn refusal(status: &tonic::Status) -> String {
    use tonic::Code;
    // Transport failures carry their cause as the status's source, not in its message.
    let said = match std::error::Error::source(status) {
        Some(cause) => format!("{}: {}", status.message(), keel_core::error_chain(cause)),
        None => status.message().to_string(),
    };
    match status.code() {
        Code::NotFound => {
            format!("it does not hold that content (obliterated or lost there): {said}")
        }
        Code::Unavailable => format!("it cannot be reached: {said}"),
        Code::Unauthenticated => format!("it refused the replica's login: {said}"),
        Code::PermissionDenied => format!("it refused the replica's user: {said}"),
        code => format!("it answered {code:?}: {said}"),
    }
}

/// Fetches `digest` from the primary (calling as `credentials`) and publishes it into
/// `blobs`; returns the stored bytes the primary sent.
pub(crate) async fn fetch_content(
    client: &mut KeelClient<Channel>,
    credentials: &Credentials,
    blobs: &dyn BlobStore,
    digest: Digest,
) -> Result<u64, FetchError> {
    let (pending, received) = fetch_pending(client, credentials, blobs, digest).await?;
    blobs.publish(vec![pending])?;
    Ok(received)
}

/// Fetches `digest` from the primary into a finished, checked blob not yet published (so a
/// batch of them can be published with one flush); returns it and the stored bytes sent.
pub(crate) async fn fetch_pending(
    client: &mut KeelClient<Channel>,
    credentials: &Credentials,
    blobs: &dyn BlobStore,
    digest: Digest,
) -> Result<(PendingBlob, u64), FetchError> {
    use pb::content_message::Body;
    let hex = digest.to_hex();
    let bad = |reason: String| FetchError::Content {
        digest: hex.clone(),
        reason,
    };
    let mut stream = client
        .content(credentials.request(pb::ContentRequest {
            caller: Some(credentials.caller()),
            digest: hex.clone(),
            ..pb::ContentRequest::default()
        }))
        .await
        .map_err(FetchError::Primary)?
        .into_inner();
    let mut sink: Option<ContentSink> = None;
    let mut received = 0u64;
    while let Some(message) = stream.message().await.map_err(FetchError::Primary)? {
        match message.body {
            Some(Body::Header(header)) => {
                let writer = BlobSink(blobs.writer()?);
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
                received += bytes.len() as u64;
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
    Ok((pending, received))
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
