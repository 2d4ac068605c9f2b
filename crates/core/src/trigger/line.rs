//! One triggers table line, `NAME TYPE PATH COMMAND`, and the table as a form's lines.

use super::TriggerError;
use super::command::{CodeWord, FORM_VARIABLES, VARIABLES, code_word, split_command, variables};
use crate::pattern::PathPattern;
use std::fmt;

/// When a trigger runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TriggerKind {
    /// A submit whose file list is known, before its content is sent; may refuse it.
    ChangeSubmit,
    /// A submit whose content has arrived, before the commit; may refuse it.
    ChangeContent,
    /// After a submit committed; cannot refuse (a failure is reported, the change stays).
    ChangeCommit,
    /// A spec form about to be saved; may refuse it.
    FormSave,
    /// A spec form about to be shown for editing; may rewrite it.
    FormOut,
}

impl TriggerKind {
    pub const ALL: [TriggerKind; 5] = [
        TriggerKind::ChangeSubmit,
        TriggerKind::ChangeContent,
        TriggerKind::ChangeCommit,
        TriggerKind::FormSave,
        TriggerKind::FormOut,
    ];

    /// Perforce's name: `change-submit`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::ChangeSubmit => "change-submit",
            TriggerKind::ChangeContent => "change-content",
            TriggerKind::ChangeCommit => "change-commit",
            TriggerKind::FormSave => "form-save",
            TriggerKind::FormOut => "form-out",
        }
    }

    pub fn parse(text: &str) -> Option<TriggerKind> {
        TriggerKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Whether it runs for submits (its path selects files) rather than for forms.
    pub fn is_change(self) -> bool {
        matches!(
            self,
            TriggerKind::ChangeSubmit | TriggerKind::ChangeContent | TriggerKind::ChangeCommit
        )
    }
}

impl fmt::Display for TriggerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kinds of spec form a form trigger names in its path field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormType {
    /// `client` in Perforce; both names are accepted.
    Workspace,
    Label,
    Branch,
}

impl FormType {
    pub const ALL: [FormType; 3] = [FormType::Workspace, FormType::Label, FormType::Branch];

    pub fn as_str(self) -> &'static str {
        match self {
            FormType::Workspace => "workspace",
            FormType::Label => "label",
            FormType::Branch => "branch",
        }
    }

    pub fn parse(text: &str) -> Option<FormType> {
        match text {
            "client" => Some(FormType::Workspace),
            _ => FormType::ALL.into_iter().find(|t| t.as_str() == text),
        }
    }
}

impl fmt::Display for FormType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of the table. `path` is a depot pattern for change triggers (a leading `-`
/// excludes) and a form type for form triggers; `command` is the command line, unquoted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TriggerLine {
    pub name: String,
    pub kind: TriggerKind,
    pub path: String,
    pub command: String,
}

impl TriggerLine {
    /// The line as the table shows it: `NAME TYPE PATH "COMMAND"` (the command bare when it
    /// holds a double quote itself).
    pub fn render(&self) -> String {
        let command = if self.command.contains('"') {
            self.command.clone()
        } else {
            format!("\"{}\"", self.command)
        };
        format!(
            "{} {} {} {command}",
            self.name,
            self.kind,
            quote_path(&self.path),
        )
    }

    /// Whether the path excludes (`-//depot/tmp/...`).
    pub fn excludes(&self) -> bool {
        self.path.starts_with('-')
    }
}

fn quote_path(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("\"{path}\"")
    } else {
        path.to_string()
    }
}

