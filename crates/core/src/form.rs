//! Perforce-style spec forms (`Name:\tvalue` fields) edited in `$EDITOR`.
//!
//! A field is `Name:` followed by a value on the same line and/or indented continuation lines.
//! Lines starting with `#` are comments; empty lines separate fields. Continuation lines lose
//! one leading tab (or all leading spaces); trailing empty continuation lines are dropped.

/// Errors produced when parsing a form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// A non-indented line is not `Name:` with a valid field name.
    #[error("form line {line_no}: expected 'Name:' but found {line:?}")]
    ExpectedField { line_no: usize, line: String },
    /// An indented line appeared before any field.
    #[error("form line {line_no}: continuation line {line:?} before any field")]
    OrphanContinuation { line_no: usize, line: String },
    /// The same field name appeared twice.
    #[error("form line {line_no}: duplicate field {name:?}")]
    DuplicateField { line_no: usize, name: String },
    /// A line contains a control character other than tab.
    #[error("form line {line_no}: control character in {line:?}")]
    ControlChar { line_no: usize, line: String },
}

/// An ordered list of named fields, each with zero or more value lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    pub fields: Vec<(String, Vec<String>)>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn drop_trailing_empty(values: &mut Vec<String>) {
    while values.last().is_some_and(String::is_empty) {
        values.pop();
    }
}

impl Form {
    /// Parses form text.
    pub fn parse(text: &str) -> Result<Form, FormError> {
        let mut fields: Vec<(String, Vec<String>)> = Vec::new();
        for (idx, line) in text.lines().enumerate() {
            let line_no = idx + 1;
            if line.chars().any(|c| (c < ' ' && c != '\t') || c == '\x7f') {
                return Err(FormError::ControlChar {
                    line_no,
                    line: line.to_string(),
                });
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                let value = match line.strip_prefix('\t') {
                    Some(rest) => rest,
                    None => line.trim_start_matches([' ', '\t']),
                };
                match fields.last_mut() {
                    Some((_, values)) => values.push(value.to_string()),
                    None if value.trim().is_empty() => {}
                    None => {
                        return Err(FormError::OrphanContinuation {
                            line_no,
                            line: line.to_string(),
                        });
                    }
                }
                continue;
            }
            let expected = || FormError::ExpectedField {
                line_no,
                line: line.to_string(),
            };
            let (name, rest) = line.split_once(':').ok_or_else(expected)?;
            if !valid_name(name) {
                return Err(expected());
            }
            if fields.iter().any(|(n, _)| n == name) {
                return Err(FormError::DuplicateField {
                    line_no,
                    name: name.to_string(),
                });
            }
            if let Some((_, values)) = fields.last_mut() {
                drop_trailing_empty(values);
            }
            let rest = rest.trim();
            let values = if rest.is_empty() {
                Vec::new()
            } else {
                vec![rest.to_string()]
            };
            fields.push((name.to_string(), values));
        }
        if let Some((_, values)) = fields.last_mut() {
            drop_trailing_empty(values);
        }
        Ok(Form { fields })
    }

