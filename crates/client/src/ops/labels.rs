//! `label show|list|create|edit|delete`, `tag` and `labelsync`: label specs, and the file
//! revisions a label holds added, updated or removed.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A label spec as the server stores it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSpec {
    pub name: String,
    pub owner: String,
    pub description: String,
    /// `unlocked` or `locked`.
    pub options: String,
    /// Empty (a static label) or `@N` (an automatic label of change N).
    pub revision: String,
    /// Depot paths the label may hold; a leading `-` excludes.
    pub view: Vec<String>,
    /// Seconds since the epoch the spec was last saved (0: never).
    pub updated: u64,
}

impl LabelSpec {
    fn from_wire(l: pb::Label) -> LabelSpec {
        LabelSpec {
            name: l.name,
            owner: l.owner,
            description: l.description,
            options: l.options,
            revision: l.revision,
            view: l.view,
            updated: l.updated,
        }
    }

    fn into_wire(self) -> pb::Label {
        pb::Label {
            name: self.name,
            owner: self.owner,
            description: self.description,
            options: self.options,
            revision: self.revision,
            view: self.view,
            updated: self.updated,
        }
    }
}

/// What `tag` or `labelsync` did to one of the label's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelAction {
    Added,
    Updated,
    Deleted,
}

/// One label entry added, updated or deleted (or that would be, in a preview).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelEntry {
    pub depot_file: String,
    pub rev: u32,
    /// `None` only from a server that names no action.
    pub action: Option<LabelAction>,
}

impl LabelEntry {
    fn from_wire(f: pb::LabelFile) -> LabelEntry {
        let action = match f.action() {
            pb::LabelFileAction::Added => Some(LabelAction::Added),
            pb::LabelFileAction::Updated => Some(LabelAction::Updated),
            pb::LabelFileAction::Deleted => Some(LabelAction::Deleted),
            pb::LabelFileAction::Unspecified => None,
        };
        LabelEntry {
            depot_file: f.depot_file,
            rev: f.rev,
            action,
        }
    }
}

/// Label `name`'s spec. `form`: it is shown to be read or edited as a form, so the server's
/// form-out triggers run on it.
pub async fn label(conn: &Connection, name: &str, form: bool) -> Result<LabelSpec, QueryError> {
    let got = conn
        .reply(conn.client().get_label(pb::GetLabelRequest {
            caller: conn.caller(),
            name: name.to_string(),
            form,
        }))
        .await?;
    Ok(LabelSpec::from_wire(got))
}

/// Every label, in name order.
pub async fn labels(conn: &Connection) -> Result<Records<LabelSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().list_labels(pb::ListLabelsRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |l| Ok(LabelSpec::from_wire(l))))
}

/// Saves `spec` and returns it as stored. `create_only`: refused if it exists; `force`: a
/// super user saves a label that is not theirs, or a locked one.
pub async fn save_label(
    conn: &Connection,
    spec: LabelSpec,
    create_only: bool,
    force: bool,
) -> Result<LabelSpec, QueryError> {
    let saved = conn
        .reply(conn.client().save_label(pb::SaveLabelRequest {
            caller: conn.caller(),
            label: Some(spec.into_wire()),
            create_only,
            force,
        }))
        .await?;
    Ok(LabelSpec::from_wire(saved))
}

/// Deletes label `name`; `force`: a super user deletes one that is not theirs, or a locked one.
pub async fn delete_label(conn: &Connection, name: &str, force: bool) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_label(pb::DeleteLabelRequest {
        caller: conn.caller(),
        name: name.to_string(),
        force,
    }))
    .await?;
    Ok(())
}

/// What `tag` does: add (or with `delete`, remove) `files`' revisions to `label`.
#[derive(Clone, Debug, Default)]
pub struct TagQuery {
    pub label: String,
    /// Depot paths, with revisions (`//depot/x@12`); at their head revision without one.
    pub files: Vec<String>,
    /// Remove the files from the label instead.
    pub delete: bool,
    /// Only say what would change.
    pub preview: bool,
}

/// Tags files with a label; streams each entry it changed.
///
/// A CI job recording the revisions a green build used:
///
/// ```no_run
/// # async fn example(conn: keel_client::Connection) -> Result<(), keel_client::ops::QueryError> {
/// use keel_client::ops::{self, LabelSpec, TagQuery};
///
/// let label = LabelSpec {
///     name: "app-build-131".into(),
///     owner: "ci".into(),
///     options: "locked".into(),
///     view: vec!["//depot/app/...".into()],
///     ..Default::default()
/// };
/// ops::save_label(&conn, label, true, false).await?;
/// let query = TagQuery {
///     label: "app-build-131".into(),
///     files: vec!["//depot/app/...@131".into()],
///     ..Default::default()
/// };
/// let mut tagged = ops::tag(&conn, query).await?;
/// while let Some(entry) = tagged.next().await? {
///     println!("{}#{} {:?}", entry.depot_file, entry.rev, entry.action);
/// }
/// # Ok(())
/// # }
/// ```
pub async fn tag(conn: &Connection, query: TagQuery) -> Result<Records<LabelEntry>, QueryError> {
    let stream = conn
        .reply(conn.client().tag(pb::TagRequest {
            caller: conn.caller(),
            label: query.label,
            files: query.files,
            delete: query.delete,
            preview: query.preview,
        }))
        .await?;
    Ok(Records::new(conn, stream, |f| Ok(LabelEntry::from_wire(f))))
}

/// Makes `label` hold exactly `files` (the label's whole view when empty), at the revisions
/// given (head without one); streams each entry it changed. `preview`: only say what would.
pub async fn labelsync(
    conn: &Connection,
    label: &str,
    files: Vec<String>,
    preview: bool,
) -> Result<Records<LabelEntry>, QueryError> {
    let stream = conn
        .reply(conn.client().labelsync(pb::LabelsyncRequest {
            caller: conn.caller(),
            label: label.to_string(),
            files,
            preview,
        }))
        .await?;
    Ok(Records::new(conn, stream, |f| Ok(LabelEntry::from_wire(f))))
}
