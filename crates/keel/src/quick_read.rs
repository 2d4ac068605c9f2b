//! The read commands scripts and build machines repeat (`files`, `fstat`, `filelog`, `changes`,
//! `describe`, `dirs`, `opened`, `have`, `where`, `info`), answered by the `keel` executable
//! itself; every other command line it hands to `keel-server`, which holds all of Keel.
//!
//! With a process per call, a short read costs about what starting its image costs: the pages
//! the loader relocates (every pointer in the image's read-only data), the code it touches and
//! the command-line tree it builds. `keel` links these verbs and nothing else, so it starts as
//! a few-megabyte program does, not as the whole client.
//!
//! A line that parses here is the line the full command line parses: the options before the
//! verb and each verb's arguments are the same definitions (`cli`), and a test holds each verb's
//! name, aliases and arguments equal to the full command's. Anything that does not parse here
//! (another verb, `--help`, a mistake) goes to `keel-server`, which prints what it always did.

use std::cell::{Cell, OnceCell};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Args, Command, Parser, Subcommand};

use crate::cli::{
    ChangesArgs, DescribeArgs, DirsArgs, FilelogArgs, FilesArgs, FilesListArgs, FilesRequiredArgs,
    Globals, OpenedArgs, VERSION,
};
use keel_client::{Settings, config};
use keel_tls::ServerAddr;

use crate::commands::{admin, browse, open, sync};
use crate::name_service::NameService;
use crate::session::{Session, current_dir, overrides};
use crate::{exit_code, one_verb_parse, output, server_side};

/// The quick reads' command line: the full one's options and these verbs only.
#[derive(Debug, Parser)]
#[command(name = "keel", version = VERSION, disable_help_subcommand = true)]
struct QuickCli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    verb: QuickVerb,
}

/// The verbs `keel` answers itself: each reads, makes a few calls and prints records as they
/// come (the full command line's `Command::few_calls`).
#[derive(Debug, Subcommand)]
enum QuickVerb {
    Info,
    Opened(OpenedArgs),
    Where(FilesArgs),
    Have(FilesArgs),
    Changes(ChangesArgs),
    Describe(DescribeArgs),
    Files(FilesListArgs),
    Dirs(DirsArgs),
    Fstat(FilesRequiredArgs),
    Filelog(FilelogArgs),
}

/// The verbs of [`QuickVerb`], as the command line spells them.
const QUICK_VERBS: [&str; 10] = [
    "info", "opened", "where", "have", "changes", "describe", "files", "dirs", "fstat", "filelog",
];

/// `keel`'s `main`: a quick read runs here, any other line in `keel-server`.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let json = args.iter().any(|arg| arg == "--json");
    // Any other verb goes on at once, before the quick verbs' command line is built: this
    // process's start is all a command that is not a quick read pays for it.
    let options = Globals::augment_args(Command::new("keel"));
    if !one_verb_parse::verb_token(&options, &args).is_some_and(|verb| QUICK_VERBS.contains(&verb))
        && !args.iter().any(|arg| arg == "--version" || arg == "-V")
    {
        return server_side::exec(json);
    }
    let cli = match QuickCli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.kind() == ErrorKind::DisplayVersion => {
            // `keel --version` answers even without keel-server beside it.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(_) => return server_side::exec(json),
    };
    let json = cli.globals.json;
    let resolved = current_dir().and_then(|cwd| Ok((settings(&cli.globals, &cwd)?, cwd)));
    let (settings, cwd) = match resolved {
        Ok((Some(settings), cwd)) => (settings, cwd),
        // Found otherwise than the system would: keel-server, linked with its C library, asks.
        Ok((None, _)) => return server_side::exec(json),
        Err(e) => return exit_code(json, Err(e)),
    };
    // A few calls on the main thread (`lib::run` for the full command line's reasons); the
    // process gives its memory back by exiting.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            output::report_error(json, &format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    exit_code(json, runtime.block_on(run(cli, settings, cwd)))
}

/// This run's settings, or `None` when this `keel` is linked with musl and would find the
/// server's host or the user otherwise than the system's C library (`name_service`).
fn settings(globals: &Globals, cwd: &Path) -> anyhow::Result<Option<Settings>> {
    let musl = cfg!(target_env = "musl");
    let name_service = OnceCell::new();
    let name_service = || name_service.get_or_init(NameService::of_this_machine);
    let hand_on = Cell::new(false);
    let os_user = || {
        let user = config::os_user();
        if musl && (user.is_none() || !name_service().finds_user_alike()) {
            hand_on.set(true);
        }
        user
    };
    let resolved = Settings::resolve_asking(&overrides(globals), cwd, &os_user);
    if hand_on.get() {
        return Ok(None);
    }
    let settings = resolved?;
    let server = ServerAddr::parse(&settings.server);
    if musl
        && !name_service().finds_host_alike(server.host(), &|| {
            std::fs::read_to_string("/etc/hosts").unwrap_or_default()
        })
    {
        return Ok(None);
    }
    Ok(Some(settings))
}

