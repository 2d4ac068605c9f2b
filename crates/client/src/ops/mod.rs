//! One typed function per server operation, for programs (a CI server, the `keel` command
//! line) that ask Keel questions: typed arguments, typed records read as the server streams
//! them, and an error type per family. Nothing here exposes a wire type.
//!
//! The examples below are the CI use cases; `crates/keel/tests/e2e/client_library.rs` runs
//! the same calls against a real server. Every example connects the way the `keel` command
//! does (`KEEL_SERVER`, `KEEL_USER`, `KEEL_WORKSPACE`, a `.keel` file, the tickets file).
//!
//! What changed under many paths, each since its own change, in one round trip:
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use keel_client::ops::{self, SincePath};
//! use keel_client::{Connection, Overrides, Settings};
//!
//! let settings = Settings::resolve(&Overrides::default(), &std::env::current_dir()?)?;
//! let conn = Connection::connect(&settings).await?;
//! let plans = [
//!     SincePath::new("//depot/app/...", 120),
//!     SincePath::new("//depot/lib/...", 97),
//! ];
//! let mut found = ops::changes_since(&conn, &plans, 0).await?;
//! while let Some(hit) = found.next().await? {
//!     println!("{} changed in {}", plans[hit.path].path, hit.change.number);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Subscribing to the changes under a path (resumed after the last change seen when the
//! connection drops):
//!
//! ```no_run
//! # async fn example(conn: keel_client::Connection) -> Result<(), Box<dyn std::error::Error>> {
//! use keel_client::ops::{Watch, WatchEvent, WatchQuery};
//!
//! let mut watch = Watch::new(&conn, WatchQuery::new(vec!["//depot/app/...".into()]));
//! watch.open().await?; // every change submitted from here on is delivered
//! loop {
//!     match watch.next().await? {
//!         WatchEvent::Change(c) => println!("build {} ({} files)", c.change.number, c.files.len()),
//!         WatchEvent::Reconnecting { wait, after } => {
//!             eprintln!("reconnecting in {wait:?}, resuming after {after}")
//!         }
//!     }
//! }
//! # }
//! ```
//!
//! Cloning a prebuilt workspace for a new build agent:
//!
//! ```no_run
//! # async fn example(conn: keel_client::Connection) -> Result<(), Box<dyn std::error::Error>> {
//! use keel_client::ops::{self, CloneQuery};
//!
//! let query = CloneQuery {
//!     source: "ci-built".into(),
//!     name: "agent-7".into(),
//!     root: "/build/agent-7".into(),
//!     host: None,
//!     description: None,
//!     with_untracked: true, // take the build outputs too
//! };
//! let done = ops::clone_workspace(&conn, query, |file, e| eprintln!("{file}: {e}")).await?;
//! println!("{} files, {} hard-linked", done.files, done.hard_linked);
//! # Ok(())
//! # }
//! ```

mod changes;
mod clone;
mod counters;
mod describe;
mod files;
mod opened;
mod records;
mod watch;
// ops31b
mod access;
mod admin;
mod branches;
mod checkpoint;
mod configure;
mod jobs;
mod labels;
mod login;
mod monitor;
mod reviews;
mod triggers;
mod typemap;
mod users;
mod webhooks;
mod workspaces;

pub use changes::{ChangeSince, ChangesQuery, SincePath, changes, changes_since};
pub use clone::{CloneError, CloneQuery, Cloned, clone_workspace};
pub use counters::{
    Counter, CounterOp, CounterUpdate, CounterUpdated, Space, counter, counters, update_counter,
};
pub use describe::{DescribeItem, DescribeQuery, describe};
pub use files::{FilesQuery, files};
pub use opened::{OpenedFile, OpenedQuery, opened};
pub use records::{ChangeSummary, QueryError, Records, Revision};
pub use watch::{Watch, WatchError, WatchEvent, WatchQuery, WatchedChange};
// ops31b
pub use access::{
    GroupSpec, ProtectLine, ProtectionsTable, ProtectsQuery, delete_group, group, groups,
    protections, protects, save_group, save_protections,
};
pub use admin::{Depot, ProxyState, ReplicaState, ServerInfo, create_depot, depots, info};
pub use branches::{BranchSpec, branch, branches, delete_branch, save_branch};
pub use checkpoint::{CheckpointDone, CheckpointEvent, checkpoint};
pub use configure::{Configured, Setting, set_setting, settings, unset_setting};
pub use jobs::{
    Fix, FixesQuery, JobRecord, JobSpecText, JobsQuery, delete_job, fix, fixes, job, job_spec,
    jobs, save_job, save_job_spec,
};
pub use labels::{
    LabelAction, LabelEntry, LabelSpec, TagQuery, delete_label, label, labels, labelsync,
    save_label, tag,
};
pub use login::{PasswordChange, Ticket, login, login_status, logout, set_password};
pub use monitor::{RunningCommand, monitor_show, monitor_terminate};
pub use reviews::{ReviewedChange, review, reviews};
pub use triggers::{TriggersError, save_triggers, triggers};
pub use typemap::{TypemapLine, save_typemap, typemap};
pub use users::{UserSpec, delete_user, save_user, user, users};
pub use webhooks::{Webhook, save_webhooks, webhooks};
pub use workspaces::{WorkspaceSpec, delete_workspace, save_workspace, workspace, workspaces};

// ops31a
mod annotate;
mod browse;
mod diff;
mod file_result;
mod grep;
mod integrate;
mod interchanges;
mod locks;
mod merge_state;
mod obliterate;
mod open;
mod populate;
mod resolve;
mod revert;
mod shelve;
mod sizes;
mod submit;
mod sync;
mod undo;
mod verify;

pub use annotate::{
    AnnotateChunk, AnnotateFollow, AnnotateQuery, AnnotatedLine, Whitespace, annotate,
};
pub use browse::{
    FileStat, FilelogQuery, Integration, LogEntry, OpenElsewhere, dirs, filelog, fstat,
};
pub use diff::{Diff2, diff_candidates, diff2};
pub use file_result::{FileResult, Outcome, ResolveResult};
pub use grep::{GrepHit, GrepKind, GrepList, GrepQuery, grep};
pub use integrate::{IntegrateMode, IntegrateQuery, integrate, integrated};
pub use interchanges::{ChangeSyncState, Interchange, InterchangesQuery, cstat, interchanges};
pub use locks::{LockQuery, UnlockScope, lock, unlock};
pub use merge_state::{IstatQuery, MergeState, PendingFlow, PruneItem, PrunedFile, istat, prune};
pub use obliterate::{ObliterateItem, ObliterateSummary, obliterate};
pub use open::{OpenFor, OpenQuery, ReopenQuery, move_file, open, reopen};
pub use populate::{PopulateQuery, Populated, populate};
pub use resolve::{resolve_done, resolve_list, resolved};
pub use revert::{RevertQuery, revert, unchanged_files};
pub use shelve::{
    ShelveError, ShelveQuery, Shelved, UnshelveQuery, delete_shelved, shelve, unshelve,
};
pub use sizes::{Size, SizesQuery, sizes};
pub use submit::{
    ChangeSave, DefaultChange, JobFix, SubmitError, SubmitPlan, SubmitProgress, SubmitQuery,
    Submitted, SubmittedFile, TriggerFailure, default_change, fix_jobs, plan_submit, save_change,
    submit,
};
pub use sync::{Have, SyncAction, SyncError, SyncQuery, SyncTotals, Synced, have, sync};
pub use undo::{UndoQuery, undo};
pub use verify::{VerifiedFile, VerifyItem, VerifyQuery, VerifyStatus, VerifyTotals, verify};
