//! The protections table: showing and saving it (`protect -o`/`-i`) and listing the lines
//! that apply to a user, group, host or path (`protects`).

use crate::{AccessError, Caller, Service, ServiceError, context};
use keel_core::protect::{HostPattern, ProtectLine, parse_table};
use keel_core::{GroupMembers, Level, Right, UserProtections, groups_of};
use std::net::IpAddr;

/// The table as `protect -o` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectionsTable {
    /// The lines, in order.
    pub lines: Vec<String>,
    /// `false`: no table is saved yet (everyone is a super user); `lines` is what a first
    /// save would typically hold, as p4 offers it.
    pub exists: bool,
}

/// What `protects` lists.
#[derive(Clone, Debug, Default)]
pub struct ProtectsQuery {
    /// `-a`: every line.
    pub all: bool,
    /// `-u USER`: the lines that apply to this user (super only for another user).
    pub user: Option<String>,
    /// `-g GROUP`: the lines that apply to members of this group.
    pub group: Option<String>,
    /// `-h HOST`: as if calling from this address (default: the caller's own).
    pub host: Option<String>,
    /// Only lines whose path can concern this file or pattern.
    pub path: Option<String>,
}

/// One line of `protects`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectEntry {
    pub mode: String,
    pub is_group: bool,
    pub name: String,
    pub host: String,
    /// With a leading `-` for an exclusion.
    pub path: String,
}

fn entry(line: &ProtectLine) -> ProtectEntry {
    ProtectEntry {
        mode: line.mode.to_string(),
        is_group: line.is_group,
        name: line.name.clone(),
        host: line.host.to_string(),
        path: format!("{}{}", if line.exclude { "-" } else { "" }, line.path),
    }
}

/// Whether a line's path pattern and a `protects` path can concern the same files: one
/// matches the other's text, or one's literal prefix starts the other's.
fn concerns(line: &ProtectLine, path: &str) -> bool {
    let prefix = crate::args::literal_prefix(path);
    let line_prefix = line.path.literal_prefix();
    line.path.matches(path)
        || line_prefix.starts_with(prefix)
        || (prefix.starts_with(line_prefix) && line.path.has_wildcards())
}

