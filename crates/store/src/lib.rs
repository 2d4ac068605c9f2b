//! Keel's metadata store: the [`MetaStore`] contract and its SQLite implementation.
//!
//! # Contract (every backend, checked by the conformance tests in `tests/`)
//! - **Snapshot reads.** [`MetaStore::snapshot`] returns a [`ReadTxn`] that sees one consistent
//!   state for its whole life. It never waits for a writer and never delays one.
//! - **One writer, grouped.** [`MetaStore::run_write`] runs jobs on the single writer; jobs that
//!   arrive together share one transaction (group commit). Each job runs inside its own savepoint:
//!   a job that returns `false` (or panics) leaves no trace, and does not affect the others.
//! - **Atomic and durable on return.** When `run_write` returns `Ok`, the job's changes are
//!   committed and on disk; after a crash they are wholly present or wholly absent.
//! - **Have lists live apart** ([`SqliteHaveStore`]): one small database per workspace, so syncs of
//!   different workspaces never contend with each other or with the main writer.

pub mod backup;
pub mod command;
mod config;
mod error;
pub mod failpoints;
mod have;
mod have_idle;
pub mod journal;
mod range;
mod replica;
mod root;
mod rows;
mod sqlite;
pub mod thread_priority;

pub use config::StoreConfig;
pub use error::{DatabaseError, DatabaseErrorKind, StoreError};
pub use have::{HaveDelta, HaveGeneration, HaveMark, HaveState, SqliteHaveStore};
pub use range::PathRange;
pub use replica::{ReadOnlyStore, ReplicaApplyError};
pub use root::{HAVE_DIR, JOURNAL_DIR, METADATA_FILE, RootStores, open_root};
pub use rows::{
    BranchRow, ChangeFilter, ChangeRow, ChangeStatus, DepotRow, FixRow, GroupRow, HaveRow,
    IntegRow, JobRow, LabelRow, LazyContent, OpenedRow, PendingInteg, RevisionRow, ShelvedRow,
    TicketRow, UserRow, WebhookStateRow, WorkspaceRow,
};
pub use sqlite::{SqliteStore, WriterStats, mapped_read_faults};

use keel_core::{
    ChangeNumber, CounterSpace, DepotPath, Digest, TriggerLine, TypemapLine, WebhookLine,
};

/// A consistent, read-only view of the metadata.
///
/// Listing methods are paged: they return at most `limit` rows strictly after `after` (in the
/// order the method documents), so callers stream without holding whole tables in memory.
///
/// Methods about one file take its [`DepotPath`]; rows and listings return paths as
/// `DepotPath`s. Ranges of files are a [`PathRange`] (a literal prefix, which need not be a
/// file's path), and paging cursors (`after`) are `&str`: a position in path order, usually the
/// last path of the previous page, but any text (`""` for the start) will do.
pub trait ReadTxn {
    fn get_depot(&self, name: &str) -> Result<Option<DepotRow>, StoreError>;
    fn list_depots(&self) -> Result<Vec<DepotRow>, StoreError>;

