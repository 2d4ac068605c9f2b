//! The SQL behind groups and the protections table (migration 8).

use super::queries::{bump_counter, read_counter};
use crate::{GroupRow, StoreError};
use keel_core::{GroupLimits, Limit};
use rusqlite::{Connection, OptionalExtension, Row, params};

const GROUP_COLUMNS: &str = "name, users, subgroups, owners, max_results, max_scan_rows, \
                             max_lock_time, max_open_files, timeout, updated";

fn names(text: String) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn limit_at(r: &Row, i: usize) -> rusqlite::Result<Limit> {
    Ok(match r.get::<_, Option<i64>>(i)? {
        None => Limit::Unset,
        Some(n) if n < 0 => Limit::Unlimited,
        Some(n) => Limit::Max(n as u64),
    })
}

fn limit_value(limit: Limit) -> Option<i64> {
    match limit {
        Limit::Unset => None,
        Limit::Unlimited => Some(-1),
        Limit::Max(n) => Some(i64::try_from(n).unwrap_or(i64::MAX)),
    }
}

fn group(r: &Row) -> rusqlite::Result<GroupRow> {
    Ok(GroupRow {
        name: r.get(0)?,
        users: names(r.get(1)?),
        subgroups: names(r.get(2)?),
        owners: names(r.get(3)?),
        limits: GroupLimits {
            max_results: limit_at(r, 4)?,
            max_scan_rows: limit_at(r, 5)?,
            max_lock_time: limit_at(r, 6)?,
            max_open_files: limit_at(r, 7)?,
            timeout: limit_at(r, 8)?,
        },
        updated: r.get(9)?,
    })
}

pub(crate) fn get_group(conn: &Connection, name: &str) -> Result<Option<GroupRow>, StoreError> {
    let sql = format!("SELECT {GROUP_COLUMNS} FROM groups WHERE name = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([name], group)
        .optional()?)
}

pub(crate) fn list_groups(
    conn: &Connection,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<GroupRow>, StoreError> {
    let sql = format!("SELECT {GROUP_COLUMNS} FROM groups WHERE name > ?1 ORDER BY name LIMIT ?2");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![
            after.unwrap_or(""),
            i64::try_from(limit).unwrap_or(i64::MAX)
        ],
        group,
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub(crate) fn protections(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT text FROM protections ORDER BY line")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub(crate) fn access_version(conn: &Connection) -> Result<u64, StoreError> {
    read_counter(conn, "access")
}

pub(crate) fn put_group(conn: &Connection, g: &GroupRow) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO groups VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        g.name,
        g.users.join("\n"),
        g.subgroups.join("\n"),
        g.owners.join("\n"),
        limit_value(g.limits.max_results),
        limit_value(g.limits.max_scan_rows),
        limit_value(g.limits.max_lock_time),
        limit_value(g.limits.max_open_files),
        limit_value(g.limits.timeout),
        g.updated,
    ])?;
    bump_counter(conn, "access")
}

pub(crate) fn delete_group(conn: &Connection, name: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM groups WHERE name = ?1")?
        .execute([name])?;
    bump_counter(conn, "access")
}

pub(crate) fn put_protections(conn: &Connection, lines: &[String]) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM protections")?
        .execute([])?;
    let mut insert = conn.prepare_cached("INSERT INTO protections VALUES (?1, ?2)")?;
    for (i, line) in lines.iter().enumerate() {
        insert.execute(params![i as i64 + 1, line])?;
    }
    bump_counter(conn, "access")
}