impl Service {
    /// `protect -o`: the table (super only once one exists).
    pub fn get_protections(&self, caller: &Caller) -> Result<ProtectionsTable, AccessError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        self.access_of(caller)?
            .require_anywhere("protect", Right::Super)?;
        let lines = snap.protections()?;
        if lines.is_empty() {
            return Ok(ProtectionsTable {
                lines: vec![
                    "write user * * //...".to_string(),
                    format!("super user {} * //...", context::user_name(&caller.user)?),
                ],
                exists: false,
            });
        }
        Ok(ProtectionsTable {
            lines,
            exists: true,
        })
    }

    /// `protect -i`: replaces the table (super only). Every line must parse, and the new
    /// table must leave the caller super from where they call; an empty table removes it
    /// (everyone is a super user again, as before the first save).
    pub fn save_protections(
        &self,
        caller: &Caller,
        lines: &[String],
    ) -> Result<usize, AccessError> {
        self.check_table("protections", lines)?;
        self.touch_user(caller)?;
        let user = context::user_name(&caller.user)?;
        let parsed = parse_table(lines)?;
        let kept = if parsed.is_empty() {
            Vec::new()
        } else {
            kept_lines(lines)?
        };
        let snap = self.meta.snapshot()?;
        let access = self.access_of(caller)?;
        access.require_anywhere("protect", Right::Super)?;
        if !parsed.is_empty() {
            let groups = self.group_members(snap.as_ref())?;
            let mine = UserProtections::compile(
                &parsed,
                &user,
                &groups_of(&user, &groups),
                caller.address,
            );
            if !mine.allows_anywhere(Right::Super) {
                return Err(AccessError::LastSuper {
                    user,
                    address: caller
                        .address
                        .map_or("(no address)".into(), |a| a.to_string()),
                });
            }
        }
        drop(snap);
        let count = kept.len();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.put_protections(&kept).map_err(AccessError::from)
        })?;
        tracing::info!(user = %caller.user, lines = count, "protections table saved");
        Ok(count)
    }

    /// `protects`: the lines that apply (see [`ProtectsQuery`]), in table order, and the
    /// highest level they give (on the path when one is given).
    pub fn protects(
        &self,
        caller: &Caller,
        query: &ProtectsQuery,
    ) -> Result<(Vec<ProtectEntry>, Option<Level>), AccessError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let access = self.access_of(caller)?;
        let me = context::user_name(&caller.user)?;
        let other_user = query.user.as_ref().is_some_and(|u| *u != me);
        if query.all || other_user || query.group.is_some() {
            access.require_anywhere("protects -a/-u/-g", Right::Super)?;
        }
        let address = match &query.host {
            Some(h) => Some(h.parse::<IpAddr>().map_err(|e| ServiceError::BadArgument {
                arg: h.clone(),
                reason: format!("-h {h}: {e}"),
            })?),
            None => caller.address,
        };
        let Some(table) = self.access.table(self.meta.as_ref())? else {
            let everyone = ProtectLine {
                mode: keel_core::Mode::Level(Level::Super),
                is_group: false,
                name: "*".into(),
                host: HostPattern::Any,
                exclude: false,
                path: keel_core::PathPattern::parse("//...").expect("a valid pattern"),
            };
            return Ok((vec![entry(&everyone)], Some(Level::Super)));
        };
        let members = self.group_members(snap.as_ref())?;
        let (user, groups) = match (&query.group, &query.user) {
            (Some(g), _) => (String::new(), {
                // a group's members are also members of the groups it is a subgroup of
                let mut gs = vec![context::user_name(g)?];
                gs.extend(parents_of(g, &members));
                gs
            }),
            (None, Some(u)) => {
                let u = context::user_name(u)?;
                let gs = groups_of(&u, &members);
                (u, gs)
            }
            (None, None) => (me.clone(), groups_of(&me, &members)),
        };
        let applies = |l: &ProtectLine| {
            if query.all {
                return true;
            }
            let who = if l.is_group {
                groups
                    .iter()
                    .any(|g| keel_core::protect::name_matches(&l.name, g))
            } else {
                !user.is_empty() && keel_core::protect::name_matches(&l.name, &user)
            };
            who && l.host.matches(address)
        };
        let lines: Vec<&ProtectLine> = table
            .iter()
            .filter(|l| applies(l))
            .filter(|l| query.path.as_ref().is_none_or(|p| concerns(l, p)))
            .collect();
        let compiled = UserProtections::compile(
            &lines.iter().map(|l| (*l).clone()).collect::<Vec<_>>(),
            if user.is_empty() { "\u{0}" } else { &user },
            &groups,
            address,
        );
        let level = match &query.path {
            Some(p) => compiled.level_at(crate::args::literal_prefix(p)),
            None => compiled.max_level(),
        };
        Ok((lines.into_iter().map(entry).collect(), level))
    }

    fn group_members(
        &self,
        snap: &dyn keel_store::ReadTxn,
    ) -> Result<Vec<GroupMembers>, ServiceError> {
        let page = self.config.page_size.max(1);
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let rows = snap.list_groups(after.as_deref(), page)?;
            let full = rows.len() == page;
            after = rows.last().map(|g| g.name.clone());
            out.extend(rows.into_iter().map(|g| GroupMembers {
                name: g.name,
                users: g.users,
                subgroups: g.subgroups,
            }));
            if !full {
                return Ok(out);
            }
        }
    }
}

/// The groups `group` is a subgroup of, directly or through others.
fn parents_of(group: &str, members: &[GroupMembers]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut todo = vec![group.to_string()];
    while let Some(g) = todo.pop() {
        for parent in members.iter().filter(|m| m.subgroups.contains(&g)) {
            if !found.contains(&parent.name) && parent.name != group {
                found.push(parent.name.clone());
                todo.push(parent.name.clone());
            }
        }
    }
    found
}

/// The lines a saved table keeps: each rule in its normal form, with its `##` comment as
/// written after it; a line holding only a comment kept as it is; blank lines dropped.
/// (Only the rules count: every reader parses the lines with [`parse_table`], which drops
/// the comments.)
fn kept_lines(lines: &[String]) -> Result<Vec<String>, AccessError> {
    let mut out = Vec::with_capacity(lines.len());
    for text in lines {
        let text = text.trim();
        let (rule, comment) = match text.split_once("##") {
            Some((rule, comment)) => (rule.trim(), Some(comment)),
            None => (text, None),
        };
        let rule = match parse_table(&[rule])?.pop() {
            Some(line) => line.to_string(),
            None => String::new(),
        };
        match (rule.is_empty(), comment) {
            (true, None) => {}
            (true, Some(c)) => out.push(format!("##{c}")),
            (false, None) => out.push(rule),
            (false, Some(c)) => out.push(format!("{rule} ##{c}")),
        }
    }
    Ok(out)
}
