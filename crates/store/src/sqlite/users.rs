//! The SQL of users, login tickets and server settings (migrations 7 and 9), called by the
//! `ReadTxn` / `WriteTxn` implementations in `queries.rs`.

use crate::StoreError;
use crate::rows::{TicketRow, UserRow};
use keel_core::UserType;
use rusqlite::{Connection, OptionalExtension, Row, params};

const USER_COLUMNS: &str = "name, email, full_name, type, created, updated, accessed, password_hash, type_set_by, reviews, p4_digest";

fn user(r: &Row) -> rusqlite::Result<UserRow> {
    let kind: String = r.get(3)?;
    Ok(UserRow {
        name: r.get(0)?,
        email: r.get(1)?,
        full_name: r.get(2)?,
        user_type: UserType::parse(&kind).map_err(|_| {
            rusqlite::Error::FromSqlConversionFailure(
                3,
                rusqlite::types::Type::Text,
                format!("users.type: not a user type: {kind:?}").into(),
            )
        })?,
        created: r.get(4)?,
        updated: r.get(5)?,
        accessed: r.get(6)?,
        password_hash: r.get(7)?,
        type_set_by: r.get(8)?,
        reviews: r
            .get::<_, String>(9)?
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        p4_digest: r.get(10)?,
    })
}

fn ticket(r: &Row) -> rusqlite::Result<TicketRow> {
    Ok(TicketRow {
        hash: r.get(0)?,
        user: r.get(1)?,
        host: r.get(2)?,
        issued: r.get(3)?,
        expires: r.get(4)?,
        address: r.get(5)?,
    })
}

pub(crate) fn get_user(conn: &Connection, name: &str) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE name = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([name], user)
        .optional()?)
}

pub(crate) fn list_users(
    conn: &Connection,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<UserRow>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE name > ?1 ORDER BY name LIMIT ?2");
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![after.unwrap_or(""), limit], user)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn put_user(conn: &Connection, u: &UserRow) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT OR REPLACE INTO users ({USER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    );
    conn.prepare_cached(&sql)?.execute(params![
        u.name,
        u.email,
        u.full_name,
        u.user_type.as_str(),
        u.created,
        u.updated,
        u.accessed,
        u.password_hash,
        u.type_set_by,
        u.reviews.join("\n"),
        u.p4_digest
    ])?;
    Ok(())
}

pub(crate) fn set_user_accessed(conn: &Connection, name: &str, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE users SET accessed = ?2 WHERE name = ?1 AND accessed < ?2")?
        .execute(params![name, now])?;
    Ok(())
}

pub(crate) fn delete_user(conn: &Connection, name: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM users WHERE name = ?1")?
        .execute([name])?;
    Ok(())
}

pub(crate) fn get_ticket(
    conn: &Connection,
    hash: &[u8; 32],
) -> Result<Option<TicketRow>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT hash, user, host, issued, expires, address FROM tickets WHERE hash = ?1",
        )?
        .query_row([&hash[..]], ticket)
        .optional()?)
}

pub(crate) fn tickets_of(
    conn: &Connection,
    user: &str,
    now: i64,
    limit: usize,
) -> Result<Vec<TicketRow>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = conn
        .prepare_cached(
            "SELECT hash, user, host, issued, expires, address FROM tickets \
             WHERE user = ?1 AND expires > ?2 ORDER BY issued DESC, hash LIMIT ?3",
        )?
        .query_map(params![user, now, limit], ticket)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(crate) fn put_ticket(conn: &Connection, t: &TicketRow) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tickets (hash, user, host, issued, expires, address) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        &t.hash[..],
        t.user,
        t.host,
        t.issued,
        t.expires,
        t.address
    ])?;
    Ok(())
}

pub(crate) fn delete_ticket(conn: &Connection, hash: &[u8; 32]) -> Result<bool, StoreError> {
    let n = conn
        .prepare_cached("DELETE FROM tickets WHERE hash = ?1")?
        .execute([&hash[..]])?;
    Ok(n > 0)
}

/// Removes every ticket of `user`, and every expired ticket of anyone; returns how many of
/// the user's went.
pub(crate) fn delete_tickets_of(
    conn: &Connection,
    user: &str,
    now: i64,
) -> Result<usize, StoreError> {
    let n = conn
        .prepare_cached("DELETE FROM tickets WHERE user = ?1")?
        .execute([user])?;
    delete_expired_tickets(conn, now)?;
    Ok(n)
}

pub(crate) fn delete_expired_tickets(conn: &Connection, now: i64) -> Result<usize, StoreError> {
    Ok(conn
        .prepare_cached("DELETE FROM tickets WHERE expires <= ?1")?
        .execute([now])?)
}

pub(crate) fn get_setting(conn: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT value FROM settings WHERE name = ?1")?
        .query_row([name], |r| r.get(0))
        .optional()?)
}

pub(crate) fn list_settings(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT name, value FROM settings ORDER BY name")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn put_setting(conn: &Connection, name: &str, value: &str) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR REPLACE INTO settings VALUES (?1, ?2)")?
        .execute([name, value])?;
    Ok(())
}

pub(crate) fn delete_setting(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("DELETE FROM settings WHERE name = ?1")?
        .execute([name])?
        > 0)
}
