//! Conversions between SQLite rows and the store's typed rows.

use crate::{
    BranchRow, ChangeRow, ChangeStatus, DepotRow, IntegRow, LabelRow, LazyContent, OpenedRow,
    PendingInteg, RevisionRow, ShelvedRow, WorkspaceRow,
};
use keel_core::{
    ChangeNumber, DepotPath, Digest, FileAction, FileType, IntegHow, SpecLock, TriggerKind,
    TriggerLine, TypemapLine, WorkspaceOptions,
};
use rusqlite::Row;
use rusqlite::types::Type;

fn corrupt(column: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        Type::Text,
        format!("unrecognised {what} {value:?}").into(),
    )
}

/// A text column, borrowed from the row (no allocation): for values parsed into a type.
fn text_at<'r>(row: &'r Row, i: usize) -> rusqlite::Result<&'r str> {
    row.get_ref(i)?
        .as_str()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, Type::Text, e.into()))
}

/// A nullable text column, borrowed from the row (see [`text_at`]).
fn opt_text_at<'r>(row: &'r Row, i: usize) -> rusqlite::Result<Option<&'r str>> {
    row.get_ref(i)?
        .as_str_or_null()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, Type::Text, e.into()))
}

fn workspace_options(row: &Row, i: usize) -> rusqlite::Result<WorkspaceOptions> {
    let s = text_at(row, i)?;
    WorkspaceOptions::parse(s).map_err(|_| corrupt(i, "workspace options", s))
}

fn spec_lock(row: &Row, i: usize) -> rusqlite::Result<SpecLock> {
    let s = text_at(row, i)?;
    SpecLock::parse(s).map_err(|_| corrupt(i, "spec options", s))
}

/// An automatic label's revision, stored as `@N` (empty for a static label).
fn label_revision(row: &Row, i: usize) -> rusqlite::Result<Option<ChangeNumber>> {
    let s = text_at(row, i)?;
    if s.is_empty() {
        return Ok(None);
    }
    s.strip_prefix('@')
        .and_then(|n| n.parse().ok())
        .map(|n| Some(ChangeNumber(n)))
        .ok_or_else(|| corrupt(i, "label revision", s))
}

/// An automatic label's revision as stored (`@N`, empty for none).
pub(crate) fn label_revision_text(revision: Option<ChangeNumber>) -> String {
    revision.map(|c| format!("@{}", c.0)).unwrap_or_default()
}

/// A depot path column. The store wrote it from a `DepotPath`, so it is not validated again.
pub(crate) fn path_at(row: &Row, i: usize) -> rusqlite::Result<DepotPath> {
    Ok(DepotPath::from_stored(row.get(i)?))
}

/// A nullable depot path column (see [`path_at`]).
fn opt_path_at(row: &Row, i: usize) -> rusqlite::Result<Option<DepotPath>> {
    Ok(row.get::<_, Option<String>>(i)?.map(DepotPath::from_stored))
}

/// A pending integration's merge base: an empty (or NULL) path is none.
fn base_at(row: &Row, path: usize, rev: usize) -> rusqlite::Result<Option<(DepotPath, u32)>> {
    match opt_text_at(row, path)? {
        None | Some("") => Ok(None),
        Some(p) => Ok(Some((
            DepotPath::from_stored(p.to_string()),
            row.get::<_, Option<u32>>(rev)?.unwrap_or(0),
        ))),
    }
}

fn action(row: &Row, i: usize) -> rusqlite::Result<FileAction> {
    let s = text_at(row, i)?;
    FileAction::parse(s).ok_or_else(|| corrupt(i, "file action", s))
}

fn integ_how(row: &Row, i: usize) -> rusqlite::Result<IntegHow> {
    let s = text_at(row, i)?;
    IntegHow::parse(s).ok_or_else(|| corrupt(i, "integration record", s))
}

/// A pending integration's record: empty (or NULL) while there is none.
fn pending_how(row: &Row, i: usize) -> rusqlite::Result<Option<IntegHow>> {
    match opt_text_at(row, i)? {
        None | Some("") => Ok(None),
        Some(s) => IntegHow::parse(s)
            .map(Some)
            .ok_or_else(|| corrupt(i, "integration record", s)),
    }
}

fn file_type(row: &Row, i: usize) -> rusqlite::Result<FileType> {
    let s = text_at(row, i)?;
    FileType::parse(s).map_err(|_| corrupt(i, "file type", s))
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
        options: workspace_options(row, 5)?,
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
    let status = text_at(row, 1)?;
    Ok(ChangeRow {
        change: ChangeNumber(row.get::<_, i64>(0)? as u64),
        status: ChangeStatus::parse(status).ok_or_else(|| corrupt(1, "change status", status))?,
        user: row.get(2)?,
        workspace: row.get(3)?,
        description: row.get(4)?,
        time: row.get(5)?,
    })
}

pub(crate) const REVISION_COLUMNS: &str =
    "path, rev, change, action, type, digest, size, md5, time, mod_time";

pub(crate) fn revision(row: &Row) -> rusqlite::Result<RevisionRow> {
    let digest = digest_at(row, 5)?;
    Ok(RevisionRow {
        path: path_at(row, 0)?,
        rev: row.get(1)?,
        change: ChangeNumber(row.get::<_, i64>(2)? as u64),
        action: action(row, 3)?,
        file_type: file_type(row, 4)?,
        digest,
        size: row.get::<_, i64>(6)? as u64,
        md5: row.get(7)?,
        time: row.get(8)?,
        mod_time: row.get(9)?,
    })
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) const OPENED_COLUMNS: &str = "workspace, path, user, change, action, type, base_rev, \
     move_file, lazy_digest, lazy_size, lazy_md5, integ_from, integ_start, integ_end, \
     integ_base_path, integ_base_rev, integ_resolved, integ_how, lazy_owned, locked, lazy_mod_time";