/// Takes the next field: a double-quoted text or a run of non-space characters.
fn next_field(text: &str) -> Result<Option<(String, &str)>, String> {
    let text = text.trim_start();
    if text.is_empty() {
        return Ok(None);
    }
    if let Some(rest) = text.strip_prefix('"') {
        let end = rest.find('"').ok_or("unclosed \" in the line")?;
        return Ok(Some((rest[..end].to_string(), &rest[end + 1..])));
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    Ok(Some((text[..end].to_string(), &text[end..])))
}

fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Parses one line (`line_no` for the error). The command is the rest of the line; one pair
/// of double quotes around all of it is removed (Perforce writes it quoted).
pub fn parse_line(line_no: usize, text: &str) -> Result<TriggerLine, TriggerError> {
    let err = |reason: String| TriggerError {
        line_no,
        line: text.trim().to_string(),
        reason,
    };
    let mut rest = text;
    let mut fields = Vec::new();
    for what in ["a name", "a type", "a path"] {
        let (field, after) = next_field(rest).map_err(err)?.ok_or_else(|| {
            err(format!(
                "expected NAME TYPE PATH COMMAND; {what} is missing"
            ))
        })?;
        fields.push(field);
        rest = after;
    }
    let [name, kind, path] = <[String; 3]>::try_from(fields).expect("three fields were pushed");
    if !valid_name(&name) {
        return Err(err(format!(
            "bad trigger name '{name}' (letters, digits, '-', '_', '.')"
        )));
    }
    let kind = TriggerKind::parse(&kind).ok_or_else(|| {
        let known: Vec<&str> = TriggerKind::ALL.iter().map(|k| k.as_str()).collect();
        err(format!(
            "unknown trigger type '{kind}' (one of {})",
            known.join(", ")
        ))
    })?;
    let rest = rest.trim();
    let command = match rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('"') => inner.trim(),
        _ => rest,
    };
    let argv = split_command(command).map_err(err)?;
    if argv.first().is_none_or(|program| program.is_empty()) {
        return Err(err("the command is missing".into()));
    }
    if kind.is_change() {
        let pattern = path.strip_prefix('-').unwrap_or(&path);
        PathPattern::parse(pattern).map_err(|e| err(format!("bad path: {e}")))?;
    } else if FormType::parse(&path).is_none() {
        let known: Vec<&str> = FormType::ALL.iter().map(|t| t.as_str()).collect();
        return Err(err(format!(
            "unknown form type '{path}' for a {kind} trigger (one of {}, or client)",
            known.join(", ")
        )));
    }
    for var in variables(command) {
        if !VARIABLES.contains(&var) {
            return Err(err(format!(
                "unknown variable %{var}% (known: %{}%)",
                VARIABLES.join("%, %")
            )));
        }
        if kind.is_change() && FORM_VARIABLES.contains(&var) {
            return Err(err(format!("%{var}% is only known to form triggers")));
        }
    }
    if let Some(CodeWord::Other { code, program }) = code_word(&argv)
        && let Some(var) = variables(&argv[code]).first()
    {
        return Err(err(format!(
            "%{var}% inside {program}'s code would run as code: pass it as an argument after \
             the code, or use a POSIX shell (sh -c '... %{var}% ...' gets it as \"${{1}}\")"
        )));
    }
    Ok(TriggerLine {
        name,
        kind,
        path,
        command: command.to_string(),
    })
}

/// Parses the `Triggers` field's lines (empty lines and `#` comments skipped); lines that share
/// a name make one trigger and must agree on its type and command.
pub fn parse_table(lines: &[String]) -> Result<Vec<TriggerLine>, TriggerError> {
    let mut table: Vec<TriggerLine> = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line = parse_line(i + 1, trimmed)?;
        if let Some(first) = table.iter().find(|t| t.name == line.name)
            && (first.kind != line.kind || first.command != line.command)
        {
            return Err(TriggerError {
                line_no: i + 1,
                line: trimmed.to_string(),
                reason: format!(
                    "trigger '{}' is already a {} trigger running \"{}\"; lines of one trigger \
                     share its type and command",
                    line.name, first.kind, first.command
                ),
            });
        }
        table.push(line);
    }
    Ok(table)
}

