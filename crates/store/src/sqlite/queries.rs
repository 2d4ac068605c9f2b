//! The SQL behind [`ReadTxn`] and [`WriteTxn`], shared by snapshots and the writer.

use super::bulk_journal::{BulkJournal, Op};
use super::codec::{
    self, BRANCH_COLUMNS, CHANGE_COLUMNS, DEPOT_COLUMNS, INTEG_COLUMNS, LABEL_COLUMNS,
    OPENED_COLUMNS, REVISION_COLUMNS, SHELVED_COLUMNS, WORKSPACE_COLUMNS,
};
use super::counters;
use super::jobs;
use super::pool::Snapshot;
use super::submit;
use super::users;
use crate::{
    BranchRow, ChangeFilter, ChangeRow, DepotRow, FixRow, GroupRow, IntegRow, JobRow, LabelRow,
    OpenedRow, PathRange, ReadTxn, RevisionRow, ShelvedRow, StoreError, TicketRow, UserRow,
    WorkspaceRow, WriteTxn,
};
use keel_core::{
    ChangeNumber, CounterSpace, DepotPath, Digest, TriggerLine, TypemapLine, WebhookLine,
};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

/// Anything holding a connection inside a transaction.
pub(crate) trait HasConn {
    fn conn(&self) -> &Connection;
}

/// The writer's transaction.
pub(crate) struct Tx<'c> {
    pub(crate) conn: &'c Connection,
    /// Present when the job may journal the rows of set-based writes itself (see
    /// [`super::bulk_journal`]).
    pub(crate) bulk: Option<BulkJournal<'c>>,
}

impl Tx<'_> {
    /// Counts a job that kept its changes (see [`ReadTxn::jobs_written`]); runs inside the
    /// job's savepoint, so a job rolled back is not counted.
    pub(crate) fn count_job(&self) -> Result<(), StoreError> {
        bump_counter(self.conn, "jobs_written")
    }
}

/// Adds one to counter `name` (created at 1).
pub(super) fn bump_counter(conn: &Connection, name: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO counters VALUES (?1, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1",
    )?
    .execute([name])?;
    Ok(())
}

/// Counter `name`; 0 until first bumped.
pub(super) fn read_counter(conn: &Connection, name: &str) -> Result<u64, StoreError> {
    let value: Option<i64> = one(
        conn,
        "SELECT value FROM counters WHERE name = ?1",
        [name],
        |r| r.get(0),
    )?;
    Ok(value.unwrap_or(0) as u64)
}

impl HasConn for Tx<'_> {
    fn conn(&self) -> &Connection {
        self.conn
    }
}

impl HasConn for Snapshot<'_> {
    fn conn(&self) -> &Connection {
        Snapshot::conn(self)
    }
}

fn collect<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, map)?;
    Ok(rows.collect::<rusqlite::Result<Vec<T>>>()?)
}

/// At most one row, through the statement cache (`Connection::query_row` re-parses its SQL).
fn one<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Result<Option<T>, StoreError> {
    Ok(conn
        .prepare_cached(sql)?
        .query_row(params, map)
        .optional()?)
}

/// Where a paged range scan resumes: the range's start, or the last path seen when later.
///
/// Paged queries bound the scan with this single lower bound. Given both `path >= lo` and
/// `path > after`, SQLite seeks on the first and filters on the second, so every page would
/// rescan the range from its start (quadratic in the range's size).
/// The stored names of the actions that delete a file ([`keel_core::FileAction::is_delete`]),
/// as an SQL list; written out so the queries using it are `&'static str` (checked below).
macro_rules! deleted_actions {
    () => {
        "('delete', 'move/delete')"
    };
}

fn resume_at<'a>(range: &'a PathRange, after: &'a str) -> &'a str {
    std::cmp::max(range.lo.as_str(), after)
}

