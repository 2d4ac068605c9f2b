//! The SQL of counters and keys (migration 11, table `user_counters`, apart from the
//! server's own `counters`): one table, a namespace column, name-ordered.

use crate::StoreError;
use keel_core::CounterSpace;
use rusqlite::{Connection, OptionalExtension, params};

fn space_id(space: CounterSpace) -> i64 {
    match space {
        CounterSpace::Counter => 0,
        CounterSpace::Key => 1,
    }
}

pub(crate) fn get(
    conn: &Connection,
    space: CounterSpace,
    name: &str,
) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT value FROM user_counters WHERE space = ?1 AND name = ?2")?
        .query_row(params![space_id(space), name], |r| r.get(0))
        .optional()?)
}

pub(crate) fn list(
    conn: &Connection,
    space: CounterSpace,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, value FROM user_counters WHERE space = ?1 AND name > ?2 ORDER BY name LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![space_id(space), after.unwrap_or(""), limit], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn put(
    conn: &Connection,
    space: CounterSpace,
    name: &str,
    value: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR REPLACE INTO user_counters VALUES (?1, ?2, ?3)")?
        .execute(params![space_id(space), name, value])?;
    Ok(())
}

pub(crate) fn delete(
    conn: &Connection,
    space: CounterSpace,
    name: &str,
) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("DELETE FROM user_counters WHERE space = ?1 AND name = ?2")?
        .execute(params![space_id(space), name])?
        > 0)
}