/// The table as the `Triggers` field's lines.
pub fn render_table(table: &[TriggerLine]) -> Vec<String> {
    table.iter().map(TriggerLine::render).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Result<TriggerLine, String> {
        parse_line(1, text).map_err(|e| e.reason)
    }

    #[test]
    fn parses_lines() {
        let ok = line(r#"check change-submit //depot/... "/bin/check %change% %user%""#).unwrap();
        assert_eq!(ok.name, "check");
        assert_eq!(ok.kind, TriggerKind::ChangeSubmit);
        assert_eq!(ok.path, "//depot/...");
        assert_eq!(ok.command, "/bin/check %change% %user%");
        assert_eq!(
            ok.render(),
            r#"check change-submit //depot/... "/bin/check %change% %user%""#
        );
        let unquoted = line("x change-commit -//depot/tmp/... notify %change%").unwrap();
        assert!(unquoted.excludes());
        assert_eq!(unquoted.command, "notify %change%");
        let inner = line(r#"sh form-save client "sh -c 'exit 1'""#).unwrap();
        assert_eq!(inner.path, "client");
        assert_eq!(inner.command, "sh -c 'exit 1'");
        let spaced = line(r#"s change-content "//depot/a b/..." run"#).unwrap();
        assert_eq!(spaced.path, "//depot/a b/...");
        assert_eq!(parse_line(1, &spaced.render()).unwrap(), spaced);
    }

    #[test]
    fn refuses_bad_lines_saying_why() {
        let cases = [
            (
                "check",
                "expected NAME TYPE PATH COMMAND; a type is missing",
            ),
            ("check change-submit //depot/...", "the command is missing"),
            (
                "check change-submit //depot/... \"\"",
                "the command is missing",
            ),
            (
                "check change-sumbit //depot/... x",
                "unknown trigger type 'change-sumbit' (one of change-submit, change-content, \
                 change-commit, form-save, form-out)",
            ),
            (
                "check change-submit depot/... x",
                "bad path: invalid path pattern \"depot/...\": must start with '//'",
            ),
            (
                "check form-out stream x",
                "unknown form type 'stream' for a form-out trigger (one of workspace, label, \
                 branch, or client)",
            ),
            (
                "check change-submit //depot/... x %chnage%",
                "unknown variable %chnage% (known: %change%, %user%, %client%, %serverport%, \
                 %formfile%, %formname%, %formtype%)",
            ),
            (
                "check change-submit //depot/... x %formfile%",
                "%formfile% is only known to form triggers",
            ),
            (
                "bad/name change-submit //depot/... x",
                "bad trigger name 'bad/name' (letters, digits, '-', '_', '.')",
            ),
            (
                "check change-submit //depot/... \"x 'y\"",
                "unclosed ' in the command",
            ),
            (
                "check change-submit //depot/... python3 -c 'print(\"%user%\")'",
                "%user% inside python's code would run as code: pass it as an argument after \
                 the code, or use a POSIX shell (sh -c '... %user% ...' gets it as \"${1}\")",
            ),
            (
                "check form-save workspace fish -c 'echo %formname%'",
                "%formname% inside fish's code would run as code: pass it as an argument after \
                 the code, or use a POSIX shell (sh -c '... %formname% ...' gets it as \"${1}\")",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(line(text).unwrap_err(), want, "{text}");
        }
    }

    #[test]
    fn table_lines_of_one_trigger_agree() {
        let lines = |ls: &[&str]| ls.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let table = parse_table(&lines(&[
            "# comment",
            "",
            "a change-submit //depot/... x",
            "a change-submit -//depot/tmp/... x",
        ]))
        .unwrap();
        assert_eq!(table.len(), 2);
        let err = parse_table(&lines(&[
            "a change-submit //depot/... x",
            "a change-commit //depot/... x",
        ]))
        .unwrap_err();
        assert_eq!(err.line_no, 2);
        assert!(err.to_string().starts_with(
            "triggers line 2 'a change-commit //depot/... x': trigger 'a' is already a change-submit"
        ));
    }
}
