//! Protections (Perforce's `p4 protect` table): parsing the lines, compiling the lines that
//! apply to one user at one address, and answering "may this user do X to this file".
//!
//! A line is `MODE user|group NAME HOST [-]PATH`. A mode is an access level (`list`, `read`,
//! `open`, `write`, `review`, `admin`, `super`: each includes the ones before it) or a single right
//! (`=read`, `=open`, `=write`, `=branch`). An inclusion line grants what its mode grants; an
//! exclusion line (path with a leading `-`) takes away the mode's level and every level above
//! it (so `list ... -//x/...` removes all access), or, for a `=right`, that right only. For
//! each right the last line that matches the file and concerns that right decides: later
//! lines override earlier ones.

mod eval;
mod host;
mod line;

pub use eval::UserProtections;
pub use host::HostPattern;
pub use line::{ProtectError, ProtectLine, parse_table};

use std::fmt;

/// One right a command needs on a file (or, for `Admin`/`Super`, on the server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Right {
    /// See that the file exists (its name and metadata).
    List,
    /// Read its content (sync, print, diff).
    Read,
    /// Use it as the source of an integration.
    Branch,
    /// Open it (add, edit, delete, integrate into it).
    Open,
    /// Submit it (and lock it).
    Write,
    /// Review-daemon commands: set counters and keys, `review`.
    Review,
    /// Administrative commands (obliterate, verify, ...).
    Admin,
    /// Super-user commands (protect, checkpoint, depot, group).
    Super,
}

impl Right {
    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The name the refusal shows ("read", "write", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Right::List => "list",
            Right::Read => "read",
            Right::Branch => "branch",
            Right::Open => "open",
            Right::Write => "write",
            Right::Review => "review",
            Right::Admin => "admin",
            Right::Super => "super",
        }
    }
}

impl fmt::Display for Right {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An access level: each includes every level before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    List,
    Read,
    Open,
    Write,
    Review,
    Admin,
    Super,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 7] = [
        Level::List,
        Level::Read,
        Level::Open,
        Level::Write,
        Level::Review,
        Level::Admin,
        Level::Super,
    ];

    /// The right that defines the level (what a command needing the level checks).
    pub fn right(self) -> Right {
        match self {
            Level::List => Right::List,
            Level::Read => Right::Read,
            Level::Open => Right::Open,
            Level::Write => Right::Write,
            Level::Review => Right::Review,
            Level::Admin => Right::Admin,
            Level::Super => Right::Super,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.right().as_str()
    }

    /// Parses a level's name.
    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == text)
    }

    /// The rights an inclusion line of this level grants.
    fn grants(self) -> u8 {
        let mut mask = Right::List.bit();
        if self >= Level::Read {
            mask |= Right::Read.bit() | Right::Branch.bit();
        }
        for (level, right) in [
            (Level::Open, Right::Open),
            (Level::Write, Right::Write),
            (Level::Review, Right::Review),
            (Level::Admin, Right::Admin),
            (Level::Super, Right::Super),
        ] {
            if self >= level {
                mask |= right.bit();
            }
        }
        mask
    }

    /// The rights an exclusion line of this level takes away: the level's and every higher
    /// level's (`list` takes away everything).
    fn revokes(self) -> u8 {
        let mut mask = 0;
        for level in Level::ALL.into_iter().filter(|l| *l >= self) {
            mask |= level.right().bit();
        }
        if self <= Level::Read {
            mask |= Right::Branch.bit();
        }
        mask
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first column of a line: a level, or one right (`=read`, `=open`, `=write`, `=branch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Level(Level),
    Only(Right),
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        if let Some(right) = text.strip_prefix('=') {
            return [Right::Read, Right::Open, Right::Write, Right::Branch]
                .into_iter()
                .find(|r| r.as_str() == right)
                .map(Mode::Only);
        }
        Level::parse(text).map(Mode::Level)
    }

    /// The rights the line concerns: granted by an inclusion, taken by an exclusion.
    fn mask(self, exclude: bool) -> u8 {
        match (self, exclude) {
            (Mode::Only(right), _) => right.bit(),
            (Mode::Level(level), false) => level.grants(),
            (Mode::Level(level), true) => level.revokes(),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Level(level) => f.write_str(level.as_str()),
            Mode::Only(right) => write!(f, "={right}"),
        }
    }
}

/// Matches a user or group name against a table's name column (`*` matches any run).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
