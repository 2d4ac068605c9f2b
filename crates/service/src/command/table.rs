//! The rows of the command table: every command the server runs, one row each.
//!
//! **Adding a command is one row here** (a new RPC's name as `keel.proto` spells it): its
//! level, whether it writes, and its flags. The server's tests fail
//! until every RPC of `keel.proto` has exactly one row and every row is an RPC.

use super::{Command, Kind};
use keel_core::Level;

/// Declares each command as a constant (`command::SYNC`) and lists them all in [`COMMANDS`].
///
/// A row is `CONST = "Name", level, kind` (the level `none`, `list`, `read`, `open`, `write`,
/// `admin` or `super_user`), then its flags, each a field of [`Command`] set to true: `small`
/// (it may be answered inline while its answer stays small) and `secret` (its arguments carry
/// a password and are never kept).
macro_rules! commands {
    ($($(#[$doc:meta])* $id:ident = $name:literal, $level:ident, $kind:ident $(, $flag:ident)*;)*) => {
        $(
            $(#[$doc])*
            pub const $id: &Command = &{
                #[allow(unused_mut)]
                let mut row = Command {
                    name: $name,
                    level: commands!(@level $level),
                    kind: Kind::$kind,
                    small: false,
                    secret: false,
                };
                $(row.$flag = true;)*
                row
            };
        )*
        /// Every command, in the order of the rows.
        pub const COMMANDS: &[&Command] = &[$($id),*];
    };
    (@level none) => { None };
    (@level list) => { Some(Level::List) };
    (@level read) => { Some(Level::Read) };
    (@level open) => { Some(Level::Open) };
    (@level write) => { Some(Level::Write) };
    (@level review) => { Some(Level::Review) };
    (@level admin) => { Some(Level::Admin) };
    (@level super_user) => { Some(Level::Super) };
}

commands! {
    /// `p4 info` needs no level: a user without protections can still see the server.
    INFO = "Info", none, Read;
    LIST_DEPOTS = "ListDepots", list, Read;
    CREATE_DEPOT = "CreateDepot", super_user, Write;
    SAVE_WORKSPACE = "SaveWorkspace", list, Write;
    GET_WORKSPACE = "GetWorkspace", list, Read;
    LIST_WORKSPACES = "ListWorkspaces", list, Read;
    DELETE_WORKSPACE = "DeleteWorkspace", list, Write;
    /// The have list copied holds only files the caller may read (the service filters).
    CLONE_WORKSPACE = "CloneWorkspace", list, Write;
    OPEN = "Open", open, Write;
    MOVE = "Move", open, Write;
    REVERT = "Revert", open, Write;
    REOPEN = "Reopen", open, Write;
    OPENED = "Opened", list, ReadOpened, small;
    SAVE_CHANGE = "SaveChange", open, Write;
    SUBMIT = "Submit", write, Write;
    INTEGRATE = "Integrate", open, Write;
    RESOLVE_LIST = "ResolveList", open, ReadOpened;
    RESOLVE_DONE = "ResolveDone", open, Write;
    RESOLVED = "Resolved", open, ReadOpened;
    INTEGRATED = "Integrated", list, Read;
    /// A sync's preview of a few named files is answered inline.
    SYNC = "Sync", read, Read, small;
    /// Writes only the have lists, which a replica keeps itself.
    UPDATE_HAVE = "UpdateHave", read, Read;
    HAVE = "Have", list, Read;
    HAVE_IF_CHANGED = "HaveIfChanged", list, Read, small;
    FILES = "Files", list, Read, small;
    FSTAT = "Fstat", list, Read, small;
    DIRS = "Dirs", list, Read, small;
    FILELOG = "Filelog", list, Read, small;
    CHANGES = "Changes", list, Read, small;
    DESCRIBE = "Describe", list, Read;
    PRINT = "Print", read, Read;
    DIFF2 = "Diff2", read, Read;
    SHELVE = "Shelve", open, Write;
    DELETE_SHELVED = "DeleteShelved", open, Write;
    UNSHELVE = "Unshelve", open, Write;
    OBLITERATE = "Obliterate", admin, Write;
    SAVE_LABEL = "SaveLabel", open, Write;
    GET_LABEL = "GetLabel", list, Read;
    LIST_LABELS = "ListLabels", list, Read;
    DELETE_LABEL = "DeleteLabel", open, Write;
    TAG = "Tag", list, Write;
    LABELSYNC = "Labelsync", list, Write;
    SAVE_BRANCH = "SaveBranch", open, Write;
    GET_BRANCH = "GetBranch", list, Read;
    LIST_BRANCHES = "ListBranches", list, Read;
    DELETE_BRANCH = "DeleteBranch", open, Write;
    /// Acts on the primary's journal.
    CHECKPOINT = "Checkpoint", super_user, Write;
    VERIFY = "Verify", admin, Read;
    JOURNAL = "Journal", super_user, Read;
    CONTENT = "Content", read, Read;
    GET_GROUP = "GetGroup", list, Read;
    /// A group's owners may edit it without being super users; the service checks which.
    SAVE_GROUP = "SaveGroup", list, Write;
    DELETE_GROUP = "DeleteGroup", list, Write;
    LIST_GROUPS = "ListGroups", list, Read;
    GET_PROTECTIONS = "GetProtections", super_user, Read;
    SAVE_PROTECTIONS = "SaveProtections", super_user, Write;
    PROTECTS = "Protects", list, Read;
    GET_TRIGGERS = "GetTriggers", super_user, Read;
    SAVE_TRIGGERS = "SaveTriggers", super_user, Write;
    /// `login` and `logout` need no level (a user without protections can end their tickets).
    LOGIN = "Login", none, Write, secret;
    LOGIN_STATUS = "LoginStatus", none, Read;
    LOGOUT = "Logout", none, Write;
    /// One's own password and user spec need list; another user's needs super, which the
    /// service checks (`Service::is_super`).
    SET_PASSWORD = "SetPassword", list, Write, secret;
    GET_USER = "GetUser", list, Read;
    SAVE_USER = "SaveUser", list, Write, secret;
    DELETE_USER = "DeleteUser", list, Write;
    LIST_USERS = "ListUsers", list, Read;
    CONFIGURE = "Configure", super_user, Write;
    LIST_SETTINGS = "ListSettings", super_user, Read;
    /// Anyone with list may see the commands running (their own; `-a`/`-l` need super, which
    /// the service checks), as `p4 monitor show` asks list. A replica lists its own.
    MONITOR_SHOW = "MonitorShow", list, Read;
    /// A replica terminates its own commands.
    MONITOR_TERMINATE = "MonitorTerminate", super_user, Read;
    /// A replica keeps its own probe timings: they measure the replica.
    REPORT_PROBE = "ReportProbe", list, Read;
    /// The typemap: anyone may read it, only a super user changes it.
    GET_TYPEMAP = "GetTypemap", list, Read;
    SAVE_TYPEMAP = "SaveTypemap", super_user, Write;
    /// Locking needs write on each file; unlocking another's lock (`-f`) admin, which the
    /// service checks per file.
    LOCK = "Lock", write, Write;
    UNLOCK = "Unlock", open, Write;
    /// A subscription to the changes under paths: each change is filtered to what the
    /// subscriber may list.
    WATCH = "Watch", list, Read;
    /// The webhooks table and its delivery state: super users only.
    GET_WEBHOOKS = "GetWebhooks", super_user, Read;
    SAVE_WEBHOOKS = "SaveWebhooks", super_user, Write;
    /// Jobs and fixes: list to read, open to change a job or a fix, super for the job spec
    /// (and admin for `job -f`, which the service checks).
    GET_JOB_SPEC = "GetJobSpec", list, Read;
    SAVE_JOB_SPEC = "SaveJobSpec", super_user, Write;
    GET_JOB = "GetJob", list, Read;
    SAVE_JOB = "SaveJob", open, Write;
    DELETE_JOB = "DeleteJob", open, Write;
    LIST_JOBS = "ListJobs", list, Read;
    FIX = "Fix", open, Write;
    LIST_FIXES = "ListFixes", list, Read;
    /// Annotate reads the file and the integration sources it follows (those the caller
    /// may read).
    ANNOTATE = "Annotate", read, Read;
    /// Undo opens the inverse of submitted work for submit.
    UNDO = "Undo", open, Write;
    /// Counters and keys: list to read, review to set (the service checks `keys.hide`).
    GET_COUNTER = "GetCounter", list, Read;
    UPDATE_COUNTER = "UpdateCounter", review, Write;
    LIST_COUNTERS = "ListCounters", list, Read;
    /// `review` lists changes for review daemons (and moves their counter).
    REVIEW = "Review", review, Read;
    REVIEWS = "Reviews", list, Read;
    INTERCHANGES = "Interchanges", list, Read;
    CSTAT = "Cstat", list, Read;
    SIZES = "Sizes", list, Read;
    // day30
    /// Grep reads the content of each file it searches.
    GREP = "Grep", read, Read;
    /// Populate branches into the depot and submits: write on each target, branch on each
    /// source (which the service checks per file).
    POPULATE = "Populate", write, Write;
    // istat30
    /// Istat counts, both ways, the changes interchanges would list.
    ISTAT = "Istat", list, Read;
    /// Prune obliterates unmodified branched files: admin on each (checked per file).
    PRUNE = "Prune", admin, Write;
}
