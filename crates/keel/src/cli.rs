//! Command-line definitions (clap derive): global flags and every verb with its options.
//!
//! Every subcommand enum here and in `commands/` is `#[command(defer = true)]`: a verb's
//! arguments are built only when that verb is parsed, so a short command does not build the
//! option tree of all the others before its one call.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `keel --version`: the package version and the commit it was built from (see `build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("KEEL_COMMIT"), ")");

/// Keel: a centralized version-control client and server, compatible with P4 clients.
#[derive(Debug, Parser)]
#[command(name = "keel", version = VERSION, about)]
pub struct Cli {
    #[command(flatten)]
    pub globals: Globals,
    #[command(subcommand)]
    pub command: Command,
}

/// The options every command line takes before its verb (`--json` also after it): the full
/// command line's and the quick reads' (`quick_read`).
#[derive(Debug, Args)]
pub struct Globals {
    /// Server address HOST:PORT (else KEEL_SERVER, a .keel file, or 127.0.0.1:1666).
    #[arg(short = 's', long = "server", value_name = "ADDR")]
    pub server: Option<String>,
    /// User name (else KEEL_USER, a .keel file, $USER, or the OS login name of this process).
    #[arg(short = 'u', long = "user")]
    pub user: Option<String>,
    /// Workspace name (else KEEL_WORKSPACE or a .keel file).
    #[arg(short = 'w', long = "workspace")]
    pub workspace: Option<String>,
    /// Print one JSON object per line instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Quiet: suppress informational messages (errors still print; --json is unaffected).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Verbose: print every per-file line, not a summary of a listing longer than a screenful.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Super users only: act on a workspace or pending change of another user (with -w NAME;
    /// never a `locked` workspace). Refused for anyone else.
    #[arg(long = "override-owner")]
    pub override_owner: bool,
    /// Write workspace files even though the workspace's Root is not the current directory
    /// nor above it (the root moved on purpose).
    #[arg(long = "root-moved-ok")]
    pub root_moved_ok: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Run a Keel server.
    Serve(ServeArgs),
    /// Run a benchmark workload against a server on loopback.
    Bench(crate::commands::bench::BenchArgs),
    /// Backup, recovery and log reports: `admin checkpoint`, `admin restore`, `admin log-report`.
    #[command(subcommand)]
    Admin(crate::commands::backup::AdminCmd),
    /// Run a caching proxy in front of a Keel server.
    Proxy(ProxyArgs),
    /// Trust an ssl: server's certificate fingerprint (like p4 trust): -y, -l, -d, -f.
    Trust(crate::commands::trust::TrustArgs),
    /// List the login tickets in your tickets file (KEEL_TICKETS or ~/.keel_tickets), like p4
    /// tickets; talks to no server.
    Tickets,
    /// List the client settings in effect (server, user, workspace, ...) and where each came
    /// from: a flag, the environment, a .keel file or the default (like p4 set).
    Set,
    /// Group limit MaxResults: a command stopped with "Request too large" would have returned
    /// more rows (files, changes, groups, ...) than the most permissive MaxResults of your
    /// groups allows. Narrow the file arguments (//depot/proj/... instead of //...), or ask an
    /// admin to raise the limit (`keel group GROUP`).
    #[command(hide = true, name = "maxresults")]
    MaxResults,
    /// Group limit MaxScanRows: a command stopped with "Too many rows scanned" would have read
    /// more rows than the most permissive MaxScanRows of your groups allows, even if it
    /// returns fewer (a wildcard in the middle of a path scans everything under its prefix).
    /// Narrow the file arguments, or ask an admin to raise the limit.
    #[command(hide = true, name = "maxscanrows")]
    MaxScanRows,
    /// Group limit MaxLockTime: a submit, open or integrate held the server's writer longer
    /// than the most permissive MaxLockTime (milliseconds) of your groups allows; it was rolled
    /// back and changed nothing. Submit or integrate fewer files at a time, or ask an admin to
    /// raise the limit.
    #[command(hide = true, name = "maxlocktime")]
    MaxLockTime,
    /// Group limit MaxOpenFiles: one command would have opened more files than the most
    /// permissive MaxOpenFiles of your groups allows; nothing was opened. Open fewer files at
    /// a time, or ask an admin to raise the limit.
    #[command(hide = true, name = "maxopenfiles")]
    MaxOpenFiles,
    /// Write shell completions or man pages generated from this command line's definition
    /// (for packagers: `keel generate completions bash`, `keel generate man DIR`).
    #[command(hide = true, subcommand)]
    Generate(crate::commands::generate::GenerateCmd),
    #[command(flatten)]
    Client(ClientCommand),
}

