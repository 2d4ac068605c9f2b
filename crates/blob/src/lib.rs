//! Keel's content store: immutable, content-addressed (BLAKE3), zstd-compressed blobs.
//!
//! A blob is written once through a [`BlobWriter`], which hashes and compresses as it streams.
//! Small blobs are appended to pack files (`pack/`), a batch per write and per sync; large ones
//! land in a temporary file, are synced and renamed into place. Readers get the *stored* bytes
//! and their [`Encoding`]; decompression and verification happen at the consumer (the client,
//! or the service when it needs text for a diff).

mod check;
mod config;
mod error;
mod flush;
mod fs_store;
mod inspect;
mod migrate;
mod pack;
mod writer;

pub use check::{CheckedContent, ContentCheck, check_content, recompute};
pub use config::BlobConfig;
pub use error::BlobError;
pub use fs_store::{FsBlobStore, StoredAt};
pub use inspect::{BlobUsage, stored_blobs, usage};
pub use pack::PACK_RECORD_HEADER_BYTES;
pub use writer::{BlobWriter, CompressionPolicy, PendingBlob};

use keel_core::Digest;
use std::io::Read;

/// How a blob's bytes are stored on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The content as it is (used when compression would not make it smaller).
    Raw,
    /// One zstd frame of the content.
    Zstd,
}

/// What the store knows about one blob after it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobInfo {
    pub digest: Digest,
    /// Size of the content (uncompressed).
    pub size: u64,
    /// MD5 of the content, lowercase hex (Perforce clients check it).
    pub md5: String,
    /// Size of the stored bytes.
    pub stored_size: u64,
    pub encoding: Encoding,
}

/// A stored blob opened for reading: its stored bytes, as they are on disk.
pub struct StoredBlob {
    pub encoding: Encoding,
    pub stored_size: u64,
    pub reader: Box<dyn Read + Send>,
}

impl StoredBlob {
    /// Wraps the stored bytes in a reader that yields the original content.
    pub fn into_content_reader(self) -> Result<Box<dyn Read + Send>, BlobError> {
        match self.encoding {
            Encoding::Raw => Ok(self.reader),
            Encoding::Zstd => {
                let decoder = zstd::stream::read::Decoder::new(self.reader).map_err(|source| {
                    BlobError::Io {
                        path: "<zstd decoder>".into(),
                        source,
                    }
                })?;
                Ok(Box::new(decoder))
            }
        }
    }

    /// Reads the whole content into memory (`size` is its length, a capacity hint): a zstd
    /// blob is read whole and decompressed in one call with a decompression context kept per
    /// thread, so a run of small files does not set up a streaming decoder (and its buffers)
    /// for each one. For content small enough to hold whole; [`Self::into_content_reader`]
    /// streams anything larger.
    pub fn read_content(mut self, size: u64) -> Result<Vec<u8>, BlobError> {
        let io = |source: std::io::Error| BlobError::Io {
            path: "<blob content>".into(),
            source,
        };
        match self.encoding {
            Encoding::Raw => {
                let mut data = Vec::with_capacity(size as usize);
                self.reader.read_to_end(&mut data).map_err(io)?;
                Ok(data)
            }
            Encoding::Zstd => {
                let mut stored = Vec::with_capacity(self.stored_size as usize);
                self.reader.read_to_end(&mut stored).map_err(io)?;
                DECOMPRESSOR.with(|cell| {
                    let mut slot = cell.borrow_mut();
                    let d = match slot.as_mut() {
                        Some(d) => d,
                        None => slot.insert(zstd::bulk::Decompressor::new().map_err(io)?),
                    };
                    d.decompress(&stored, size as usize).map_err(io)
                })
            }
        }
    }
}

thread_local! {
    /// The zstd context [`StoredBlob::read_content`] reuses on this thread.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// The content store contract.
///
/// - Writing is two steps: [`BlobWriter::finish`] leaves the content in memory (small) or a
///   temporary file (large); [`BlobStore::publish`] makes a batch of them durable and visible
///   under their digests.
/// - A stored blob is complete: its bytes were durable before `publish` returned, and what a
///   crash leaves of an unfinished write is never found under a digest, so after any crash a
///   digest is either wholly present or absent.
/// - When `publish` returns, every blob in the batch is durable and visible.
/// - A digest names exactly one content; publishing existing content again is a cheap no-op.
/// - Stored blobs are never modified; only `delete` (for obliterate) removes them.
pub trait BlobStore: Send + Sync {
    /// Starts writing a new blob.
    fn writer(&self) -> Result<BlobWriter, BlobError>;
    /// Makes finished blobs durable and visible under their digests (one flush per batch).
    fn publish(&self, pending: Vec<PendingBlob>) -> Result<(), BlobError>;
    /// Opens a blob's stored bytes, or `None` when the store has no such blob.
    fn open(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError>;
    /// Whether the store holds the blob.
    fn contains(&self, digest: &Digest) -> Result<bool, BlobError>;
    /// Opens a blob only when this store already holds it: a store that fetches content on
    /// demand does not fetch it (`verify` checks what is held). Others: [`BlobStore::open`].
    fn open_held(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError> {
        self.open(digest)
    }
    /// Whether content this store lacks is fetched from elsewhere when first opened (a
    /// replica with on-demand content), so a blob not held is not yet fetched, not lost.
    fn fetches_on_demand(&self) -> bool {
        false
    }
    /// Removes a blob; returns the stored bytes reclaimed (0 when it was absent).
    fn delete(&self, digest: &Digest) -> Result<u64, BlobError>;
}
