//! Tuning knobs of the client's transfers, with their defaults in one place. The command
//! line uses the defaults; a program embedding the client may pass its own to
//! [`Connection::connect_with`](crate::Connection::connect_with).

/// Tuning knobs of uploads, syncs and the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferConfig {
    /// Largest gRPC message accepted or sent (bytes; default 64 MiB).
    pub max_message_bytes: usize,
    /// How long connecting to the server may take before it fails (seconds; default 5).
    pub connect_timeout_secs: u64,
    /// Bytes of file content per uploaded chunk message (bytes; default 256 KiB).
    pub upload_chunk_bytes: usize,
    /// Most threads writing synced files at once: one per core on smaller machines, never
    /// fewer than two, since a writer waits on the disk as often as it computes (threads;
    /// default 4).
    pub max_writers: usize,
    /// Content chunks of one file queued for its writer before the sync stream waits; a large
    /// file streams through, it is never held whole (chunks; default 4).
    pub chunks_in_flight: usize,
    /// Files stored at most this large are received whole by the sync's stream loop and
    /// handed to a writer in batches, so a writer wakes once per batch rather than once per
    /// file; larger files stream through their writer (bytes; default 64 KiB).
    pub batch_file_bytes: usize,
    /// Most files in one batch handed to a writer (files; default 64).
    pub write_batch_files: usize,
    /// Most stored bytes in one batch handed to a writer: with `write_batch_files`, bounds
    /// the content the stream loop holds before a writer takes it (bytes; default 1 MiB).
    pub write_batch_bytes: usize,
    /// Largest content a writer decompresses in one call into memory, for a file received
    /// whole whose stored frame declares its size: no stream buffers, one write. Larger
    /// content, or content of undeclared size, is decompressed as a stream (bytes; default
    /// 1 MiB).
    pub whole_decode_bytes: usize,
    /// Entries per have-list update batch sent to the server (entries; default 1000).
    pub have_batch: usize,
    /// Upload messages gathered before they are handed to the request stream (bytes; default
    /// 64 KiB): above gRPC's 32 KiB encode buffer, so each write to the connection is a run of
    /// full-size HTTP/2 frames rather than one tiny frame per message.
    pub upload_batch_bytes: usize,
    /// Upload batches in flight between the file reader and the connection (batches; default
    /// 4): memory stays at about this many batches, each at most one batch plus one chunk.
    pub upload_batches_in_flight: usize,
    /// Longest a have entry waits for its batch to fill before the batch is sent anyway, so a
    /// sync that is cut off leaves its have list at most this far behind the files it placed
    /// (default 200 ms).
    pub have_flush_after: std::time::Duration,
    /// Files a sync has reported but not yet written before it waits for the oldest: bounds
    /// the memory a slow large file can pin while small files behind it finish (files;
    /// default 256).
    pub report_backlog: usize,
    /// Parent directories a sync remembers as resolved inside the workspace root before it
    /// starts over (directories; default 1024).
    pub remembered_dirs: usize,
    /// How much older than the start of a scan a file's newest timestamp (mtime or ctime)
    /// must be for the workspace state file to keep its digest, where the scan cannot read
    /// the filesystem's own clock (no probe file can be created in the workspace root; with
    /// one, older than the probe suffices): a file changed again within the filesystem's
    /// timestamp granularity would keep the same stat, so a younger file is hashed again by
    /// the next scan. Two seconds covers filesystems with 1-second timestamps (default 2 s).
    pub state_racy_slack: std::time::Duration,
    /// Bytes read at a time when a scan hashes a workspace file (bytes; default 256 KiB).
    pub scan_read_bytes: usize,
    /// Threads a scan (`status`, `reconcile`) reads directories and stats files on, beside
    /// the thread comparing them with the caches: the kernel's directory reads and stats are
    /// most of an unmodified scan, and they spread over cores (threads; default 2).
    pub scan_threads: usize,
    /// Files a scan's walk may find ahead of the comparing, held in memory at about 100 bytes
    /// each: enough for the walk to run on while the caches are loaded (files; default
    /// 131072).
    pub scan_files_ahead: usize,
}

impl Default for TransferConfig {
    fn default() -> Self {
        TransferConfig {
            max_message_bytes: 64 << 20,
            connect_timeout_secs: 5,
            upload_chunk_bytes: 256 * 1024,
            max_writers: 4,
            chunks_in_flight: 4,
            batch_file_bytes: 64 * 1024,
            write_batch_files: 64,
            write_batch_bytes: 1 << 20,
            whole_decode_bytes: 1 << 20,
            have_batch: 1000,
            upload_batch_bytes: 64 * 1024,
            upload_batches_in_flight: 4,
            have_flush_after: std::time::Duration::from_millis(200),
            report_backlog: 256,
            remembered_dirs: 1024,
            state_racy_slack: std::time::Duration::from_secs(2),
            scan_read_bytes: 256 * 1024,
            scan_threads: 2,
            scan_files_ahead: 128 * 1024,
        }
    }
}