impl Command {
    /// Whether the command runs a server or works on its files (`serve`, `proxy`, `bench`,
    /// `admin restore`): `keel-server` runs it (`server_side.rs`).
    pub fn server_side(&self) -> bool {
        matches!(
            self,
            Command::Serve(_)
                | Command::Proxy(_)
                | Command::Bench(_)
                | Command::Admin(crate::commands::backup::AdminCmd::Restore(_))
        )
    }

    /// Whether the process runs for as long as it serves (`serve`, `proxy`) or starts servers
    /// and drives load at them (`bench`): the ones that get transparent huge pages. A client
    /// command lives milliseconds to minutes and would pay for zeroing whole 2 MiB pages it
    /// touches a fraction of.
    pub fn long_running(&self) -> bool {
        matches!(
            self,
            Command::Serve(_) | Command::Proxy(_) | Command::Bench(_)
        )
    }

    /// Whether the command makes a few calls and handles each file's records one at a time,
    /// with no file content to move or hash: it runs on a current-thread runtime. Commands that
    /// move content, walk the workspace or serve keep worker threads, which overlap receiving,
    /// writing and recording.
    pub fn few_calls(&self) -> bool {
        use ClientCommand as C;
        match self {
            Command::Client(c) => matches!(
                c,
                C::Info
                    | C::Depots
                    | C::Depot(_)
                    | C::Workspace(_)
                    | C::Delete(_)
                    | C::Move(_)
                    | C::Reopen(_)
                    | C::Opened(_)
                    | C::Where(_)
                    | C::Have(_)
                    | C::Change(_)
                    | C::Changes(_)
                    | C::Describe(_)
                    | C::Files(_)
                    | C::Dirs(_)
                    | C::Fstat(_)
                    | C::Filelog(_)
                    | C::Annotate(_)
                    | C::Resolved(_)
                    | C::Integrated(_)
                    | C::Obliterate(_)
                    | C::Label(_)
                    | C::Labels
                    | C::Tag(_)
                    | C::Labelsync(_)
                    | C::Branch(_)
                    | C::Branches
                    | C::Counter(_)
                    | C::Counters(_)
                    | C::Key(_)
                    | C::Keys(_)
                    | C::Review(_)
                    | C::Reviews(_)
                    | C::Interchanges(_)
                    | C::Cstat(_)
                    | C::Sizes(_)
                    | C::Grep(_)
                    | C::Populate(_)
                    | C::Istat(_)
                    | C::Prune(_)
            ),
            _ => false,
        }
    }
}

