//! Perforce-style words for what the server returns as enums: what a command did to a file
//! (`opened for edit`, `was add, abandoned`, ...), change statuses, label entry actions.

use keel_client::actions;
use keel_proto::v1::FileAction;
use keel_proto::v1::{FileOutcome, FileRecord, LabelFileAction, ResolveOutcome};

/// The per-file line's message for `record`'s outcome; empty when it has none.
pub fn outcome_text(record: &FileRecord) -> String {
    let action = actions::name(record.action());
    match record.outcome() {
        FileOutcome::Unspecified => String::new(),
        FileOutcome::Opened => format!("opened for {action}"),
        FileOutcome::AlreadyOpened => format!("currently opened for {action}"),
        FileOutcome::MovedFrom => format!("moved from {}", record.move_file),
        FileOutcome::MovedTo => format!("moved to {}", record.move_file),
        FileOutcome::Reverted if record.action() == FileAction::Add => {
            "was add, abandoned".to_string()
        }
        FileOutcome::Reverted => format!("was {action}, reverted"),
        FileOutcome::Reopened => format!(
            "reopened; change {}, type {}",
            record.change, record.file_type
        ),
        FileOutcome::Integrated => {
            let verb = match record.action() {
                FileAction::Branch => "branch",
                FileAction::Delete => "delete",
                _ if !record.unresolved => "copy",
                _ => "integrate",
            };
            format!(
                "{verb} from {}#{},#{}",
                record.source_file,
                record.source_start + 1,
                record.source_end
            )
        }
        FileOutcome::Resolved => match actions::how_name(record.resolve_how(), false) {
            "" => format!("resolved ({})", resolve_word(record.resolve_outcome())),
            how => format!("{how} {}", record.source_file),
        },
        FileOutcome::Purged => "purged".to_string(),
        FileOutcome::WouldBePurged => "would be purged".to_string(),
        FileOutcome::Shelved => format!("shelved {action}"),
        FileOutcome::ShelvedDeleted => "shelved file deleted".to_string(),
        FileOutcome::Unshelved => format!("unshelved, opened for {action}"),
    }
}

/// The `resolve` command's word for an outcome (`theirs`, `yours`, `merged`, `edited`).
pub fn resolve_word(outcome: ResolveOutcome) -> &'static str {
    match outcome {
        ResolveOutcome::Theirs => "theirs",
        ResolveOutcome::Yours => "yours",
        ResolveOutcome::Merged => "merged",
        ResolveOutcome::Edited => "edited",
        ResolveOutcome::Unspecified => "unspecified",
    }
}

/// `added`, `updated` or `deleted`.
pub fn label_action_word(action: LabelFileAction) -> &'static str {
    match action {
        LabelFileAction::Added => "added",
        LabelFileAction::Updated => "updated",
        LabelFileAction::Deleted => "deleted",
        LabelFileAction::Unspecified => "unspecified",
    }
}
