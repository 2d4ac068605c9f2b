//! Who may do what: the protections table and groups compiled once per change of either
//! (cached here, keyed by the store's `access_version`), and the per-request [`Access`] every
//! command checks files and limits against.
//!
//! Until a protections table exists every user is a super user (as in Perforce); group limits
//! apply either way.

use crate::{Caller, ServiceError};
use keel_core::protect::{ProtectLine, parse_table};
use keel_core::{GroupLimits, GroupMembers, Level, Right, UserProtections, groups_of};
use keel_store::command::CommandCounters;
use keel_store::{GroupRow, MetaStore, ReadTxn};
use std::cell::Cell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The table and groups as of one `access_version`, with each user's compiled view of them.
struct Compiled {
    version: u64,
    /// The store's commit epoch when `version` was last confirmed.
    epoch: u64,
    /// `None`: no table yet.
    table: Option<Vec<ProtectLine>>,
    groups: Vec<GroupRow>,
    members: Vec<GroupMembers>,
    /// Per user, per client address (a user comes from few addresses): looked up by `&str`,
    /// with no key built per request.
    users: HashMap<String, Vec<ByAddress>>,
    /// Entries in `users`.
    cached: usize,
}

/// One user's access from one client address.
type ByAddress = (Option<IpAddr>, Arc<UserAccess>);

/// The service's cache of [`Compiled`] (one lock, held only to look up or insert).
pub(crate) struct AccessCache {
    compiled: Mutex<Option<Compiled>>,
    /// Groups read per page when rebuilding.
    page: usize,
    /// `ServiceConfig::access_cache_users`.
    max_users: usize,
}

/// What one user at one address may do, and the limits of their groups.
#[derive(Debug)]
pub struct UserAccess {
    /// `None`: no protections table, so the user is a super user.
    protections: Option<UserProtections>,
    /// The user's groups (subgroups followed).
    pub groups: Vec<String>,
    /// The most permissive of the groups' limits.
    pub limits: GroupLimits,
}

impl UserAccess {
    /// Whether the user has `right` on `path`.
    pub fn allows(&self, right: Right, path: &str) -> bool {
        self.protections
            .as_ref()
            .is_none_or(|p| p.allows(right, path))
    }

    /// Whether some line gives the user `right` somewhere.
    pub fn allows_anywhere(&self, right: Right) -> bool {
        self.protections
            .as_ref()
            .is_none_or(|p| p.allows_anywhere(right))
    }

    /// Whether no protections table exists (everything is allowed, nothing hidden).
    pub fn unrestricted(&self) -> bool {
        self.protections.is_none()
    }

    /// The highest level held anywhere (`super` without a table).
    pub fn max_level(&self) -> Option<Level> {
        match &self.protections {
            None => Some(Level::Super),
            Some(p) => p.max_level(),
        }
    }
}

/// One request's access: the caller's [`UserAccess`] plus the rows it has scanned and
/// returned so far, checked against MaxScanRows and MaxResults. Every row scanned also counts
/// as read in the running command's counters (the command log's `rows_read`), taken from the
/// thread that made the `Access`.
pub(crate) struct Access {
    pub(crate) user: Arc<UserAccess>,
    scanned: Cell<u64>,
    returned: Cell<u64>,
    command: Option<Arc<CommandCounters>>,
}

impl Access {
    pub(crate) fn for_user(user: Arc<UserAccess>) -> Access {
        Access {
            user,
            scanned: Cell::new(0),
            returned: Cell::new(0),
            command: keel_store::command::current(),
        }
    }

    /// Whether the caller may see `path` at all (files they may not list are absent).
    pub(crate) fn lists(&self, path: &str) -> bool {
        self.user.allows(Right::List, path)
    }

    /// Whether the caller may read `path`'s content.
    pub(crate) fn allows_read(&self, path: &str) -> bool {
        self.user.allows(Right::Read, path)
    }

    /// `right` on `path`, or a refusal naming the file and the right.
    pub(crate) fn require(&self, right: Right, path: &str) -> Result<(), ServiceError> {
        if self.user.allows(right, path) {
            Ok(())
        } else {
            Err(ServiceError::PermissionDenied {
                file: path.to_string(),
                needed: right,
            })
        }
    }

    /// `right` somewhere (a server-wide command's check), or a refusal naming the command.
    pub(crate) fn require_anywhere(
        &self,
        command: &'static str,
        right: Right,
    ) -> Result<(), ServiceError> {
        if self.user.allows_anywhere(right) {
            Ok(())
        } else {
            Err(ServiceError::CommandDenied {
                command,
                needed: right,
            })
        }
    }

