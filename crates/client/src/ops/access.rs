//! `group`, `groups`, `protect` and `protects`: groups (members, owners, limits), the
//! protections table, and the lines of it that apply to a user, group, host or path.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A group spec as the server stores it. Limits are `unset`, `unlimited` or a number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupSpec {
    pub name: String,
    pub users: Vec<String>,
    /// Groups whose members are members of this one.
    pub subgroups: Vec<String>,
    /// Users who may change this group.
    pub owners: Vec<String>,
    pub max_results: String,
    pub max_scan_rows: String,
    pub max_lock_time: String,
    pub max_open_files: String,
    /// Seconds a member's login lasts.
    pub timeout: String,
    /// Seconds since the epoch the spec was last saved (0: never).
    pub updated: u64,
}

impl GroupSpec {
    fn from_wire(g: pb::Group) -> GroupSpec {
        GroupSpec {
            name: g.name,
            users: g.users,
            subgroups: g.subgroups,
            owners: g.owners,
            max_results: g.max_results,
            max_scan_rows: g.max_scan_rows,
            max_lock_time: g.max_lock_time,
            max_open_files: g.max_open_files,
            timeout: g.timeout,
            updated: g.updated,
        }
    }

    fn into_wire(self) -> pb::Group {
        pb::Group {
            name: self.name,
            users: self.users,
            subgroups: self.subgroups,
            owners: self.owners,
            max_results: self.max_results,
            max_scan_rows: self.max_scan_rows,
            max_lock_time: self.max_lock_time,
            max_open_files: self.max_open_files,
            timeout: self.timeout,
            updated: self.updated,
        }
    }
}

/// Group `name`'s spec (refused as not found when there is no such group).
pub async fn group(conn: &Connection, name: &str) -> Result<GroupSpec, QueryError> {
    let got = conn
        .reply(conn.client().get_group(pb::GetGroupRequest {
            caller: conn.caller(),
            name: name.to_string(),
        }))
        .await?;
    Ok(GroupSpec::from_wire(got))
}

/// Every group (`member`: only the groups that user belongs to, subgroups followed), in name
/// order.
pub async fn groups(
    conn: &Connection,
    member: Option<&str>,
) -> Result<Records<GroupSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().list_groups(pb::ListGroupsRequest {
            caller: conn.caller(),
            user: member.unwrap_or_default().to_string(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |g| Ok(GroupSpec::from_wire(g))))
}

/// Saves (creating or replacing) a group and returns it as stored.
pub async fn save_group(conn: &Connection, spec: GroupSpec) -> Result<GroupSpec, QueryError> {
    let saved = conn
        .reply(conn.client().save_group(pb::SaveGroupRequest {
            caller: conn.caller(),
            group: Some(spec.into_wire()),
        }))
        .await?;
    Ok(GroupSpec::from_wire(saved))
}

/// Deletes group `name`.
pub async fn delete_group(conn: &Connection, name: &str) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_group(pb::DeleteGroupRequest {
        caller: conn.caller(),
        name: name.to_string(),
    }))
    .await?;
    Ok(())
}

/// The protections table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProtectionsTable {
    /// `MODE user|group NAME HOST [-]PATH` lines, later lines overriding earlier ones.
    pub lines: Vec<String>,
    /// False: no table yet (everyone is a super user); `lines` are a suggested first table.
    pub exists: bool,
}

/// The protections table (super users).
pub async fn protections(conn: &Connection) -> Result<ProtectionsTable, QueryError> {
    let got = conn
        .reply(conn.client().get_protections(pb::GetProtectionsRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(ProtectionsTable {
        lines: got.lines,
        exists: got.exists,
    })
}

/// Replaces the protections table with `lines` (super users); returns how many it holds.
pub async fn save_protections(conn: &Connection, lines: Vec<String>) -> Result<u32, QueryError> {
    let saved = conn
        .reply(conn.client().save_protections(pb::SaveProtectionsRequest {
            caller: conn.caller(),
            lines,
        }))
        .await?;
    Ok(saved.lines)
}

/// Whose protections `protects` shows; the default: the caller's own, from where it connects.
#[derive(Clone, Debug, Default)]
pub struct ProtectsQuery {
    /// Every line of the table (super users).
    pub all: bool,
    /// The lines that apply to this user (super users, for another user).
    pub user: Option<String>,
    /// The lines that apply to members of this group (super users).
    pub group: Option<String>,
    /// As if connecting from this IP address.
    pub host: Option<String>,
    /// Only lines that can concern this file or pattern.
    pub path: Option<String>,
}

/// One line of the protections table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectLine {
    /// `read`, `write`, `super`, `=branch`, ...
    pub mode: String,
    /// Whether `name` is a group (else a user).
    pub is_group: bool,
    pub name: String,
    pub host: String,
    /// A leading `-` for an exclusion.
    pub path: String,
}

/// The protections lines `query` asks for, in table order.
pub async fn protects(
    conn: &Connection,
    query: ProtectsQuery,
) -> Result<Vec<ProtectLine>, QueryError> {
    let reply = conn
        .reply(conn.client().protects(pb::ProtectsRequest {
            caller: conn.caller(),
            all: query.all,
            user: query.user.unwrap_or_default(),
            group: query.group.unwrap_or_default(),
            host: query.host.unwrap_or_default(),
            path: query.path.unwrap_or_default(),
        }))
        .await?;
    Ok(reply
        .lines
        .into_iter()
        .map(|l| ProtectLine {
            mode: l.mode,
            is_group: l.is_group,
            name: l.name,
            host: l.host,
            path: l.path,
        })
        .collect())
}
