//! Groups (Perforce's `p4 group`): members, subgroups, and the limits a group sets on its
//! members' commands. A user's groups include every group one of its groups is a subgroup
//! of; of their limits the most permissive applies.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// One limit of a group spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Limit {
    /// The group says nothing (`unset`): other groups decide; none: no limit.
    #[default]
    Unset,
    /// `unlimited`: no limit, whatever other groups say.
    Unlimited,
    /// At most this many (rows, milliseconds, files; seconds for Timeout).
    Max(u64),
}

impl Limit {
    /// Parses a form value: `unset`, `unlimited` or a number ("" is unset).
    pub fn parse(text: &str) -> Result<Limit, String> {
        match text.trim() {
            "" | "unset" => Ok(Limit::Unset),
            "unlimited" => Ok(Limit::Unlimited),
            n => n
                .parse::<u64>()
                .map(Limit::Max)
                .map_err(|_| format!("'{n}' is not a number, 'unset' or 'unlimited'")),
        }
    }

    /// The more permissive of two limits, as Perforce combines a user's groups.
    pub fn most_permissive(self, other: Limit) -> Limit {
        match (self, other) {
            (Limit::Unlimited, _) | (_, Limit::Unlimited) => Limit::Unlimited,
            (Limit::Unset, x) | (x, Limit::Unset) => x,
            (Limit::Max(a), Limit::Max(b)) => Limit::Max(a.max(b)),
        }
    }

    /// The bound to enforce: `None` when nothing limits.
    pub fn bound(self) -> Option<u64> {
        match self {
            Limit::Max(n) => Some(n),
            Limit::Unset | Limit::Unlimited => None,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Unset => f.write_str("unset"),
            Limit::Unlimited => f.write_str("unlimited"),
            Limit::Max(n) => write!(f, "{n}"),
        }
    }
}

/// The limits a group sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupLimits {
    /// Rows a command may return.
    pub max_results: Limit,
    /// Rows a command may scan.
    pub max_scan_rows: Limit,
    /// Milliseconds a command may hold the writer.
    pub max_lock_time: Limit,
    /// Files one command may open.
    pub max_open_files: Limit,
    /// Seconds a login ticket lasts.
    pub timeout: Limit,
}

impl GroupLimits {
    /// Each limit the most permissive of the two.
    pub fn most_permissive(self, other: GroupLimits) -> GroupLimits {
        GroupLimits {
            max_results: self.max_results.most_permissive(other.max_results),
            max_scan_rows: self.max_scan_rows.most_permissive(other.max_scan_rows),
            max_lock_time: self.max_lock_time.most_permissive(other.max_lock_time),
            max_open_files: self.max_open_files.most_permissive(other.max_open_files),
            timeout: self.timeout.most_permissive(other.timeout),
        }
    }
}

/// A group's members and subgroups (what membership needs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupMembers {
    pub name: String,
    pub users: Vec<String>,
    pub subgroups: Vec<String>,
}

/// The groups `user` belongs to: those naming it in Users, and, repeatedly, those naming one
/// of its groups in Subgroups. Sorted by name; a cycle of subgroups ends the walk.
pub fn groups_of(user: &str, groups: &[GroupMembers]) -> Vec<String> {
    // parent groups of each group (groups naming it as a subgroup)
    let mut parents: HashMap<&str, Vec<&str>> = HashMap::new();
    for g in groups {
        for sub in &g.subgroups {
            parents
                .entry(sub.as_str())
                .or_default()
                .push(g.name.as_str());
        }
    }
    let mut found: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = groups
        .iter()
        .filter(|g| g.users.iter().any(|u| u == user))
        .map(|g| g.name.as_str())
        .collect();
    while let Some(g) = todo.pop() {
        if found.insert(g) {
            todo.extend(parents.get(g).into_iter().flatten().copied());
        }
    }
    found.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(name: &str, users: &[&str], subgroups: &[&str]) -> GroupMembers {
        GroupMembers {
            name: name.into(),
            users: users.iter().map(|s| s.to_string()).collect(),
            subgroups: subgroups.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn membership_follows_subgroups_and_survives_cycles() {
        let groups = [
            g("dev", &["ann", "bob"], &[]),
            g("eng", &["carl"], &["dev"]),
            g("all", &[], &["eng", "ops"]),
            g("ops", &["dora"], &["all"]),
            g("other", &["eve"], &[]),
        ];
        let cases: [(&str, &[&str]); 4] = [
            ("ann", &["all", "dev", "eng", "ops"]),
            ("carl", &["all", "eng", "ops"]),
            ("dora", &["all", "ops"]),
            ("nobody", &[]),
        ];
        for (user, expected) in cases {
            assert_eq!(groups_of(user, &groups), expected, "{user}");
        }
    }

    #[test]
    fn the_most_permissive_limit_applies() {
        use Limit::*;
        let cases = [
            (Unset, Unset, Unset),
            (Unset, Max(5), Max(5)),
            (Max(50000), Max(10), Max(50000)),
            (Max(10), Unlimited, Unlimited),
            (Unlimited, Unset, Unlimited),
        ];
        for (a, b, expected) in cases {
            assert_eq!(a.most_permissive(b), expected, "{a} {b}");
            assert_eq!(b.most_permissive(a), expected, "{b} {a}");
        }
    }

    #[test]
    fn limits_parse_as_forms_write_them() {
        for (text, expected) in [
            ("unset", Ok(Limit::Unset)),
            ("", Ok(Limit::Unset)),
            ("unlimited", Ok(Limit::Unlimited)),
            ("50000", Ok(Limit::Max(50000))),
            (
                "-1",
                Err("'-1' is not a number, 'unset' or 'unlimited'".to_string()),
            ),
        ] {
            assert_eq!(Limit::parse(text), expected, "{text}");
        }
        assert_eq!(Limit::Max(7).to_string(), "7");
    }
}
