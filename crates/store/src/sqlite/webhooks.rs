//! The webhooks table and each webhook's delivery state: rows of `webhooks` in table order,
//! `webhook_state` keyed by name (a webhook that is renamed starts afresh).

use crate::{StoreError, WebhookStateRow};
use keel_core::{ChangeNumber, WebhookLine};
use rusqlite::{Connection, params};

/// Every webhook in table order, with its state.
pub(crate) fn webhooks(
    conn: &Connection,
) -> Result<Vec<(WebhookLine, WebhookStateRow)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT w.name, w.path, w.url, w.secret, s.delivered, s.attempts, s.sent, s.failures, \
         s.last_attempt, s.last_status FROM webhooks w JOIN webhook_state s ON s.name = w.name \
         ORDER BY w.seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            WebhookLine {
                name: r.get(0)?,
                path: r.get(1)?,
                url: r.get(2)?,
                secret: r.get(3)?,
            },
            WebhookStateRow {
                delivered: ChangeNumber(r.get::<_, i64>(4)? as u64),
                attempts: r.get::<_, i64>(5)? as u32,
                sent: r.get::<_, i64>(6)? as u64,
                failures: r.get::<_, i64>(7)? as u64,
                last_attempt: r.get(8)?,
                last_status: r.get(9)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Replaces the table; webhooks kept by name keep their state, new ones start after `start`.
pub(crate) fn replace(
    conn: &Connection,
    table: &[WebhookLine],
    start: ChangeNumber,
) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM webhooks")?.execute([])?;
    let mut insert = conn.prepare_cached("INSERT INTO webhooks VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut state = conn
        .prepare_cached("INSERT OR IGNORE INTO webhook_state (name, delivered) VALUES (?1, ?2)")?;
    for (seq, line) in table.iter().enumerate() {
        insert.execute(params![
            seq as i64,
            line.name,
            line.path,
            line.url,
            line.secret
        ])?;
        state.execute(params![line.name, start.0 as i64])?;
    }
    conn.prepare_cached("DELETE FROM webhook_state WHERE name NOT IN (SELECT name FROM webhooks)")?
        .execute([])?;
    Ok(())
}

/// Records a webhook's state; a webhook no longer in the table stays gone.
pub(crate) fn put_state(
    conn: &Connection,
    name: &str,
    s: &WebhookStateRow,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE webhook_state SET delivered = ?2, attempts = ?3, sent = ?4, failures = ?5, \
         last_attempt = ?6, last_status = ?7 WHERE name = ?1",
    )?
    .execute(params![
        name,
        s.delivered.0 as i64,
        i64::from(s.attempts),
        s.sent as i64,
        s.failures as i64,
        s.last_attempt,
        s.last_status
    ])?;
    Ok(())
}
