//! Tuning knobs of the content store, with their defaults.

use crate::CompressionPolicy;
use documented::DocumentedFields;
use serde::{Deserialize, Serialize};

/// Tuning knobs of the filesystem content store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, DocumentedFields)]
#[serde(default, deny_unknown_fields)]
pub struct BlobConfig {
    /// zstd level of stored content (1 to 22; default 3).
    pub compression_level: i32,
    /// Bytes of a large blob buffered before deciding whether it compresses (bytes; default
    /// 1048576).
    pub compression_sample_bytes: usize,
    /// Content is stored compressed when its sample shrinks to at most this fraction of its
    /// size (0 to 1; default 0.95).
    pub compression_max_ratio: f64,
    /// A publish of more files (or directories) than this flushes them with one `syncfs`
    /// instead of one fsync each (files; default 8).
    pub syncfs_threshold: usize,
    /// A pack file of small blobs is sealed (never appended to again) and a new one started
    /// once it holds this many bytes; the newest pack is re-read whole when the server starts
    /// (bytes; default 67108864).
    pub pack_bytes: u64,
    /// Migrating a root from the earlier one-file-per-blob layout reads this many bytes of
    /// small blobs before packing them with one sync (bytes; default 8388608).
    pub migrate_batch_bytes: usize,
}

impl Default for BlobConfig {
    fn default() -> Self {
        let compression = CompressionPolicy::default();
        BlobConfig {
            compression_level: compression.level,
            compression_sample_bytes: compression.sample_bytes,
            compression_max_ratio: compression.max_ratio,
            syncfs_threshold: 8,
            pack_bytes: 64 << 20,
            migrate_batch_bytes: 8 << 20,
        }
    }
}

impl BlobConfig {
    /// The compress-or-not decision these knobs describe.
    pub fn compression(&self) -> CompressionPolicy {
        CompressionPolicy {
            level: self.compression_level,
            sample_bytes: self.compression_sample_bytes,
            max_ratio: self.compression_max_ratio,
        }
    }
}
