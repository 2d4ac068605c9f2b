//! A small safe wrapper over SQLite's session extension: record a connection's changes as a
//! changeset, and apply a changeset to another database.
//!
//! The bundled SQLite is built with `SQLITE_ENABLE_SESSION` and `SQLITE_ENABLE_PREUPDATE_HOOK`
//! (`.cargo/config.toml`), and libsqlite3-sys's bundled bindings declare the functions, so no
//! binding generator runs at build time (rusqlite's own `session` feature needs one).

use rusqlite::{Connection, ffi};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::io::Write;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn check(code: c_int) -> Result<(), rusqlite::Error> {
    if code == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(code), None))
    }
}

/// Records the changes made through one connection to the tables it is attached to.
pub(crate) struct Session<'c> {
    raw: *mut ffi::sqlite3_session,
    _conn: PhantomData<&'c Connection>,
}

impl<'c> Session<'c> {
    /// A session on `conn`'s main database, attached to no table yet.
    pub(crate) fn new(conn: &'c Connection) -> Result<Session<'c>, rusqlite::Error> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: the handle is valid while `conn` lives, which the session's lifetime ensures;
        // the schema name is a NUL-terminated literal.
        check(unsafe { ffi::sqlite3session_create(conn.handle(), c"main".as_ptr(), &mut raw) })?;
        Ok(Session {
            raw,
            _conn: PhantomData,
        })
    }

    /// Records changes to `table`, or to every table when `None` (a table without a primary
    /// key is silently left out by SQLite: the conformance tests check none exists).
    pub(crate) fn attach(&mut self, table: Option<&str>) -> Result<(), rusqlite::Error> {
        let name = table
            .map(CString::new)
            .transpose()
            .map_err(|_| rusqlite::Error::InvalidParameterName("table name with NUL".into()))?;
        let ptr = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        // SAFETY: `raw` is a live session; `ptr` is NULL or a NUL-terminated string.
        check(unsafe { ffi::sqlite3session_attach(self.raw, ptr) })
    }

    /// Stops (`false`) or resumes (`true`) recording: changes made meanwhile are not recorded,
    /// and a row first touched after resuming is recorded against its state at that moment.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        // SAFETY: `raw` is a live session; the call only sets or reads its flag.
        unsafe { ffi::sqlite3session_enable(self.raw, c_int::from(enabled)) };
    }

    /// Whether no change has been recorded yet (a change later rolled back still counts).
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: `raw` is a live session.
        unsafe { ffi::sqlite3session_isempty(self.raw) != 0 }
    }

    /// Writes the changeset of everything recorded so far to `out` (nothing when no row
    /// differs from its state when first touched).
    pub(crate) fn changeset_to(&mut self, out: &mut dyn Write) -> Result<(), rusqlite::Error> {
        let mut out = out;
        let ctx = &mut out as *mut &mut dyn Write as *mut c_void;
        // SAFETY: `ctx` points at `out`, alive for the call; `write_out` casts it back.
        check(unsafe { ffi::sqlite3session_changeset_strm(self.raw, Some(write_out), ctx) })
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from sqlite3session_create and is deleted once.
        unsafe { ffi::sqlite3session_delete(self.raw) }
    }
}

unsafe extern "C" fn write_out(ctx: *mut c_void, data: *const c_void, n: c_int) -> c_int {
    if n <= 0 {
        return ffi::SQLITE_OK;
    }
    // SAFETY: `ctx` is the `&mut &mut dyn Write` passed by `changeset_to`; SQLite hands `n`
    // readable bytes at `data`.
    let (out, bytes) = unsafe {
        (
            &mut *(ctx as *mut &mut dyn Write),
            std::slice::from_raw_parts(data as *const u8, n as usize),
        )
    };
    match catch_unwind(AssertUnwindSafe(|| out.write_all(bytes))) {
        Ok(Ok(())) => ffi::SQLITE_OK,
        _ => ffi::SQLITE_IOERR,
    }
}

/// Why a changeset could not be applied.
#[derive(Debug)]
pub(crate) enum ApplyError {
    /// A change did not fit the database (the row it changes is missing or differs, or the
    /// row it inserts exists): nothing of the changeset was applied.
    Conflict {
        table: String,
        kind: &'static str,
    },
    Database(rusqlite::Error),
}

/// Applies `changeset` to `conn` inside the caller's transaction; the first conflict aborts
/// it whole.
pub(crate) fn apply(conn: &Connection, changeset: &[u8]) -> Result<(), ApplyError> {
    let mut conflict: Option<(String, &'static str)> = None;
    let ctx = &mut conflict as *mut Option<(String, &'static str)> as *mut c_void;
    let len = c_int::try_from(changeset.len()).map_err(|_| {
        ApplyError::Database(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_TOOBIG),
            Some("changeset larger than 2 GiB".into()),
        ))
    })?;
    // SAFETY: the handle is valid for the call; SQLite only reads `len` bytes of the
    // changeset; `ctx` points at `conflict`, alive for the call.
    let code = unsafe {
        ffi::sqlite3changeset_apply(
            conn.handle(),
            len,
            changeset.as_ptr() as *mut c_void,
            None,
            Some(on_conflict),
            ctx,
        )
    };
    match (code, conflict) {
        (ffi::SQLITE_OK, _) => Ok(()),
        (_, Some((table, kind))) => Err(ApplyError::Conflict { table, kind }),
        (code, None) => Err(ApplyError::Database(rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            None,
        ))),
    }
}

