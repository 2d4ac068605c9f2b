//! The values commands return; the front ends translate them to their wire formats.

use keel_blob::StoredBlob;
use keel_core::{
    ChangeNumber, ChangeRef, ChangeStatus, DepotPath, Digest, FileAction, FileType, IntegEdge,
    IntegHow,
};

use crate::ResolveOutcome;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerInfo {
    pub version: String,
    pub root: String,
    pub uptime_seconds: u64,
    pub user: String,
    pub workspace: String,
    pub workspace_root: String,
    pub server_time: i64,
    /// The server's security level (0-4).
    pub security: u8,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepotInfo {
    pub name: String,
    pub kind: String,
    pub owner: String,
    pub description: String,
    pub created: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSpec {
    pub name: String,
    pub owner: String,
    pub host: String,
    pub root: String,
    pub description: String,
    pub options: String,
    pub view: Vec<String>,
    pub updated: i64,
    pub accessed: i64,
}

/// One have-list entry as a client reports it after writing the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HaveEntry {
    /// The depot path, checked by the service.
    pub depot_file: String,
    /// The revision the workspace now has; 0 forgets the file.
    pub rev: u32,
}

/// A file's open record in another workspace (fstat's `otherOpen`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedElsewhere {
    pub user: String,
    pub workspace: String,
    pub action: FileAction,
}

/// One file's facts; commands fill what applies (names follow Perforce's fstat fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    pub depot_file: DepotPath,
    /// Relative to the workspace root, `/`-separated; `None` when not in a view.
    pub client_file: Option<String>,
    /// The head revision (or the one asked for); 0 and `None`s when there is none.
    pub head_rev: u32,
    pub head_change: Option<ChangeNumber>,
    pub head_action: Option<FileAction>,
    pub head_type: Option<FileType>,
    pub head_time: i64,
    /// The head revision's recorded modification time (fstat's `headModTime`; 0: none).
    pub head_mod_time: i64,
    pub head_size: u64,
    /// `None` for a deleted revision (no content).
    pub head_digest: Option<Digest>,
    pub head_md5: String,
    pub have_rev: u32,
    /// How the file is opened; `None` when it is not.
    pub action: Option<FileAction>,
    /// The pending change the file is opened in (meaningful with `action`).
    pub change: ChangeRef,
    pub file_type: Option<FileType>,
    pub user: String,
    pub workspace: String,
    /// A move's other half.
    pub move_file: Option<DepotPath>,
    pub description: String,
    pub exclusive_held: bool,
    /// fstat: the other workspaces with the file open.
    pub others_open: Vec<OpenedElsewhere>,
    /// What the command did to this file (none for plain listings); the front end words it.
    pub outcome: Option<FileOutcome>,
    /// Filelog: the integration records into this revision.
    pub integrations: Vec<IntegEdge>,
    /// Integrations: the source file and its revisions `(source_start, source_end]`.
    pub source_file: Option<DepotPath>,
    pub source_start: u32,
    pub source_end: u32,
    /// Integrations: the merge base (`None` when there is none).
    pub base_file: Option<DepotPath>,
    pub base_rev: u32,
    pub base_digest: Option<Digest>,
    /// Digest of content the server already holds for an opened file (lazy copy).
    pub lazy_digest: Option<Digest>,
    /// MD5 (uppercase hex) of that content, as P4 clients compare it; empty when unknown.
    pub lazy_md5: String,
    /// Whether an opened file still needs a resolve.
    pub unresolved: bool,
    /// Whether the open record holds the file locked (`lock`).
    pub locked: bool,
}

impl FileInfo {
    /// The modification time a `+m` file (or any file of a `modtime` workspace) is given: the
    /// one recorded at submit, else the revision's submit time.
    pub fn kept_mod_time(&self) -> i64 {
        if self.head_mod_time > 0 {
            self.head_mod_time
        } else {
            self.head_time
        }
    }

