//! The lines of a table that apply to one user at one address, compiled for per-file checks.

use super::{Level, ProtectLine, Right, name_matches};
use crate::pattern::PathPattern;
use std::net::IpAddr;

/// One applying line: the rights it concerns, whether it takes them away, and its path.
#[derive(Debug, Clone)]
struct Applied {
    mask: u8,
    exclude: bool,
    /// The path's text before its first wildcard: a path without it cannot match, which
    /// settles most lines of a table for most files without the matcher.
    prefix: String,
    path: PathPattern,
}

/// The protections of one user (as a member of `groups`) at one address: what
/// [`UserProtections::allows`] answers per file. Built once per user and table.
#[derive(Debug, Clone)]
pub struct UserProtections {
    /// The applying lines, in table order.
    lines: Vec<Applied>,
    /// Rights granted by some inclusion line, anywhere.
    anywhere: u8,
}

impl UserProtections {
    /// Selects the lines of `table` that apply to `user`, a member of `groups`, calling from
    /// `address`.
    pub fn compile(
        table: &[ProtectLine],
        user: &str,
        groups: &[String],
        address: Option<IpAddr>,
    ) -> UserProtections {
        let lines: Vec<Applied> = table
            .iter()
            .filter(|l| {
                let who = if l.is_group {
                    groups.iter().any(|g| name_matches(&l.name, g))
                } else {
                    name_matches(&l.name, user)
                };
                who && l.host.matches(address)
            })
            .map(|l| Applied {
                mask: l.mode.mask(l.exclude),
                exclude: l.exclude,
                prefix: l.path.literal_prefix().to_string(),
                path: l.path.clone(),
            })
            .collect();
        let anywhere = lines
            .iter()
            .filter(|l| !l.exclude)
            .fold(0, |acc, l| acc | l.mask);
        UserProtections { lines, anywhere }
    }

    /// Whether the user has `right` on `path`: the last applying line that matches the path
    /// and concerns the right decides; no such line means no.
    pub fn allows(&self, right: Right, path: &str) -> bool {
        let bit = right.bit();
        if self.anywhere & bit == 0 {
            return false;
        }
        self.lines
            .iter()
            .rev()
            .find(|l| l.mask & bit != 0 && path.starts_with(&l.prefix) && l.path.matches(path))
            .is_some_and(|l| !l.exclude)
    }

    /// Whether some line grants `right` somewhere (what a command needing the right on any
    /// file, or on the server as a whole, checks first, as p4 does).
    pub fn allows_anywhere(&self, right: Right) -> bool {
        self.anywhere & right.bit() != 0
    }

    /// The highest level the user holds on `path` (every right of the level allowed there).
    pub fn level_at(&self, path: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .rev()
            .find(|l| self.allows(l.right(), path))
    }

    /// The highest level granted anywhere.
    pub fn max_level(&self) -> Option<Level> {
        Level::ALL
            .into_iter()
            .rev()
            .find(|l| self.allows_anywhere(l.right()))
    }
}
