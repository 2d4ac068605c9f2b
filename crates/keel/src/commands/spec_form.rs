//! What the workspace, label and branch spec commands share: their `--json` View fields and
//! reading and writing the Perforce-style form edited in `$EDITOR`.

use anyhow::{Result, bail};
use keel_core::Form;

use crate::output::Record;

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
