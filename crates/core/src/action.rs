//! File actions recorded on opened files and in submitted changes.

use std::fmt;

/// What a change does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileAction {
    Add,
    Edit,
    Delete,
    Branch,
    Integrate,
    MoveAdd,
    MoveDelete,
}

impl FileAction {
    /// Every action, in declaration order.
    pub const ALL: [FileAction; 7] = [
        FileAction::Add,
        FileAction::Edit,
        FileAction::Delete,
        FileAction::Branch,
        FileAction::Integrate,
        FileAction::MoveAdd,
        FileAction::MoveDelete,
    ];

    /// The Perforce name, e.g. `move/add`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FileAction::Add => "add",
            FileAction::Edit => "edit",
            FileAction::Delete => "delete",
            FileAction::Branch => "branch",
            FileAction::Integrate => "integrate",
            FileAction::MoveAdd => "move/add",
            FileAction::MoveDelete => "move/delete",
        }
    }

    /// Parses a Perforce action name.
    pub fn parse(text: &str) -> Option<FileAction> {
        FileAction::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// Whether the action removes the file (`delete` or `move/delete`).
    pub fn is_delete(&self) -> bool {
        matches!(self, FileAction::Delete | FileAction::MoveDelete)
    }
}

impl fmt::Display for FileAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let cases = [
            (FileAction::Add, "add", false),
            (FileAction::Edit, "edit", false),
            (FileAction::Delete, "delete", true),
            (FileAction::Branch, "branch", false),
            (FileAction::Integrate, "integrate", false),
            (FileAction::MoveAdd, "move/add", false),
            (FileAction::MoveDelete, "move/delete", true),
        ];
        for (action, name, delete) in cases {
            assert_eq!(action.as_str(), name);
            assert_eq!(action.to_string(), name);
            assert_eq!(FileAction::parse(name), Some(action));
            assert_eq!(action.is_delete(), delete, "{name}");
        }
    }

    #[test]
    fn unknown_names() {
        for name in ["", "Add", "move", "move/edit", "integ", " add"] {
            assert_eq!(FileAction::parse(name), None, "{name:?}");
        }
    }
}