    /// Counts one row read from the store (MaxScanRows, and the command's rows read).
    pub(crate) fn scan(&self) -> Result<(), ServiceError> {
        if let Some(c) = &self.command {
            c.add_row_read();
        }
        count(&self.scanned, self.user.limits.max_scan_rows, "maxscanrows")
    }

    /// Counts one row the command returns (MaxResults).
    pub(crate) fn result(&self) -> Result<(), ServiceError> {
        count(&self.returned, self.user.limits.max_results, "maxresults")
    }

    /// Refuses opening `files` files at once beyond MaxOpenFiles.
    pub(crate) fn check_open_files(&self, files: usize) -> Result<(), ServiceError> {
        match self.user.limits.max_open_files.bound() {
            Some(max) if files as u64 > max => Err(too_large("maxopenfiles", max)),
            _ => Ok(()),
        }
    }

    /// A clock for one write job: [`LockTimer::check`] fails once the job has held the writer
    /// longer than MaxLockTime, so the job rolls back.
    pub(crate) fn lock_timer(&self) -> LockTimer {
        LockTimer {
            max_ms: self.user.limits.max_lock_time.bound(),
            start: Instant::now(),
        }
    }
}

fn too_large(limit: &'static str, max: u64) -> ServiceError {
    tracing::warn!(limit, max, "group limit stopped a command");
    ServiceError::RequestTooLarge { limit, max }
}

fn count(
    counter: &Cell<u64>,
    limit: keel_core::Limit,
    name: &'static str,
) -> Result<(), ServiceError> {
    let n = counter.get() + 1;
    counter.set(n);
    match limit.bound() {
        Some(max) if n > max => Err(too_large(name, max)),
        _ => Ok(()),
    }
}

/// Measures how long a write job has held the writer (see [`Access::lock_timer`]).
#[derive(Clone, Copy)]
pub(crate) struct LockTimer {
    max_ms: Option<u64>,
    start: Instant,
}

impl LockTimer {
    /// Restarts the clock: call first thing inside the write job.
    pub(crate) fn start(mut self) -> LockTimer {
        self.start = Instant::now();
        self
    }

    /// Fails when the job has held the writer longer than MaxLockTime.
    pub(crate) fn check(&self) -> Result<(), ServiceError> {
        match self.max_ms {
            Some(max) if self.start.elapsed().as_millis() > u128::from(max) => {
                Err(too_large("maxlocktime", max))
            }
            _ => Ok(()),
        }
    }
}

impl AccessCache {
    pub(crate) fn new(config: &crate::ServiceConfig) -> AccessCache {
        AccessCache {
            compiled: Mutex::new(None),
            page: config.page_size.max(1),
            max_users: config.access_cache_users.max(1),
        }
    }

    /// The caller's access now: the cached copy while the store's commit epoch says nothing
    /// was written since it was checked, else checked against `access_version` in a fresh
    /// snapshot (rebuilt when groups or protections changed); each user (and address)
    /// compiled once.
    pub(crate) fn user(
        &self,
        meta: &dyn MetaStore,
        caller: &Caller,
    ) -> Result<Arc<UserAccess>, ServiceError> {
        // Read before the snapshot below: an epoch seen again later means no write ended since.
        let epoch = meta.commit_epoch();
        {
            let mut guard = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(compiled) = guard.as_mut().filter(|c| c.epoch == epoch) {
                return Ok(self.user_in(compiled, caller));
            }
        }
        let snap = meta.snapshot()?;
        let version = snap.access_version()?;
        let mut guard = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(compiled) if compiled.version == version => compiled.epoch = epoch,
            _ => {
                drop(guard);
                let fresh = compile(snap.as_ref(), version, epoch, self.page)?;
                guard = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
                *guard = Some(fresh);
            }
        }
        let compiled = guard.as_mut().expect("compiled just above");
        Ok(self.user_in(compiled, caller))
    }

    fn user_in(&self, compiled: &mut Compiled, caller: &Caller) -> Arc<UserAccess> {
        let cached = compiled.users.get(caller.user.as_str()).and_then(|at| {
            at.iter()
                .find(|(address, _)| *address == caller.address)
                .map(|(_, user)| user.clone())
        });
        if let Some(user) = cached {
            return user;
        }
        let user = Arc::new(user_access(compiled, &caller.user, caller.address));
        if compiled.cached >= self.max_users {
            compiled.users.clear();
            compiled.cached = 0;
        }
        compiled
            .users
            .entry(caller.user.clone())
            .or_default()
            .push((caller.address, user.clone()));
        compiled.cached += 1;
        user
    }

    /// The protections table's lines now (parsed).
    pub(crate) fn table(
        &self,
        meta: &dyn MetaStore,
    ) -> Result<Option<Vec<ProtectLine>>, ServiceError> {
        let epoch = meta.commit_epoch();
        {
            let guard = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(c) = guard.as_ref().filter(|c| c.epoch == epoch) {
                return Ok(c.table.clone());
            }
        }
        let snap = meta.snapshot()?;
        let version = snap.access_version()?;
        Ok(compile(snap.as_ref(), version, epoch, self.page)?.table)
    }
}

