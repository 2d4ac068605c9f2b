//! Journals the rows of a set-based write itself, with the journal's session paused.
//!
//! The session records a row through a pre-update hook, then builds the changeset with one
//! primary-key lookup per recorded row, in hash order; for a statement writing tens of
//! thousands of rows (a branch's submit) that costs more than the write. A write job that is
//! the first of its group to change anything (nothing recorded yet) may instead pause the
//! session around such a statement and read the rows back in key order as changeset records
//! of SQLite's own format, so a journal record's body is still one changeset.
//!
//! The records stream into the group's journal record body, ahead of the session's changeset.
//! That order is the order of the writes: no earlier job of the group changed anything or
//! journaled a row, and a later job's first change to one of these rows is recorded by the
//! session against the row as this job left it. When the job is rolled back, the writer starts
//! the body over (it held nothing but this job's records).

use super::session::Session;
use crate::StoreError;
use crate::journal::{BodyWriter, JournalError};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Params};
use std::io::Write;

/// A changeset record's operation (SQLite's `SQLITE_INSERT` and `SQLITE_DELETE` codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// The row as it is now, inserted.
    Insert = 18,
    /// The row as it is now (before the caller deletes it), deleted.
    Delete = 9,
}

/// Records are gathered in pieces of about this size before they go into the body.
const PIECE: usize = 64 * 1024;

/// A write job's own changeset records, the body they go into, and the session it pauses.
pub(crate) struct BulkJournal<'s> {
    session: &'s Session<'s>,
    body: &'s mut BodyWriter,
    out: Vec<u8>,
    /// Whether any record went into the body.
    wrote: bool,
    /// Each table's header, read once; the table of the last header written.
    headers: Vec<(String, Header)>,
    current: Option<String>,
    /// The pending change (workspace, number) whose records this job submitted set-based:
    /// deleting that change's open records is journaled here too.
    pub(crate) submitted: Option<(String, i64)>,
}

/// Resumes the session when dropped, so a write that fails or panics never leaves it paused.
struct Resume<'a, 's>(&'a Session<'s>);

impl Drop for Resume<'_, '_> {
    fn drop(&mut self) {
        self.0.set_enabled(true);
    }
}

impl<'s> BulkJournal<'s> {
    /// Journals into `body`, which must be empty, pausing `session`, which must have recorded
    /// nothing.
    pub(crate) fn new(session: &'s Session<'s>, body: &'s mut BodyWriter) -> BulkJournal<'s> {
        BulkJournal {
            session,
            body,
            out: Vec::with_capacity(PIECE),
            wrote: false,
            headers: Vec::new(),
            current: None,
            submitted: None,
        }
    }

    /// Whether the session has recorded nothing so far: no row of the group was recorded
    /// through it, so any row may be journaled here.
    pub(crate) fn nothing_recorded(&self) -> bool {
        self.session.is_empty()
    }

    /// Runs `write` with the session paused: whatever it changes must be journaled with
    /// [`BulkJournal::rows`].
    pub(crate) fn paused<T>(
        &self,
        write: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.session.set_enabled(false);
        let _resume = Resume(self.session);
        write()
    }

    /// Appends one `op` record per row `select` returns; its columns must be `table`'s, in the
    /// table's order (`SELECT t.* …`). Returns how many rows.
    pub(crate) fn rows(
        &mut self,
        conn: &Connection,
        table: &str,
        op: Op,
        select: &str,
        params: impl Params,
    ) -> Result<usize, StoreError> {
        if !self.headers.iter().any(|(t, _)| t == table) {
            let header = table_header(conn, table)?;
            self.headers.push((table.to_string(), header));
        }
        let (columns_wanted, header) = self
            .headers
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, h)| (h.columns, h.bytes.clone()))
            .expect("header read above");
        let mut stmt = conn.prepare_cached(select)?;
        let columns = stmt.column_count();
        if columns != columns_wanted {
            return Err(StoreError::Corrupt(format!(
                "journaling {table}: the query returns {columns} columns, the table has \
                 {columns_wanted}"
            )));
        }
        let mut rows = stmt.query(params)?;
        let mut count = 0;
        while let Some(row) = rows.next()? {
            if self.current.as_deref() != Some(table) {
                // Records that follow a header belong to its table.
                self.out.extend_from_slice(&header);
                self.current = Some(table.to_string());
            }
            self.out.push(op as u8);
            // Not indirect: the job made the change itself.
            self.out.push(0);
            for i in 0..columns {
                put_value(&mut self.out, row.get_ref(i)?);
            }
            count += 1;
            if self.out.len() >= PIECE {
                self.flush()?;
            }
        }
        self.flush()?;
        Ok(count)
    }

    /// Whether any record went into the body.
    pub(crate) fn wrote(&self) -> bool {
        self.wrote
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.out.is_empty() {
            self.wrote = true;
            self.body
                .write_all(&self.out)
                .map_err(JournalError::Compress)?;
            self.out.clear();
        }
        Ok(())
    }
}

/// A changeset's table header: `T`, the column count, one byte per column (its position in
/// the primary key, 0 when not part of it), the name and a NUL.
struct Header {
    columns: usize,
    bytes: Vec<u8>,
}

fn table_header(conn: &Connection, table: &str) -> Result<Header, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT pk FROM pragma_table_info(?1) ORDER BY cid")?;
    let pk: Vec<u8> = stmt
        .query_map([table], |r| r.get::<_, u8>(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut bytes = vec![b'T'];
    put_varint(&mut bytes, pk.len() as u64);
    bytes.extend_from_slice(&pk);
    bytes.extend_from_slice(table.as_bytes());
    bytes.push(0);
    Ok(Header {
        columns: pk.len(),
        bytes,
    })
}

/// A value as a changeset stores it: a type byte (SQLite's type codes), then a big-endian
/// 64-bit integer or float, or a length-prefixed text or blob; nothing more for NULL.
fn put_value(out: &mut Vec<u8>, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => out.push(5),
        ValueRef::Integer(i) => {
            out.push(1);
            out.extend_from_slice(&i.to_be_bytes());
        }
        ValueRef::Real(f) => {
            out.push(2);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        ValueRef::Text(t) => {
            out.push(3);
            put_varint(out, t.len() as u64);
            out.extend_from_slice(t);
        }
        ValueRef::Blob(b) => {
            out.push(4);
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
    }
}

/// SQLite's varint: big-endian groups of 7 bits, each but the last with its high bit set; a
/// ninth byte, when needed, carries 8 bits.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v & (0xff00_0000u64 << 32) != 0 {
        let mut bytes = [0u8; 9];
        bytes[8] = v as u8;
        v >>= 8;
        for b in bytes[..8].iter_mut().rev() {
            *b = (v & 0x7f) as u8 | 0x80;
            v >>= 7;
        }
        out.extend_from_slice(&bytes);
        return;
    }
    let mut groups = Vec::with_capacity(9);
    loop {
        groups.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    groups[0] &= 0x7f;
    out.extend(groups.iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        out
    }

    #[test]
    fn varints_match_sqlite() {
        assert_eq!(varint(0), [0x00]);
        assert_eq!(varint(0x7f), [0x7f]);
        assert_eq!(varint(0x80), [0x81, 0x00]);
        assert_eq!(varint(0x3fff), [0xff, 0x7f]);
        assert_eq!(varint(0x4000), [0x81, 0x80, 0x00]);
        assert_eq!(varint(u64::MAX), [0xff; 9]);
    }
}
