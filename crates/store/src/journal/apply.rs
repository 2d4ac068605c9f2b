//! Applying one journal record to its database: the changeset and the record's position in
//! one transaction, so a database's applied position always names exactly what it holds.
//! Restore and replicas both apply records through here.

use crate::sqlite::session::{self, ApplyError};
use rusqlite::Connection;

/// Stores the main database's applied position.
pub(crate) const MAIN_POSITION_SQL: &str =
    "INSERT OR REPLACE INTO counters VALUES ('journal_position', ?1)";
/// Stores a have list's applied position.
pub(crate) const HAVE_POSITION_SQL: &str = "INSERT OR REPLACE INTO journal_position VALUES (0, ?1)";

/// Applies one changeset and stores its position (`store_position`, one of the statements
/// above), in one transaction: a conflict rolls back both.
pub(crate) fn apply_one(
    conn: &Connection,
    changeset: &[u8],
    position: u64,
    store_position: &str,
) -> Result<(), ApplyError> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(ApplyError::Database)?;
    let result = session::apply(conn, changeset).and_then(|()| {
        conn.execute(store_position, [position as i64])
            .map(|_| ())
            .map_err(ApplyError::Database)
    });
    match result {
        Ok(()) => conn.execute_batch("COMMIT").map_err(ApplyError::Database),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}
