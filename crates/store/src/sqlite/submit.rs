//! The set-based part of a submit's commit: checking a change's open records and writing the
//! revisions and integration records of those that carry no new content, each in one statement.
//!
//! The statements are built once from the action and record names of `keel_core`, so the SQL
//! cannot drift from the names the rows are stored under. When the write job may journal rows
//! itself (see [`super::bulk_journal`]), the set-based writes run with the session paused and
//! their rows are read back, in key order, as the journal's records; otherwise the session
//! records them like any other row.

use super::bulk_journal::{BulkJournal, Op};
use super::codec::{self, OPENED_COLUMNS};
use crate::{OpenedRow, StoreError};
use keel_core::{ChangeNumber, DepotPath, FileAction, IntegHow};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

/// The stored actions that remove a file, as an SQL list: `('delete', 'move/delete')`.
fn deleting_actions() -> String {
    let names: Vec<String> = FileAction::ALL
        .iter()
        .filter(|a| a.is_delete())
        .map(|a| format!("'{}'", a.as_str()))
        .collect();
    format!("({})", names.join(", "))
}

/// The condition (over `opened`'s columns) under which a record's revision carries content that
/// no revision owns yet: a content-carrying action without a lazy copy of owned content. Such
/// records are written one by one by the caller (uploaded digests, purge checks).
fn new_content() -> String {
    format!(
        "(action NOT IN {} AND NOT (lazy_digest IS NOT NULL AND lazy_owned = 1))",
        deleting_actions()
    )
}

/// The first record (path order) of a change that cannot be submitted: an unresolved
/// integration, a base revision that is not the head, an add over a live head, an edit or
/// delete of a deleted head, or a file another workspace holds locked.
static FIRST_UNSUBMITTABLE: LazyLock<String> = LazyLock::new(|| {
    let deleting = deleting_actions();
    format!(
        "SELECT o.path FROM opened o WHERE o.workspace = ?1 AND o.change = ?2 AND ( \
           (o.integ_from IS NOT NULL AND coalesce(o.integ_resolved, 0) = 0) \
           OR o.base_rev <> coalesce((SELECT max(r.rev) FROM revisions r WHERE r.path = o.path), 0) \
           OR (o.base_rev > 0 AND EXISTS (SELECT 1 FROM revisions h \
               WHERE h.path = o.path AND h.rev = o.base_rev AND CASE WHEN h.action IN {deleting} \
               THEN o.action IN ('{edit}', '{delete}') ELSE o.action = '{add}' END)) \
           OR EXISTS (SELECT 1 FROM opened l WHERE l.path = o.path AND l.workspace <> o.workspace \
               AND l.locked = 1)) \
         ORDER BY o.path LIMIT 1",
        edit = FileAction::Edit.as_str(),
        delete = FileAction::Delete.as_str(),
        add = FileAction::Add.as_str(),
    )
});

/// Records of a change whose revision carries content no revision owns, path order.
static WITH_NEW_CONTENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {OPENED_COLUMNS} FROM opened WHERE workspace = ?1 AND change = ?2 AND path > ?3 \
         AND {} ORDER BY path LIMIT ?4",
        new_content()
    )
});