fn lim(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

fn num(change: ChangeNumber) -> i64 {
    i64::try_from(change.0).unwrap_or(i64::MAX)
}

impl<T: HasConn> ReadTxn for T {
    fn job_spec(&self) -> Result<Option<(String, i64)>, StoreError> {
        jobs::job_spec(self.conn())
    }

    fn get_job(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::get_job(self.conn(), name)
    }

    fn list_jobs(&self, after: Option<&str>, limit: usize) -> Result<Vec<JobRow>, StoreError> {
        jobs::list_jobs(self.conn(), after, limit)
    }

    fn jobs_by_word(
        &self,
        range: &keel_core::job::WordRange,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        jobs::jobs_by_word(self.conn(), range, after, limit)
    }

    fn fixes_of_job(&self, job: &str) -> Result<Vec<FixRow>, StoreError> {
        jobs::fixes_of_job(self.conn(), job)
    }

    fn fixes_of_change(&self, change: ChangeNumber) -> Result<Vec<FixRow>, StoreError> {
        jobs::fixes_of_change(self.conn(), change)
    }

    fn list_fixes(
        &self,
        before: Option<(ChangeNumber, &str)>,
        limit: usize,
    ) -> Result<Vec<FixRow>, StoreError> {
        jobs::list_fixes(self.conn(), before, limit)
    }

    fn change_counter(&self) -> Result<ChangeNumber, StoreError> {
        let value: i64 = self
            .conn()
            .prepare_cached("SELECT value FROM counters WHERE name = 'change'")?
            .query_row([], |r| r.get(0))?;
        Ok(ChangeNumber(value as u64))
    }

    fn get_counter(&self, space: CounterSpace, name: &str) -> Result<Option<String>, StoreError> {
        counters::get(self.conn(), space, name)
    }

    fn list_counters(
        &self,
        space: CounterSpace,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, String)>, StoreError> {
        counters::list(self.conn(), space, after, lim(limit))
    }

    fn get_user(&self, name: &str) -> Result<Option<UserRow>, StoreError> {
        users::get_user(self.conn(), name)
    }

    fn list_users(&self, after: Option<&str>, limit: usize) -> Result<Vec<UserRow>, StoreError> {
        users::list_users(self.conn(), after, limit)
    }

    fn get_ticket(&self, hash: &[u8; 32]) -> Result<Option<TicketRow>, StoreError> {
        users::get_ticket(self.conn(), hash)
    }
    fn tickets_of(&self, user: &str, now: i64, limit: usize) -> Result<Vec<TicketRow>, StoreError> {
        users::tickets_of(self.conn(), user, now, limit)
    }

    fn get_setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        users::get_setting(self.conn(), name)
    }

    fn list_settings(&self) -> Result<Vec<(String, String)>, StoreError> {
        users::list_settings(self.conn())
    }

    fn get_depot(&self, name: &str) -> Result<Option<DepotRow>, StoreError> {
        let sql = format!("SELECT {DEPOT_COLUMNS} FROM depots WHERE name = ?1");
        one(self.conn(), &sql, [name], codec::depot)
    }

    fn triggers(&self) -> Result<Vec<TriggerLine>, StoreError> {
        let sql = "SELECT name, kind, path, command FROM triggers ORDER BY seq";
        collect(self.conn(), sql, [], codec::trigger)
    }

    fn typemap(&self) -> Result<Vec<TypemapLine>, StoreError> {
        let sql = "SELECT file_type, pattern FROM typemap ORDER BY seq";
        collect(self.conn(), sql, [], codec::typemap_line)
    }

    fn webhooks(&self) -> Result<Vec<(WebhookLine, crate::WebhookStateRow)>, StoreError> {
        super::webhooks::webhooks(self.conn())
    }

    fn list_depots(&self) -> Result<Vec<DepotRow>, StoreError> {
        let sql = format!("SELECT {DEPOT_COLUMNS} FROM depots ORDER BY name");
        collect(self.conn(), &sql, [], codec::depot)
    }

    fn get_workspace(&self, name: &str) -> Result<Option<WorkspaceRow>, StoreError> {
        let sql = format!("SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE name = ?1");
        one(self.conn(), &sql, [name], codec::workspace)
    }

    fn list_workspaces(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<WorkspaceRow>, StoreError> {
        let sql = format!(
            "SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE name > ?1 ORDER BY name LIMIT ?2"
        );
        collect(
            self.conn(),
            &sql,
            params![after.unwrap_or(""), lim(limit)],
            codec::workspace,
        )
    }

    fn get_change(&self, change: ChangeNumber) -> Result<Option<ChangeRow>, StoreError> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes WHERE change = ?1");
        one(self.conn(), &sql, [num(change)], codec::change)
    }

    fn list_changes(
        &self,
        filter: &ChangeFilter,
        before: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<ChangeRow>, StoreError> {
        self.list_changes_bounded(filter, before, limit, usize::MAX)
    }

    fn list_changes_bounded(
        &self,
        filter: &ChangeFilter,
        before: Option<ChangeNumber>,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<ChangeRow>, StoreError> {
        let sql = format!(
            "SELECT {CHANGE_COLUMNS} FROM changes WHERE change < ?1 \
             AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR user = ?3) \
             AND (?4 IS NULL OR workspace = ?4) ORDER BY change DESC LIMIT ?5"
        );
        let before = before.map(num).unwrap_or(i64::MAX);
        let status = filter.status.map(|s| s.as_str());
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut rows = stmt.query(params![
            before,
            status,
            filter.user,
            filter.workspace,
            lim(limit)
        ])?;
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        while let Some(row) = rows.next()? {
            let change = codec::change(row)?;
            bytes = bytes.saturating_add(change.description.len());
            out.push(change);
            if bytes >= max_bytes {
                break;
            }
        }
        Ok(out)
    }

    fn change_file_count(&self, change: &ChangeRow) -> Result<u32, StoreError> {
        let sql = match change.status {
            crate::ChangeStatus::Submitted => "SELECT count(*) FROM revisions WHERE change = ?1",
            crate::ChangeStatus::Pending => {
                "SELECT count(*) FROM opened WHERE change = ?1 AND workspace = ?2"
            }
        };
        let mut stmt = self.conn().prepare_cached(sql)?;
        let count: i64 = if stmt.parameter_count() == 2 {
            stmt.query_row(params![num(change.change), change.workspace], |r| r.get(0))?
        } else {
            stmt.query_row(params![num(change.change)], |r| r.get(0))?
        };
        Ok(count as u32)
    }

    fn head_revisions(
        &self,
        range: &PathRange,
        after: Option<&str>,
        at: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<RevisionRow>, StoreError> {
        // SQLite returns the bare columns of the row holding max(rev) in each group.
        let sql = format!(
            "SELECT {REVISION_COLUMNS}, max(rev) FROM revisions \
             WHERE path >= ?1 AND path < ?2 AND path <> ?3 AND change <= ?4 \
             GROUP BY path ORDER BY path LIMIT ?5"
        );
        let after = after.unwrap_or("");
        let at = at.map(num).unwrap_or(i64::MAX);
        collect(
            self.conn(),
            &sql,
            params![resume_at(range, after), range.hi, after, at, lim(limit)],
            codec::revision,
        )
    }

    fn head_revision(&self, path: &DepotPath) -> Result<Option<RevisionRow>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE path = ?1 ORDER BY rev DESC LIMIT 1"
        );
        one(self.conn(), &sql, [path.as_str()], codec::revision)
    }

    fn file_revisions(&self, path: &DepotPath) -> Result<Vec<RevisionRow>, StoreError> {
        let sql =
            format!("SELECT {REVISION_COLUMNS} FROM revisions WHERE path = ?1 ORDER BY rev DESC");
        collect(self.conn(), &sql, [path.as_str()], codec::revision)
    }

    fn revision(&self, path: &DepotPath, rev: u32) -> Result<Option<RevisionRow>, StoreError> {
        let sql = format!("SELECT {REVISION_COLUMNS} FROM revisions WHERE path = ?1 AND rev = ?2");
        one(
            self.conn(),
            &sql,
            params![path.as_str(), rev],
            codec::revision,
        )
    }

    fn revisions_at(&self, wanted: &[(&str, u32)]) -> Result<Vec<RevisionRow>, StoreError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        // `json_each` has a `path` column of its own: the revision's columns are qualified.
        let columns = REVISION_COLUMNS
            .split(", ")
            .map(|c| format!("r.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {columns} FROM json_each(?1) AS j CROSS JOIN revisions AS r \
             ON r.path = j.value ->> 0 AND r.rev = j.value ->> 1 ORDER BY j.key"
        );
        let list = serde_json::to_string(wanted)
            .map_err(|e| StoreError::Corrupt(format!("revision lookup list: {e}")))?;
        collect(self.conn(), &sql, params![list], codec::revision)
    }

    fn change_revisions(
        &self,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RevisionRow>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE change = ?1 AND path > ?2 \
             ORDER BY path LIMIT ?3"
        );
        collect(
            self.conn(),
            &sql,
            params![num(change), after.unwrap_or(""), lim(limit)],
            codec::revision,
        )
    }

    fn range_changes(
        &self,
        range: &PathRange,
        before: Option<ChangeNumber>,
        limit: usize,
    ) -> Result<Vec<(ChangeNumber, DepotPath)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT change, path FROM revisions WHERE path >= ?1 AND path < ?2 AND change < ?3 \
             ORDER BY change DESC, path LIMIT ?4",
        )?;
        let before = before.map(num).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![range.lo, range.hi, before, lim(limit)], |r| {
            Ok((
                ChangeNumber(r.get::<_, i64>(0)? as u64),
                codec::path_at(r, 1)?,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn range_changes_after(
        &self,
        range: &PathRange,
        after: ChangeNumber,
        limit: usize,
    ) -> Result<Vec<(ChangeNumber, DepotPath)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT change, path FROM revisions WHERE change > ?3 AND path >= ?1 AND path < ?2 \
             ORDER BY change, path LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![range.lo, range.hi, num(after), lim(limit)], |r| {
            Ok((
                ChangeNumber(r.get::<_, i64>(0)? as u64),
                codec::path_at(r, 1)?,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn next_path(&self, range: &PathRange, after: &str) -> Result<Option<DepotPath>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT path FROM revisions WHERE path > ?1 AND path >= ?2 AND path < ?3 \
             ORDER BY path LIMIT 1",
        )?;
        Ok(stmt
            .query_row(params![after, range.lo, range.hi], |r| codec::path_at(r, 0))
            .optional()?)
    }

    fn next_subdir_path(
        &self,
        range: &PathRange,
        after: &str,
    ) -> Result<Option<DepotPath>, StoreError> {
        // One lower bound for the seek (see `resume_at`); the directory's own files are
        // stepped over by the `instr` test inside SQLite.
        let sql = if after >= range.lo.as_str() {
            "SELECT path FROM revisions WHERE path > ?1 AND path < ?2 \
             AND instr(substr(path, ?3), '/') > 0 ORDER BY path LIMIT 1"
        } else {
            "SELECT path FROM revisions WHERE path >= ?1 AND path < ?2 \
             AND instr(substr(path, ?3), '/') > 0 ORDER BY path LIMIT 1"
        };
        let bound = resume_at(range, after);
        // `substr` counts characters (not bytes) from 1.
        let start = range.lo.chars().count() as i64 + 1;
        Ok(self
            .conn()
            .prepare_cached(sql)?
            .query_row(params![bound, range.hi, start], |r| codec::path_at(r, 0))
            .optional()?)
    }

    fn any_delete_in(&self, range: &PathRange) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(concat!(
                "SELECT 1 FROM revisions INDEXED BY revisions_deleted WHERE path>=?1 AND path<?2 \
                 AND action IN",
                deleted_actions!(),
                " LIMIT 1"
            ))?
            .exists(params![range.lo.as_str(), range.hi.as_str()])?)
    }

    fn next_live_subdir_path(
        &self,
        range: &PathRange,
        after: &str,
    ) -> Result<Option<DepotPath>, StoreError> {
        // One skip-scan step (as in `next_subdir_path`) that also tells whether the file it
        // finds was ever deleted: a probe into the small `revisions_deleted` index. A file never
        // deleted is live at head. (The statement cache hashes the SQL on every call: short
        // text is cheaper.)
        macro_rules! first_and_ever_deleted {
            ($op:literal) => {
                concat!(
                    "SELECT path,EXISTS(SELECT 1 FROM revisions d INDEXED BY revisions_deleted \
                     WHERE d.path=r.path AND d.action IN",
                    deleted_actions!(),
                    ")FROM revisions r WHERE path",
                    $op,
                    "?1 AND path<?2 AND instr(substr(path,?3),'/')>0 ORDER BY path LIMIT 1"
                )
            };
        }
        let sql = if after >= range.lo.as_str() {
            first_and_ever_deleted!(">")
        } else {
            first_and_ever_deleted!(">=")
        };
        let bound = resume_at(range, after);
        // `substr` counts characters (not bytes) from 1.
        let start = range.lo.chars().count() as i64 + 1;
        let first = self
            .conn()
            .prepare_cached(sql)?
            .query_row(params![bound, range.hi, start], |r| {
                Ok((codec::path_at(r, 0)?, r.get::<_, bool>(1)?))
            })
            .optional()?;
        let candidate = match first {
            None => return Ok(None),
            Some((path, false)) => return Ok(Some(path)),
            Some((path, true)) => path,
        };
        // A file deleted at some revision: from it on, the range is scanned grouped by path in
        // primary-key order. SQLite takes the bare `action` from the row holding max(rev), so
        // each row is read once and a path counts only when its newest revision is not a delete.
        Ok(self
            .conn()
            .prepare_cached(concat!(
                "SELECT path, action, max(rev) FROM revisions WHERE path >= ?1 AND path < ?2 \
                 AND instr(substr(path, ?3), '/') > 0 GROUP BY path HAVING action NOT IN ",
                deleted_actions!(),
                " ORDER BY path LIMIT 1"
            ))?
            .query_row(params![candidate.as_str(), range.hi, start], |r| {
                codec::path_at(r, 0)
            })
            .optional()?)
    }

    fn opened_in_workspace(
        &self,
        workspace: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError> {
        let sql = format!(
            "SELECT {OPENED_COLUMNS} FROM opened WHERE workspace = ?1 AND path > ?2 \
             ORDER BY path LIMIT ?3"
        );
        collect(
            self.conn(),
            &sql,
            params![workspace, after.unwrap_or(""), lim(limit)],
            codec::opened,
        )
    }

    fn opened_in_range(
        &self,
        range: &PathRange,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError> {
        let (after_path, after_ws) = after.unwrap_or(("", ""));
        let sql = format!(
            "SELECT {OPENED_COLUMNS} FROM opened WHERE path >= ?1 AND path < ?2 \
             AND (path, workspace) > (?3, ?4) ORDER BY path, workspace LIMIT ?5"
        );
        collect(
            self.conn(),
            &sql,
            params![
                resume_at(range, after_path),
                range.hi,
                after_path,
                after_ws,
                lim(limit)
            ],
            codec::opened,
        )
    }

    fn opened_file(&self, path: &DepotPath) -> Result<Vec<OpenedRow>, StoreError> {
        let sql = format!("SELECT {OPENED_COLUMNS} FROM opened WHERE path = ?1 ORDER BY workspace");
        collect(self.conn(), &sql, [path.as_str()], codec::opened)
    }

    fn opened_in_change(
        &self,
        workspace: &str,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError> {
        let sql = format!(
            "SELECT {OPENED_COLUMNS} FROM opened WHERE workspace = ?1 AND change = ?2 \
             AND path > ?3 ORDER BY path LIMIT ?4"
        );
        collect(
            self.conn(),
            &sql,
            params![workspace, num(change), after.unwrap_or(""), lim(limit)],
            codec::opened,
        )
    }

    fn first_unsubmittable(
        &self,
        workspace: &str,
        change: ChangeNumber,
    ) -> Result<Option<DepotPath>, StoreError> {
        submit::first_unsubmittable(self.conn(), workspace, change)
    }

    fn opened_with_new_content(
        &self,
        workspace: &str,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OpenedRow>, StoreError> {
        submit::opened_with_new_content(self.conn(), workspace, change, after, limit)
    }

    fn integrations_into(&self, path: &DepotPath) -> Result<Vec<IntegRow>, StoreError> {
        let sql = format!(
            "SELECT {INTEG_COLUMNS} FROM integrations WHERE to_path = ?1 ORDER BY to_rev DESC, from_path"
        );
        collect(self.conn(), &sql, [path.as_str()], codec::integ)
    }

    fn integrations_from(&self, path: &DepotPath) -> Result<Vec<IntegRow>, StoreError> {
        let sql = format!(
            "SELECT {INTEG_COLUMNS} FROM integrations WHERE from_path = ?1 ORDER BY from_end DESC, to_path"
        );
        collect(self.conn(), &sql, [path.as_str()], codec::integ)
    }

    fn get_label(&self, name: &str) -> Result<Option<LabelRow>, StoreError> {
        let sql = format!("SELECT {LABEL_COLUMNS} FROM labels WHERE name = ?1");
        one(self.conn(), &sql, [name], codec::label)
    }

    fn list_labels(&self, after: Option<&str>, limit: usize) -> Result<Vec<LabelRow>, StoreError> {
        let sql =
            format!("SELECT {LABEL_COLUMNS} FROM labels WHERE name > ?1 ORDER BY name LIMIT ?2");
        collect(
            self.conn(),
            &sql,
            params![after.unwrap_or(""), lim(limit)],
            codec::label,
        )
    }

    fn label_rev(&self, label: &str, path: &DepotPath) -> Result<u32, StoreError> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT rev FROM label_revs WHERE label = ?1 AND path = ?2")?;
        Ok(stmt
            .query_row([label, path.as_str()], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    fn label_revs(
        &self,
        label: &str,
        range: &PathRange,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(DepotPath, u32)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT path, rev FROM label_revs WHERE label = ?1 AND path >= ?2 AND path < ?3 \
             AND path <> ?4 ORDER BY path LIMIT ?5",
        )?;
        let after = after.unwrap_or("");
        let rows = stmt.query_map(
            params![label, resume_at(range, after), range.hi, after, lim(limit)],
            |r| Ok((codec::path_at(r, 0)?, r.get::<_, u32>(1)?)),
        )?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn get_branch(&self, name: &str) -> Result<Option<BranchRow>, StoreError> {
        let sql = format!("SELECT {BRANCH_COLUMNS} FROM branches WHERE name = ?1");
        one(self.conn(), &sql, [name], codec::branch)
    }

    fn list_branches(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<BranchRow>, StoreError> {
        let sql =
            format!("SELECT {BRANCH_COLUMNS} FROM branches WHERE name > ?1 ORDER BY name LIMIT ?2");
        collect(
            self.conn(),
            &sql,
            params![after.unwrap_or(""), lim(limit)],
            codec::branch,
        )
    }

    fn shelved_in_change(
        &self,
        change: ChangeNumber,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ShelvedRow>, StoreError> {
        let sql = format!(
            "SELECT {SHELVED_COLUMNS} FROM shelved WHERE change = ?1 AND path > ?2 \
             ORDER BY path LIMIT ?3"
        );
        collect(
            self.conn(),
            &sql,
            params![num(change), after.unwrap_or(""), lim(limit)],
            codec::shelved,
        )
    }

    fn digest_in_use(&self, digest: &Digest) -> Result<bool, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM revisions WHERE digest = ?1 AND lazy = 0) \
             OR EXISTS (SELECT 1 FROM shelved WHERE digest = ?1) \
             OR EXISTS (SELECT 1 FROM opened WHERE lazy_digest = ?1 AND lazy_owned = 0)",
        )?;
        Ok(stmt.query_row([digest.0.to_vec()], |r| r.get::<_, bool>(0))?)
    }

    fn revisions_removed(&self) -> Result<u64, StoreError> {
        read_counter(self.conn(), "revisions_removed")
    }

    fn jobs_written(&self) -> Result<u64, StoreError> {
        read_counter(self.conn(), "jobs_written")
    }

    fn digest_paths(&self, digest: &Digest, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT path FROM (SELECT path FROM revisions WHERE digest = ?1 AND lazy = 0 LIMIT ?2) \
             UNION SELECT path FROM (SELECT path FROM shelved WHERE digest = ?1 LIMIT ?2) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![digest.0.to_vec(), lim(limit)], |r| {
            r.get::<_, String>(0)
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn digest_owned(&self, digest: &Digest) -> Result<bool, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM revisions WHERE digest = ?1 AND lazy = 0)",
        )?;
        Ok(stmt.query_row([digest.0.to_vec()], |r| r.get::<_, bool>(0))?)
    }

    fn get_group(&self, name: &str) -> Result<Option<GroupRow>, StoreError> {
        super::access::get_group(self.conn(), name)
    }

    fn list_groups(&self, after: Option<&str>, limit: usize) -> Result<Vec<GroupRow>, StoreError> {
        super::access::list_groups(self.conn(), after, limit)
    }

    fn protections(&self) -> Result<Vec<String>, StoreError> {
        super::access::protections(self.conn())
    }

    fn access_version(&self) -> Result<u64, StoreError> {
        super::access::access_version(self.conn())
    }

    fn queued_purges(&self, limit: usize) -> Result<Vec<Digest>, StoreError> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT digest FROM purges LIMIT ?1")?;
        let rows = stmt.query_map([lim(limit)], |r| codec::digest_at(r, 0))?;
        Ok(rows
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect())
    }
}

impl WriteTxn for Tx<'_> {
    fn replace_webhooks(
        &mut self,
        table: &[WebhookLine],
        start: ChangeNumber,
    ) -> Result<(), StoreError> {
        super::webhooks::replace(self.conn, table, start)
    }

    fn put_webhook_state(
        &mut self,
        name: &str,
        state: &crate::WebhookStateRow,
    ) -> Result<(), StoreError> {
        super::webhooks::put_state(self.conn, name, state)
    }

    fn put_job_spec(&mut self, text: &str, updated: i64) -> Result<(), StoreError> {
        jobs::put_job_spec(self.conn, text, updated)
    }

    fn put_job(&mut self, job: &JobRow, words: &[(String, String)]) -> Result<(), StoreError> {
        jobs::put_job(self.conn, job, words)
    }

    fn delete_job(&mut self, name: &str) -> Result<bool, StoreError> {
        jobs::delete_job(self.conn, name)
    }

    fn next_job_number(&mut self) -> Result<u64, StoreError> {
        bump_counter(self.conn, "job")?;
        read_counter(self.conn, "job")
    }

    fn put_fix(&mut self, fix: &FixRow) -> Result<(), StoreError> {
        jobs::put_fix(self.conn, fix)
    }

    fn delete_fix(&mut self, job: &str, change: ChangeNumber) -> Result<bool, StoreError> {
        jobs::delete_fix(self.conn, job, change)
    }

    fn put_counter(
        &mut self,
        space: CounterSpace,
        name: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        counters::put(self.conn, space, name, value)
    }

    fn delete_counter(&mut self, space: CounterSpace, name: &str) -> Result<bool, StoreError> {
        counters::delete(self.conn, space, name)
    }

    fn replace_triggers(&mut self, table: &[TriggerLine]) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM triggers")?
            .execute([])?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO triggers VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for (seq, line) in table.iter().enumerate() {
            insert.execute(params![
                seq as i64,
                line.name,
                line.kind.as_str(),
                line.path,
                line.command
            ])?;
        }
        Ok(())
    }

    fn replace_typemap(&mut self, table: &[TypemapLine]) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM typemap")?
            .execute([])?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO typemap VALUES (?1, ?2, ?3)")?;
        for (seq, line) in table.iter().enumerate() {
            let minus = if line.exclude { "-" } else { "" };
            insert.execute(params![
                seq as i64,
                line.file_type.to_string(),
                format!("{minus}{}", line.pattern)
            ])?;
        }
        Ok(())
    }

    fn ensure_user(&mut self, name: &str, now: i64) -> Result<bool, StoreError> {
        let n = self
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO users (name, created, updated, accessed) \
                 VALUES (?1, ?2, ?2, ?2)",
            )?
            .execute(params![name, now])?;
        Ok(n == 1)
    }

    fn put_user(&mut self, user: &UserRow) -> Result<(), StoreError> {
        users::put_user(self.conn, user)
    }

    fn set_user_accessed(&mut self, name: &str, now: i64) -> Result<(), StoreError> {
        users::set_user_accessed(self.conn, name, now)
    }

    fn delete_user(&mut self, name: &str) -> Result<(), StoreError> {
        users::delete_user(self.conn, name)?;
        users::delete_tickets_of(self.conn, name, i64::MIN).map(|_| ())
    }

    fn put_ticket(&mut self, ticket: &TicketRow) -> Result<(), StoreError> {
        users::put_ticket(self.conn, ticket)
    }

    fn delete_ticket(&mut self, hash: &[u8; 32]) -> Result<bool, StoreError> {
        users::delete_ticket(self.conn, hash)
    }

    fn delete_tickets_of(&mut self, user: &str, now: i64) -> Result<usize, StoreError> {
        users::delete_tickets_of(self.conn, user, now)
    }

    fn put_setting(&mut self, name: &str, value: &str) -> Result<(), StoreError> {
        users::put_setting(self.conn, name, value)
    }

    fn delete_setting(&mut self, name: &str) -> Result<bool, StoreError> {
        users::delete_setting(self.conn, name)
    }

    fn put_depot(&mut self, d: &DepotRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("INSERT OR REPLACE INTO depots VALUES (?1, ?2, ?3, ?4, ?5)")?
            .execute(params![d.name, d.kind, d.owner, d.description, d.created])?;
        Ok(())
    }

    fn put_workspace(&mut self, w: &WorkspaceRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO workspaces VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                w.name,
                w.owner,
                w.host,
                w.root,
                w.description,
                w.options.to_string(),
                w.view.join("\n"),
                w.created,
                w.updated,
                w.accessed
            ])?;
        Ok(())
    }

    fn delete_workspace(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM workspaces WHERE name = ?1")?
            .execute([name])?;
        Ok(())
    }

    fn allocate_change(&mut self) -> Result<ChangeNumber, StoreError> {
        let next: i64 = self
            .conn
            .prepare_cached(
                "UPDATE counters SET value = value + 1 WHERE name = 'change' RETURNING value",
            )?
            .query_row([], |r| r.get(0))?;
        Ok(ChangeNumber(next as u64))
    }

    fn last_change(&self) -> Result<ChangeNumber, StoreError> {
        let value: i64 = self
            .conn
            .prepare_cached("SELECT value FROM counters WHERE name = 'change'")?
            .query_row([], |r| r.get(0))?;
        Ok(ChangeNumber(value as u64))
    }

    fn put_change(&mut self, c: &ChangeRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("INSERT OR REPLACE INTO changes VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
            .execute(params![
                num(c.change),
                c.status.as_str(),
                c.user,
                c.workspace,
                c.description,
                c.time
            ])?;
        Ok(())
    }

    fn delete_change(&mut self, change: ChangeNumber) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM changes WHERE change = ?1")?
            .execute([num(change)])?;
        Ok(())
    }

    fn insert_revision(&mut self, r: &RevisionRow) -> Result<(), StoreError> {
        // `lazy` when another revision already owns the content (see schema migration 3).
        insert_revision_with(
            self.conn,
            r,
            "INSERT INTO revisions \
             (path, rev, change, action, type, digest, size, md5, time, lazy, mod_time) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?6 IS NOT NULL AND EXISTS \
             (SELECT 1 FROM revisions WHERE digest = ?6 AND lazy = 0), ?10)",
        )
    }

    fn insert_revision_owned(&mut self, r: &RevisionRow) -> Result<(), StoreError> {
        insert_revision_with(
            self.conn,
            r,
            "INSERT INTO revisions \
             (path, rev, change, action, type, digest, size, md5, time, lazy, mod_time) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?6 IS NOT NULL, ?10)",
        )
    }

    fn put_opened(&mut self, o: &OpenedRow) -> Result<(), StoreError> {
        insert_opened(self.conn, o, &PUT_OPENED)
    }

    fn put_opened_owned(&mut self, o: &OpenedRow) -> Result<(), StoreError> {
        insert_opened(self.conn, o, &PUT_OPENED_OWNED)
    }

    fn open_new(&mut self, rows: &[OpenedRow], owned: bool) -> Result<(), StoreError> {
        let conn = self.conn;
        let sql: &str = if owned {
            &NEW_OPENED_OWNED
        } else {
            &NEW_OPENED
        };
        let Some(bulk) = self.bulk.as_mut().filter(|b| b.nothing_recorded()) else {
            return rows.iter().try_for_each(|o| insert_opened(conn, o, sql));
        };
        // Journaled here, inserted unrecorded; read back in key order.
        bulk.paused(|| rows.iter().try_for_each(|o| insert_opened(conn, o, sql)))?;
        let mut keys: Vec<(&str, &str)> = rows
            .iter()
            .map(|o| (o.workspace.as_str(), o.path.as_str()))
            .collect();
        keys.sort_unstable();
        for (workspace, path) in keys {
            bulk.rows(
                conn,
                "opened",
                Op::Insert,
                "SELECT * FROM opened WHERE workspace = ?1 AND path = ?2",
                params![workspace, path],
            )?;
        }
        Ok(())
    }

    fn delete_opened(&mut self, workspace: &str, path: &DepotPath) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM opened WHERE workspace = ?1 AND path = ?2")?
            .execute([workspace, path.as_str()])?;
        Ok(())
    }

    fn delete_opened_in_change(
        &mut self,
        workspace: &str,
        change: ChangeNumber,
    ) -> Result<usize, StoreError> {
        const DELETE: &str = "DELETE FROM opened WHERE workspace = ?1 AND change = ?2";
        let conn = self.conn;
        let bulk = self.bulk.as_mut().filter(|b| {
            b.submitted
                .as_ref()
                .is_some_and(|(ws, c)| ws == workspace && *c == num(change))
        });
        if let Some(bulk) = bulk {
            // The records this job submitted set-based: journaled here, deleted unrecorded.
            submit::journal_opened_deleted(conn, bulk, workspace, num(change))?;
            return bulk.paused(|| {
                Ok(conn
                    .prepare_cached(DELETE)?
                    .execute(params![workspace, num(change)])?)
            });
        }
        Ok(conn
            .prepare_cached(DELETE)?
            .execute(params![workspace, num(change)])?)
    }

    fn insert_integration(&mut self, i: &IntegRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO integrations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                i.to_path.as_str(),
                i.to_rev,
                i.from_path.as_str(),
                i.from_start,
                i.from_end,
                i.how.as_str(),
                num(i.change)
            ])?;
        Ok(())
    }

    fn commit_without_new_content(
        &mut self,
        workspace: &str,
        change: ChangeNumber,
        into: ChangeNumber,
        time: i64,
        skip_written: bool,
    ) -> Result<usize, StoreError> {
        let bulk = if skip_written {
            None
        } else {
            self.bulk.as_mut()
        };
        submit::commit_without_new_content(
            self.conn,
            bulk,
            workspace,
            change,
            into,
            time,
            skip_written,
        )
    }

    fn delete_integrations_of(&mut self, path: &DepotPath) -> Result<usize, StoreError> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM integrations WHERE to_path = ?1 OR from_path = ?1")?
            .execute([path.as_str()])?;
        Ok(n)
    }

    fn adopt_lazy_copies(&mut self, digests: &[Digest]) -> Result<usize, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut orphaned = Vec::new();
        for digest in digests {
            if seen.insert(*digest) && !self.digest_owned(digest)? {
                orphaned.push(digest.0.to_vec());
            }
        }
        let mut adopted = 0;
        // One scan of the lazy revisions per chunk of orphaned digests (they are not indexed).
        for chunk in orphaned.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = format!(
                "SELECT path, rev, digest FROM revisions WHERE lazy = 1 AND digest IN ({marks})"
            );
            let heirs: Vec<(String, u32, Vec<u8>)> = {
                let mut stmt = self.conn.prepare(&sql)?;
                let rows = stmt.query_map(rusqlite::params_from_iter(chunk.iter()), |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut adopted_digests = std::collections::HashSet::new();
            for (path, rev, digest) in heirs {
                if adopted_digests.insert(digest) {
                    self.conn
                        .prepare_cached(
                            "UPDATE revisions SET lazy = 0 WHERE path = ?1 AND rev = ?2",
                        )?
                        .execute(params![path, rev])?;
                    adopted += 1;
                }
            }
            // Content no revision refers to any more: open records relying on an owner now
            // count for themselves (the lazy-digest index takes them back).
            let still: Vec<&Vec<u8>> = chunk
                .iter()
                .filter(|d| !adopted_digests.contains(*d))
                .collect();
            if !still.is_empty() {
                let marks = vec!["?"; still.len()].join(", ");
                let sql = format!(
                    "UPDATE opened SET lazy_owned = 0 \
                     WHERE lazy_owned = 1 AND lazy_digest IN ({marks})"
                );
                self.conn
                    .execute(&sql, rusqlite::params_from_iter(still.iter()))?;
            }
        }
        Ok(adopted)
    }

    fn delete_revision(&mut self, path: &DepotPath, rev: u32) -> Result<(), StoreError> {
        let deleted = self
            .conn
            .prepare_cached("DELETE FROM revisions WHERE path = ?1 AND rev = ?2")?
            .execute(params![path.as_str(), rev])?;
        if deleted > 0 {
            bump_counter(self.conn, "revisions_removed")?;
        }
        Ok(())
    }

    fn purge_revision_content(
        &mut self,
        path: &DepotPath,
        rev: u32,
    ) -> Result<Option<Digest>, StoreError> {
        let old: Option<Option<Vec<u8>>> = self
            .conn
            .prepare_cached("SELECT digest FROM revisions WHERE path = ?1 AND rev = ?2")?
            .query_row(params![path.as_str(), rev], |r| r.get(0))
            .optional()?;
        let Some(Some(bytes)) = old else {
            return Ok(None);
        };
        self.conn
            .prepare_cached(
                "UPDATE revisions SET digest = NULL, lazy = 0 WHERE path = ?1 AND rev = ?2",
            )?
            .execute(params![path.as_str(), rev])?;
        let digest: [u8; 32] = bytes.try_into().map_err(|_| {
            StoreError::Corrupt(format!("{path}#{rev}: a digest of the wrong size"))
        })?;
        Ok(Some(Digest(digest)))
    }

    fn put_label(&mut self, l: &LabelRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO labels VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                l.name,
                l.owner,
                l.description,
                l.options.as_str(),
                codec::label_revision_text(l.revision),
                l.view.join("\n"),
                l.created,
                l.updated
            ])?;
        Ok(())
    }

    fn delete_label(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM label_revs WHERE label = ?1")?
            .execute([name])?;
        self.conn
            .prepare_cached("DELETE FROM labels WHERE name = ?1")?
            .execute([name])?;
        Ok(())
    }

    fn set_label_rev(&mut self, label: &str, path: &DepotPath, rev: u32) -> Result<(), StoreError> {
        if rev == 0 {
            self.conn
                .prepare_cached("DELETE FROM label_revs WHERE label = ?1 AND path = ?2")?
                .execute([label, path.as_str()])?;
        } else {
            self.conn
                .prepare_cached("INSERT OR REPLACE INTO label_revs VALUES (?1, ?2, ?3)")?
                .execute(params![label, path.as_str(), rev])?;
        }
        Ok(())
    }

    fn delete_label_revs_of(&mut self, path: &DepotPath) -> Result<usize, StoreError> {
        Ok(self
            .conn
            .prepare_cached("DELETE FROM label_revs WHERE path = ?1")?
            .execute([path.as_str()])?)
    }

    fn put_branch(&mut self, b: &BranchRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("INSERT OR REPLACE INTO branches VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
            .execute(params![
                b.name,
                b.owner,
                b.description,
                b.options.as_str(),
                b.view.join("\n"),
                b.created,
                b.updated
            ])?;
        Ok(())
    }

    fn delete_branch(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM branches WHERE name = ?1")?
            .execute([name])?;
        Ok(())
    }

    fn put_shelved(&mut self, r: &ShelvedRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO shelved VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                num(r.change),
                r.path.as_str(),
                r.action.as_str(),
                r.file_type.to_string(),
                r.digest.map(|d| d.0.to_vec()),
                r.size as i64,
                r.md5,
                r.base_rev,
                r.move_file.as_ref().map(DepotPath::as_str),
                r.mod_time
            ])?;
        Ok(())
    }

    fn delete_shelved(&mut self, change: ChangeNumber, path: &DepotPath) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM shelved WHERE change = ?1 AND path = ?2")?
            .execute(params![num(change), path.as_str()])?;
        Ok(())
    }

    fn queue_purge(&mut self, digest: &Digest) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("INSERT OR IGNORE INTO purges VALUES (?1)")?
            .execute([digest.0.to_vec()])?;
        Ok(())
    }

    fn put_group(&mut self, group: &GroupRow) -> Result<(), StoreError> {
        super::access::put_group(self.conn, group)
    }

    fn delete_group(&mut self, name: &str) -> Result<(), StoreError> {
        super::access::delete_group(self.conn, name)
    }

    fn put_protections(&mut self, lines: &[String]) -> Result<(), StoreError> {
        super::access::put_protections(self.conn, lines)
    }

    fn unqueue_purge(&mut self, digest: &Digest) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM purges WHERE digest = ?1")?
            .execute([digest.0.to_vec()])?;
        Ok(())
    }
}

