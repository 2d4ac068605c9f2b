//! Perforce-style words for what the server returns as enums: label entry actions. (What a
//! command did to a file is worded by `file_results`.)

use keel_proto::v1::LabelFileAction;

/// `added`, `updated` or `deleted`.
pub fn label_action_word(action: LabelFileAction) -> &'static str {
    match action {
        LabelFileAction::Added => "added",
        LabelFileAction::Updated => "updated",
        LabelFileAction::Deleted => "deleted",
        LabelFileAction::Unspecified => "unspecified",
    }
}