/// The verbs that talk to a server.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ClientCommand {
    /// Show server and client information.
    Info,
    /// List depots.
    Depots,
    /// Manage depots.
    #[command(subcommand)]
    Depot(DepotCmd),
    /// Manage workspaces (client specs).
    #[command(subcommand, visible_alias = "client")]
    Workspace(WorkspaceCmd),
    /// Open new files for add.
    Add(AddArgs),
    /// Open files for edit.
    Edit(OpenArgs),
    /// Open files for delete.
    Delete(ChangeFilesArgs),
    /// Move (rename) a file opened for edit or add.
    Move(MoveArgs),
    /// Discard changes to opened files.
    Revert(RevertArgs),
    /// Move opened files to another change or change their type.
    Reopen(OpenArgs),
    /// List opened files.
    Opened(OpenedArgs),
    /// Show how files map through the workspace view.
    Where(FilesArgs),
    /// List the revisions the workspace has.
    Have(FilesArgs),
    /// Preview what reconcile would open.
    Status(StatusArgs),
    /// Open files changed outside Keel for add, edit or delete.
    Reconcile(ReconcileArgs),
    /// List the ignore rules in effect, or say whether (and why) files are ignored (-i).
    Ignores(IgnoresArgs),
    /// Restore the workspace to its have list: delete new files, restore edited and missing ones.
    Clean(CleanArgs),
    /// Record files as synced without transferring them (same as sync -k).
    Flush(FlushArgs),
    /// Lock opened files: others may open them but not submit them until you submit or revert.
    Lock(LockArgs),
    /// Release locks on opened files (-f: an admin releases another user's lock).
    Unlock(UnlockArgs),
    /// Create or delete a pending change.
    Change(ChangeArgs),
    /// Submit a pending change.
    Submit(SubmitArgs),
    /// Bring workspace files up to date (to the head revision, or the revisions named).
    #[command(after_long_help = FILE_ARGUMENTS)]
    Sync(SyncArgs),
    /// List changes.
    Changes(ChangesArgs),
    /// Print each submitted change touching the paths as it commits (a subscription).
    Watch(WatchArgs),
    /// Describe a change and its differences.
    Describe(DescribeArgs),
    /// List files at their head (or given) revision.
    Files(FilesListArgs),
    /// List depot subdirectories.
    Dirs(DirsArgs),
    /// Show detailed file information.
    Fstat(FilesRequiredArgs),
    /// Show the revision history of files.
    Filelog(FilelogArgs),
    /// Show each line of files with the revision (or change) that added it.
    #[command(visible_alias = "blame")]
    Annotate(crate::commands::annotate::AnnotateArgs),
    /// Open the inverse of submitted revisions or changes (submit to roll them back).
    Undo(crate::commands::undo::UndoArgs),
    /// Print file content.
    Print(PrintArgs),
    /// Diff workspace files against their have revisions.
    Diff(FilesArgs),
    /// Diff two depot file revisions.
    Diff2(Diff2Args),
    /// Open files for integration from a source (branch, merge or delete into targets).
    Integrate(IntegrateArgs),
    /// Merge changes from a source into targets (same as integrate).
    Merge(IntegrateArgs),
    /// Make targets exact copies of their sources (lazy copies, no resolve).
    Copy(IntegrateArgs),
    /// Resolve integrations and scheduled merges of opened files.
    Resolve(ResolveArgs),
    /// List opened files that have been resolved.
    Resolved(FilesArgs),
    /// Show integration history of files.
    Integrated(FilesRequiredArgs),
    /// Store opened files of a pending change on the server (or delete shelved files with -d).
    Shelve(crate::commands::shelve::ShelveArgs),
    /// Open shelved files of a change in this workspace.
    Unshelve(crate::commands::shelve::UnshelveArgs),
    /// Permanently remove files' history and reclaim their content (report only without -y).
    Obliterate(crate::commands::obliterate::ObliterateArgs),
    /// Manage labels.
    #[command(subcommand)]
    Label(LabelCmd),
    /// List labels (same as `label list`).
    Labels,
    /// Tag files with a label at the revisions given (default head), or untag them (-d).
    Tag(TagArgs),
    /// Make a label hold the selected revisions of the files in its View.
    Labelsync(LabelsyncArgs),
    /// Manage branch specs.
    #[command(subcommand)]
    Branch(BranchCmd),
    /// List branch specs (same as `branch list`).
    Branches,
    /// Show (-o), edit, save from stdin (-i) or delete (-d) a group and its limits.
    Group(crate::commands::access::GroupArgs),
    /// List groups, or the groups a user belongs to.
    Groups(crate::commands::access::GroupsArgs),
    /// Edit the protections table (-o prints it, -i reads it from stdin).
    Protect(crate::commands::access::ProtectArgs),
    /// List the protections that apply to you (-u USER, -g GROUP, -h HOST, -a every line).
    Protects(crate::commands::access::ProtectsArgs),
    /// Re-read stored content and report every BAD or MISSING revision (exit 1 when any).
    Verify(crate::commands::verify::VerifyArgs),
    /// Time the five everyday commands (info, changes -m 1, fstat, sync -n, opened) now and
    /// every --every, print them and report them to the server's metrics.
    Probe(crate::commands::probe::ProbeArgs),
    /// Show or edit the triggers table (-o prints it, -i reads it from stdin).
    Triggers(crate::commands::triggers::TriggersArgs),
    /// Show or edit the typemap, the type of added files by path (-o prints it, -i reads it).
    Typemap(crate::commands::typemap::TypemapArgs),
    /// Show or edit the webhooks table (POSTs to build servers on submit; super users).
    Webhooks(crate::commands::webhooks::WebhooksArgs),
    /// Log in: trade your password for a ticket, stored in the tickets file (-s: show status).
    Login(crate::commands::login::LoginArgs),
    /// Log out: end this ticket on the server (-a: every ticket of yours, on every host).
    Logout(crate::commands::login::LogoutArgs),
    /// Set your password, or another user's (super users).
    Passwd(crate::commands::login::PasswdArgs),
    /// Show, edit, create or delete a user spec.
    User(crate::commands::users::UserArgs),
    /// List users.
    Users,
    /// Server settings: `configure set NAME=VALUE`, `configure unset NAME`, `configure show`.
    #[command(subcommand)]
    Configure(crate::commands::configure::ConfigureCmd),
    /// The commands the server runs now: `monitor show [-a] [-l]`, `monitor terminate ID`.
    #[command(subcommand)]
    Monitor(crate::commands::monitor::MonitorCmd),
    /// Show or edit the job spec, the fields every job has (-o prints it, -i reads it).
    Jobspec(crate::commands::jobs::JobspecArgs),
    /// Show (-o) or save (-i) a spec's form by type: `spec -o job` (the job spec).
    Spec(crate::commands::jobs::SpecArgs),
    /// Create, edit, show (-o), save from stdin (-i) or delete (-d) a job.
    Job(crate::commands::jobs::JobArgs),
    /// List jobs, searched with -e EXPRESSION or by the files their changes touched.
    Jobs(crate::commands::jobs::JobsArgs),
    /// Link jobs to a change (-d: unlink); submitting it sets their status (-s, default closed).
    Fix(crate::commands::jobs::FixArgs),
    /// List fixes: jobs linked to changes (-j JOB, -c CHANGE, files).
    Fixes(crate::commands::jobs::FixesArgs),
    /// Print a counter, or set (NAME VALUE), delete (-d), increment (-i) or compare-and-set
    /// (--from OLD --to NEW) it; `change` is the newest change number.
    Counter(crate::commands::counters::CounterForceArgs),
    /// List counters (-e FILTER with `*` wildcards, -m MAX).
    Counters(crate::commands::counters::CountersArgs),
    /// Print, set, delete (-d), increment (-i) or compare-and-set a key (counters' separate
    /// namespace).
    Key(crate::commands::counters::CounterArgs),
    /// List keys (-e FILTER with `*` wildcards, -m MAX).
    Keys(crate::commands::counters::CountersArgs),
    /// List submitted changes for a review daemon: all, from -c CHANGE, or after the value of
    /// counter -t NAME (`-c N -t NAME` sets the counter).
    Review(crate::commands::counters::ReviewArgs),
    /// List the users whose Reviews field covers the files of change -c N or the files given.
    Reviews(crate::commands::counters::ReviewsArgs),
    /// List the submitted changes not yet integrated from FROM into TO (or through -b BRANCH).
    Interchanges(crate::commands::interchanges::InterchangesArgs),
    /// For each change touching the files, whether this workspace has it synced: have, need
    /// or partial.
    Cstat(crate::commands::interchanges::CstatArgs),
    /// Sizes of file revisions from the server's metadata (-a all revisions, -s totals, -z lazy
    /// copies counted once, -b BLOCKSIZE, -H human-readable).
    Sizes(crate::commands::sizes::SizesArgs),
    /// Search stored revisions for lines matching -e PATTERN (-a all revisions, -i, -F, -n,
    /// -v, -l/-L, -A/-B/-C context, -t binary files too, -s no warnings).
    Grep(crate::commands::grep::GrepArgs),
    /// Branch files into the depot as one submitted change, without a workspace: FROM TO or
    /// -b BRANCH (-d description, -n preview, -o list files, -f deleted files too, -r reverse).
    Populate(crate::commands::populate::PopulateArgs),
    /// What needs merging between SOURCE and TARGET (or -b BRANCH, -r reversed), both ways:
    /// the changes the target lacks and those the source lacks.
    Istat(crate::commands::istat::IstatArgs),
    /// Remove unmodified branched files (every revision an unchanged copy) under the paths,
    /// unless opened; -y to remove (without it, a preview). Needs admin on the files.
    Prune(crate::commands::istat::PruneArgs),
}