/// Writes a revision with `sql`, which binds its 10 columns and decides `lazy`.
fn insert_revision_with(conn: &Connection, r: &RevisionRow, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)?.execute(params![
        r.path.as_str(),
        r.rev,
        num(r.change),
        r.action.as_str(),
        r.file_type.to_string(),
        r.digest.map(|d| d.0.to_vec()),
        r.size as i64,
        r.md5,
        r.time,
        r.mod_time
    ])?;
    Ok(())
}

/// The statement writing an open record with `verb` (`INSERT`, `INSERT OR REPLACE`); with
/// `owned` the caller knows a revision owns its lazy content, else `lazy_owned` is looked up
/// (see migration 4).
fn opened_insert(verb: &str, owned: bool) -> String {
    let lazy_owned = if owned {
        "?9 IS NOT NULL"
    } else {
        "?9 IS NOT NULL AND EXISTS (SELECT 1 FROM revisions WHERE digest = ?9 AND lazy = 0)"
    };
    format!(
        "{verb} INTO opened VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, \
         ?15, ?16, ?17, ?18, {lazy_owned}, ?19, ?20)"
    )
}

static PUT_OPENED: LazyLock<String> = LazyLock::new(|| opened_insert("INSERT OR REPLACE", false));
static PUT_OPENED_OWNED: LazyLock<String> =
    LazyLock::new(|| opened_insert("INSERT OR REPLACE", true));
