//! Tuning knobs of the metadata store, with their defaults.

use documented::DocumentedFields;
use serde::{Deserialize, Serialize};

/// Tuning knobs of the SQLite store and the have lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, DocumentedFields)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Idle reader connections kept open for snapshots (connections; default 16).
    pub reader_pool_size: usize,
    /// Most write jobs grouped into one transaction (jobs; default 256).
    pub max_group: usize,
    /// SQLite page cache of the writer connection (KiB; default 16384). The operating system's
    /// page cache holds the database file as well, so a miss here costs a copy, not a disk read.
    pub cache_kib: i64,
    /// SQLite page cache of each reader connection (KiB; default 65536). Idle readers keep
    /// theirs, so the server's resident size grows towards this times the readers in use.
    pub reader_cache_kib: i64,
    /// Prepared statements kept per connection (statements; default 128).
    pub statement_cache: usize,
    /// How much of the database file a reader connection reads through a memory mapping
    /// instead of `pread` (bytes; default 1 GiB; 0 turns it off; SQLite caps it at 2 GiB).
    /// Readers then share the operating system's cached pages instead of copying each into
    /// their own cache. An I/O error under a mapping (SIGBUS) fails the requests reading at
    /// the time, and the process's readers use `pread` from then on (see `sqlite::mapped`).
    pub reader_mmap_bytes: i64,
    /// Page size of a database this store creates (bytes, a power of two from 512 to 65536;
    /// default 4096). An existing database keeps the page size it was created with.
    pub page_size: u32,
    /// Least time between two WAL checkpoints; nudges in between collapse into one. A have
    /// list not written for this long has its write-ahead log emptied (milliseconds; default
    /// 250).
    pub checkpoint_interval_ms: u64,
    /// Size a database's write-ahead log (the main database's and each have list's) is cut
    /// back to once a checkpoint has copied all of it and the next write starts it over; it
    /// grows past this only while a burst of writes outpaces checkpoints (bytes; default
    /// 4194304).
    pub wal_size_limit_bytes: i64,
    /// A have list's write-ahead log is checkpointed once it holds this many bytes and cut
    /// back to it when it starts over, so a workspace being synced keeps at most about this
    /// much log beside its rows; once idle (`checkpoint_interval_ms`) the log is emptied
    /// (bytes; default 1048576).
    pub have_wal_size_limit_bytes: i64,
    /// Nice value of the checkpoint thread (Linux; 0 to 19; default 10).
    pub checkpoint_nice: i32,
    /// Most have-list databases kept open at once (connections; default 256).
    pub max_open_have_lists: usize,
    /// Most recently written paths a have list remembers, so a client holding an older copy
    /// of it receives only what changed (`HaveIfChanged`). A write of more rows than this (a
    /// big sync) is not remembered: copies older than it get the whole list (rows; 0 never
    /// remembers; default 20000).
    pub have_change_rows: usize,
    /// How long a connection waits for another's lock before it fails as busy
    /// (milliseconds; default 10000).
    pub busy_timeout_ms: u32,
    /// Record every committed metadata write in the journal (`ROOT/journal/journal.N`), in the
    /// same durable step as its commit (default true). Off, there is nothing to replay after
    /// a checkpoint: a restore brings back only the checkpoint.
    pub journal: bool,
    /// zstd level of journal records (1 to 19; default 1).
    pub journal_zstd_level: i32,
    /// Journal records smaller than this stay uncompressed (bytes; default 512).
    pub journal_compress_min_bytes: usize,
    /// zstd level of checkpoint files (1 to 19; default 3).
    pub checkpoint_zstd_level: i32,
    /// Rows between two progress reports of a checkpoint or a restore (rows; default 10000).
    /// Both stream one row at a time, so memory does not depend on a table's size.
    pub checkpoint_batch_rows: usize,
    /// Nice value of the thread writing a checkpoint (Linux; 0 to 19; default 10).
    pub checkpoint_dump_nice: i32,
    /// A checkpoint file goes to disk in windows of this many bytes as it is written, so its
    /// final `fsync` finds little left to write and does not stall submits' own (bytes;
    /// default 8388608; 0 leaves writeback to the operating system).
    pub checkpoint_writeback_bytes: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            reader_pool_size: 16,
            max_group: 256,
            // The writer's cache mostly holds a big commit's pages, the readers' the pages
            // every browse touches: see Design choices in BENCHMARKS.md at commit c1af4eb.
            cache_kib: 16 * 1024,
            reader_cache_kib: 64 * 1024,
            statement_cache: 128,
            // the Design choices in BENCHMARKS.md at c1af4eb weigh mapped reads against pread.
            reader_mmap_bytes: 1 << 30,
            // SQLite's default; the Design choices in BENCHMARKS.md at c1af4eb weigh 16 KiB pages.
            page_size: 4096,
            checkpoint_interval_ms: 250,
            wal_size_limit_bytes: 4 << 20,
            have_wal_size_limit_bytes: 1 << 20,
            checkpoint_nice: 10,
            max_open_have_lists: 256,
            have_change_rows: 20_000,
            busy_timeout_ms: 10_000,
            journal: true,
            // Level 1: a big commit's changeset is compressed while submits wait for the
            // writer, so speed matters more than the last few percent of size.
            journal_zstd_level: 1,
            journal_compress_min_bytes: 512,
            checkpoint_zstd_level: 3,
            checkpoint_batch_rows: 10_000,
            checkpoint_dump_nice: 10,
            checkpoint_writeback_bytes: 8 << 20,
        }
    }
}