unsafe extern "C" fn on_conflict(
    ctx: *mut c_void,
    kind: c_int,
    iter: *mut ffi::sqlite3_changeset_iter,
) -> c_int {
    let kind = match kind {
        ffi::SQLITE_CHANGESET_DATA => "the row to change holds other values",
        ffi::SQLITE_CHANGESET_NOTFOUND => "the row to change is missing",
        ffi::SQLITE_CHANGESET_CONFLICT => "the row to insert already exists",
        ffi::SQLITE_CHANGESET_CONSTRAINT => "a constraint refused the change",
        _ => "an unexpected conflict",
    };
    let mut table: *const c_char = std::ptr::null();
    let (mut columns, mut op, mut indirect) = (0, 0, 0);
    // SAFETY: `iter` is the iterator SQLite passes to a conflict handler; `ctx` is the
    // `Option` passed by `apply`.
    unsafe {
        let name =
            if ffi::sqlite3changeset_op(iter, &mut table, &mut columns, &mut op, &mut indirect)
                == ffi::SQLITE_OK
                && !table.is_null()
            {
                CStr::from_ptr(table).to_string_lossy().into_owned()
            } else {
                "?".into()
            };
        let slot = &mut *(ctx as *mut Option<(String, &'static str)>);
        slot.get_or_insert((name, kind));
    }
    ffi::SQLITE_CHANGESET_ABORT
}

/// Which values of a changeset's rows [`changed_blobs`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    /// New values of inserted and updated rows.
    Written,
    /// Old values of deleted rows.
    Deleted,
}

/// The 32-byte BLOB values a changeset writes (`Changed::Written`) into, or deletes
/// (`Changed::Deleted`) from, the given (table, column index) pairs: the digests of content a
/// record makes referenced, or takes out of the purge queue.
pub(crate) fn changed_blobs(
    changeset: &[u8],
    columns: &[(String, usize)],
    which: Changed,
) -> Result<Vec<[u8; 32]>, rusqlite::Error> {
    let len = c_int::try_from(changeset.len())
        .map_err(|_| rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None))?;
    let mut iter: *mut ffi::sqlite3_changeset_iter = std::ptr::null_mut();
    // SAFETY: SQLite reads `len` bytes of the changeset, which outlives the iterator (it is
    // finalized below before returning).
    check(unsafe {
        ffi::sqlite3changeset_start(&mut iter, len, changeset.as_ptr() as *mut c_void)
    })?;
    let mut found = Vec::new();
    let result = (|| loop {
        // SAFETY: `iter` is a live iterator until finalized below.
        let step = unsafe { ffi::sqlite3changeset_next(iter) };
        if step == ffi::SQLITE_DONE {
            return Ok(());
        }
        if step != ffi::SQLITE_ROW {
            return check(step);
        }
        let mut table: *const c_char = std::ptr::null();
        let (mut ncols, mut op, mut indirect) = (0, 0, 0);
        // SAFETY: `iter` points at a row; the table name lives until the next step.
        check(unsafe {
            ffi::sqlite3changeset_op(iter, &mut table, &mut ncols, &mut op, &mut indirect)
        })?;
        let wanted = match which {
            Changed::Written => op != ffi::SQLITE_DELETE,
            Changed::Deleted => op == ffi::SQLITE_DELETE,
        };
        if !wanted || table.is_null() {
            continue;
        }
        // SAFETY: a NUL-terminated name owned by the iterator.
        let name = unsafe { CStr::from_ptr(table) }.to_string_lossy();
        for (_, column) in columns.iter().filter(|(t, _)| *t == name) {
            if *column as c_int >= ncols {
                continue;
            }
            let mut value: *mut ffi::sqlite3_value = std::ptr::null_mut();
            // SAFETY: an INSERT or UPDATE row has new values (an unchanged column is NULL), a
            // DELETE row old values.
            check(unsafe {
                match which {
                    Changed::Written => {
                        ffi::sqlite3changeset_new(iter, *column as c_int, &mut value)
                    }
                    Changed::Deleted => {
                        ffi::sqlite3changeset_old(iter, *column as c_int, &mut value)
                    }
                }
            })?;
            if value.is_null() {
                continue;
            }
            // SAFETY: `value` is valid until the next step; SQLite hands `bytes` readable bytes.
            unsafe {
                if ffi::sqlite3_value_type(value) == ffi::SQLITE_BLOB
                    && ffi::sqlite3_value_bytes(value) == 32
                {
                    let data = ffi::sqlite3_value_blob(value) as *const u8;
                    let mut digest = [0u8; 32];
                    digest.copy_from_slice(std::slice::from_raw_parts(data, 32));
                    found.push(digest);
                }
            }
        }
    })();
    // SAFETY: `iter` came from sqlite3changeset_start and is finalized once.
    unsafe { ffi::sqlite3changeset_finalize(iter) };
    result.map(|()| found)
}
