//! Shared formatting of file records for the verbs that open, list or revert files.

use keel_client::WorkspaceCtx;
use keel_client::actions;
use keel_client::ops::{OpenedFile, Revision};
use keel_proto::v1::FileRecord;

use crate::output::{Record, change_label};

/// `#3`, or `#none` for revision 0.
pub fn rev_text(rev: u32) -> String {
    if rev == 0 {
        "#none".to_string()
    } else {
        format!("#{rev}")
    }
}

/// A head-revision line as in `files` and `print`: `//depot/x#3 - edit change 7 (text)`.
pub fn head_line(record: &FileRecord) -> String {
    format!(
        "{}{} - {} change {} ({})",
        record.depot_file,
        rev_text(record.head_rev),
        actions::name(record.head_action()),
        record.head_change,
        record.head_type
    )
}

/// The JSON fields of a head revision.
pub fn head_record(record: &FileRecord) -> Record {
    Record::new()
        .s("depotFile", &record.depot_file)
        .n("rev", u64::from(record.head_rev))
        .n("change", record.head_change)
        .s("action", actions::name(record.head_action()))
        .s("type", &record.head_type)
        .n("time", record.head_time)
        .n("fileSize", record.head_size)
        .s("digest", &record.head_digest)
}

/// [`head_line`] of a library record: `//depot/x#3 - edit change 7 (text)`.
pub fn revision_line(rev: &Revision) -> String {
    format!(
        "{}{} - {} change {} ({})",
        rev.depot_file,
        rev_text(rev.rev),
        action_name(rev.action),
        rev.change,
        rev.file_type
    )
}

/// [`head_record`] of a library record.
pub fn revision_record(rev: &Revision) -> Record {
    Record::new()
        .s("depotFile", &rev.depot_file)
        .n("rev", u64::from(rev.rev))
        .n("change", rev.change)
        .s("action", action_name(rev.action))
        .s("type", &rev.file_type)
        .n("time", rev.time)
        .n("fileSize", rev.size)
        .s("digest", &rev.digest)
}

/// An action's Perforce name; empty when there is none.
pub fn action_name(action: Option<keel_core::FileAction>) -> &'static str {
    action.map_or("", |a| a.as_str())
}

/// The common JSON fields of an opened file.
pub fn opened_file_record(ws: Option<&WorkspaceCtx>, file: &OpenedFile) -> Record {
    let local = ws
        .filter(|ws| file.workspace.is_empty() || file.workspace == ws.name)
        .and_then(|ws| {
            let client = match file.client_file.is_empty() {
                false => Some(file.client_file.clone()),
                true => ws.client_of_depot(&file.depot_file),
            };
            client.map(|c| ws.display_local(&c).display().to_string())
        })
        .unwrap_or_default();
    Record::new()
        .s("depotFile", &file.depot_file)
        .s("clientFile", local)
        .n("workRev", u64::from(file.work_rev()))
        .s("action", action_name(file.action))
        .n("change", file.change)
        .s("type", &file.file_type)
        .s("user", &file.user)
        .s("client", &file.workspace)
        .s("movedFile", &file.move_file)
}

/// `opened` listing line: `//depot/x#3 - edit default change (text)`.
pub fn opened_file_line(file: &OpenedFile, show_owner: bool) -> String {
    let mut line = format!(
        "{}{} - {} {} ({})",
        file.depot_file,
        rev_text(file.work_rev()),
        action_name(file.action),
        change_label(file.change),
        file.file_type
    );
    if show_owner {
        line.push_str(&format!(" by {}@{}", file.user, file.workspace));
    }
    if file.exclusive_held || file.locked {
        line.push_str(" *locked*");
    }
    line
}
