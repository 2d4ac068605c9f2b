//! Keel's commands over the metadata store and the content store, independent of any wire.
//!
//! Every entry point takes a [`Caller`] and returns typed records ([`records`]); commands that
//! can touch an unbounded number of files stream their results through a sink callback instead
//! of collecting them. Reads run on store snapshots; writes go through the store's single
//! grouped writer, planned on a snapshot first so the writer is held only to re-check and apply.

mod access;
pub mod annotate;
mod args;
mod auth;
mod branches;
pub mod browse;
pub mod changes;
pub mod command;
mod commit_signal;
mod config;
mod content;
mod context;
mod counters;
mod cstat;
mod depots;
mod describe_shelf;
mod dirs;
mod error;
mod expand;
mod grep;
mod groups;
mod have_token;
pub use keel_store::FixRow;
pub use keel_store::failpoints;
mod fileinfo;
mod fixes;
pub mod integrate;
mod interchanges;
mod istat;
mod jobs;
mod jobs_search;
mod keep_revisions;
mod key_file;
mod labels;
mod labelsync;
mod locks;
mod monitor;
pub mod obliterate;
pub mod open;
mod open_moved;
mod opened_change;
mod orphaned_locks;
mod paging;
mod populate;
mod print_all;
mod protections;
mod prune;
pub mod records;
mod reserved;
pub mod resolve;
mod rev_range;
mod reviews;
pub mod shelve;
mod size_limits;
mod sizes;
mod submit;
mod sync;
mod sync_since;
mod triggers;
mod typemap;
mod undo;
mod upload;
mod upload_pool;
pub mod verify;
mod watch;
mod webhooks;
mod workspace_clone;
mod workspaces;

pub use access::UserAccess;
pub use annotate::{AnnotateFollow, AnnotateOptions, AnnotatePart, AnnotatedText, LineOrigin};
pub use auth::{Credentials, PasswordCheckStats, ProvenTicket, SettingValue, TicketInfo, UserSpec};
pub use auth::{P4_DIGEST_KEY_FILE, PasswordInput, p4_password_md5};
pub use browse::{HaveUpdate, ListOptions};
pub use changes::{ChangesQuery, DescribePart};
pub use commit_signal::CommitListener;
pub use config::ServiceConfig;
pub use content::ContentOf;
pub use counters::{CounterOp, CounterUpdate};
pub use cstat::ChangeSync;
pub use dirs::DirsOptions;
pub use error::{
    AccessError, AuthError, ChangeError, CounterOpError, DepotError, IntegrateError, JobsError,
    LabelError, ObliterateError, OpenError, PruneError, ServiceError, ShelveError, SpecError,
    SpecKind, SubmitError, TriggerFailure, TriggerFailureReason, UploadError,
};
pub use fixes::{DEFAULT_FIX_STATUS, FixesQuery};
pub use grep::{GrepLineKind, GrepList, GrepOptions, GrepPart, GrepSkip};
pub use groups::GroupSpec;
pub use have_token::{HaveListing, HavePart};
pub use integrate::{IntegrateMode, IntegrateRequest};
pub use interchanges::{Interchange, PendingIntegration};
pub use istat::{IntegStatus, IstatRequest, PendingFlow};
pub use jobs::{JobInfo, JobSpecInfo};
pub use jobs_search::JobsQuery;
pub use key_file::{KeyFileError, load_or_create_key};
pub use labels::DEFAULT_LABEL_VIEW;
pub use labelsync::TagOptions;
pub use monitor::MonitorAccess;
pub use obliterate::ObliterateTotals;
pub use open::{OpenAction, OpenRequest};
pub use populate::{PopulateRequest, Populated, PopulatedFile};
pub use protections::{ProtectEntry, ProtectionsTable, ProtectsQuery};
pub use prune::PrunedFile;
pub use records::*;
pub use resolve::{IntegInfo, ResolveOutcome};
pub use reviews::{ReviewChange, ReviewFrom};
pub use shelve::ShelveSession;
pub use sizes::{SizeEntry, SizesOptions};
pub use submit::SubmitSession;
pub use sync::{SyncAction, SyncEvent, SyncItem, SyncMark, SyncOptions, SyncTotals};
pub use triggers::FormSpec;
pub use undo::UndoRequest;
pub use upload::Uploads;
pub use verify::{
    Damage, StoredFile, VerifiedFile, VerifyEvent, VerifyOptions, VerifyOutcome, VerifyTotals,
};
pub use watch::{SinceSpec, WatchLimits, WatchedChange};
pub use workspace_clone::{CloneEvent, CloneOutcome};

use keel_blob::BlobStore;
use keel_store::{MetaStore, SqliteHaveStore};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Who is asking.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    pub user: String,
    /// Empty when the command needs no workspace.
    pub workspace: String,
    /// The host name the client reports (a workspace's `Host` field is checked against it).
    pub host: String,
    /// The client's network address as the server saw it (protections match hosts against
    /// it); `None` when the caller is not on a network connection.
    pub address: Option<std::net::IpAddr>,
    /// A super user's override (`-f`): act on a workspace or pending change of another user.
    /// Ignored (the refusal stands) for anyone who is not a super user.
    pub force: bool,
}

/// Source of the current time (seconds since the Unix epoch); injected so tests can pin it.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    })
}

