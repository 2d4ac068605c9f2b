//! Translation of group and protections messages to and from service values.

use keel_core::{GroupLimits, Limit};
use keel_proto::v1 as pb;
use keel_service::{AccessError, GroupSpec, ProtectEntry, ProtectsQuery};

pub(crate) fn group_to_wire(g: GroupSpec) -> pb::Group {
    pb::Group {
        name: g.name,
        users: g.users,
        subgroups: g.subgroups,
        owners: g.owners,
        max_results: g.limits.max_results.to_string(),
        max_scan_rows: g.limits.max_scan_rows.to_string(),
        max_lock_time: g.limits.max_lock_time.to_string(),
        max_open_files: g.limits.max_open_files.to_string(),
        timeout: g.limits.timeout.to_string(),
        updated: g.updated.max(0) as u64,
    }
}

/// A group from the wire; a limit that does not parse is refused naming the field.
pub(crate) fn group_from_wire(g: pb::Group) -> Result<GroupSpec, AccessError> {
    let limit = |field: &str, text: &str| {
        Limit::parse(text).map_err(|reason| AccessError::BadGroup {
            name: g.name.clone(),
            reason: format!("{field}: {reason}"),
        })
    };
    let limits = GroupLimits {
        max_results: limit("MaxResults", &g.max_results)?,
        max_scan_rows: limit("MaxScanRows", &g.max_scan_rows)?,
        max_lock_time: limit("MaxLockTime", &g.max_lock_time)?,
        max_open_files: limit("MaxOpenFiles", &g.max_open_files)?,
        timeout: limit("Timeout", &g.timeout)?,
    };
    Ok(GroupSpec {
        name: g.name,
        users: g.users,
        subgroups: g.subgroups,
        owners: g.owners,
        limits,
        updated: 0,
    })
}

pub(crate) fn protects_query(r: &pb::ProtectsRequest) -> ProtectsQuery {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    ProtectsQuery {
        all: r.all,
        user: some(&r.user),
        group: some(&r.group),
        host: some(&r.host),
        path: some(&r.path),
    }
}

pub(crate) fn protect_entry(e: ProtectEntry) -> pb::ProtectEntry {
    pb::ProtectEntry {
        mode: e.mode,
        is_group: e.is_group,
        name: e.name,
        host: e.host,
        path: e.path,
    }
}
