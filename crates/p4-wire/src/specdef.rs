//! Spec forms as P4 clients exchange them: the `specdef` string that describes a form's fields
//! (clients need it to turn a tagged record into a spec object and a dict back into a form),
//! form text rendered for the untagged `-o`, and form text parsed for `-i`.

use keel_core::form::{Form, FormError};

/// How a field holds its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One word.
    Word,
    /// One line of text.
    Line,
    /// Several lines of free text.
    Text,
    /// A date, `YYYY/MM/DD HH:MM:SS`.
    Date,
    /// One of the listed values.
    Select,
    /// A list of lines of `words` words each.
    WordList { words: u8 },
    /// A list of lines.
    LineList,
}

/// One field of a form.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    /// The field's number, as clients know it.
    pub code: u16,
    pub kind: Kind,
    pub required: bool,
    pub read_only: bool,
    /// Longest value a client's editor is to expect.
    pub len: u16,
    /// The values a `Select` (or option line) allows, `/`-separated.
    pub values: &'static str,
}

/// A field of a form: its name and number, kind, whether it is required or read-only, and the
/// longest value a client's editor is to expect (no `values` list).
pub const fn field(
    name: &'static str,
    code: u16,
    kind: Kind,
    required: bool,
    read_only: bool,
    len: u16,
) -> Field {
    Field {
        name,
        code,
        kind,
        required,
        read_only,
        len,
        values: "",
    }
}

impl Field {
    /// Whether the field holds a list (rendered as indented lines, tagged as `Name0..n`).
    pub fn is_list(&self) -> bool {
        matches!(self.kind, Kind::WordList { .. } | Kind::LineList)
    }
}

/// A form's definition.
#[derive(Debug, Clone, Copy)]
pub struct SpecDef {
    /// What the form is of (`client`, `user`, ...).
    pub kind: &'static str,
    pub fields: &'static [Field],
    /// The comment block atop a rendered form.
    pub comment: &'static str,
}

/// Why form text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("{0}")]
    Form(#[from] FormError),
    #[error("unknown field {field:?} in the {kind} form")]
    UnknownField { kind: &'static str, field: String },
    #[error("missing required field {field:?} in the {kind} form")]
    MissingField {
        kind: &'static str,
        field: &'static str,
    },
    #[error("field {field:?} of the {kind} form takes one line, not {lines}")]
    TooManyLines {
        kind: &'static str,
        field: &'static str,
        lines: usize,
    },
}

/// Form values by field, in the definition's order; lists hold one entry per line, text one
/// entry per line too.
pub type Values = Vec<(&'static str, Vec<String>)>;

impl SpecDef {
    /// The `specdef` string clients parse.
    pub fn specdef(&self) -> String {
        let mut out = String::new();
        for f in self.fields {
            out.push_str(f.name);
            out.push_str(&format!(";code:{}", f.code));
            if f.required {
                out.push_str(";rq");
            }
            if f.read_only {
                out.push_str(";ro");
            }
            match f.kind {
                Kind::Word => {}
                Kind::Line => out.push_str(";type:line"),
                Kind::Text => out.push_str(";type:text"),
                Kind::Date => out.push_str(";type:date"),
                Kind::Select => out.push_str(";type:select"),
                Kind::WordList { words } => out.push_str(&format!(";type:wlist;words:{words}")),
                Kind::LineList => out.push_str(";type:llist"),
            }
            out.push_str(&format!(";len:{}", f.len));
            if !f.values.is_empty() {
                out.push_str(";val:");
                out.push_str(f.values);
            }
            out.push_str(";;");
        }
        out
    }

    fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The form text (`-o` untagged, and what an editor shows): the comment, then each field
    /// that has a value.
    pub fn render(&self, values: &Values) -> String {
        let mut out = String::from(self.comment);
        for f in self.fields {
            let Some((_, lines)) = values.iter().find(|(n, _)| *n == f.name) else {
                continue;
            };
            if f.is_list() || f.kind == Kind::Text {
                out.push_str(f.name);
                out.push_str(":\n");
                for line in lines {
                    out.push('\t');
                    out.push_str(line);
                    out.push('\n');
                }
                out.push('\n');
            } else {
                out.push_str(f.name);
                out.push_str(":\t");
                out.push_str(lines.first().map_or("", String::as_str));
                out.push_str("\n\n");
            }
        }
        out
    }

    /// The tagged record of a form: single values as they are, text joined with newlines,
    /// lists as `Name0`, `Name1`, ...; then `specdef` and `specFormatted`, which make clients
    /// treat the record as a spec.
    pub fn tagged(&self, values: &Values) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for f in self.fields {
            let Some((_, lines)) = values.iter().find(|(n, _)| *n == f.name) else {
                continue;
            };
            if f.is_list() {
                for (i, line) in lines.iter().enumerate() {
                    out.push((format!("{}{i}", f.name), line.clone()));
                }
            } else if f.kind == Kind::Text {
                let mut text = lines.join("\n");
                text.push('\n');
                out.push((f.name.to_string(), text));
            } else {
                out.push((
                    f.name.to_string(),
                    lines.first().cloned().unwrap_or_default(),
                ));
            }
        }
        out.push(("specdef".to_string(), self.specdef()));
        out.push(("specFormatted".to_string(), String::new()));
        out
    }

    /// Parses form text: every field known, every required field present, single-value fields
    /// on one line. Read-only fields are accepted and returned (the command ignores them).
    pub fn parse(&self, text: &str) -> Result<Values, SpecError> {
        let form = Form::parse(text)?;
        let mut values: Values = Vec::new();
        for (name, lines) in form.fields {
            let f = self.field(&name).ok_or_else(|| SpecError::UnknownField {
                kind: self.kind,
                field: name.clone(),
            })?;
            if !f.is_list() && f.kind != Kind::Text && lines.len() > 1 {
                return Err(SpecError::TooManyLines {
                    kind: self.kind,
                    field: f.name,
                    lines: lines.len(),
                });
            }
            values.push((f.name, lines));
        }
        for f in self.fields {
            let present = values
                .iter()
                .any(|(n, l)| *n == f.name && l.iter().any(|s| !s.trim().is_empty()));
            if f.required && !present {
                return Err(SpecError::MissingField {
                    kind: self.kind,
                    field: f.name,
                });
            }
        }
        Ok(values)
    }
}

/// The value of `name` in `values` as one line (empty when absent).
pub fn one(values: &Values, name: &str) -> String {
    values
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, l)| l.first().cloned())
        .unwrap_or_default()
}

