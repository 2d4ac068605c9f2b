//! One line of the protections table, parsed from and rendered to its text form
//! (`MODE user|group NAME HOST [-]PATH`).

use super::{HostPattern, Mode};
use crate::pattern::PathPattern;
use std::fmt;

/// Why a protections line was refused; `line` is its 1-based number in the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtectError {
    #[error("protections line {line}: expected 'MODE user|group NAME HOST PATH', got {text:?}")]
    Fields { line: usize, text: String },
    #[error(
        "protections line {line}: unknown mode '{mode}' (list, read, open, write, review, admin, super, =read, =open, =write, =branch)"
    )]
    Mode { line: usize, mode: String },
    #[error("protections line {line}: expected 'user' or 'group', got '{kind}'")]
    Kind { line: usize, kind: String },
    #[error("protections line {line}: host '{host}': {reason}")]
    Host {
        line: usize,
        host: String,
        reason: String,
    },
    #[error("protections line {line}: path '{path}': {reason}")]
    Path {
        line: usize,
        path: String,
        reason: String,
    },
}

/// A parsed protections line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectLine {
    pub mode: Mode,
    /// `group` rather than `user`.
    pub is_group: bool,
    /// A user or group name; `*` wildcards allowed.
    pub name: String,
    pub host: HostPattern,
    /// An exclusion line (the path had a leading `-`).
    pub exclude: bool,
    /// The path pattern, without the `-`.
    pub path: PathPattern,
}

impl ProtectLine {
    /// Parses one line (`line` numbers it in errors).
    pub fn parse(text: &str, line: usize) -> Result<ProtectLine, ProtectError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let [mode, kind, name, host, path] = fields[..] else {
            return Err(ProtectError::Fields {
                line,
                text: text.to_string(),
            });
        };
        let mode = Mode::parse(mode).ok_or_else(|| ProtectError::Mode {
            line,
            mode: mode.to_string(),
        })?;
        let is_group = match kind {
            "user" => false,
            "group" => true,
            _ => {
                return Err(ProtectError::Kind {
                    line,
                    kind: kind.to_string(),
                });
            }
        };
        let host = HostPattern::parse(host).map_err(|reason| ProtectError::Host {
            line,
            host: host.to_string(),
            reason,
        })?;
        let (exclude, path_text) = match path.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, path),
        };
        let path = PathPattern::parse(path_text).map_err(|e| ProtectError::Path {
            line,
            path: path_text.to_string(),
            reason: e.to_string(),
        })?;
        Ok(ProtectLine {
            mode,
            is_group,
            name: name.to_string(),
            host,
            exclude,
            path,
        })
    }
}

impl fmt::Display for ProtectLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {}{}",
            self.mode,
            if self.is_group { "group" } else { "user" },
            self.name,
            self.host,
            if self.exclude { "-" } else { "" },
            self.path
        )
    }
}

/// Parses a table's lines (blank lines and `##` comments skipped; a comment may also end a
/// line).
pub fn parse_table<S: AsRef<str>>(lines: &[S]) -> Result<Vec<ProtectLine>, ProtectError> {
    let mut out = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        let text = text.as_ref();
        let text = text.split_once("##").map_or(text, |(t, _)| t).trim();
        if text.is_empty() {
            continue;
        }
        out.push(ProtectLine::parse(text, i + 1)?);
    }
    Ok(out)
}
