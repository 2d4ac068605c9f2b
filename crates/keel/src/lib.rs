//! The Keel command line, shared by its two executables: `keel`, which answers the quick reads
//! itself (`quick_read`) and hands every other command line to `keel-server` beside it; and
//! `keel-server`, which runs every command in process. `keel` links only the quick reads, so a
//! script's or build machine's short read starts a small image.

#[doc(hidden)]
pub mod allocator;
mod cli;
mod commands;
mod editor;
mod hints;
mod listing;
mod name_service;
mod one_verb_parse;
mod output;
mod private_dir;
mod quick_read;
mod server_side;
mod session;

use std::process::ExitCode;

// The tests of this library start as an executable does (mimalloc, the load-time settings).
#[cfg(test)]
process_start!();

/// `keel`'s `main`: a quick read runs in this process, any other line in `keel-server`.
pub fn client_main() -> ExitCode {
    quick_read::main()
}

/// `keel-server`'s `main`: every command runs in this process.
pub fn server_main() -> ExitCode {
    // The process starts without transparent huge pages and with a small first arena
    // (`allocator`'s load-time settings): a client command keeps the first so, a server gets
    // them back; every arena reserved from here on has mimalloc's default size.
    allocator::restore_arena_reserve();
    let cli = one_verb_parse::parse();
    if cli.command.server_side() {
        return server_side::run(cli);
    }
    run_client(cli)
}

/// Runs a command line that is not server-side.
fn run_client(cli: cli::Cli) -> ExitCode {
    let json = cli.globals.json;
    // A command that makes a few calls runs on the main thread alone: starting worker threads
    // would cost it more than they could save.
    // A process this short gives its memory back by exiting: the allocator returning freed
    // ranges to the system one `madvise` at a time on the way out is work the exit redoes. A
    // workspace scan (`status`, `reconcile`) frees its caches' tens of megabytes last of all.
    // Before the runtime starts: the process has one thread yet.
    let scans = matches!(
        &cli.command,
        cli::Command::Client(cli::ClientCommand::Status(_) | cli::ClientCommand::Reconcile(_))
    );
    if cli.command.few_calls() || scans {
        allocator::set_purge_delay(-1);
    }
    let mut builder = if cli.command.few_calls() {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            output::report_error(json, &format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    exit_code(json, runtime.block_on(commands::run(cli)))
}

/// The exit status of a command's result, its error reported first.
fn exit_code(json: bool, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is::<session::AlreadyReported>() {
                output::report_error(json, &hints::with_hint(&e));
            }
            ExitCode::FAILURE
        }
    }
}