fn user_access(compiled: &Compiled, user: &str, address: Option<IpAddr>) -> UserAccess {
    let groups = groups_of(user, &compiled.members);
    let limits = compiled
        .groups
        .iter()
        .filter(|g| groups.binary_search(&g.name).is_ok())
        .fold(GroupLimits::default(), |acc, g| {
            acc.most_permissive(g.limits)
        });
    let protections = compiled
        .table
        .as_ref()
        .map(|t| UserProtections::compile(t, user, &groups, address));
    UserAccess {
        protections,
        groups,
        limits,
    }
}

fn compile(
    snap: &dyn ReadTxn,
    version: u64,
    epoch: u64,
    page: usize,
) -> Result<Compiled, ServiceError> {
    let lines = snap.protections()?;
    let table = if lines.is_empty() {
        None
    } else {
        // The table was checked when saved; a line that no longer parses is skipped (and
        // logged) rather than locking everyone out.
        let mut parsed = Vec::new();
        for (i, text) in lines.iter().enumerate() {
            match parse_table(std::slice::from_ref(text)) {
                Ok(mut l) => parsed.append(&mut l),
                Err(e) => {
                    tracing::error!(line = i + 1, error = %e, "stored protections line skipped")
                }
            }
        }
        Some(parsed)
    };
    let mut groups = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let rows = snap.list_groups(after.as_deref(), page)?;
        let full = rows.len() == page;
        after = rows.last().map(|g| g.name.clone());
        groups.extend(rows);
        if !full {
            break;
        }
    }
    let members = groups
        .iter()
        .map(|g| GroupMembers {
            name: g.name.clone(),
            users: g.users.clone(),
            subgroups: g.subgroups.clone(),
        })
        .collect();
    Ok(Compiled {
        version,
        epoch,
        table,
        groups,
        members,
        users: HashMap::new(),
        cached: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_core::Limit;

    fn with_limits(limits: GroupLimits) -> Access {
        Access::for_user(Arc::new(UserAccess {
            protections: None,
            groups: Vec::new(),
            limits,
        }))
    }

    #[test]
    fn scanned_rows_count_as_the_commands_rows_read() {
        let c = Arc::new(CommandCounters::default());
        let access = {
            let _entered = keel_store::command::enter(Some(c.clone()));
            with_limits(GroupLimits::default())
        };
        // Counted on whatever thread scans, once made under the command.
        for _ in 0..5 {
            access.scan().unwrap();
        }
        assert_eq!(c.rows_read(), 5);
        let outside = with_limits(GroupLimits::default());
        outside.scan().unwrap();
        assert_eq!(c.rows_read(), 5);
    }

    fn limit_of(e: ServiceError) -> (&'static str, u64) {
        match e {
            ServiceError::RequestTooLarge { limit, max } => (limit, max),
            other => panic!("not a limit: {other}"),
        }
    }

    #[test]
    fn row_limits_allow_exactly_their_count() {
        let access = with_limits(GroupLimits {
            max_results: Limit::Max(2),
            max_scan_rows: Limit::Max(3),
            ..GroupLimits::default()
        });
        access.result().unwrap();
        access.result().unwrap();
        assert_eq!(limit_of(access.result().unwrap_err()), ("maxresults", 2));
        for _ in 0..3 {
            access.scan().unwrap();
        }
        assert_eq!(limit_of(access.scan().unwrap_err()), ("maxscanrows", 3));
        access.check_open_files(usize::MAX).unwrap();
        let unlimited = with_limits(GroupLimits::default());
        for _ in 0..10_000 {
            unlimited.result().unwrap();
        }
    }

    #[test]
    fn open_files_and_lock_time_limits() {
        let access = with_limits(GroupLimits {
            max_open_files: Limit::Max(5),
            max_lock_time: Limit::Max(0),
            ..GroupLimits::default()
        });
        access.check_open_files(5).unwrap();
        assert_eq!(
            limit_of(access.check_open_files(6).unwrap_err()),
            ("maxopenfiles", 5)
        );
        // At least 2 ms held (a lower bound, whatever the machine): over a limit of 0 ms.
        let timer = access.lock_timer().start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(limit_of(timer.check().unwrap_err()), ("maxlocktime", 0));
        let free = with_limits(GroupLimits::default()).lock_timer().start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        free.check().unwrap();
    }
}