    /// A record of `depot_file` with nothing else known yet.
    pub fn new(depot_file: DepotPath) -> FileInfo {
        FileInfo {
            depot_file,
            client_file: None,
            head_rev: 0,
            head_change: None,
            head_action: None,
            head_type: None,
            head_time: 0,
            head_mod_time: 0,
            head_size: 0,
            head_digest: None,
            head_md5: String::new(),
            have_rev: 0,
            action: None,
            change: ChangeRef::default(),
            file_type: None,
            user: String::new(),
            workspace: String::new(),
            move_file: None,
            description: String::new(),
            exclusive_held: false,
            others_open: Vec::new(),
            outcome: None,
            integrations: Vec::new(),
            source_file: None,
            source_start: 0,
            source_end: 0,
            base_file: None,
            base_rev: 0,
            base_digest: None,
            lazy_digest: None,
            lazy_md5: String::new(),
            unresolved: false,
            locked: false,
        }
    }
}

/// What a command did to one file. The variants name the event; the record's own fields carry
/// the facts it refers to (the action, the other half of a move, the source revisions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOutcome {
    /// Opened for the record's `action` (add, edit, delete).
    Opened,
    /// Already opened for that same action in this workspace; nothing changed.
    AlreadyOpened,
    /// The target of a move, opened as `move/add`; `move_file` is the source.
    MovedFrom,
    /// The source of a move, opened as `move/delete`; `move_file` is the target.
    MovedTo,
    /// The open record (for the record's `action`) was reverted.
    Reverted,
    /// Moved to the record's `change` and/or given its `file_type`.
    Reopened,
    /// Opened by integrate/merge/copy from `source_file` revisions `(source_start, source_end]`:
    /// `branch` or `delete` by its action, else a copy when already resolved, else an integrate.
    Integrated,
    /// A resolve was recorded; `how` is the integration record submit will write (none when
    /// the resolve merged the file's own newer head, scheduled by sync).
    Resolved {
        how: Option<IntegHow>,
        outcome: ResolveOutcome,
    },
    /// Obliterate deleted this revision.
    Purged,
    /// Obliterate (preview) would delete this revision.
    WouldBePurged,
    /// Shelved for the record's `action`.
    Shelved,
    /// Deleted from the shelf.
    ShelvedDeleted,
    /// Unshelved into the workspace and opened for the record's `action`.
    Unshelved,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeInfo {
    pub change: ChangeNumber,
    pub status: ChangeStatus,
    pub user: String,
    pub workspace: String,
    pub description: String,
    pub time: i64,
}

/// Content of one revision, as stored.
pub struct Content {
    pub compressed: bool,
    pub size: u64,
    pub digest: Digest,
    pub blob: StoredBlob,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitResult {
    /// The submitted change's number.
    pub change: ChangeNumber,
    /// The pending change's number when submit gave the change a new one.
    pub renamed_from: Option<ChangeNumber>,
    /// The workspace the change was submitted from; its files are read with
    /// `Service::submitted_files`.
    pub workspace: String,
    /// The change-commit triggers that failed (the change stays submitted).
    pub trigger_failures: Vec<crate::TriggerFailure>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff2Result {
    pub left: FileInfo,
    pub right: FileInfo,
    pub diff: String,
    pub identical: bool,
    pub binary: bool,
}

/// A label spec (`p4 label -o` fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSpec {
    pub name: String,
    pub owner: String,
    pub description: String,
    /// `unlocked` or `locked`.
    pub options: String,
    /// Empty for a static label; `@N` for an automatic one.
    pub revision: String,
    /// Depot paths, `-` for exclusions.
    pub view: Vec<String>,
    pub updated: i64,
}

/// A branch spec (`p4 branch -o` fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BranchSpec {
    pub name: String,
    pub owner: String,
    pub description: String,
    /// `unlocked` or `locked`.
    pub options: String,
    /// Two-sided depot view lines, `//depot/main/... //depot/rel/...`.
    pub view: Vec<String>,
    pub updated: i64,
}

/// One label entry changed (or, when previewing, to be changed) by `tag` or `labelsync`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelFileChange {
    pub depot_file: DepotPath,
    /// The revision added or updated to, or the revision that was removed.
    pub rev: u32,
    pub action: LabelEntryAction,
}

/// What `tag` or `labelsync` did (or would do) to one label entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelEntryAction {
    Added,
    Updated,
    Deleted,
}

impl LabelEntryAction {
    /// Perforce's word: `added`, `updated` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelEntryAction::Added => "added",
            LabelEntryAction::Updated => "updated",
            LabelEntryAction::Deleted => "deleted",
        }
    }
}
