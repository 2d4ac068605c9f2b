//! The per-file record the commands that change open files answer with (`add`, `edit`,
//! `delete`, `move`, `reopen`, `revert`, ...): the file, its open record, and what the command
//! did to it.

use keel_core::{FileAction, IntegHow};
use keel_proto::v1 as pb;

use crate::actions;
use crate::workspace::WorkspaceCtx;

/// How a resolve left a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveResult {
    /// The workspace file now holds the source revision.
    Theirs,
    /// The workspace file was kept.
    Yours,
    /// A clean three-way merge.
    Merged,
    /// A merge with conflicts, or edited by the user.
    Edited,
}

impl ResolveResult {
    /// Its word: `theirs`, `yours`, `merged`, `edited`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveResult::Theirs => "theirs",
            ResolveResult::Yours => "yours",
            ResolveResult::Merged => "merged",
            ResolveResult::Edited => "edited",
        }
    }

    pub(crate) fn from_wire(outcome: pb::ResolveOutcome) -> Option<ResolveResult> {
        match outcome {
            pb::ResolveOutcome::Unspecified => None,
            pb::ResolveOutcome::Theirs => Some(ResolveResult::Theirs),
            pb::ResolveOutcome::Yours => Some(ResolveResult::Yours),
            pb::ResolveOutcome::Merged => Some(ResolveResult::Merged),
            pb::ResolveOutcome::Edited => Some(ResolveResult::Edited),
        }
    }
}

/// What a command did to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A listing: the command changed nothing it reports.
    None,
    /// Opened for its action.
    Opened,
    /// Already opened for its action here; nothing changed.
    AlreadyOpened,
    /// The move/add half of a move; `move_file` is the source.
    MovedFrom,
    /// The move/delete half of a move; `move_file` is the target.
    MovedTo,
    /// Its open for its action was reverted.
    Reverted,
    /// Now in `change` with `file_type`.
    Reopened,
    /// Opened from `source_file`, revisions (`source_start`, `source_end`].
    Integrated,
    /// Resolved: how submit will record it (`None`: no integration record) and how the
    /// client resolved it.
    Resolved {
        how: Option<IntegHow>,
        result: Option<ResolveResult>,
    },
    /// Obliterated.
    Purged,
    /// Would be obliterated (a preview).
    WouldBePurged,
    /// Shelved for its action.
    Shelved,
    /// Deleted from the shelf.
    ShelvedDeleted,
    /// Unshelved and opened for its action.
    Unshelved,
}

/// A file a command acted on, with its open record as it now is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileResult {
    pub depot_file: String,
    /// Relative to its workspace's root, `/`-separated; empty when the server gave none.
    pub client_file: String,
    /// The workspace it is open in (empty when the server gave none).
    pub workspace: String,
    pub user: String,
    /// Its open action (for a revert: the action reverted).
    pub action: Option<FileAction>,
    /// The pending change it is open in (0: the default change).
    pub change: u64,
    /// Its open type.
    pub file_type: String,
    /// The other half of a move (empty when it is not one).
    pub move_file: String,
    pub head_rev: u32,
    /// The head revision's type (empty when the server gave none).
    pub head_type: String,
    /// BLAKE3 of the head content, hex (for a shelved file: of the shelved content).
    pub digest: String,
    pub have_rev: u32,
    /// What the command did.
    pub outcome: Outcome,
    /// An integration's source file and revisions (`source_start`, `source_end`].
    pub source_file: String,
    pub source_start: u32,
    pub source_end: u32,
    /// Still needs a resolve.
    pub unresolved: bool,
    /// Its open record holds it locked (`lock`).
    pub locked: bool,
    /// An integration's merge base (empty: none).
    pub base_file: String,
    pub base_rev: u32,
    /// Content the server already holds for it (BLAKE3, hex; a branched or copied file's):
    /// the workspace fetches it rather than uploading. Empty: none.
    pub server_digest: String,
}

/// The revision an open file works on: `head + 1` for a new add or branch, else the have
/// revision (the head when there is none).
pub(crate) fn work_rev(action: Option<FileAction>, head_rev: u32, have_rev: u32) -> u32 {
    let new = matches!(
        action,
        Some(FileAction::Add | FileAction::MoveAdd | FileAction::Branch)
    );
    if new {
        head_rev + 1
    } else if have_rev > 0 {
        have_rev
    } else {
        head_rev
    }
}

impl FileResult {
    /// The revision it works on: `head + 1` for a new add or branch, else the have revision.
    pub fn work_rev(&self) -> u32 {
        work_rev(self.action, self.head_rev, self.have_rev)
    }

    /// Its path below `ws`'s root: the server's, else mapped through `ws`'s view; `None`
    /// when it is open in another workspace or outside the view.
    pub fn client_file_in(&self, ws: &WorkspaceCtx) -> Option<String> {
        if !self.workspace.is_empty() && self.workspace != ws.name {
            return None;
        }
        if !self.client_file.is_empty() {
            return Some(self.client_file.clone());
        }
        ws.client_of_depot(&self.depot_file)
    }

    pub(crate) fn from_wire(r: pb::FileRecord) -> FileResult {
        let outcome = match r.outcome() {
            pb::FileOutcome::Unspecified => Outcome::None,
            pb::FileOutcome::Opened => Outcome::Opened,
            pb::FileOutcome::AlreadyOpened => Outcome::AlreadyOpened,
            pb::FileOutcome::MovedFrom => Outcome::MovedFrom,
            pb::FileOutcome::MovedTo => Outcome::MovedTo,
            pb::FileOutcome::Reverted => Outcome::Reverted,
            pb::FileOutcome::Reopened => Outcome::Reopened,
            pb::FileOutcome::Integrated => Outcome::Integrated,
            pb::FileOutcome::Resolved => Outcome::Resolved {
                how: actions::integ_how(r.resolve_how()),
                result: ResolveResult::from_wire(r.resolve_outcome()),
            },
            pb::FileOutcome::Purged => Outcome::Purged,
            pb::FileOutcome::WouldBePurged => Outcome::WouldBePurged,
            pb::FileOutcome::Shelved => Outcome::Shelved,
            pb::FileOutcome::ShelvedDeleted => Outcome::ShelvedDeleted,
            pb::FileOutcome::Unshelved => Outcome::Unshelved,
        };
        FileResult {
            action: actions::from_wire(r.action()),
            outcome,
            client_file: r.client_file.trim_start_matches('/').to_string(),
            depot_file: r.depot_file,
            workspace: r.workspace,
            user: r.user,
            change: r.change,
            file_type: r.file_type,
            move_file: r.move_file,
            head_rev: r.head_rev,
            head_type: r.head_type,
            digest: r.head_digest,
            have_rev: r.have_rev,
            source_file: r.source_file,
            source_start: r.source_start,
            source_end: r.source_end,
            unresolved: r.unresolved,
            locked: r.locked,
            base_file: r.base_file,
            base_rev: r.base_rev,
            server_digest: r.lazy_digest,
        }
    }
}
