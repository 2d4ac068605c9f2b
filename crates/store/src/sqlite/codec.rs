//! Conversions between SQLite rows and the store's typed rows.

use crate::{ChangeRow, ChangeStatus, DepotRow, OpenedRow, RevisionRow, WorkspaceRow};
use keel_core::{ChangeNumber, Digest, FileAction, FileType};
use rusqlite::Row;
use rusqlite::types::Type;

fn corrupt(column: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        Type::Text,
        format!("unrecognised {what} {value:?}").into(),
    )
}

fn action(row: &Row, i: usize) -> rusqlite::Result<FileAction> {
    let s: String = row.get(i)?;
    FileAction::parse(&s).ok_or_else(|| corrupt(i, "file action", &s))
}

fn file_type(row: &Row, i: usize) -> rusqlite::Result<FileType> {
    let s: String = row.get(i)?;
    FileType::parse(&s).map_err(|_| corrupt(i, "file type", &s))
}

pub(crate) const DEPOT_COLUMNS: &str = "name, kind, owner, description, created";

pub(crate) fn depot(row: &Row) -> rusqlite::Result<DepotRow> {
    Ok(DepotRow {
        name: row.get(0)?,
        kind: row.get(1)?,
        owner: row.get(2)?,
        description: row.get(3)?,
        created: row.get(4)?,
    })
}

pub(crate) const WORKSPACE_COLUMNS: &str =
    "name, owner, host, root, description, options, view, created, updated, accessed";

pub(crate) fn workspace(row: &Row) -> rusqlite::Result<WorkspaceRow> {
    let view: String = row.get(6)?;
    Ok(WorkspaceRow {
        name: row.get(0)?,
        owner: row.get(1)?,
        host: row.get(2)?,
        root: row.get(3)?,
        description: row.get(4)?,
        options: row.get(5)?,
        view: view
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect(),
        created: row.get(7)?,
        updated: row.get(8)?,
        accessed: row.get(9)?,
    })
}

pub(crate) const CHANGE_COLUMNS: &str = "change, status, user, workspace, description, time";

pub(crate) fn change(row: &Row) -> rusqlite::Result<ChangeRow> {
    let status: String = row.get(1)?;
    Ok(ChangeRow {
        change: ChangeNumber(row.get::<_, i64>(0)? as u64),
        status: ChangeStatus::parse(&status).ok_or_else(|| corrupt(1, "change status", &status))?,
        user: row.get(2)?,
        workspace: row.get(3)?,
        description: row.get(4)?,
        time: row.get(5)?,
    })
}

pub(crate) const REVISION_COLUMNS: &str =
    "path, rev, change, action, type, digest, size, md5, time";

pub(crate) fn revision(row: &Row) -> rusqlite::Result<RevisionRow> {
    let digest: Option<Vec<u8>> = row.get(5)?;
    let digest = match digest {
        None => None,
        Some(bytes) => Some(Digest(
            bytes
                .as_slice()
                .try_into()
                .map_err(|_| corrupt(5, "digest", &hex_of(&bytes)))?,
        )),
    };
    Ok(RevisionRow {
        path: row.get(0)?,
        rev: row.get(1)?,
        change: ChangeNumber(row.get::<_, i64>(2)? as u64),
        action: action(row, 3)?,
        file_type: file_type(row, 4)?,
        digest,
        size: row.get::<_, i64>(6)? as u64,
        md5: row.get(7)?,
        time: row.get(8)?,
    })
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) const OPENED_COLUMNS: &str =
    "workspace, path, user, change, action, type, base_rev, move_file";

pub(crate) fn opened(row: &Row) -> rusqlite::Result<OpenedRow> {
    Ok(OpenedRow {
        workspace: row.get(0)?,
        path: row.get(1)?,
        user: row.get(2)?,
        change: ChangeNumber(row.get::<_, i64>(3)? as u64),
        action: action(row, 4)?,
        file_type: file_type(row, 5)?,
        base_rev: row.get(6)?,
        move_file: row.get(7)?,
    })
}