    fn get_workspace(&self, name: &str) -> Result<Option<WorkspaceRow>, StoreError>;
    /// Workspaces in name order after `after`.
    fn list_workspaces(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<WorkspaceRow>, StoreError>;

    fn get_change(&self, change: ChangeNumber) -> Result<Option<ChangeRow>, StoreError>;
    /// Changes newest first, strictly older than `before` when given.
    fn list_changes(
        &self,
        filter: &ChangeFilter,
        before: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<ChangeRow>, StoreError>;
    /// As [`list_changes`](Self::list_changes), but the page ends early after the row that
    /// brings the descriptions read to `max_bytes` (always at least one row), so that a page
    /// of long descriptions stays small in memory.
    fn list_changes_bounded(
        &self,
        filter: &ChangeFilter,
        before: Option<ChangeNumber>,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<ChangeRow>, StoreError>;
    /// Number of files in a change: revisions when submitted, opened files when pending.
    fn change_file_count(&self, change: &ChangeRow) -> Result<u32, StoreError>;

    /// For each file in `range` (path order, after `after`), its newest revision whose change is
    /// at most `at` (any change when `None`).
    fn head_revisions(
        &self,
        range: &PathRange,
        after: Option<&str>,
        at: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<RevisionRow>, StoreError>;
    /// The newest revision of one file.
    fn head_revision(&self, path: &DepotPath) -> Result<Option<RevisionRow>, StoreError>;
    /// Every revision of one file, newest first.
    fn file_revisions(&self, path: &DepotPath) -> Result<Vec<RevisionRow>, StoreError>;
    fn revision(&self, path: &DepotPath, rev: u32) -> Result<Option<RevisionRow>, StoreError>;
    /// The revisions `wanted` names (path, revision), those that exist, in the order asked:
    /// one query for a page of lookups (a have list's page) instead of one per file.
    fn revisions_at(&self, wanted: &[(&str, u32)]) -> Result<Vec<RevisionRow>, StoreError>;
    /// Revisions submitted in `change`, path order after `after`.
    fn change_revisions(
        &self,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RevisionRow>, StoreError>;
    /// Changes that touched files in `range`, newest first, older than `before`: (change, path).
    fn range_changes(
        &self,
        range: &PathRange,
        before: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<(ChangeNumber, DepotPath)>, StoreError>;
    /// Changes that touched files in `range`, oldest first, newer than `after`: (change, path).
    /// What a subscriber that has seen up to `after` is owed (`watch`).
    fn range_changes_after(
        &self,
        range: &PathRange,
        after: ChangeNumber,
        limit: usize,
    ) -> Result<Vec<(ChangeNumber, DepotPath)>, StoreError>;
    /// The first depot path in `range` strictly greater than `after` (for directory skip-scans).
    fn next_path(&self, range: &PathRange, after: &str) -> Result<Option<DepotPath>, StoreError>;
    /// The first depot path in `range` strictly greater than `after` that lies below a
    /// subdirectory of the range's start (`range.lo` is the directory, ending in `/`): the next
    /// subdirectory for `dirs`, skipping the directory's own files inside the query.
    fn next_subdir_path(
        &self,
        range: &PathRange,
        after: &str,
    ) -> Result<Option<DepotPath>, StoreError>;
    /// Whether any revision in `range` deletes a file: where none does, every path there is
    /// live at head, and [`ReadTxn::next_subdir_path`] answers what
    /// [`ReadTxn::next_live_subdir_path`] would, without probing each file it finds.
    fn any_delete_in(&self, range: &PathRange) -> Result<bool, StoreError>;
    /// Like [`ReadTxn::next_subdir_path`], but only a path whose head revision is not a delete:
    /// the next subdirectory that `dirs` lists at head, files deleted there skipped inside the
    /// query.
    fn next_live_subdir_path(
        &self,
        range: &PathRange,
        after: &str,
    ) -> Result<Option<DepotPath>, StoreError>;

    /// Files opened in a workspace, path order after `after`.
    fn opened_in_workspace(
        &self,
        workspace: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError>;
    /// Files opened anywhere in `range`, ordered by (path, workspace) after `after`.
    fn opened_in_range(
        &self,
        range: &PathRange,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError>;
    /// Every workspace's open record for one file.
    fn opened_file(&self, path: &DepotPath) -> Result<Vec<OpenedRow>, StoreError>;
    /// Files opened in one pending change of a workspace, path order.
    fn opened_in_change(
        &self,
        workspace: &str,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError>;
    /// The first open record (path order) of `workspace`'s pending `change` that cannot be
    /// submitted as it stands: an unresolved integration, a base revision that is not the
    /// head, an add over a live head, or an edit or delete of a file deleted at head.
    fn first_unsubmittable(
        &self,
        workspace: &str,
        change: ChangeNumber,
    ) -> Result<Option<DepotPath>, StoreError>;
    /// Open records of a pending change whose revision carries content that no revision owns
    /// (a content-carrying action without a lazy copy of owned content), path order after
    /// `after`: the records a submit writes one by one.
    fn opened_with_new_content(
        &self,
        workspace: &str,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError>;
    /// Integration records whose target is `path` (newest target revision first).
    fn integrations_into(&self, path: &DepotPath) -> Result<Vec<IntegRow>, StoreError>;
    /// Integration records whose source is `path`.
    fn integrations_from(&self, path: &DepotPath) -> Result<Vec<IntegRow>, StoreError>;

    fn get_label(&self, name: &str) -> Result<Option<LabelRow>, StoreError>;
    /// Labels in name order after `after`.
    fn list_labels(&self, after: Option<&str>, limit: usize) -> Result<Vec<LabelRow>, StoreError>;
    /// The revision a label holds of one file (0 = none).
    fn label_rev(&self, label: &str, path: &DepotPath) -> Result<u32, StoreError>;
    /// A label's (path, rev) entries in `range`, path order after `after`.
    fn label_revs(
        &self,
        label: &str,
        range: &PathRange,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(DepotPath, u32)>, StoreError>;

    fn get_branch(&self, name: &str) -> Result<Option<BranchRow>, StoreError>;
    /// Branch specs in name order after `after`.
    fn list_branches(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<BranchRow>, StoreError>;

    /// Files shelved in a change, path order after `after`.
    fn shelved_in_change(
        &self,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ShelvedRow>, StoreError>;

    /// Whether any revision, shelved file or lazily-copied open file refers to `digest`.
    fn digest_in_use(&self, digest: &Digest) -> Result<bool, StoreError>;
    /// Up to `limit` depot paths of content-owning revisions and shelved files that refer to
    /// `digest` (both indexed by digest; lazy copies are not, so they are not listed).
    fn digest_paths(&self, digest: &Digest, limit: usize) -> Result<Vec<String>, StoreError>;
    /// Whether a content-owning revision refers to `digest`. Such content cannot be purged
    /// while it does, so a lazy copy of it needs no check that the blob is still there.
    fn digest_owned(&self, digest: &Digest) -> Result<bool, StoreError>;
    /// How many revisions have ever been deleted (by obliterate). The same number in a
    /// snapshot and in a later write transaction means every revision the snapshot saw still
    /// exists, so content it owned is still owned.
    fn revisions_removed(&self) -> Result<u64, StoreError>;
    /// How many write jobs have kept their changes. The same number in a snapshot and in a
    /// later write job means no job wrote anything in between, so everything the snapshot read
    /// is still as it was.
    fn jobs_written(&self) -> Result<u64, StoreError>;
    /// Digests queued for deletion from the content store.
    fn queued_purges(&self, limit: usize) -> Result<Vec<Digest>, StoreError>;
    /// The triggers table, in table order. Read whole: it is an admin's form of a few lines,
    /// like the depot list.
    fn triggers(&self) -> Result<Vec<TriggerLine>, StoreError>;
    /// The typemap, in table order. Read whole, like the triggers table: a few admin lines.
    fn typemap(&self) -> Result<Vec<TypemapLine>, StoreError>;
    /// The webhooks table in table order, each line with its delivery state.
    fn webhooks(&self) -> Result<Vec<(WebhookLine, WebhookStateRow)>, StoreError>;

    /// A user's spec and password hash.
    fn get_user(&self, name: &str) -> Result<Option<UserRow>, StoreError>;
    /// Users in name order after `after`.
    fn list_users(&self, after: Option<&str>, limit: usize) -> Result<Vec<UserRow>, StoreError>;
    /// The login ticket whose bytes hash (BLAKE3) to `hash`.
    fn get_ticket(&self, hash: &[u8; 32]) -> Result<Option<TicketRow>, StoreError>;
    /// The tickets of `user` still valid at `now`, newest first, at most `limit` (a front end
    /// that cannot see a ticket's bytes recognises one among them; see keel-p4).
    fn tickets_of(&self, user: &str, now: i64, limit: usize) -> Result<Vec<TicketRow>, StoreError>;
    /// A server setting's stored value (`None`: its default applies).
    fn get_setting(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// Every stored setting, by name. The names are the few `keel_core::auth::SETTINGS`
    /// allows, so this listing is bounded without paging.
    fn list_settings(&self) -> Result<Vec<(String, String)>, StoreError>;

    fn get_group(&self, name: &str) -> Result<Option<GroupRow>, StoreError>;
    /// Groups in name order after `after`.
    fn list_groups(&self, after: Option<&str>, limit: usize) -> Result<Vec<GroupRow>, StoreError>;
    /// The protections table's lines in order (empty: no table, everyone is a super user).
    fn protections(&self) -> Result<Vec<String>, StoreError>;
    /// Bumped by every change to groups or protections: the same number twice means neither
    /// changed in between.
    fn access_version(&self) -> Result<u64, StoreError>;

    /// The saved job spec's form text and when it was saved (`None`: the default spec).
    fn job_spec(&self) -> Result<Option<(String, i64)>, StoreError>;
    fn get_job(&self, name: &str) -> Result<Option<JobRow>, StoreError>;
    /// Jobs in name order after `after`.
    fn list_jobs(&self, after: Option<&str>, limit: usize) -> Result<Vec<JobRow>, StoreError>;
    /// The names of jobs holding an index word in `range` (see `WriteTxn::put_job`), in name
    /// order after `after`, each once.
    fn jobs_by_word(
        &self,
        range: &keel_core::job::WordRange,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError>;
    /// A job's fixes, newest change first. A job has few.
    fn fixes_of_job(&self, job: &str) -> Result<Vec<FixRow>, StoreError>;
    /// The jobs a change fixes, by job name. A change fixes few.
    fn fixes_of_change(&self, change: ChangeNumber) -> Result<Vec<FixRow>, StoreError>;
    /// Every fix, newest change first (then job name, descending), strictly before `before`.
    fn list_fixes(
        &self,
        before: Option<(ChangeNumber, &str)>,
        limit: usize,
    ) -> Result<Vec<FixRow>, StoreError>;
    /// The last changelist number handed out as this snapshot sees it (the `change` counter).
    fn change_counter(&self) -> Result<ChangeNumber, StoreError>;
    /// A counter's or key's stored value (`None`: never set, or deleted).
    fn get_counter(&self, space: CounterSpace, name: &str) -> Result<Option<String>, StoreError>;
    /// Stored counters or keys as (name, value), in name order, strictly after `after`.
    fn list_counters(
        &self,
        space: CounterSpace,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, String)>, StoreError>;
}

/// The writer's view: reads see the transaction's own changes.
pub trait WriteTxn: ReadTxn {
    /// Records the user; returns `true` when it was new.
    fn ensure_user(&mut self, name: &str, now: i64) -> Result<bool, StoreError>;
    fn put_depot(&mut self, depot: &DepotRow) -> Result<(), StoreError>;
    fn put_workspace(&mut self, workspace: &WorkspaceRow) -> Result<(), StoreError>;
    fn delete_workspace(&mut self, name: &str) -> Result<(), StoreError>;
    /// Takes the next changelist number.
    fn allocate_change(&mut self) -> Result<ChangeNumber, StoreError>;
    /// The last changelist number handed out.
    fn last_change(&self) -> Result<ChangeNumber, StoreError>;
    fn put_change(&mut self, change: &ChangeRow) -> Result<(), StoreError>;
    fn delete_change(&mut self, change: ChangeNumber) -> Result<(), StoreError>;
    fn insert_revision(&mut self, revision: &RevisionRow) -> Result<(), StoreError>;
    /// `insert_revision` for a lazy copy whose content the caller knows another revision owns
    /// in this transaction (a `LazyContent::owned` open record): skips looking the owner up.
    fn insert_revision_owned(&mut self, revision: &RevisionRow) -> Result<(), StoreError>;
    fn put_opened(&mut self, opened: &OpenedRow) -> Result<(), StoreError>;
    /// `put_opened` for a lazy copy whose content the caller knows a revision owns in this
    /// transaction (see `revisions_removed`): skips looking the owner up.
    fn put_opened_owned(&mut self, opened: &OpenedRow) -> Result<(), StoreError>;
    /// Writes open records of files not open in their workspaces (a batch of `integrate`),
    /// as `put_opened_owned` (`owned`) or `put_opened` would; a file already open there is a
    /// constraint error.
    fn open_new(&mut self, rows: &[OpenedRow], owned: bool) -> Result<(), StoreError>;
    fn delete_opened(&mut self, workspace: &str, path: &DepotPath) -> Result<(), StoreError>;
    /// Removes every open record of one pending change of a workspace (one statement, for
    /// submit); returns how many.
    fn delete_opened_in_change(
        &mut self,
        workspace: &str,
        change: ChangeNumber,
    ) -> Result<usize, StoreError>;
    fn insert_integration(&mut self, integ: &IntegRow) -> Result<(), StoreError>;
    /// Submits set-based the open records of `workspace`'s pending `change` that carry no new
    /// content (see [`ReadTxn::opened_with_new_content`]: deletes, and lazy copies of content
    /// a revision owns): writes each one's revision `base_rev + 1` into change `into` at `time`
    /// and its integration record (a resolved integration from another file, or `moved from`
    /// for a `move/add`), in one statement each. With `skip_written`, records whose revision
    /// `base_rev + 1` exists already (written one by one by the caller) are left out. The
    /// caller has checked the records ([`ReadTxn::first_unsubmittable`]) and deletes them
    /// afterwards. Returns how many revisions were written.
    fn commit_without_new_content(
        &mut self,
        workspace: &str,
        change: ChangeNumber,
        into: ChangeNumber,
        time: i64,
        skip_written: bool,
    ) -> Result<usize, StoreError>;
    /// Removes every integration record naming `path` as source or target.
    fn delete_integrations_of(&mut self, path: &DepotPath) -> Result<usize, StoreError>;
    fn delete_revision(&mut self, path: &DepotPath, rev: u32) -> Result<(), StoreError>;
    /// Purges a revision's content reference (`+S`): the revision stays in the history with no
    /// digest (its content is gone). Returns the digest it had, if any.
    fn purge_revision_content(
        &mut self,
        path: &DepotPath,
        rev: u32,
    ) -> Result<Option<Digest>, StoreError>;
    /// After revisions were deleted: for each of `digests` that no content-owning revision
    /// refers to any more, makes one revision that still refers to it (a lazy copy) its owner,
    /// so [`ReadTxn::digest_in_use`] keeps seeing it; when no revision refers to it at all, open
    /// records with a lazy copy of it count for themselves again. Returns how many revisions
    /// were adopted. Costs one scan of the lazy revisions when any digest lost its owner.
    fn adopt_lazy_copies(&mut self, digests: &[Digest]) -> Result<usize, StoreError>;

    fn put_label(&mut self, label: &LabelRow) -> Result<(), StoreError>;
    /// Deletes a label and its entries.
    fn delete_label(&mut self, name: &str) -> Result<(), StoreError>;
    /// Sets (rev > 0) or removes (rev 0) a label's revision of one file.
    fn set_label_rev(&mut self, label: &str, path: &DepotPath, rev: u32) -> Result<(), StoreError>;
    /// Removes every label's entry for `path`; returns how many.
    fn delete_label_revs_of(&mut self, path: &DepotPath) -> Result<usize, StoreError>;

    fn put_branch(&mut self, branch: &BranchRow) -> Result<(), StoreError>;
    fn delete_branch(&mut self, name: &str) -> Result<(), StoreError>;

    fn put_shelved(&mut self, shelved: &ShelvedRow) -> Result<(), StoreError>;
    fn delete_shelved(&mut self, change: ChangeNumber, path: &DepotPath) -> Result<(), StoreError>;

    /// Queues a digest for deletion from the content store (see obliterate).
    fn queue_purge(&mut self, digest: &Digest) -> Result<(), StoreError>;
    fn unqueue_purge(&mut self, digest: &Digest) -> Result<(), StoreError>;

    /// Replaces the whole triggers table with `table`, in its order.
    fn replace_triggers(&mut self, table: &[TriggerLine]) -> Result<(), StoreError>;
    /// Replaces the whole typemap with `table`, in its order.
    fn replace_typemap(&mut self, table: &[TypemapLine]) -> Result<(), StoreError>;
    /// Replaces the whole webhooks table; a webhook whose name stays keeps its delivery state,
    /// a new one starts with every change up to `start` counted as delivered.
    fn replace_webhooks(
        &mut self,
        table: &[WebhookLine],
        start: ChangeNumber,
    ) -> Result<(), StoreError>;
    /// Records a webhook's delivery state (nothing when the webhook is no longer in the table).
    fn put_webhook_state(&mut self, name: &str, state: &WebhookStateRow) -> Result<(), StoreError>;
    /// Creates or replaces a user (spec and password hash).
    fn put_user(&mut self, user: &UserRow) -> Result<(), StoreError>;
    /// Moves a user's access time forward to `now`.
    fn set_user_accessed(&mut self, name: &str, now: i64) -> Result<(), StoreError>;
    /// Deletes a user and every ticket of theirs.
    fn delete_user(&mut self, name: &str) -> Result<(), StoreError>;
    fn put_ticket(&mut self, ticket: &TicketRow) -> Result<(), StoreError>;
    /// Deletes one ticket; returns whether it existed.
    fn delete_ticket(&mut self, hash: &[u8; 32]) -> Result<bool, StoreError>;
    /// Deletes every ticket of `user` (and anyone's that expired by `now`); returns how many of
    /// the user's went.
    fn delete_tickets_of(&mut self, user: &str, now: i64) -> Result<usize, StoreError>;
    fn put_setting(&mut self, name: &str, value: &str) -> Result<(), StoreError>;
    /// Removes a setting (its default applies again); returns whether it was set.
    fn delete_setting(&mut self, name: &str) -> Result<bool, StoreError>;
    /// Creates or replaces a group (bumps [`ReadTxn::access_version`]).
    fn put_group(&mut self, group: &GroupRow) -> Result<(), StoreError>;
    fn delete_group(&mut self, name: &str) -> Result<(), StoreError>;
    /// Replaces the whole protections table (bumps [`ReadTxn::access_version`]).
    fn put_protections(&mut self, lines: &[String]) -> Result<(), StoreError>;

    /// Replaces the job spec's form text.
    fn put_job_spec(&mut self, text: &str, updated: i64) -> Result<(), StoreError>;
    /// Creates or replaces a job and replaces its index words: (field, word) pairs, lowercase.
    fn put_job(&mut self, job: &JobRow, words: &[(String, String)]) -> Result<(), StoreError>;
    /// Deletes a job and its index words; returns whether it existed.
    fn delete_job(&mut self, name: &str) -> Result<bool, StoreError>;
    /// Takes the next job number (for a job saved as `new`).
    fn next_job_number(&mut self) -> Result<u64, StoreError>;
    /// Creates or replaces the fix of (job, change).
    fn put_fix(&mut self, fix: &FixRow) -> Result<(), StoreError>;
    /// Deletes one fix; returns whether it existed.
    fn delete_fix(&mut self, job: &str, change: ChangeNumber) -> Result<bool, StoreError>;
    /// Creates or replaces a counter or key.
    fn put_counter(
        &mut self,
        space: CounterSpace,
        name: &str,
        value: &str,
    ) -> Result<(), StoreError>;
    /// Removes a counter or key; returns whether it was stored.
    fn delete_counter(&mut self, space: CounterSpace, name: &str) -> Result<bool, StoreError>;
}

/// A job for the single writer. Returning `false` rolls the job's changes back; a job that
/// returns `true` is counted in [`ReadTxn::jobs_written`].
pub type WriteJob = Box<dyn FnOnce(&mut dyn WriteTxn) -> bool + Send>;

/// The metadata store.
pub trait MetaStore: Send + Sync {
    /// A consistent read-only snapshot.
    fn snapshot(&self) -> Result<Box<dyn ReadTxn + '_>, StoreError>;
    /// Runs `job` in the writer's next group transaction; returns once it is durable.
    fn run_write(&self, job: WriteJob) -> Result<(), StoreError>;
    /// The primary's address when this store is a read-only replica's (every write refused).
    fn read_only_primary(&self) -> Option<&str> {
        None
    }
    /// A number that grows each time a write (a job, or a replica's applied record) has
    /// ended. Read before a snapshot, the same number later means nothing was committed since
    /// that snapshot, so values read from it (e.g. [`ReadTxn::access_version`]) still hold,
    /// without a query.
    fn commit_epoch(&self) -> u64;
}

/// Runs `f` as one write job and hands back its result. `Err` results roll the job back.
pub fn write<T, E>(
    store: &dyn MetaStore,
    f: impl FnOnce(&mut dyn WriteTxn) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    let slot = std::sync::Arc::new(std::sync::Mutex::new(None));
    let job_slot = slot.clone();
    let ran = store.run_write(Box::new(move |txn| {
        let result = f(txn);
        let keep = result.is_ok();
        *job_slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
        keep
    }));
    let result = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    match (ran, result) {
        (Ok(()), Some(result)) => result,
        (Ok(()), None) => Err(StoreError::JobLost.into()),
        // A job that failed itself is the better error when its group failed too: its failure
        // may be why (the database can give up a whole transaction over one statement).
        (Err(_), Some(Err(own))) => Err(own),
        (Err(e), _) => Err(e.into()),
    }
}