/// `INSERT … SELECT` of the integration records of a change's records without new content:
/// a pending integration from another file (or an undo of the file's own revisions) leaves its
/// record when it has one (`integ_how` set by resolve or undo); otherwise a `move/add` leaves `moved from` its `move/delete`'s base revision.
/// `?5` set: records whose revision `base_rev + 1` already exists are skipped.
static INSERT_INTEGRATIONS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT OR REPLACE INTO integrations \
           (to_path, to_rev, from_path, from_start, from_end, how, change) \
         SELECT path, base_rev + 1, \
           CASE WHEN integ THEN integ_from ELSE move_file END, \
           CASE WHEN integ THEN coalesce(integ_start, 0) ELSE 0 END, \
           CASE WHEN integ THEN coalesce(integ_end, 0) ELSE coalesce((SELECT f.base_rev \
             FROM opened f WHERE f.workspace = o.workspace AND f.path = o.move_file \
             AND f.change = o.change), 0) END, \
           CASE WHEN integ THEN integ_how ELSE '{moved}' END, \
           ?3 \
         FROM (SELECT *, integ_from IS NOT NULL \
                 AND (integ_from <> path OR integ_how = '{undid}') AS integ FROM opened \
               WHERE workspace = ?1 AND change = ?2 AND NOT {new}) o \
         WHERE CASE WHEN integ THEN coalesce(integ_how, '') <> '' \
               ELSE action = '{move_add}' AND move_file IS NOT NULL END \
           AND (?4 = 0 OR NOT EXISTS (SELECT 1 FROM revisions r \
               WHERE r.path = o.path AND r.rev = o.base_rev + 1))",
        moved = IntegHow::MovedFrom.as_str(),
        undid = IntegHow::Undid.as_str(),
        move_add = FileAction::MoveAdd.as_str(),
        new = new_content(),
    )
});

/// `INSERT … SELECT` of the revisions of a change's records without new content: no content
/// for a deleting action, else the lazy copy's, which a revision owns (so `lazy`).
fn insert_revisions(skip_written: bool) -> String {
    let skip = if skip_written {
        // Reading the target table makes SQLite stage the selected rows first; only a change
        // with files written one by one among these pays for it.
        "AND NOT EXISTS (SELECT 1 FROM revisions r WHERE r.path = o.path AND r.rev = o.base_rev + 1)"
    } else {
        ""
    };
    format!(
        "INSERT INTO revisions \
           (path, rev, change, action, type, digest, size, md5, time, lazy, mod_time) \
         SELECT path, base_rev + 1, ?3, action, type, \
           CASE WHEN carries THEN lazy_digest END, \
           CASE WHEN carries THEN coalesce(lazy_size, 0) ELSE 0 END, \
           CASE WHEN carries THEN coalesce(lazy_md5, '') ELSE '' END, \
           ?4, carries, CASE WHEN carries THEN lazy_mod_time ELSE 0 END \
         FROM (SELECT *, action NOT IN {deleting} AS carries FROM opened \
               WHERE workspace = ?1 AND change = ?2 AND NOT {new}) o \
         WHERE 1 {skip}",
        deleting = deleting_actions(),
        new = new_content(),
    )
}

static INSERT_REVISIONS: LazyLock<String> = LazyLock::new(|| insert_revisions(false));
static INSERT_REVISIONS_SKIPPING: LazyLock<String> = LazyLock::new(|| insert_revisions(true));

/// The records of a change without new content (`?1` workspace, `?2` change), as `o`.
static WITHOUT_NEW_CONTENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "(SELECT path, base_rev FROM opened WHERE workspace = ?1 AND change = ?2 AND NOT {}) o",
        new_content()
    )
});

/// Whether some integration record already has the key one of the set-based inserts would
/// give (`INSERT OR REPLACE` would replace it: a change the journal must record as such).
static INTEGRATION_TAKEN: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT EXISTS (SELECT 1 FROM {} JOIN integrations i \
           ON i.to_path = o.path AND i.to_rev = o.base_rev + 1)",
        *WITHOUT_NEW_CONTENT
    )
});

/// The revisions the set-based insert wrote, path order.
static WRITTEN_REVISIONS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT r.* FROM {} JOIN revisions r ON r.path = o.path AND r.rev = o.base_rev + 1 \
         ORDER BY o.path",
        *WITHOUT_NEW_CONTENT
    )
});

/// The integration records the set-based insert wrote, key order.
static WRITTEN_INTEGRATIONS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT i.* FROM {} JOIN integrations i ON i.to_path = o.path AND i.to_rev = o.base_rev + 1 \
         ORDER BY i.to_path, i.to_rev, i.from_path, i.from_end",
        *WITHOUT_NEW_CONTENT
    )
});