/// The lines of `name` in `values`.
pub fn lines(values: &Values, name: &str) -> Vec<String> {
    values
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, l)| l.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEF: SpecDef = SpecDef {
        kind: "thing",
        comment: "# A thing.\n\n",
        fields: &[
            Field {
                name: "Thing",
                code: 1,
                kind: Kind::Word,
                required: true,
                read_only: true,
                len: 32,
                values: "",
            },
            Field {
                name: "Description",
                code: 2,
                kind: Kind::Text,
                required: false,
                read_only: false,
                len: 128,
                values: "",
            },
            Field {
                name: "View",
                code: 3,
                kind: Kind::WordList { words: 2 },
                required: false,
                read_only: false,
                len: 64,
                values: "",
            },
        ],
    };

    #[test]
    fn specdef_lists_every_field() {
        assert_eq!(
            DEF.specdef(),
            "Thing;code:1;rq;ro;len:32;;Description;code:2;type:text;len:128;;\
             View;code:3;type:wlist;words:2;len:64;;"
        );
    }

    #[test]
    fn renders_and_parses_back() {
        let values: Values = vec![
            ("Thing", vec!["t1".into()]),
            ("Description", vec!["line one".into(), "line two".into()]),
            ("View", vec!["//depot/... //t1/...".into()]),
        ];
        let text = DEF.render(&values);
        assert!(text.starts_with("# A thing.\n\nThing:\tt1\n\nDescription:\n\tline one\n"));
        assert_eq!(DEF.parse(&text).expect("parses"), values);
        let tagged = DEF.tagged(&values);
        assert!(tagged.contains(&("View0".to_string(), "//depot/... //t1/...".to_string())));
        assert!(tagged.contains(&(
            "Description".to_string(),
            "line one\nline two\n".to_string()
        )));
        assert!(tagged.iter().any(|(k, _)| k == "specdef"));
    }

    #[test]
    fn bad_forms_name_the_field() {
        assert_eq!(
            DEF.parse("Thing:\tt\nColour:\tred\n"),
            Err(SpecError::UnknownField {
                kind: "thing",
                field: "Colour".into()
            })
        );
        assert_eq!(
            DEF.parse("Description:\n\tx\n"),
            Err(SpecError::MissingField {
                kind: "thing",
                field: "Thing"
            })
        );
        assert_eq!(
            DEF.parse("Thing:\n\ta\n\tb\n"),
            Err(SpecError::TooManyLines {
                kind: "thing",
                field: "Thing",
                lines: 2
            })
        );
    }
}
