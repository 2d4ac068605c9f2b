//! The SQL of the job spec, jobs, their word index and fixes (the jobs migration), called by
//! the `ReadTxn` / `WriteTxn` implementations in `queries.rs`.

use crate::StoreError;
use crate::rows::{FixRow, JobRow};
use keel_core::ChangeNumber;
use keel_core::job::WordRange;
use rusqlite::{Connection, OptionalExtension, Row, params};

const JOB_COLUMNS: &str = "name, fields, created, updated, accessed";
const FIX_COLUMNS: &str = "job, change, user, workspace, date, status";
/// Above every stored word: the end of an unbounded range.
const TOP: &str = "\u{10FFFF}\u{10FFFF}";

fn job(r: &Row) -> rusqlite::Result<JobRow> {
    let fields: String = r.get(1)?;
    Ok(JobRow {
        name: r.get(0)?,
        fields: serde_json::from_str(&fields).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(
                1,
                rusqlite::types::Type::Text,
                format!("jobs.fields: {e}").into(),
            )
        })?,
        created: r.get(2)?,
        updated: r.get(3)?,
        accessed: r.get(4)?,
    })
}

fn fix(r: &Row) -> rusqlite::Result<FixRow> {
    let change: i64 = r.get(1)?;
    Ok(FixRow {
        job: r.get(0)?,
        change: ChangeNumber(change as u64),
        user: r.get(2)?,
        workspace: r.get(3)?,
        date: r.get(4)?,
        status: r.get(5)?,
    })
}

fn lim(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

fn num(change: ChangeNumber) -> i64 {
    i64::try_from(change.0).unwrap_or(i64::MAX)
}

fn rows<T>(
    conn: &Connection,
    sql: &str,
    p: impl rusqlite::Params,
    map: fn(&Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let out = stmt.query_map(p, map)?;
    Ok(out.collect::<rusqlite::Result<Vec<T>>>()?)
}

pub(crate) fn job_spec(conn: &Connection) -> Result<Option<(String, i64)>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT text, updated FROM job_spec WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

pub(crate) fn put_job_spec(conn: &Connection, text: &str, updated: i64) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR REPLACE INTO job_spec VALUES (1, ?1, ?2)")?
        .execute(params![text, updated])?;
    Ok(())
}

pub(crate) fn get_job(conn: &Connection, name: &str) -> Result<Option<JobRow>, StoreError> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE name = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([name], job)
        .optional()?)
}

pub(crate) fn list_jobs(
    conn: &Connection,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<JobRow>, StoreError> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE name > ?1 ORDER BY name LIMIT ?2");
    rows(conn, &sql, params![after.unwrap_or(""), lim(limit)], job)
}

pub(crate) fn jobs_by_word(
    conn: &Connection,
    range: &WordRange,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let hi = range.hi.as_deref().unwrap_or(TOP);
    let after = after.unwrap_or("");
    let name = |r: &Row| r.get::<_, String>(0);
    match &range.field {
        Some(field) => rows(
            conn,
            "SELECT DISTINCT job FROM job_words WHERE field = ?1 AND word >= ?2 AND word <= ?3 \
             AND job > ?4 ORDER BY job LIMIT ?5",
            params![field, range.lo, hi, after, lim(limit)],
            name,
        ),
        None => rows(
            conn,
            "SELECT DISTINCT job FROM job_words WHERE word >= ?1 AND word <= ?2 AND job > ?3 \
             ORDER BY job LIMIT ?4",
            params![range.lo, hi, after, lim(limit)],
            name,
        ),
    }
}

pub(crate) fn put_job(
    conn: &Connection,
    j: &JobRow,
    words: &[(String, String)],
) -> Result<(), StoreError> {
    let fields = serde_json::to_string(&j.fields)
        .map_err(|e| StoreError::Corrupt(format!("job {}: {e}", j.name)))?;
    conn.prepare_cached("INSERT OR REPLACE INTO jobs VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![j.name, fields, j.created, j.updated, j.accessed])?;
    conn.prepare_cached("DELETE FROM job_words WHERE job = ?1")?
        .execute([&j.name])?;
    let mut insert = conn.prepare_cached("INSERT OR IGNORE INTO job_words VALUES (?1, ?2, ?3)")?;
    for (field, word) in words {
        insert.execute(params![field, word, j.name])?;
    }
    Ok(())
}

pub(crate) fn delete_job(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("DELETE FROM job_words WHERE job = ?1")?
        .execute([name])?;
    let n = conn
        .prepare_cached("DELETE FROM jobs WHERE name = ?1")?
        .execute([name])?;
    Ok(n > 0)
}

pub(crate) fn fixes_of_job(conn: &Connection, job_name: &str) -> Result<Vec<FixRow>, StoreError> {
    let sql = format!("SELECT {FIX_COLUMNS} FROM fixes WHERE job = ?1 ORDER BY change DESC");
    rows(conn, &sql, [job_name], fix)
}

pub(crate) fn fixes_of_change(
    conn: &Connection,
    change: ChangeNumber,
) -> Result<Vec<FixRow>, StoreError> {
    let sql = format!("SELECT {FIX_COLUMNS} FROM fixes WHERE change = ?1 ORDER BY job");
    rows(conn, &sql, [num(change)], fix)
}

pub(crate) fn list_fixes(
    conn: &Connection,
    before: Option<(ChangeNumber, &str)>,
    limit: usize,
) -> Result<Vec<FixRow>, StoreError> {
    let sql = format!(
        "SELECT {FIX_COLUMNS} FROM fixes WHERE (change, job) < (?1, ?2) \
         ORDER BY change DESC, job DESC LIMIT ?3"
    );
    let (change, job_name) = before.map_or((i64::MAX, ""), |(c, j)| (num(c), j));
    rows(conn, &sql, params![change, job_name, lim(limit)], fix)
}

pub(crate) fn put_fix(conn: &Connection, f: &FixRow) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR REPLACE INTO fixes VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
        .execute(params![
            f.job,
            num(f.change),
            f.user,
            f.workspace,
            f.date,
            f.status
        ])?;
    Ok(())
}

pub(crate) fn delete_fix(
    conn: &Connection,
    job_name: &str,
    change: ChangeNumber,
) -> Result<bool, StoreError> {
    let n = conn
        .prepare_cached("DELETE FROM fixes WHERE job = ?1 AND change = ?2")?
        .execute(params![job_name, num(change)])?;
    Ok(n > 0)
}