fn num(change: ChangeNumber) -> i64 {
    i64::try_from(change.0).unwrap_or(i64::MAX)
}

pub(super) fn first_unsubmittable(
    conn: &Connection,
    workspace: &str,
    change: ChangeNumber,
) -> Result<Option<DepotPath>, StoreError> {
    Ok(conn
        .prepare_cached(&FIRST_UNSUBMITTABLE)?
        .query_row(params![workspace, num(change)], |r| codec::path_at(r, 0))
        .optional()?)
}

pub(super) fn opened_with_new_content(
    conn: &Connection,
    workspace: &str,
    change: ChangeNumber,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<OpenedRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&WITH_NEW_CONTENT)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(
        params![workspace, num(change), after.unwrap_or(""), limit],
        codec::opened,
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Writes like [`commit_without_new_content`] with the session paused and journals the rows
/// written through `bulk` (when no integration record would be replaced; else `None`, having
/// written nothing).
fn commit_journaled(
    conn: &Connection,
    bulk: &mut BulkJournal<'_>,
    workspace: &str,
    change: i64,
    into: i64,
    time: i64,
) -> Result<Option<usize>, StoreError> {
    let taken: bool = conn
        .prepare_cached(&INTEGRATION_TAKEN)?
        .query_row(params![workspace, change], |r| r.get(0))?;
    if taken {
        return Ok(None);
    }
    let written = bulk.paused(|| {
        conn.prepare_cached(&INSERT_INTEGRATIONS)?
            .execute(params![workspace, change, into, false])?;
        Ok(conn
            .prepare_cached(&INSERT_REVISIONS)?
            .execute(params![workspace, change, into, time])?)
    })?;
    let journaled = bulk.rows(
        conn,
        "revisions",
        Op::Insert,
        &WRITTEN_REVISIONS,
        params![workspace, change],
    )?;
    if journaled != written {
        return Err(StoreError::Corrupt(format!(
            "submit of change {change} of workspace {workspace}: {written} revisions written, \
             {journaled} read back for the journal"
        )));
    }
    bulk.rows(
        conn,
        "integrations",
        Op::Insert,
        &WRITTEN_INTEGRATIONS,
        params![workspace, change],
    )?;
    bulk.submitted = Some((workspace.to_string(), change));
    Ok(Some(written))
}

/// Journals, through `bulk`, the deletion of every open record of `workspace`'s `change`
/// (the caller deletes them with the session paused).
pub(super) fn journal_opened_deleted(
    conn: &Connection,
    bulk: &mut BulkJournal<'_>,
    workspace: &str,
    change: i64,
) -> Result<usize, StoreError> {
    bulk.rows(
        conn,
        "opened",
        Op::Delete,
        "SELECT * FROM opened WHERE workspace = ?1 AND change = ?2 ORDER BY path",
        params![workspace, change],
    )
}

pub(super) fn commit_without_new_content(
    conn: &Connection,
    bulk: Option<&mut BulkJournal<'_>>,
    workspace: &str,
    change: ChangeNumber,
    into: ChangeNumber,
    time: i64,
    skip_written: bool,
) -> Result<usize, StoreError> {
    if let Some(bulk) = bulk.filter(|_| !skip_written)
        && let Some(written) =
            commit_journaled(conn, bulk, workspace, num(change), num(into), time)?
    {
        return Ok(written);
    }
    // Integration records first: with `skip_written`, the revisions written so far are what
    // tells the caller's records apart.
    conn.prepare_cached(&INSERT_INTEGRATIONS)?.execute(params![
        workspace,
        num(change),
        num(into),
        skip_written
    ])?;
    let revisions = if skip_written {
        &INSERT_REVISIONS_SKIPPING
    } else {
        &INSERT_REVISIONS
    };
    Ok(conn
        .prepare_cached(revisions)?
        .execute(params![workspace, num(change), num(into), time])?)
}
