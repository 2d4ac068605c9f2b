//! File actions and integration records as the wire carries them (`FileRecord.action`,
//! `head_action`, `IntegRecord.how`): the domain values, and their Perforce names for display.

use keel_core::{FileAction, IntegHow};
use keel_proto::v1 as pb;

/// The domain action; `None` when the record has none (not opened, no revision).
pub fn from_wire(action: pb::FileAction) -> Option<FileAction> {
    match action {
        pb::FileAction::Unspecified => None,
        pb::FileAction::Add => Some(FileAction::Add),
        pb::FileAction::Edit => Some(FileAction::Edit),
        pb::FileAction::Delete => Some(FileAction::Delete),
        pb::FileAction::Branch => Some(FileAction::Branch),
        pb::FileAction::Integrate => Some(FileAction::Integrate),
        pb::FileAction::MoveAdd => Some(FileAction::MoveAdd),
        pb::FileAction::MoveDelete => Some(FileAction::MoveDelete),
    }
}

/// The Perforce name (`edit`, `move/add`, ...); empty when there is none.
pub fn name(action: pb::FileAction) -> &'static str {
    from_wire(action).map_or("", |a| a.as_str())
}

/// The open action, or else the head action: what a submitted or shelved record did.
pub fn effective(record: &pb::FileRecord) -> pb::FileAction {
    match record.action() {
        pb::FileAction::Unspecified => record.head_action(),
        open => open,
    }
}

/// The domain integration record kind; `None` when unspecified.
pub fn integ_how(how: pb::IntegHow) -> Option<IntegHow> {
    match how {
        pb::IntegHow::Unspecified => None,
        pb::IntegHow::BranchFrom => Some(IntegHow::BranchFrom),
        pb::IntegHow::CopyFrom => Some(IntegHow::CopyFrom),
        pb::IntegHow::MergeFrom => Some(IntegHow::MergeFrom),
        pb::IntegHow::EditFrom => Some(IntegHow::EditFrom),
        pb::IntegHow::Ignored => Some(IntegHow::Ignored),
        pb::IntegHow::DeleteFrom => Some(IntegHow::DeleteFrom),
        pb::IntegHow::MovedFrom => Some(IntegHow::MovedFrom),
        pb::IntegHow::Undid => Some(IntegHow::Undid),
    }
}

/// Perforce's words for an integration record: `branch from`, or seen from the source
/// (`reverse`), `branch into`; empty when unspecified.
pub fn how_name(how: pb::IntegHow, reverse: bool) -> &'static str {
    match integ_how(how) {
        None => "",
        Some(h) if reverse => h.reverse_str(),
        Some(h) => h.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_perforce() {
        let cases = [
            (pb::FileAction::Unspecified, ""),
            (pb::FileAction::MoveAdd, "move/add"),
            (pb::FileAction::MoveDelete, "move/delete"),
            (pb::FileAction::Integrate, "integrate"),
        ];
        for (wire, text) in cases {
            assert_eq!(name(wire), text);
        }
        assert_eq!(how_name(pb::IntegHow::BranchFrom, false), "branch from");
        assert_eq!(how_name(pb::IntegHow::BranchFrom, true), "branch into");
        assert_eq!(how_name(pb::IntegHow::Unspecified, true), "");
    }
}