static NEW_OPENED: LazyLock<String> = LazyLock::new(|| opened_insert("INSERT", false));
static NEW_OPENED_OWNED: LazyLock<String> = LazyLock::new(|| opened_insert("INSERT", true));

/// Writes an open record with `sql`, which binds its 20 columns and decides `lazy_owned`.
fn insert_opened(conn: &Connection, o: &OpenedRow, sql: &str) -> Result<(), StoreError> {
    let integ = o.integ.as_ref();
    conn.prepare_cached(sql)?.execute(params![
        o.workspace,
        o.path.as_str(),
        o.user,
        num(o.change),
        o.action.as_str(),
        o.file_type.to_string(),
        o.base_rev,
        o.move_file.as_ref().map(DepotPath::as_str),
        o.lazy.as_ref().map(|l| l.digest.0.to_vec()),
        o.lazy.as_ref().map(|l| l.size as i64),
        o.lazy.as_ref().map(|l| l.md5.as_str()),
        integ.map(|i| i.from_path.as_str()),
        integ.map(|i| i.from_start),
        integ.map(|i| i.from_end),
        // No merge base is stored as an empty path and revision 0.
        integ.map(|i| i.base.as_ref().map_or("", |(path, _)| path.as_str())),
        integ.map(|i| i.base.as_ref().map_or(0, |(_, rev)| *rev)),
        integ.map(|i| i.resolved),
        integ.map(|i| i.how.map_or("", |h| h.as_str())),
        o.locked,
        o.lazy.as_ref().map_or(0, |l| l.mod_time)
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use keel_core::FileAction;

    #[test]
    fn deleted_actions_lists_exactly_the_deleting_actions() {
        let listed: Vec<String> = FileAction::ALL
            .iter()
            .filter(|a| a.is_delete())
            .map(|a| format!("'{}'", a.as_str()))
            .collect();
        assert_eq!(deleted_actions!(), format!("({})", listed.join(", ")));
    }
}
