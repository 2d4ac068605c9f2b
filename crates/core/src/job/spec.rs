//! The job spec: the fields a job has (code, name, type, length, persistence), the values of
//! its select fields and its presets, as `jobspec -o` prints and `jobspec -i` reads them.

use crate::form::{Form, FormError};

/// The kind of value a job field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// One word: no whitespace.
    Word,
    /// Any text, several lines.
    Text,
    /// One line of text.
    Line,
    /// One of the field's listed values.
    Select,
    /// A date, `YYYY/MM/DD HH:MM:SS` (UTC).
    Date,
}

impl FieldType {
    pub fn parse(word: &str) -> Option<FieldType> {
        Some(match word {
            "word" => FieldType::Word,
            "text" => FieldType::Text,
            "line" => FieldType::Line,
            "select" => FieldType::Select,
            "date" => FieldType::Date,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Word => "word",
            FieldType::Text => "text",
            FieldType::Line => "line",
            FieldType::Select => "select",
            FieldType::Date => "date",
        }
    }

    /// Whether a bare word in a job expression searches this field.
    pub fn is_text(self) -> bool {
        matches!(self, FieldType::Text | FieldType::Line)
    }
}

/// When a field gets a value, and whether the user may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// May be empty; no preset.
    Optional,
    /// The preset fills it when the job is created; may be emptied.
    Default,
    /// The preset fills it when the job is created; may not be empty.
    Required,
    /// Set from the preset when the job is created, never changed afterwards.
    Once,
    /// Set from the preset every time the job is saved.
    Always,
}

impl Persistence {
    pub fn parse(word: &str) -> Option<Persistence> {
        Some(match word {
            "optional" => Persistence::Optional,
            "default" => Persistence::Default,
            "required" => Persistence::Required,
            "once" => Persistence::Once,
            "always" => Persistence::Always,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Persistence::Optional => "optional",
            Persistence::Default => "default",
            Persistence::Required => "required",
            Persistence::Once => "once",
            Persistence::Always => "always",
        }
    }
}

/// One field of the job spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobField {
    /// 101–199; 101 is the job's name, 102 its status, 103 its user, 104 its date, 105 its
    /// description.
    pub code: u32,
    pub name: String,
    pub kind: FieldType,
    /// Longest value in characters (0: unlimited).
    pub length: u32,
    pub persistence: Persistence,
    /// The allowed values of a select field.
    pub values: Vec<String>,
    /// The value a new job starts with: text, or `$user`, `$now`, `$blank`.
    pub preset: Option<String>,
}

/// The code of the field that names the job.
pub const JOB_CODE: u32 = 101;
/// The code of the job's status field.
pub const STATUS_CODE: u32 = 102;
/// The code of the job's user field.
pub const USER_CODE: u32 = 103;
/// The code of the job's date field.
pub const DATE_CODE: u32 = 104;
/// The code of the job's description field.
pub const DESCRIPTION_CODE: u32 = 105;

/// The text a `$blank` preset fills in; a required field still holding it is refused.
pub const BLANK: &str = "<enter description here>";

/// A refused job spec, naming the line of the form that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobSpecError {
    #[error(transparent)]
    Form(#[from] FormError),
    #[error("job spec line {line_no}: {line:?}: {reason}")]
    Line {
        line_no: usize,
        line: String,
        reason: String,
    },
    #[error("job spec: {0}")]
    Spec(String),
}

/// The job spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSpec {
    /// In code order.
    pub fields: Vec<JobField>,
    /// The comment lines shown atop every job form (each starting with `#`).
    pub comments: Vec<String>,
}

const DEFAULT_SPEC: &str = "\
Fields:
\t101 Job word 32 required
\t102 Status select 10 required
\t103 User word 32 required
\t104 Date date 20 always
\t105 Description text 0 required

Values:
\tStatus open/suspended/closed

Presets:
\tStatus open
\tUser $user
\tDate $now
\tDescription $blank

Comments:
\t# A Keel job specification.
\t#  Job:         The job name. 'new' generates a sequenced job number.
\t#  Status:      Either 'open', 'closed', or 'suspended'. Can be changed.
\t#  User:        The user who created the job. Can be changed.
\t#  Date:        The date this specification was last modified.
\t#  Description: Comments about the job. Required.
";

/// The name that asks for the next numbered job.
pub const NEW_JOB: &str = "new";

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec::parse(DEFAULT_SPEC).expect("the default job spec is valid")
    }
}

/// Whether `name` may name a job field: a letter, then letters, digits, `_` or `-` (a form
/// field name).
fn valid_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Field names a job form uses for its own dates.
pub const RESERVED_FIELDS: &[&str] = &["Update", "Access"];

