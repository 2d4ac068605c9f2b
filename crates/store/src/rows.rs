//! The rows the store keeps, as typed values.
//!
//! Depot paths are [`DepotPath`]s: validated when a caller builds a row, and read back without
//! validating again ([`DepotPath::from_stored`]).

use keel_core::{
    ChangeNumber, DepotPath, Digest, FileAction, FileType, IntegHow, SpecLock, UserType,
    WorkspaceOptions,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepotRow {
    pub name: String,
    pub kind: String,
    pub owner: String,
    pub description: String,
    pub created: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceRow {
    pub name: String,
    pub owner: String,
    pub host: String,
    pub root: String,
    pub description: String,
    pub options: WorkspaceOptions,
    pub view: Vec<String>,
    pub created: i64,
    pub updated: i64,
    pub accessed: i64,
}

/// A user: the spec fields of `keel user` and the argon2id hash of the password, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRow {
    pub name: String,
    pub email: String,
    pub full_name: String,
    pub user_type: UserType,
    pub created: i64,
    /// When the spec (or the password) last changed.
    pub updated: i64,
    /// When the user last ran a command (recorded at most every
    /// `ServiceConfig::user_access_update_secs`).
    pub accessed: i64,
    /// The password's argon2id hash as a PHC string; `None` when no password is set.
    pub password_hash: Option<String>,
    /// The password's MD5 verifier for P4 clients whose `P4PASSWD` holds the password
    /// (`p4_password_digests`), sealed by the service with a key kept outside the metadata;
    /// `None` when the setting is off or none was recorded.
    pub p4_digest: Option<String>,
    /// The super user who set `user_type`; `None` for `standard`, and for a type stored before
    /// Keel recorded the setter (such a type grants nothing until a super user saves it).
    pub type_set_by: Option<String>,
    /// The depot paths whose changes the user reviews (the spec's `Reviews` field), one
    /// pattern per entry, `-` excluding; `reviews` and review daemons read it.
    pub reviews: Vec<String>,
}

impl UserRow {
    /// The user's type as it counts for rights: a type no super user set is `standard`.
    pub fn effective_type(&self) -> UserType {
        if self.type_set_by.is_some() {
            self.user_type
        } else {
            UserType::Standard
        }
    }
}

/// A login ticket, known only by the BLAKE3 hash of its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketRow {
    pub hash: [u8; 32],
    pub user: String,
    /// The host the client named when it logged in.
    pub host: String,
    /// The client address the ticket is valid from; empty: every address.
    pub address: String,
    pub issued: i64,
    pub expires: i64,
}

pub use keel_core::ChangeStatus;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeRow {
    pub change: ChangeNumber,
    pub status: ChangeStatus,
    pub user: String,
    pub workspace: String,
    pub description: String,
    pub time: i64,
}

/// Which changes a listing returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeFilter {
    pub status: Option<ChangeStatus>,
    pub user: Option<String>,
    pub workspace: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevisionRow {
    pub path: DepotPath,
    pub rev: u32,
    pub change: ChangeNumber,
    pub action: FileAction,
    pub file_type: FileType,
    /// `None` for deleted revisions.
    pub digest: Option<Digest>,
    pub size: u64,
    pub md5: String,
    pub time: i64,
    /// The file's own modification time when it was submitted (seconds since the epoch), as
    /// the client recorded it; 0 when none was recorded (`+m` and `modtime` sync fall back to
    /// `time`).
    pub mod_time: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpenedRow {
    pub workspace: String,
    pub path: DepotPath,
    pub user: String,
    /// 0 is the workspace's default changelist.
    pub change: ChangeNumber,
    pub action: FileAction,
    pub file_type: FileType,
    /// The revision the file was opened at (0 for adds).
    pub base_rev: u32,
    /// For move/add: the file it moved from; for move/delete: where it moved to.
    pub move_file: Option<DepotPath>,
    /// Content the file already has on the server (a lazy copy), so submit needs no upload.
    pub lazy: Option<LazyContent>,
    /// The integration this open carries, waiting for or done by resolve.
    pub integ: Option<PendingInteg>,
    /// Locked (`lock`): no other workspace may submit the file while this record holds it.
    pub locked: bool,
}

/// Content already in the content store, referenced instead of uploaded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LazyContent {
    pub digest: Digest,
    pub size: u64,
    pub md5: String,
    /// The modification time recorded with this content (the shelved file's, or the copied
    /// revision's); 0 when none. Submit gives it to the revision.
    pub mod_time: i64,
    /// A revision owns this content (schema migration 4's `lazy_owned`), so it cannot be
    /// purged while this record exists. Set by the store when the record is written and kept
    /// current by obliterate; what a caller puts here is not stored.
    pub owned: bool,
}