/// The Keel commands.
pub struct Service {
    meta: Arc<dyn MetaStore>,
    have: SqliteHaveStore,
    blobs: Arc<dyn BlobStore>,
    clock: Clock,
    config: ServiceConfig,
    root: PathBuf,
    started: Instant,
    /// Users on record, with the Access time last written for each.
    known_users: Mutex<HashMap<String, i64>>,
    limiter: auth::LoginLimiter,
    /// Every password hash runs through it (bounded memory whatever clients send).
    hashes: auth::HashGate,
    /// The stand-in hash checked for a user without a password (`auth/passwords.rs`).
    stand_in_hash: std::sync::OnceLock<String>,
    /// The key P4 password verifiers are sealed with; set when `p4_password_digests` is on.
    p4_digests: std::sync::OnceLock<auth::DigestKey>,
    /// Tickets found to be a service user's, until the next write (`auth/forwarders.rs`).
    forwarders: auth::Admitted,
    /// Where triggers reach this server (`Service::set_server_address`).
    server_address: std::sync::OnceLock<String>,
    /// Submits running their change-content triggers (what `//...@=N` prints meanwhile).
    in_flight: triggers::InFlight,
    access: access::AccessCache,
    /// Callers `authenticate` let in since the last write.
    admitted: auth::Admitted,
    /// Tickets of running triggers (`KEEL_TICKET`), in memory only.
    run_tickets: auth::RunTickets,
    /// Told of every submit (`Service::on_commit`).
    commits: commit_signal::CommitSignal,
}

impl Service {
    pub fn new(
        meta: Arc<dyn MetaStore>,
        have: SqliteHaveStore,
        blobs: Arc<dyn BlobStore>,
        clock: Clock,
        config: ServiceConfig,
        root: PathBuf,
    ) -> Service {
        let access = access::AccessCache::new(&config);
        Service {
            limiter: auth::LoginLimiter::new(&config),
            hashes: auth::HashGate::new(config.password_check_threads, config.password_check_queue),
            stand_in_hash: std::sync::OnceLock::new(),
            p4_digests: std::sync::OnceLock::new(),
            forwarders: auth::Admitted::new(1024),
            admitted: auth::Admitted::new(config.access_cache_users),
            meta,
            have,
            blobs,
            clock,
            config,
            root,
            started: Instant::now(),
            known_users: Mutex::new(HashMap::new()),
            server_address: std::sync::OnceLock::new(),
            in_flight: Default::default(),
            run_tickets: Default::default(),
            commits: Default::default(),
            access,
        }
    }

    fn now(&self) -> i64 {
        (self.clock)()
    }

    /// What the password-check gate has counted (passwords checked, checks refused as busy
    /// or by the login limits), for the metrics.
    pub fn password_check_stats(&self) -> auth::PasswordCheckStats {
        self.hashes.stats()
    }

    /// Server facts for `keel info`.
    pub fn info(&self, caller: &Caller) -> Result<ServerInfo, ServiceError> {
        self.touch_user(caller)?;
        self.server_info(caller)
    }

    /// Server facts without recording the caller as a user (`info` from P4 clients, which
    /// names an unknown user `*unknown*` and creates no one).
    pub fn server_info(&self, caller: &Caller) -> Result<ServerInfo, ServiceError> {
        let snap = self.meta.snapshot()?;
        let security = auth::security_level(snap.as_ref())?.number();
        let workspace_root = if caller.workspace.is_empty() {
            String::new()
        } else {
            snap.get_workspace(&caller.workspace)?
                .map(|w| w.root)
                .unwrap_or_default()
        };
        Ok(ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            root: self.root.display().to_string(),
            uptime_seconds: self.started.elapsed().as_secs(),
            user: caller.user.clone(),
            workspace: caller.workspace.clone(),
            workspace_root,
            server_time: self.now(),
            security,
        })
    }

    /// Whether the caller's user is already recorded (and its Access time recent enough), so
    /// a read by them writes nothing (the server answers such small reads on its runtime
    /// threads).
    pub fn user_known(&self, caller: &Caller) -> bool {
        context::user_name(&caller.user).is_ok_and(|user| self.access_recorded(&user))
    }

    fn access_recorded(&self, user: &str) -> bool {
        let every = i64::try_from(self.config.user_access_update_secs).unwrap_or(i64::MAX);
        self.known_users
            .lock()
            .expect("user cache is never poisoned")
            .get(user)
            .is_some_and(|&at| self.now() < at.saturating_add(every))
    }

    /// Drops a deleted user from the cache, so their next command records them again.
    fn forget_user(&self, user: &str) {
        self.known_users
            .lock()
            .expect("user cache is never poisoned")
            .remove(user);
    }

    /// A read command's start: the caller recorded (see [`Service::touch_user`]), a snapshot to
    /// read from, and what the caller may see.
    fn read_as(
        &self,
        caller: &Caller,
    ) -> Result<(Box<dyn keel_store::ReadTxn + '_>, crate::access::Access), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        Ok((snap, who))
    }

    /// Records a user the first time it is seen (users are created on first use below
    /// security level 4), and their Access time at most every `user_access_update_secs`.
    fn touch_user(&self, caller: &Caller) -> Result<(), ServiceError> {
        let user = context::user_name(&caller.user)?;
        if self.access_recorded(&user) {
            return Ok(());
        }
        let now = self.now();
        let name = user.clone();
        let recorded = keel_store::write(self.meta.as_ref(), move |txn| {
            if txn.get_user(&name)?.is_some() {
                txn.set_user_accessed(&name, now)?;
            } else if auth::security_level(&*txn)?.creates_users_on_first_use() {
                txn.ensure_user(&name, now)?;
            }
            Ok::<_, ServiceError>(())
        });
        match recorded {
            // A read-only replica records no user: only its primary's journal writes there.
            Ok(_) | Err(ServiceError::Store(keel_store::StoreError::ReadOnly { .. })) => {}
            Err(e) => return Err(e),
        }
        self.known_users
            .lock()
            .expect("user cache is never poisoned")
            .insert(user, now);
        Ok(())
    }
}