#[derive(Debug, Args)]
pub struct IntegrateArgs {
    /// Integrate using this branch spec's view.
    #[arg(short = 'b', long = "branch")]
    pub branch: Option<String>,
    /// With -b: integrate from the view's right side to its left.
    #[arg(short = 'r')]
    pub reverse: bool,
    /// Preview: open nothing.
    #[arg(short = 'n')]
    pub preview: bool,
    /// Do not write target files into the workspace (they are still opened).
    #[arg(short = 'v')]
    pub virtual_only: bool,
    /// Open into this pending change.
    #[arg(short = 'c')]
    pub change: Option<u64>,
    /// FROM TO (FROM may carry @change/#rev/@label), or with -b: target files.
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// Automatic mode: -am merge (refuses conflicts), -as safe, -at theirs, -ay yours,
    /// -af merge with conflict markers. Without it, asks on a terminal.
    #[arg(short = 'a', value_name = "m|s|t|y|f")]
    pub accept: Option<String>,
    /// Preview: show what needs resolving.
    #[arg(short = 'n')]
    pub preview: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum DepotCmd {
    /// Create a depot.
    Create {
        name: String,
        /// Description.
        #[arg(short = 'd', long = "description", allow_hyphen_values = true)]
        description: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum WorkspaceCmd {
    /// Create a workspace, or replace the spec of an existing one.
    Create(WorkspaceCreateArgs),
    /// Edit a workspace spec in $EDITOR.
    Edit {
        name: Option<String>,
        /// Super users only: edit another user's workspace (`locked` ones included).
        #[arg(short = 'f')]
        force: bool,
    },
    /// Print a workspace spec.
    Show { name: Option<String> },
    /// List workspaces.
    List,
    /// Clone a workspace: its view, options and have list, and its files without copying
    /// bytes (reflinks, hard links of read-only files, else copies).
    Clone(WorkspaceCloneArgs),
    /// Delete a workspace (its owner; a super user with -f).
    Delete {
        name: String,
        /// Super users only: delete another user's workspace (`locked` ones included).
        #[arg(short = 'f')]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct WorkspaceCreateArgs {
    pub name: String,
    /// Local root directory of the workspace.
    #[arg(long)]
    pub root: PathBuf,
    /// A view line, e.g. "//depot/... //NAME/..." (repeatable).
    #[arg(long = "view", value_name = "LINE", allow_hyphen_values = true)]
    pub view: Vec<String>,
    /// Options, e.g. "noallwrite noclobber normdir nomodtime".
    #[arg(long)]
    pub options: Option<String>,
    /// Description.
    #[arg(long, allow_hyphen_values = true)]
    pub description: Option<String>,
    /// Restrict the workspace to this host.
    #[arg(long)]
    pub host: Option<String>,
    /// Owner (default: you; another user needs a super user's -f).
    #[arg(long)]
    pub owner: Option<String>,
    /// Super users only: edit or delete another user's workspace (`locked` ones included).
    #[arg(short = 'f')]
    pub force: bool,
}

/// `workspace clone SOURCE NEW --root DIR`.
#[derive(Debug, Args)]
pub struct WorkspaceCloneArgs {
    /// The workspace to clone (its files are read from its root on this machine).
    pub source: String,
    /// The new workspace's name.
    pub name: String,
    /// The new workspace's root: a directory that is empty or does not exist yet.
    #[arg(long)]
    pub root: PathBuf,
    /// Also take the files under the source's root that the depot does not track (build
    /// outputs), so a clone of a built workspace needs no first build.
    #[arg(long = "with-untracked")]
    pub with_untracked: bool,
    /// Restrict the new workspace to this host.
    #[arg(long)]
    pub host: Option<String>,
    /// Description (default: "Cloned from SOURCE.").
    #[arg(long, allow_hyphen_values = true)]
    pub description: Option<String>,
}

/// `add`, `edit` and `reopen`: files, the pending change and a file type.
#[derive(Debug, Args)]
pub struct OpenArgs {
    /// Pending change number.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// File type (e.g. binary+l) or modifiers (+x).
    #[arg(short = 't', value_name = "TYPE")]
    pub file_type: Option<String>,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// Pending change number.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// File type (e.g. binary+l) or modifiers (+x).
    #[arg(short = 't', value_name = "TYPE")]
    pub file_type: Option<String>,
    /// Do not honour ignore files: add files they cover too.
    #[arg(short = 'I')]
    pub no_ignore: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Do not honour ignore files: report new files they cover too.
    #[arg(short = 'I')]
    pub no_ignore: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct IgnoresArgs {
    /// Name the ignore file, line and rule behind each answer.
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Say whether each path given is ignored.
    #[arg(short = 'i', requires = "paths")]
    pub check: bool,
    /// Local paths (default: the current directory).
    pub paths: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Only delete new files (files not in the have list).
    #[arg(short = 'a')]
    pub added: bool,
    /// Only restore files missing from the workspace.
    #[arg(short = 'd')]
    pub deleted: bool,
    /// Only restore files edited without being opened.
    #[arg(short = 'e')]
    pub edited: bool,
    /// Do not honour ignore files: delete new files they cover too.
    #[arg(short = 'I')]
    pub no_ignore: bool,
    /// Preview only.
    #[arg(short = 'n')]
    pub preview: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// Only files opened in this pending change.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// Opened files to lock (default: every file the workspace has opened).
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct UnlockArgs {
    /// Only files opened in this pending change.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// Unlock the files named whoever holds them (admin).
    #[arg(short = 'f', requires = "files")]
    pub force: bool,
    /// Release the locks and exclusive (+l) opens left by deleted users or workspaces
    /// (admin; default: every depot).
    #[arg(short = 'x', conflicts_with_all = ["force", "change"])]
    pub orphaned: bool,
    /// Files to unlock (default: every file the workspace has locked).
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FlushArgs {
    /// Preview: report what would be recorded.
    #[arg(short = 'n')]
    pub preview: bool,
    /// Quiet: print nothing but errors.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Files to record, each with an optional revision (default: the whole workspace at head).
    #[arg(value_name = "FILE[REV]")]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ChangeFilesArgs {
    /// Pending change number.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MoveArgs {
    /// Pending change number.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Args)]
pub struct RevertArgs {
    /// Revert only files opened for edit whose content is unchanged.
    #[arg(short = 'a')]
    pub unchanged: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct OpenedArgs {
    /// Files opened in all workspaces.
    #[arg(short = 'a')]
    pub all: bool,
    /// Files opened by this user.
    #[arg(short = 'u', value_name = "USER")]
    pub user: Option<String>,
    /// Files in this pending change (0 = default).
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FilesArgs {
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FilesRequiredArgs {
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// Preview only.
    #[arg(short = 'n')]
    pub preview: bool,
    /// Pending change number.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
    /// Do not honour ignore files: open new files they cover for add too.
    #[arg(short = 'I')]
    pub no_ignore: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ChangeArgs {
    /// Description of a new change (else $EDITOR opens a form).
    #[arg(
        short = 'd',
        value_name = "DESC",
        conflicts_with = "delete",
        allow_hyphen_values = true
    )]
    pub description: Option<String>,
    /// Delete this (empty) pending change.
    #[arg(short = 'D', value_name = "N")]
    pub delete: Option<u64>,
    /// Super users only: delete another user's pending change.
    #[arg(short = 'f')]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Change description (required for the default change; else $EDITOR opens a form).
    #[arg(short = 'd', value_name = "DESC", allow_hyphen_values = true)]
    pub description: Option<String>,
    /// Submit this numbered pending change.
    #[arg(short = 'c', value_name = "N")]
    pub change: Option<u64>,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Preview: report what would change.
    #[arg(short = 'n')]
    pub preview: bool,
    /// Force: rewrite files, overwriting writable ones.
    #[arg(short = 'f')]
    pub force: bool,
    /// Update the have list only, leaving files alone.
    #[arg(short = 'k')]
    pub have_only: bool,
    /// Populate files without recording them in the have list.
    #[arg(short = 'p')]
    pub populate_only: bool,
    /// Quiet: print nothing but errors.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Files to sync, each with an optional revision (default: the whole workspace at head).
    #[arg(value_name = "FILE[REV]")]
    pub files: Vec<String>,
}

/// How a file argument is written: shown under `keel help sync`.
pub const FILE_ARGUMENTS: &str = "\
File arguments:
  //depot/proj/...     a depot path; `...` matches any files below, `*` any name in one directory
  //WORKSPACE/dir/...  a path in the workspace's own view
  src/main.c, ./...    a local path under the workspace root (relative to the current directory);
                       a local directory means every file under it
  (none)               the whole workspace

Revisions (after a file argument, or alone: `keel sync @42` is the whole workspace at change 42):
  #3       the file's third revision          #head    the newest revision
  #have    the revision the workspace has     #none    no revision (#0): removes the file
  @42      as of change 42                     @LABEL   as tagged by label LABEL

Examples:
  keel sync                        everything in the workspace's view, at head
  keel sync //depot/proj/...@42    that directory as of change 42
  keel sync src/main.c#3           one file's third revision
  keel sync //depot/...@release1   the workspace as label release1 tags it
  keel sync //depot/old/...#none   remove that directory's files from the workspace";

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// At most this many changes.
    #[arg(short = 'm', value_name = "N")]
    pub max: Option<u32>,
    /// pending or submitted.
    #[arg(short = 's', value_name = "STATUS")]
    pub status: Option<StatusArg>,
    /// Changes by this user.
    #[arg(short = 'u', value_name = "USER")]
    pub user: Option<String>,
    /// Changes of this workspace.
    #[arg(short = 'c', value_name = "WORKSPACE")]
    pub workspace: Option<String>,
    /// Long output: each change's whole description, indented, under its line.
    #[arg(short = 'l')]
    pub long: bool,
    /// For each path given, the submitted changes after change N that touch it (newest
    /// first; -m limits each path), all in one call: a build machine's poll of many plans.
    #[arg(long, value_name = "N", conflicts_with_all = ["status", "user", "workspace"])]
    pub since: Option<u64>,
    /// Like --since, with each path's own N: FILE holds lines `FILESPEC N` (`-`: standard
    /// input; blank lines and lines starting with # are skipped).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["since", "status", "user", "workspace"])]
    pub since_file: Option<std::path::PathBuf>,
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Deliver the changes after this one first (default: only changes submitted from now on).
    #[arg(long, value_name = "N")]
    pub since: Option<u64>,
    /// Exit after this many changes.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Give up after this many failed reconnects in a row (each waits up to 5 s longer).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub retries: u32,
    /// Paths to watch (no revisions), depot or workspace syntax.
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// Summary only: no diffs.
    #[arg(short = 's')]
    pub summary: bool,
    /// Describe the change's shelved files instead.
    #[arg(short = 'S')]
    pub shelved: bool,
    pub change: u64,
}

#[derive(Debug, Args)]
pub struct FilesListArgs {
    /// All revisions, not just the head.
    #[arg(short = 'a')]
    pub all: bool,
    /// At most this many files.
    #[arg(short = 'm', value_name = "N")]
    pub max: Option<u32>,
    /// Include deleted head revisions.
    #[arg(short = 'e')]
    pub include_deleted: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DirsArgs {
    /// Also list directories whose every file is deleted (at the revision asked).
    #[arg(short = 'D')]
    pub include_deleted: bool,
    #[arg(required = true)]
    pub dirs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FilelogArgs {
    /// At most this many revisions per file.
    #[arg(short = 'm', value_name = "N")]
    pub max: Option<u32>,
    /// Follow history back through the files these were branched, copied or moved from.
    #[arg(short = 'i')]
    pub follow: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PrintArgs {
    /// Write the content to this file instead of stdout.
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Suppress the header line.
    #[arg(short = 'q')]
    pub quiet: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct Diff2Args {
    pub left: String,
    pub right: String,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Server data directory (else KEEL_ROOT, else ./.keel-data).
    #[arg(long, env = "KEEL_ROOT")]
    pub root: Option<PathBuf>,
    /// Address to listen on: HOST:PORT, or ssl:HOST:PORT to serve TLS (a bare PORT is
    /// 127.0.0.1:PORT, a HOST without a port gets 1666).
    #[arg(long, default_value = "127.0.0.1:1666")]
    pub listen: String,
    /// The configuration file (else KEEL_CONFIG, else ROOT/keel.toml when it exists); a file
    /// named here must exist. Packages install /etc/keel/keel.toml.
    #[arg(long, env = "KEEL_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// TLS certificate (PEM) for ssl: (overrides `tls_cert`; default ROOT/tls/cert.pem,
    /// generated on first start).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert (overrides `tls_key`).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Append one JSON line per file content access to FILE (overrides `audit_log`).
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Append one JSON line per ended command to FILE (overrides `command_log`; default
    /// ROOT/logs/commands.jsonl).
    #[arg(long, value_name = "FILE")]
    pub command_log: Option<PathBuf>,
    /// Serve Prometheus metrics over HTTP at http://HOST:PORT/metrics (overrides
    /// `metrics_listen`).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,
    /// Async worker threads (overrides `workers` in ROOT/keel.toml).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Idle reader connections kept open (overrides `store.reader_pool_size`).
    #[arg(long, value_name = "N")]
    pub readers: Option<usize>,
    /// Most long reads on low-priority threads of their own (overrides `long_read_threads`).
    #[arg(long, value_name = "N")]
    pub long_read_threads: Option<usize>,
    /// Bytes of the database file readers map into memory; 0 is off (overrides
    /// `store.reader_mmap_bytes`; an I/O error under a mapping kills the server).
    #[arg(long, value_name = "BYTES")]
    pub reader_mmap_bytes: Option<i64>,
    /// Print the configuration in effect (every knob, documented) as TOML and exit.
    #[arg(long)]
    pub print_config: bool,
    /// Serve as a read-only replica following the journal of the primary at HOST:PORT (or
    /// ssl:HOST:PORT, trusted with `keel trust` by the user running the replica).
    #[arg(long, value_name = "HOST:PORT")]
    pub replica_of: Option<String>,
    /// On a replica, send write commands on to the primary instead of refusing them.
    #[arg(long, requires = "replica_of")]
    pub forward_writes: bool,
    /// On a replica, the service user it authenticates to the primary as; its ticket is the
    /// tickets file's (KEEL_TICKETS or ~/.keel_tickets) for the primary's address.
    #[arg(long, value_name = "USER", requires = "replica_of")]
    pub service_user: Option<String>,
    /// Set the security level (0-4) at start; it is stored, like `keel configure set security=N`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=4))]
    pub security: Option<u8>,
    /// On a replica, when content is fetched from the primary: `all` before each change is
    /// applied, `on-demand` the first time a client needs it.
    #[arg(long, value_enum, default_value = "all", requires = "replica_of")]
    pub content: ReplicaContent,
    /// Also serve P4 clients (p4, P4Python, P4Java) at HOST:PORT, or ssl:HOST:PORT with the
    /// server's TLS certificate (overrides `p4_listen`).
    #[arg(long, value_name = "HOST:PORT")]
    pub p4_listen: Option<String>,
    /// Serve one P4 client connection on stdin and stdout and exit (for `rsh:` ports, as
    /// `P4PORT="rsh:keel serve --p4-stdio --root DIR"`); needs --root or KEEL_ROOT.
    #[arg(long, conflicts_with_all = ["p4_listen", "replica_of", "print_config"])]
    pub p4_stdio: bool,
}

/// `keel serve --content`: when a replica fetches content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplicaContent {
    All,
    OnDemand,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The Keel server behind the proxy (HOST:PORT, or ssl:HOST:PORT trusted with `keel trust`).
    #[arg(long)]
    pub target: String,
    /// Address to listen on (clients set KEEL_SERVER to it); ssl:HOST:PORT serves TLS.
    #[arg(long, default_value = "127.0.0.1:1667")]
    pub listen: String,
    /// Directory of the content cache (kept across restarts).
    #[arg(long, value_name = "DIR")]
    pub cache: PathBuf,
    /// Most bytes the cache keeps (overrides `cache_size_bytes`; default 10 GiB).
    #[arg(long, value_name = "BYTES")]
    pub cache_size: Option<u64>,
    /// Serve Prometheus metrics over HTTP at http://HOST:PORT/metrics (overrides
    /// `metrics_listen`).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,
    /// A TOML file of proxy knobs (`keel proxy --print-config` lists them).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the configuration in effect as TOML and exit.
    #[arg(long)]
    pub print_config: bool,
    /// The service user content fetches go to the target as; its ticket is the tickets file's
    /// (KEEL_TICKETS or ~/.keel_tickets) for the target's address. Without it, content is
    /// fetched as the client whose request needed it, with that client's ticket.
    #[arg(long, value_name = "USER")]
    pub service_user: Option<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum LabelCmd {
    /// Create a label.
    Create(LabelCreateArgs),
    /// Edit a label spec in $EDITOR (creates it when missing); only its owner may change it.
    Edit {
        name: String,
        /// Super users: change a label that is not yours, or a locked one.
        #[arg(short = 'f')]
        force: bool,
    },
    /// Print a label spec.
    Show { name: String },
    /// List labels.
    List,
    /// Delete a label: yours, and refused while it is locked.
    Delete {
        name: String,
        /// Super users: delete a label that is not yours, or a locked one.
        #[arg(short = 'f')]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct LabelCreateArgs {
    pub name: String,
    /// A depot path the label may hold, "-" to exclude (repeatable; default //depot/...).
    #[arg(long = "view", value_name = "LINE", allow_hyphen_values = true)]
    pub view: Vec<String>,
    /// Description.
    #[arg(
        short = 'd',
        long = "description",
        value_name = "DESC",
        allow_hyphen_values = true
    )]
    pub description: Option<String>,
    /// Lock the label: tag, labelsync, edit and delete are refused until it is unlocked.
    #[arg(long)]
    pub locked: bool,
    /// Make an automatic label of this change (`@N`) instead of a static one.
    #[arg(long, value_name = "@N")]
    pub revision: Option<String>,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    /// The label.
    #[arg(short = 'l', value_name = "LABEL")]
    pub label: String,
    /// Remove the files from the label.
    #[arg(short = 'd')]
    pub delete: bool,
    /// Preview only.
    #[arg(short = 'n')]
    pub preview: bool,
    #[arg(required = true)]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LabelsyncArgs {
    /// The label.
    #[arg(short = 'l', value_name = "LABEL")]
    pub label: String,
    /// Preview only.
    #[arg(short = 'n')]
    pub preview: bool,
    pub files: Vec<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum BranchCmd {
    /// Create a branch spec.
    Create(BranchCreateArgs),
    /// Edit a branch spec in $EDITOR (creates it when missing).
    Edit { name: String },
    /// Print a branch spec.
    Show { name: String },
    /// List branch specs.
    List,
    /// Delete a branch spec.
    Delete { name: String },
}

#[derive(Debug, Args)]
pub struct BranchCreateArgs {
    pub name: String,
    /// A view line, e.g. "//depot/main/... //depot/rel/..." (repeatable).
    #[arg(
        long = "view",
        value_name = "LINE",
        required = true,
        allow_hyphen_values = true
    )]
    pub view: Vec<String>,
    /// Description.
    #[arg(
        short = 'd',
        long = "description",
        value_name = "DESC",
        allow_hyphen_values = true
    )]
    pub description: Option<String>,
}

/// `changes -s`: which changes to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusArg {
    Pending,
    Submitted,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Deferred verbs are built only when parsed; this builds every one of them and runs clap's
    /// own consistency checks (duplicate flags, bad defaults, conflicting names) on each.
    #[test]
    fn every_verb_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
