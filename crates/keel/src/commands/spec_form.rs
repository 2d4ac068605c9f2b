//! What the workspace, label and branch spec commands share: the show / edit / save / delete /
//! list flows (over [`SpecKind`]), their `--json` View fields, and reading and writing the
//! Perforce-style form edited in `$EDITOR`.

use anyhow::{Context, Result, bail};
use keel_core::{Form, WorkspaceName};

use crate::editor::edit_text;
use crate::output::Record;
use crate::session::Session;

/// A kind of spec (workspace, label, branch): what differs between them; the flows below are
/// the same for all three.
pub(crate) trait SpecKind: Sized {
    /// The kind in messages, capitalised: `Branch`.
    const TITLE: &'static str;
    /// The kind in error messages: `branch`.
    const NOUN: &'static str;
    /// The `--json` key naming the spec in action records (`client` for a workspace, as p4).
    const KEY: &'static str;

    fn name(&self) -> &str;
    /// The spec `edit` offers when `name` does not exist yet.
    fn fresh(s: &Session, name: &str) -> Self;
    /// The `--json` form of the spec (Perforce's tagged field names).
    fn record(&self) -> Record;
    /// One line of the listing.
    fn list_line(&self) -> String;
    fn render_form(&self) -> String;
    /// Parses an edited form of `original` (whose name it keeps), checking every field.
    fn parse_form(text: &str, original: &Self) -> Result<Self>;

    async fn fetch(s: &Session, name: &str) -> Result<Self>;
    async fn fetch_all(s: &Session) -> Result<Vec<Self>>;
    /// Saves the spec and returns it as the server stored it.
    async fn store(s: &Session, spec: Self, create_only: bool) -> Result<Self>;
    async fn remove(s: &Session, name: &str) -> Result<()>;
}

/// Whether a failed request was refused as NotFound.
pub(crate) fn is_not_found(e: &anyhow::Error) -> bool {
    crate::hints::client_error_of(e.as_ref()).and_then(keel_client::Error::code)
        == Some(tonic::Code::NotFound)
}

/// Prints a spec as its form (`--json`: its record).
pub(crate) async fn show<K: SpecKind>(s: &Session, name: &str) -> Result<()> {
    let spec = K::fetch(s, name).await?;
    s.out.emit(spec.record(), spec.render_form().trim_end());
    Ok(())
}

/// Saves a spec and says so.
pub(crate) async fn save<K: SpecKind>(s: &Session, spec: K, create_only: bool) -> Result<()> {
    let saved = K::store(s, spec, create_only).await?;
    said_saved(s, &saved);
    Ok(())
}

/// Says that `saved` (as the server stored it) was saved.
pub(crate) fn said_saved<K: SpecKind>(s: &Session, saved: &K) {
    s.out.emit(
        saved.record().s("action", "saved"),
        format!("{} {} saved.", K::TITLE, saved.name()),
    );
}

/// Opens the spec (or a fresh one) in `$EDITOR` and saves what was edited.
pub(crate) async fn edit<K: SpecKind>(s: &Session, name: &str) -> Result<()> {
    WorkspaceName::parse(name)?;
    let spec = match K::fetch(s, name).await {
        Ok(spec) => spec,
        Err(e) if is_not_found(&e) => K::fresh(s, name),
        Err(e) => return Err(e),
    };
    match edited(s, name, &spec)? {
        Some(updated) => save(s, updated, false).await,
        None => Ok(()),
    }
}

/// Opens `spec`'s form in `$EDITOR` and parses what was edited; `None` (and says so) when
/// the form comes back unchanged.
pub(crate) fn edited<K: SpecKind>(s: &Session, name: &str, spec: &K) -> Result<Option<K>> {
    let original = spec.render_form();
    let edited = edit_text(&original, name)?;
    if edited == original {
        s.out.emit(
            Record::new().s(K::KEY, name).s("action", "unchanged"),
            format!("{} {name} not changed.", K::TITLE),
        );
        return Ok(None);
    }
    K::parse_form(&edited, spec)
        .map(Some)
        .with_context(|| format!("error in {} specification", K::NOUN))
}

/// Deletes a spec and says so.
pub(crate) async fn delete<K: SpecKind>(s: &Session, name: &str) -> Result<()> {
    K::remove(s, name).await?;
    said_deleted::<K>(s, name);
    Ok(())
}

/// Says that spec `name` was deleted.
pub(crate) fn said_deleted<K: SpecKind>(s: &Session, name: &str) {
    s.out.emit(
        Record::new().s(K::KEY, name).s("action", "deleted"),
        format!("{} {name} deleted.", K::TITLE),
    );
}

/// Lists every spec of the kind, a line each.
pub(crate) async fn list<K: SpecKind>(s: &Session) -> Result<()> {
    for spec in K::fetch_all(s).await? {
        s.out.emit(spec.record(), spec.list_line());
    }
    Ok(())
}

/// The description a spec the caller makes gets when none is given: `Created by USER.`
pub(crate) fn created_by(s: &Session) -> String {
    format!("Created by {}.", s.settings.user)
}

/// Adds a view as `View0`, `View1`, ... (Perforce's tagged field names).
pub fn with_view(mut record: Record, view: &[String]) -> Record {
    for (i, line) in view.iter().enumerate() {
        record = record.s(&format!("View{i}"), line);
    }
    record
}

/// A single-value form field; an empty value renders as an empty field.
pub fn single(value: &str) -> Vec<String> {
    if value.is_empty() {
        Vec::new()
    } else {
        vec![value.to_string()]
    }
}

/// A multi-line description as form lines.
pub fn description_lines(description: &str) -> Vec<String> {
    description.lines().map(String::from).collect()
}

/// An edited spec form whose name field was checked against the spec being edited.
pub struct EditedForm {
    form: Form,
}

impl EditedForm {
    /// Parses `text`; the `name_field` (e.g. `Client`) must still say `expected` (the name can't
    /// be changed in the form). `what` names the kind of spec in the error.
    pub fn parse(text: &str, name_field: &str, expected: &str, what: &str) -> Result<EditedForm> {
        let edited = EditedForm {
            form: Form::parse(text)?,
        };
        let name = edited.one(name_field);
        if name != expected {
            bail!("{name_field} field {name:?} does not match {what} {expected}");
        }
        Ok(edited)
    }

    /// A single-value field, trimmed ("" when absent).
    pub fn one(&self, field: &str) -> String {
        self.form.get_one(field).unwrap_or("").trim().to_string()
    }

    /// A list field's non-empty lines, trimmed (the View).
    pub fn lines(&self, field: &str) -> Vec<String> {
        self.form
            .get(field)
            .unwrap_or(&[])
            .iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// The Description field, lines joined.
    pub fn description(&self) -> String {
        self.form.get("Description").unwrap_or(&[]).join("\n")
    }

    /// The Owner field, or `original` when it was left empty.
    pub fn owner_or(&self, original: &str) -> String {
        let owner = self.one("Owner");
        if owner.is_empty() {
            original.to_string()
        } else {
            owner
        }
    }
}
