//! Streaming blob writer: hashes (BLAKE3 + MD5), compresses and lands content atomically.

use crate::{BlobError, BlobInfo, Encoding};
use keel_core::Digest;
use md5::{Digest as _, Md5};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tempfile::{NamedTempFile, TempPath};

/// Tuning of the compress-or-not decision.
#[derive(Clone, Copy, Debug)]
pub struct CompressionPolicy {
    /// zstd level.
    pub level: i32,
    /// Bytes buffered before deciding whether a large blob compresses.
    pub sample_bytes: usize,
    /// Compress when the sample shrinks to at most this fraction of its size.
    pub max_ratio: f64,
}

impl Default for CompressionPolicy {
    fn default() -> Self {
        CompressionPolicy {
            level: 3,
            sample_bytes: 1 << 20,
            max_ratio: 0.95,
        }
    }
}

enum Sink {
    /// Still buffering the first `sample_bytes` to decide.
    Sampling(Vec<u8>),
    Raw(BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
}

/// Writes one blob. Call [`BlobWriter::write`] with the content in chunks, then
/// [`BlobWriter::finish`], and hand the [`PendingBlob`]s to [`crate::BlobStore::publish`].
/// Dropping an unfinished writer (or an unpublished blob) removes its temporary file.
pub struct BlobWriter {
    temp_dir: PathBuf,
    /// Created only when the content outgrows the in-memory sample.
    temp: Option<NamedTempFile>,
    sink: Option<Sink>,
    blake: blake3::Hasher,
    md5: Md5,
    size: u64,
    policy: CompressionPolicy,
}

impl BlobWriter {
    pub(crate) fn new(temp_dir: &Path, policy: CompressionPolicy) -> Result<Self, BlobError> {
        Ok(BlobWriter {
            temp_dir: temp_dir.to_path_buf(),
            temp: None,
            sink: Some(Sink::Sampling(Vec::new())),
            blake: blake3::Hasher::new(),
            md5: Md5::new(),
            size: 0,
            policy,
        })
    }

    fn temp_path(&self) -> PathBuf {
        self.temp
            .as_ref()
            .map(|t| t.path().to_path_buf())
            .unwrap_or_else(|| self.temp_dir.clone())
    }

    /// Appends content.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), BlobError> {
        self.blake.update(chunk);
        self.md5.update(chunk);
        self.size += chunk.len() as u64;
        let path = self.temp_path();
        let sink = self.sink.take().expect("sink is present until finish");
        let sink = match sink {
            Sink::Sampling(mut buf) => {
                buf.extend_from_slice(chunk);
                if buf.len() >= self.policy.sample_bytes {
                    self.start_streaming(buf)?
                } else {
                    Sink::Sampling(buf)
                }
            }
            Sink::Raw(mut w) => {
                w.write_all(chunk).map_err(|e| BlobError::io(&path, e))?;
                Sink::Raw(w)
            }
            Sink::Zstd(mut w) => {
                w.write_all(chunk).map_err(|e| BlobError::io(&path, e))?;
                Sink::Zstd(w)
            }
        };
        self.sink = Some(sink);
        Ok(())
    }

    /// Decides from the sample whether to compress, and writes the sample out.
    fn start_streaming(&mut self, sample: Vec<u8>) -> Result<Sink, BlobError> {
        let temp =
            NamedTempFile::new_in(&self.temp_dir).map_err(|e| BlobError::io(&self.temp_dir, e))?;
        let path = temp.path().to_path_buf();
        let file = temp.reopen().map_err(|e| BlobError::io(&path, e))?;
        self.temp = Some(temp);
        let out = BufWriter::with_capacity(1 << 20, file);
        let compressed =
            compress_whole(&sample, self.policy.level).map_err(|e| BlobError::io(&path, e))?;
        if (compressed.len() as f64) <= sample.len() as f64 * self.policy.max_ratio {
            let mut enc = zstd::stream::write::Encoder::new(out, self.policy.level)
                .map_err(|e| BlobError::io(&path, e))?;
            enc.write_all(&sample)
                .map_err(|e| BlobError::io(&path, e))?;
            Ok(Sink::Zstd(enc))
        } else {
            let mut out = out;
            out.write_all(&sample)
                .map_err(|e| BlobError::io(&path, e))?;
            Ok(Sink::Raw(out))
        }
    }

    /// Finishes the content: flushes the temp file (not yet durable nor visible).
    pub fn finish(mut self) -> Result<PendingBlob, BlobError> {
        let path = self.temp_path();
        let digest = Digest(*self.blake.finalize().as_bytes());
        let md5 = hex::encode(self.md5.clone().finalize());
        let sink = self.sink.take().expect("sink is present until finish");
        let (encoding, stored) = match sink {
            Sink::Sampling(buf) => {
                // Small blob: compress whole, keep whichever is smaller, and stay in memory
                // until publish (content already stored then costs no file at all).
                let compressed =
                    compress_whole(&buf, self.policy.level).map_err(|e| BlobError::io(&path, e))?;
                if compressed.len() < buf.len() {
                    (Encoding::Zstd, Stored::Bytes(compressed))
                } else {
                    (Encoding::Raw, Stored::Bytes(buf))
                }
            }
            Sink::Raw(w) => {
                let file = w
                    .into_inner()
                    .map_err(|e| BlobError::io(&path, e.into_error()))?;
                (Encoding::Raw, Stored::File(file))
            }
            Sink::Zstd(enc) => {
                let w = enc.finish().map_err(|e| BlobError::io(&path, e))?;
                let file = w
                    .into_inner()
                    .map_err(|e| BlobError::io(&path, e.into_error()))?;
                (Encoding::Zstd, Stored::File(file))
            }
        };
        let (stored_size, body) = match stored {
            Stored::Bytes(bytes) => (bytes.len() as u64, Body::Bytes(bytes)),
            Stored::File(file) => {
                let size = file.metadata().map_err(|e| BlobError::io(&path, e))?.len();
                drop(file);
                // Keep only the path: a batch of thousands of pending blobs holds no descriptors.
                let temp = self.temp.take().expect("a streamed blob has its temp file");
                (size, Body::Temp(temp.into_temp_path()))
            }
        };
        let info = BlobInfo {
            digest,
            size: self.size,
            md5,
            stored_size,
            encoding,
        };
        Ok(PendingBlob { info, body })
    }
}

thread_local! {
    /// This thread's zstd context and the level it was made for. Making a context per blob
    /// costs more than compressing a small file (its tables are allocated and zeroed anew).
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
}

/// Compresses `data` as one zstd frame with this thread's reused context.
fn compress_whole(data: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(made_for, _)| *made_for != level) {
            *slot = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        let (_, compressor) = slot.as_mut().expect("a compressor was just made");
        compressor.compress(data)
    })
}

enum Stored {
    Bytes(Vec<u8>),
    File(File),
}

/// Where a pending blob's stored bytes are.
pub(crate) enum Body {
    /// Small content, held in memory.
    Bytes(Vec<u8>),
    /// Large content, already in a (closed) temporary file.
    Temp(TempPath),
}

/// A finished blob (in memory or a temporary file), waiting for [`crate::BlobStore::publish`].
pub struct PendingBlob {
    pub info: BlobInfo,
    pub(crate) body: Body,
}