impl JobSpec {
    /// Parses a job spec form (`Fields:`, `Values:`, `Presets:`, `Comments:`), checking it
    /// whole; an error names the line of `text` that is wrong.
    pub fn parse(text: &str) -> Result<JobSpec, JobSpecError> {
        let form = Form::parse(text)?;
        let line_err = |line: &str, reason: String| JobSpecError::Line {
            line_no: line_number(text, line),
            line: line.trim().to_string(),
            reason,
        };
        for (name, _) in &form.fields {
            if !matches!(name.as_str(), "Fields" | "Values" | "Presets" | "Comments") {
                return Err(line_err(
                    &format!("{name}:"),
                    "unknown section (expected Fields, Values, Presets or Comments)".into(),
                ));
            }
        }
        let mut fields: Vec<JobField> = Vec::new();
        for line in form.get("Fields").unwrap_or(&[]) {
            if line.trim().is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let [code, name, kind, length, persistence] = words[..] else {
                return Err(line_err(
                    line,
                    "expected 'CODE NAME TYPE LENGTH PERSISTENCE', e.g. '106 Severity select 10 optional'"
                        .into(),
                ));
            };
            let code: u32 = code
                .parse()
                .ok()
                .filter(|c| (101..=199).contains(c))
                .ok_or_else(|| {
                    line_err(
                        line,
                        format!("code {code:?} is not a number from 101 to 199"),
                    )
                })?;
            if !valid_field_name(name) || RESERVED_FIELDS.contains(&name) {
                return Err(line_err(line, format!("{name:?} cannot name a field")));
            }
            let kind = FieldType::parse(kind).ok_or_else(|| {
                line_err(
                    line,
                    format!("unknown type {kind:?} (expected word, text, line, select or date)"),
                )
            })?;
            let length: u32 = length
                .parse()
                .map_err(|_| line_err(line, format!("length {length:?} is not a number")))?;
            let persistence = Persistence::parse(persistence).ok_or_else(|| {
                line_err(
                    line,
                    format!(
                        "unknown persistence {persistence:?} (expected optional, default, \
                         required, once or always)"
                    ),
                )
            })?;
            if fields.iter().any(|f| f.code == code) {
                return Err(line_err(line, format!("code {code} is used twice")));
            }
            if fields.iter().any(|f| f.name.eq_ignore_ascii_case(name)) {
                return Err(line_err(line, format!("field {name} is named twice")));
            }
            fields.push(JobField {
                code,
                name: name.to_string(),
                kind,
                length,
                persistence,
                values: Vec::new(),
                preset: None,
            });
        }
        for line in form.get("Values").unwrap_or(&[]) {
            if line.trim().is_empty() {
                continue;
            }
            let (name, values) = split_pair(line)
                .ok_or_else(|| line_err(line, "expected 'FIELD value1/value2/...'".into()))?;
            let field = field_mut(&mut fields, name)
                .ok_or_else(|| line_err(line, format!("no field {name} in Fields")))?;
            if field.kind != FieldType::Select {
                return Err(line_err(
                    line,
                    format!("field {name} is not a select field"),
                ));
            }
            let values: Vec<String> = values.split('/').map(|v| v.trim().to_string()).collect();
            if values
                .iter()
                .any(|v| v.is_empty() || v.contains(char::is_whitespace))
            {
                return Err(line_err(line, "a value is empty or has whitespace".into()));
            }
            field.values = values;
        }
        for line in form.get("Presets").unwrap_or(&[]) {
            if line.trim().is_empty() {
                continue;
            }
            let (name, preset) =
                split_pair(line).ok_or_else(|| line_err(line, "expected 'FIELD preset'".into()))?;
            let field = field_mut(&mut fields, name)
                .ok_or_else(|| line_err(line, format!("no field {name} in Fields")))?;
            field.preset = Some(preset.to_string());
        }
        let comments: Vec<String> = form.get("Comments").unwrap_or(&[]).to_vec();
        if let Some(line) = comments
            .iter()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            return Err(line_err(line, "a comment line must start with '#'".into()));
        }
        fields.sort_by_key(|f| f.code);
        let spec = JobSpec { fields, comments };
        spec.check(text)?;
        Ok(spec)
    }

    /// The rules that span lines: the five standard fields, select values, presets.
    fn check(&self, text: &str) -> Result<(), JobSpecError> {
        let want = [
            (JOB_CODE, FieldType::Word),
            (STATUS_CODE, FieldType::Select),
            (USER_CODE, FieldType::Word),
            (DATE_CODE, FieldType::Date),
            (DESCRIPTION_CODE, FieldType::Text),
        ];
        for (code, kind) in want {
            match self.field_by_code(code) {
                None => {
                    return Err(JobSpecError::Spec(format!(
                        "Fields must have code {code} (a {} field)",
                        kind.as_str()
                    )));
                }
                Some(f) if f.kind != kind => {
                    let line = self.field_line(f);
                    return Err(JobSpecError::Line {
                        line_no: line_number(text, &line),
                        line,
                        reason: format!("field {code} must be a {} field", kind.as_str()),
                    });
                }
                Some(_) => {}
            }
        }
        for f in &self.fields {
            if f.kind == FieldType::Select && f.values.is_empty() {
                return Err(JobSpecError::Spec(format!(
                    "select field {} has no Values line",
                    f.name
                )));
            }
            if let Some(preset) = &f.preset {
                let bad = match f.kind {
                    FieldType::Select => !preset.starts_with('$') && !f.values.contains(preset),
                    FieldType::Date => preset != "$now",
                    _ => false,
                };
                if bad {
                    let line = format!("{} {preset}", f.name);
                    return Err(JobSpecError::Line {
                        line_no: line_number(text, &line),
                        line,
                        reason: format!("preset {preset:?} is not a value of field {}", f.name),
                    });
                }
            }
        }
        Ok(())
    }

    /// The spec as its form.
    pub fn render(&self) -> String {
        let mut values = Vec::new();
        let mut presets = Vec::new();
        for f in &self.fields {
            if !f.values.is_empty() {
                values.push(format!("{} {}", f.name, f.values.join("/")));
            }
            if let Some(p) = &f.preset {
                presets.push(format!("{} {p}", f.name));
            }
        }
        let form = Form {
            fields: vec![
                (
                    "Fields".into(),
                    self.fields.iter().map(|f| self.field_line(f)).collect(),
                ),
                ("Values".into(), values),
                ("Presets".into(), presets),
                ("Comments".into(), self.comments.clone()),
            ],
        };
        form.render()
    }

    fn field_line(&self, f: &JobField) -> String {
        format!(
            "{} {} {} {} {}",
            f.code,
            f.name,
            f.kind.as_str(),
            f.length,
            f.persistence.as_str()
        )
    }

    pub fn field_by_code(&self, code: u32) -> Option<&JobField> {
        self.fields.iter().find(|f| f.code == code)
    }

    /// A field by name, ignoring case (as job expressions do).
    pub fn field(&self, name: &str) -> Option<&JobField> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The name of the field with `code` (one of the five standard codes, always present).
    pub fn name_of(&self, code: u32) -> &str {
        self.field_by_code(code).map_or("", |f| f.name.as_str())
    }
}