pub(crate) fn opened(row: &Row) -> rusqlite::Result<OpenedRow> {
    Ok(OpenedRow {
        workspace: row.get(0)?,
        path: path_at(row, 1)?,
        user: row.get(2)?,
        change: ChangeNumber(row.get::<_, i64>(3)? as u64),
        action: action(row, 4)?,
        file_type: file_type(row, 5)?,
        base_rev: row.get(6)?,
        move_file: opt_path_at(row, 7)?,
        lazy: match digest_at(row, 8)? {
            None => None,
            Some(digest) => Some(LazyContent {
                digest,
                size: row.get::<_, Option<i64>>(9)?.unwrap_or(0) as u64,
                md5: row.get::<_, Option<String>>(10)?.unwrap_or_default(),
                mod_time: row.get(20)?,
                owned: row.get::<_, i64>(18)? != 0,
            }),
        },
        integ: match opt_path_at(row, 11)? {
            None => None,
            Some(from_path) => Some(PendingInteg {
                from_path,
                from_start: row.get::<_, Option<u32>>(12)?.unwrap_or(0),
                from_end: row.get::<_, Option<u32>>(13)?.unwrap_or(0),
                base: base_at(row, 14, 15)?,
                resolved: row.get::<_, Option<i64>>(16)?.unwrap_or(0) != 0,
                how: pending_how(row, 17)?,
            }),
        },
        locked: row.get::<_, i64>(19)? != 0,
    })
}

/// A nullable 32-byte digest column.
pub(crate) fn digest_at(row: &Row, i: usize) -> rusqlite::Result<Option<Digest>> {
    let bytes = row
        .get_ref(i)?
        .as_blob_or_null()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, Type::Blob, e.into()))?;
    match bytes {
        None => Ok(None),
        Some(bytes) => Ok(Some(Digest(
            bytes
                .try_into()
                .map_err(|_| corrupt(i, "digest", &hex_of(bytes)))?,
        ))),
    }
}

pub(crate) const INTEG_COLUMNS: &str =
    "to_path, to_rev, from_path, from_start, from_end, how, change";

pub(crate) fn integ(row: &Row) -> rusqlite::Result<IntegRow> {
    Ok(IntegRow {
        to_path: path_at(row, 0)?,
        to_rev: row.get(1)?,
        from_path: path_at(row, 2)?,
        from_start: row.get(3)?,
        from_end: row.get(4)?,
        how: integ_how(row, 5)?,
        change: ChangeNumber(row.get::<_, i64>(6)? as u64),
    })
}

pub(crate) const LABEL_COLUMNS: &str =
    "name, owner, description, options, revision, view, created, updated";

pub(crate) fn label(row: &Row) -> rusqlite::Result<LabelRow> {
    let view: String = row.get(5)?;
    Ok(LabelRow {
        name: row.get(0)?,
        owner: row.get(1)?,
        description: row.get(2)?,
        options: spec_lock(row, 3)?,
        revision: label_revision(row, 4)?,
        view: view
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect(),
        created: row.get(6)?,
        updated: row.get(7)?,
    })
}

pub(crate) const BRANCH_COLUMNS: &str = "name, owner, description, options, view, created, updated";

/// A triggers table line (`seq` is not selected).
pub(crate) fn trigger(row: &Row) -> rusqlite::Result<TriggerLine> {
    let kind = text_at(row, 1)?;
    Ok(TriggerLine {
        name: row.get(0)?,
        kind: TriggerKind::parse(kind).ok_or_else(|| corrupt(1, "trigger type", kind))?,
        path: row.get(2)?,
        command: row.get(3)?,
    })
}

/// A typemap line (`seq` is not selected): its type and its pattern (`-` for an exclusion).
pub(crate) fn typemap_line(row: &Row) -> rusqlite::Result<TypemapLine> {
    let file_type = text_at(row, 0)?;
    let pattern = text_at(row, 1)?;
    TypemapLine::parse(&format!("{file_type} \"{pattern}\""), 1)
        .map_err(|_| corrupt(1, "typemap line", pattern))
}

pub(crate) fn branch(row: &Row) -> rusqlite::Result<BranchRow> {
    let view: String = row.get(4)?;
    Ok(BranchRow {
        name: row.get(0)?,
        owner: row.get(1)?,
        description: row.get(2)?,
        options: spec_lock(row, 3)?,
        view: view
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect(),
        created: row.get(5)?,
        updated: row.get(6)?,
    })
}

pub(crate) const SHELVED_COLUMNS: &str =
    "change, path, action, type, digest, size, md5, base_rev, move_file, mod_time";

pub(crate) fn shelved(row: &Row) -> rusqlite::Result<ShelvedRow> {
    Ok(ShelvedRow {
        change: ChangeNumber(row.get::<_, i64>(0)? as u64),
        path: path_at(row, 1)?,
        action: action(row, 2)?,
        file_type: file_type(row, 3)?,
        digest: digest_at(row, 4)?,
        size: row.get::<_, i64>(5)? as u64,
        md5: row.get(6)?,
        base_rev: row.get(7)?,
        move_file: opt_path_at(row, 8)?,
        mod_time: row.get(9)?,
    })
}
