//! Tuning knobs of the service layer, with their defaults.

use documented::DocumentedFields;
use serde::{Deserialize, Serialize};

/// Tuning knobs of the service layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, DocumentedFields)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceConfig {
    /// Rows fetched per page when streaming listings (rows; default 1000).
    pub page_size: usize,
    /// Largest text revision `describe`/`diff2` will diff (bytes; default 16777216).
    pub max_diff_bytes: u64,
    /// Bytes of small uploaded blobs a submit holds in memory before publishing them early
    /// (bytes; default 67108864).
    pub publish_batch_bytes: u64,
    /// An uploaded file that arrives whole within this many bytes is hashed and compressed on
    /// one of `upload_threads` threads while the next files are received; a larger one is
    /// streamed into the content store as it arrives (bytes; default 1048576).
    pub upload_whole_bytes: usize,
    /// Threads one submit or shelve hashes and compresses its small files on, started as the
    /// upload needs them; an upload that never fills a batch starts none (threads; default 2).
    pub upload_threads: usize,
    /// Small uploaded files are handed to those threads in batches of about this many bytes
    /// (bytes; default 262144).
    pub upload_batch_bytes: usize,
    /// Most revisions (or queued digests) one obliterate write job handles; bounds how long
    /// an obliterate holds the writer (revisions; default 500).
    pub obliterate_batch: usize,
    /// Label entries `tag`/`labelsync` write per write job (entries; default 1000).
    pub label_batch: usize,
    /// Rows read per page when a command walks a whole shelf (rows; default 10000).
    pub shelf_page: usize,
    /// Most files one `filelog -i` argument follows back through branches, copies and moves
    /// (files; default 64).
    pub max_follow: usize,
    /// Open records a submit reads, and revisions it writes or reports, per batch: the commit,
    /// the have-list update and the reply each hold at most this many files at once, so a
    /// submit's memory does not grow with the change's size (files; default 1000).
    pub submit_batch: usize,
    /// Targets an integrate plans and opens per write job, and reports per batch (files;
    /// default 5000).
    pub integrate_batch: usize,
    /// Threads that read and hash stored content for one `verify`, each at `verify_nice`
    /// (threads; default 2).
    pub verify_threads: usize,
    /// Bytes a `verify` thread reads from a stored file at a time (bytes; default 1048576).
    pub verify_read_bytes: usize,
    /// Contents whose check one `verify` remembers by digest, so content shared by many
    /// revisions (lazy copies, identical files) is read once; about 130 bytes each, oldest
    /// forgotten first; 0 remembers none (digests; default 100000).
    pub verify_cache_entries: usize,
    /// Nice value (Linux, per thread) of the threads that read and hash content for `verify`:
    /// it runs online and yields the CPU to every other command (0 to 19; default 19).
    pub verify_nice: i32,
    /// A `verify` reports its progress after at least this many content bytes checked (or
    /// `page_size` files), also while it finds nothing to report (bytes; default 67108864).
    pub verify_progress_bytes: u64,
    /// Longest a trigger may run; past it the trigger and its process group are killed and it
    /// counts as failed (a pre-commit trigger then refuses the submit) (milliseconds; default
    /// 30000).
    pub trigger_timeout_ms: u64,
    /// Most bytes of a trigger's output (stdout and stderr together) kept to show the user
    /// and the log; the rest is read and dropped (bytes; default 8192).
    pub trigger_output_bytes: usize,
    /// How long a login ticket stays valid when none of the user's groups sets a Timeout
    /// (`Service::ticket_lifetime`) (seconds; default 43200, 12 hours).
    pub ticket_lifetime_secs: u64,
    /// Password attempts (logins, or old passwords given to `passwd`) one user may make from
    /// one client address within `login_failure_window_secs`; an attempt counts before its
    /// password is checked and a correct one gives it back. Past the limit that user is
    /// refused from that address only, for a back-off that doubles each time (attempts;
    /// default 5).
    pub login_failures_per_user: u32,
    /// Password attempts one client address may make within `login_failure_window_secs`,
    /// over all users it tries, counted the same way (attempts; default 20).
    pub login_failures_per_address: u32,
    /// The window attempts are counted in (the first starts it), and the first back-off past
    /// a limit (seconds; default 60).
    pub login_failure_window_secs: u64,
    /// Longest back-off a user from one address (or an address) is refused for: each time a
    /// limit is reached again the back-off doubles up to this (seconds; default 3600).
    pub login_backoff_max_secs: u64,
    /// Passwords hashed or checked at once (argon2id, `password_hash_kib` of memory each), so
    /// the memory logins use is bounded whatever clients send (hashes; default 2).
    pub password_check_threads: usize,
    /// Password checks that may wait for one of those; a further one is refused at once with
    /// "server busy, retry" (checks; default 16).
    pub password_check_queue: usize,
    /// Memory argon2id uses to hash one password; hashing cost is what slows a password
    /// guesser down (KiB; default 19456, OWASP's minimum for argon2id).
    pub password_hash_kib: u32,
    /// argon2id passes over that memory per hash (passes; default 2).
    pub password_hash_passes: u32,
    /// A user's Access time is written at most this often, so commands do not each cost a
    /// metadata write (seconds; default 300).
    pub user_access_update_secs: u64,
    /// A whole-view sync of a workspace marked as synced at change C looks only at the files
    /// of changes C and later, when there are at most this many change numbers to look
    /// through; further behind, it merges the whole have list (changes; default 10000).
    pub sync_since_max_changes: u64,
    /// ... and when those changes hold at most this many revisions (revisions; default 20000).
    pub sync_since_max_files: u64,
    /// Users (per client address) whose compiled protections the server keeps between
    /// commands; past this many the cache starts over (entries; default 10000).
    pub access_cache_users: usize,
    /// Largest change description accepted (`change`, `submit -d`, `shelve`, and a spec's
    /// Description field); a longer one is refused, naming its size and this limit, and
    /// nothing is saved (bytes; default 262144).
    pub max_description_bytes: usize,
    /// Largest value of any one field of a spec form (workspace, label, branch, user, group,
    /// depot, job; a view or table counts whole) (bytes; default 262144).
    pub max_form_field_bytes: usize,
    /// Largest spec form, all its fields together (bytes; default 524288).
    pub max_form_bytes: usize,
    /// Most lines of a workspace's, branch's or label's View (lines; default 10000).
    pub max_view_lines: usize,
    /// Most lines of the protections or triggers table (lines; default 10000).
    pub max_table_lines: usize,
    /// Most description bytes one page of a `changes` listing reads from the store before
    /// handing its rows on (one longer row still comes alone), so that many concurrent
    /// listings of long descriptions stay small in memory (bytes; default 1048576).
    pub listing_page_bytes: usize,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            page_size: 1000,
            max_diff_bytes: 16 << 20,
            publish_batch_bytes: 64 << 20,
            upload_whole_bytes: 1 << 20,
            upload_threads: 2,
            upload_batch_bytes: 256 << 10,
            obliterate_batch: 500,
            label_batch: 1000,
            shelf_page: 10_000,
            max_follow: 64,
            ticket_lifetime_secs: 12 * 60 * 60,
            login_failures_per_user: 5,
            login_failures_per_address: 20,
            login_failure_window_secs: 60,
            login_backoff_max_secs: 3600,
            password_check_threads: 2,
            password_check_queue: 16,
            password_hash_kib: 19 * 1024,
            password_hash_passes: 2,
            user_access_update_secs: 300,
            submit_batch: 1000,
            integrate_batch: 5000,
            verify_threads: 2,
            verify_read_bytes: 1 << 20,
            verify_cache_entries: 100_000,
            verify_nice: 19,
            verify_progress_bytes: 64 << 20,
            trigger_timeout_ms: 30_000,
            trigger_output_bytes: 8192,
            sync_since_max_changes: 10_000,
            sync_since_max_files: 20_000,
            access_cache_users: 10_000,
            max_description_bytes: 256 << 10,
            max_form_field_bytes: 256 << 10,
            max_form_bytes: 512 << 10,
            max_view_lines: 10_000,
            max_table_lines: 10_000,
            listing_page_bytes: 1 << 20,
        }
    }
}