fn field_mut<'a>(fields: &'a mut [JobField], name: &str) -> Option<&'a mut JobField> {
    fields.iter_mut().find(|f| f.name == name)
}

/// `NAME rest` split at the first whitespace.
fn split_pair(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.trim().split_once(char::is_whitespace)?;
    let rest = rest.trim();
    (!rest.is_empty()).then_some((name, rest))
}

/// The 1-based number of the first line of `text` that holds `line` (trimmed); 0 if none.
fn line_number(text: &str, line: &str) -> usize {
    let want = line.trim();
    text.lines()
        .position(|l| l.trim() == want || (want.ends_with(':') && l.starts_with(want)))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_spec_round_trips() {
        let spec = JobSpec::default();
        assert_eq!(spec.fields.len(), 5);
        assert_eq!(spec.name_of(STATUS_CODE), "Status");
        assert_eq!(
            spec.field("status").map(|f| f.values.clone()),
            Some(vec![
                "open".to_string(),
                "suspended".into(),
                "closed".into()
            ])
        );
        assert_eq!(JobSpec::parse(&spec.render()), Ok(spec));
    }

    #[test]
    fn a_custom_field_is_added() {
        let text = JobSpec::default().render().replace(
            "\t105 Description text 0 required\n",
            "\t105 Description text 0 required\n\t106 Severity select 10 optional\n",
        );
        let text = text.replace(
            "\tStatus open/suspended/closed\n",
            "\tStatus open/suspended/closed\n\tSeverity A/B/C\n",
        );
        let spec = JobSpec::parse(&text).expect("parses");
        let f = spec.field("Severity").expect("added");
        assert_eq!(
            (f.code, f.kind, f.values.len()),
            (106, FieldType::Select, 3)
        );
    }

    fn refused(from: &str, to: &str) -> String {
        let text = JobSpec::default().render().replace(from, to);
        JobSpec::parse(&text).expect_err("refused").to_string()
    }

    #[test]
    fn bad_specs_name_the_line() {
        let err = refused(
            "105 Description text 0 required",
            "105 Description blob 0 required",
        );
        assert!(
            err.contains("line 6") && err.contains("unknown type \"blob\""),
            "{err}"
        );
        let err = refused("103 User word 32 required", "103 User word 32");
        assert!(
            err.contains("line 4") && err.contains("expected 'CODE"),
            "{err}"
        );
        let err = refused("103 User word 32 required", "102 User word 32 required");
        assert!(err.contains("used twice"), "{err}");
        let err = refused("103 User word 32 required", "300 User word 32 required");
        assert!(err.contains("101 to 199"), "{err}");
        let err = refused("\tStatus open/suspended/closed", "\tSeverity a/b");
        assert!(err.contains("no field Severity"), "{err}");
        let err = refused(
            "105 Description text 0 required",
            "106 Description text 0 required",
        );
        assert!(err.contains("code 105"), "{err}");
        let err = refused("Status open\n", "Status shut\n");
        assert!(err.contains("not a value"), "{err}");
        let err = refused("Comments:", "Remarks:");
        assert!(err.contains("unknown section"), "{err}");
    }
}