    /// Renders the form: `Name:\tvalue` for simple single values, otherwise `Name:` followed by
    /// tab-indented lines; a blank line between fields.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, (name, values)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(name);
            out.push(':');
            match values.as_slice() {
                [one] if !one.is_empty() && one.trim() == one => {
                    out.push('\t');
                    out.push_str(one);
                    out.push('\n');
                }
                many => {
                    out.push('\n');
                    for value in many {
                        out.push('\t');
                        out.push_str(value);
                        out.push('\n');
                    }
                }
            }
        }
        out
    }

    /// All value lines of a field.
    pub fn get(&self, name: &str) -> Option<&[String]> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The first value line of a field.
    pub fn get_one(&self, name: &str) -> Option<&str> {
        self.get(name)?.first().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(fields: &[(&str, &[&str])]) -> Form {
        Form {
            fields: fields
                .iter()
                .map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect()))
                .collect(),
        }
    }

    #[test]
    fn parse_table() {
        let cases: &[(&str, Form)] = &[
            ("", form(&[])),
            ("# only a comment\n", form(&[])),
            ("Client:\tws1\n", form(&[("Client", &["ws1"])])),
            ("Client: ws1  \n", form(&[("Client", &["ws1"])])),
            ("Client:ws1", form(&[("Client", &["ws1"])])),
            ("Empty:\n", form(&[("Empty", &[])])),
            (
                "# A comment\nClient:\tws\n\nRoot:\t/home/me/ws\n",
                form(&[("Client", &["ws"]), ("Root", &["/home/me/ws"])]),
            ),
            (
                "View:\n\t//depot/... //ws/...\n\t-//depot/x/... //ws/x/...\n",
                form(&[(
                    "View",
                    &["//depot/... //ws/...", "-//depot/x/... //ws/x/..."],
                )]),
            ),
            (
                "Description:\n    spaced line\n\tline two\n",
                form(&[("Description", &["spaced line", "line two"])]),
            ),
            (
                "Description:\n\tpara one\n\t\n\tpara two\n\t\n\nNext:\tx\n",
                form(&[
                    ("Description", &["para one", "", "para two"]),
                    ("Next", &["x"]),
                ]),
            ),
            (
                "Description:\n\t\tindented code\n",
                form(&[("Description", &["\tindented code"])]),
            ),
            (
                "Name:\tfirst\n\tsecond\n",
                form(&[("Name", &["first", "second"])]),
            ),
            (
                "Client:\tws\r\nRoot:\t/r\r\n",
                form(&[("Client", &["ws"]), ("Root", &["/r"])]),
            ),
            (
                "Desc:\n\t# not a comment\n",
                form(&[("Desc", &["# not a comment"])]),
            ),
            ("Host:\ta:b\n", form(&[("Host", &["a:b"])])),
        ];
        for (text, want) in cases {
            assert_eq!(&Form::parse(text).expect(text), want, "{text:?}");
        }
    }

    #[test]
    fn parse_errors() {
        let cases = [
            (
                "no colon here\n",
                "form line 1: expected 'Name:' but found \"no colon here\"",
            ),
            (
                "Bad Name:\tx\n",
                "form line 1: expected 'Name:' but found \"Bad Name:\\tx\"",
            ),
            (
                ":\tx\n",
                "form line 1: expected 'Name:' but found \":\\tx\"",
            ),
            (
                "\torphan\n",
                "form line 1: continuation line \"\\torphan\" before any field",
            ),
            ("A:\tx\nA:\ty\n", "form line 2: duplicate field \"A\""),
            (
                "A:\tx\u{1}\n",
                "form line 1: control character in \"A:\\tx\\u{1}\"",
            ),
        ];
        for (text, msg) in cases {
            assert_eq!(Form::parse(text).expect_err(text).to_string(), msg);
        }
    }

    #[test]
    fn render_table() {
        let cases: &[(Form, &str)] = &[
            (form(&[]), ""),
            (form(&[("Client", &["ws"])]), "Client:\tws\n"),
            (form(&[("Empty", &[])]), "Empty:\n"),
            (
                form(&[
                    ("Client", &["ws"]),
                    ("View", &["//a/... //b/...", "//c/... //d/..."]),
                ]),
                "Client:\tws\n\nView:\n\t//a/... //b/...\n\t//c/... //d/...\n",
            ),
            (form(&[("Desc", &["  padded"])]), "Desc:\n\t  padded\n"),
        ];
        for (f, want) in cases {
            assert_eq!(f.render(), *want);
        }
    }

    #[test]
    fn round_trip() {
        let texts = [
            "Client:\tws\n\nOwner:\talice\n\nOptions:\tnoallwrite clobber normdir modtime\n\nView:\n\t//depot/... //ws/...\n",
            "Description:\n\tfirst\n\t\n\t  indented\n\t\ttabbed\n\nEmpty:\n",
            "A:\tx\n\tmore\nB:\n    y\n",
        ];
        for text in texts {
            let parsed = Form::parse(text).expect(text);
            let rendered = parsed.render();
            assert_eq!(Form::parse(&rendered).expect(&rendered), parsed, "{text:?}");
            assert_eq!(Form::parse(&rendered).expect(&rendered).render(), rendered);
        }
    }

    #[test]
    fn getters() {
        let f = Form::parse("Client:\tws\n\nView:\n\t//a/... //b/...\n\nEmpty:\n").expect("valid");
        assert_eq!(f.get_one("Client"), Some("ws"));
        assert_eq!(f.get("View").map(<[String]>::len), Some(1));
        assert_eq!(f.get_one("View"), Some("//a/... //b/..."));
        assert_eq!(f.get("Empty"), Some(&[][..]));
        assert_eq!(f.get_one("Empty"), None);
        assert_eq!(f.get("Missing"), None);
        assert_eq!(f.get("client"), None);
    }
}
