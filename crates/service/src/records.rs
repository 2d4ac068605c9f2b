//! The values commands return; the front ends translate them to their wire formats.

use keel_blob::StoredBlob;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerInfo {
    pub version: String,
    pub root: String,
    pub uptime_seconds: u64,
    pub user: String,
    pub workspace: String,
    pub workspace_root: String,
    pub server_time: i64,
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

/// One file's facts; commands fill what applies (names follow Perforce's fstat fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    pub depot_file: String,
    /// Relative to the workspace root, `/`-separated; empty when not in a view.
    pub client_file: String,
    pub head_rev: u32,
    pub head_change: u64,
    pub head_action: String,
    pub head_type: String,
    pub head_time: i64,
    pub head_size: u64,
    pub head_digest: String,
    pub head_md5: String,
    pub have_rev: u32,
    pub action: String,
    pub change: u64,
    pub file_type: String,
    pub user: String,
    pub workspace: String,
    pub move_file: String,
    pub description: String,
    pub exclusive_held: bool,
    pub other_open: String,
    pub message: String,
    /// Integrations: the source file and its revisions `(source_start, source_end]`.
    pub source_file: String,
    pub source_start: u32,
    pub source_end: u32,
    /// Integrations: the merge base (empty when none).
    pub base_file: String,
    pub base_rev: u32,
    pub base_digest: String,
    /// Digest of content the server already holds for an opened file (lazy copy).
    pub lazy_digest: String,
    /// Whether an opened file still needs a resolve.
    pub unresolved: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeInfo {
    pub change: u64,
    pub status: String,
    pub user: String,
    pub workspace: String,
    pub description: String,
    pub time: i64,
}

/// Content of one revision, as stored.
pub struct Content {
    pub compressed: bool,
    pub size: u64,
    pub digest: String,
    pub blob: StoredBlob,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubmitResult {
    pub change: u64,
    pub renamed_from: u64,
    /// The workspace the change was submitted from; its files are read with
    /// `Service::submitted_files`.
    pub workspace: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelFileChange {
    pub depot_file: String,
    /// The revision added or updated to, or the revision that was removed.
    pub rev: u32,
    /// `added`, `updated` or `deleted`.
    pub action: &'static str,
}