/// Runs the one quick read.
async fn run(cli: QuickCli, settings: Settings, cwd: PathBuf) -> anyhow::Result<()> {
    let mut s = Session::connect_resolved(&cli.globals, settings, cwd).await?;
    match cli.verb {
        QuickVerb::Info => admin::info(&mut s).await,
        QuickVerb::Opened(args) => open::opened(&mut s, args).await,
        QuickVerb::Where(args) => sync::where_(&mut s, args).await,
        QuickVerb::Have(args) => sync::have(&mut s, args).await,
        QuickVerb::Changes(args) => browse::changes(&mut s, args).await,
        QuickVerb::Describe(args) => browse::describe(&mut s, args).await,
        QuickVerb::Files(args) => browse::files(&mut s, args).await,
        QuickVerb::Dirs(args) => browse::dirs(&mut s, args).await,
        QuickVerb::Fstat(args) => browse::fstat(&mut s, args).await,
        QuickVerb::Filelog(args) => browse::filelog(&mut s, args).await,
    }
}

#[cfg(test)]
mod tests {
    use clap::{Command, CommandFactory, Parser};

    use super::QuickCli;
    use crate::cli::Cli;

    /// Each argument's whole definition (names, action, values, defaults, help), in a fixed
    /// order (a propagated global option lands in a verb's list where its root was built).
    fn arguments(command: &Command) -> Vec<String> {
        let mut arguments: Vec<String> = command
            .get_arguments()
            .map(|arg| format!("{arg:?}"))
            .collect();
        arguments.sort_unstable();
        arguments
    }

    fn aliases(command: &Command) -> Vec<&str> {
        let mut aliases: Vec<&str> = command.get_all_aliases().collect();
        aliases.sort_unstable();
        aliases
    }

    #[test]
    fn the_quick_command_line_is_the_full_ones_for_its_verbs() {
        let mut full = Cli::command();
        full.build();
        let mut quick = QuickCli::command();
        quick.build();
        assert_eq!(
            arguments(&quick),
            arguments(&full),
            "the options before the verb"
        );
        assert_eq!(quick.get_version(), full.get_version());
        let mut verbs = 0;
        for verb in quick.get_subcommands() {
            let twin = full
                .find_subcommand(verb.get_name())
                .unwrap_or_else(|| panic!("`keel {}` is not a verb of keel", verb.get_name()));
            assert_eq!(
                aliases(verb),
                aliases(twin),
                "aliases of {}",
                verb.get_name()
            );
            assert_eq!(
                arguments(verb),
                arguments(twin),
                "arguments of {}",
                verb.get_name()
            );
            assert!(!verb.has_subcommands() && !twin.has_subcommands());
            verbs += 1;
        }
        assert_eq!(verbs, 10);
        let names: Vec<&str> = quick.get_subcommands().map(Command::get_name).collect();
        assert_eq!(
            names,
            super::QUICK_VERBS,
            "QUICK_VERBS names the quick verbs"
        );
    }

    #[test]
    fn a_line_the_quick_command_line_parses_is_parsed_alike_by_the_full_one() {
        let lines: [&[&str]; 6] = [
            &["keel", "-s", "127.0.0.1:1", "fstat", "//depot/a", "--json"],
            &["keel", "--json", "files", "-a", "//depot/..."],
            &[
                "keel",
                "-u",
                "ci",
                "changes",
                "-m",
                "5",
                "-s",
                "submitted",
                "//depot/x/...",
            ],
            &["keel", "filelog", "-m", "5", "//depot/a#3"],
            &["keel", "-w", "ws", "-q", "opened", "-a"],
            &["keel", "describe", "-s", "12"],
        ];
        for line in lines {
            let quick = QuickCli::try_parse_from(line).expect("quick parse");
            let full = Cli::try_parse_from(line).expect("full parse");
            let verb = format!("{:?}", quick.verb);
            assert!(
                format!("{:?}", full.command).contains(&verb),
                "{line:?}: {verb} against {:?}",
                full.command
            );
            assert_eq!(
                format!("{:?}", quick.globals),
                format!("{:?}", full.globals)
            );
        }
    }

    #[test]
    fn help_and_other_verbs_do_not_parse_here() {
        for line in [
            &["keel", "--help"][..],
            &["keel", "fstat", "--help"],
            &["keel", "help", "fstat"],
            &["keel", "edit", "a.c"],
            &["keel", "serve"],
            &["keel"],
            &["keel", "fstat"],
        ] {
            let error = QuickCli::try_parse_from(line).expect_err("handed on");
            assert_ne!(
                error.kind(),
                clap::error::ErrorKind::DisplayVersion,
                "{line:?}"
            );
        }
    }
}