/// An integration of `from_path` revisions `(from_start, from_end]` into an opened file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PendingInteg {
    pub from_path: DepotPath,
    /// Revisions after this one are integrated (0 = from the first).
    pub from_start: u32,
    pub from_end: u32,
    /// The merge base: a revision of some file, when the two sides share an ancestor.
    pub base: Option<(DepotPath, u32)>,
    pub resolved: bool,
    /// The history record written on submit once resolved (`None` while unresolved and for a
    /// sync-scheduled resolve).
    pub how: Option<IntegHow>,
}

/// One submitted integration record, seen from its target (Perforce's db.integed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegRow {
    pub to_path: DepotPath,
    pub to_rev: u32,
    pub from_path: DepotPath,
    pub from_start: u32,
    pub from_end: u32,
    pub how: IntegHow,
    pub change: ChangeNumber,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRow {
    pub name: String,
    pub owner: String,
    pub description: String,
    pub options: SpecLock,
    /// An automatic label's revision (`@N`); `None` for a static label.
    pub revision: Option<ChangeNumber>,
    pub view: Vec<String>,
    pub created: i64,
    pub updated: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchRow {
    pub name: String,
    pub owner: String,
    pub description: String,
    pub options: SpecLock,
    pub view: Vec<String>,
    pub created: i64,
    pub updated: i64,
}

/// One file shelved in a pending change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShelvedRow {
    pub change: ChangeNumber,
    pub path: DepotPath,
    pub action: FileAction,
    pub file_type: FileType,
    /// `None` for shelved deletes.
    pub digest: Option<Digest>,
    pub size: u64,
    pub md5: String,
    pub base_rev: u32,
    pub move_file: Option<DepotPath>,
    /// The file's modification time the client sent when shelving (0 when none).
    pub mod_time: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaveRow {
    pub path: DepotPath,
    /// Workspace-relative path the file was written to (kept so a file that leaves the view
    /// can still be removed).
    pub client: String,
    /// 0 removes the entry when applied.
    pub rev: u32,
}

/// A group spec: its members, subgroups, owners and the limits it sets.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GroupRow {
    pub name: String,
    pub users: Vec<String>,
    pub subgroups: Vec<String>,
    pub owners: Vec<String>,
    pub limits: keel_core::GroupLimits,
    pub updated: i64,
}

/// A webhook's delivery state: the last change delivered, and how the current one is going.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookStateRow {
    /// Every matching change up to this one was delivered (or predates the webhook).
    pub delivered: ChangeNumber,
    /// Failed attempts at the change after `delivered` (0 when none failed).
    pub attempts: u32,
    /// Deliveries that succeeded, and attempts that failed, since the webhook was created.
    pub sent: u64,
    pub failures: u64,
    /// When the last attempt was made (seconds since the epoch; 0: never).
    pub last_attempt: i64,
    /// What the last attempt got: `200 OK`, or why it failed.
    pub last_status: String,
}

/// A job: its field values by name (in the job spec's order) and its dates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRow {
    pub name: String,
    pub fields: Vec<(String, String)>,
    pub created: i64,
    /// When the job was last saved.
    pub updated: i64,
    /// When the job was last saved or fixed.
    pub accessed: i64,
}

/// A fix: a job linked to a change (pending or submitted), with the status the job takes when
/// the change is submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixRow {
    pub job: String,
    pub change: ChangeNumber,
    pub user: String,
    pub workspace: String,
    pub date: i64,
    pub status: String,
}
