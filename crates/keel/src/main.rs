//! `keel`: the Keel command line (client verbs and `keel serve`).

mod allocator;
mod cli;
mod commands;
mod editor;
mod hints;
mod listing;
mod one_verb_parse;
mod output;
mod private_dir;
mod session;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The process starts without transparent huge pages and with a small first arena
    // (`allocator`'s load-time settings): a client command keeps the first so, a server gets
    // them back; every arena reserved from here on has mimalloc's default size.
    allocator::restore_arena_reserve();
    let cli = one_verb_parse::parse();
    let json = cli.json;
    // A server, replica, proxy or restore creates only files its own account may read.
    if matches!(
        &cli.command,
        cli::Command::Serve(_)
            | cli::Command::Proxy(_)
            | cli::Command::Admin(commands::backup::AdminCmd::Restore(_))
    ) {
        private_dir::restrict_umask();
    }
    if cli.command.long_running() {
        allocator::release_huge_pages();
    }
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
    // The server's configuration sizes its runtime, so it is read before the runtime starts.
    let serve_config = match &cli.command {
        cli::Command::Serve(args) => {
            let config = match commands::serve::config(args) {
                Ok(config) => config,
                Err(e) => {
                    output::report_error(json, &hints::chain_text(&e));
                    return ExitCode::FAILURE;
                }
            };
            if args.print_config {
                return match commands::serve::print_config(&config, json) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        output::report_error(json, &hints::chain_text(&e));
                        ExitCode::FAILURE
                    }
                };
            }
            // Before the runtime starts: the process has one thread yet.
            allocator::set_purge_delay(config.allocator_purge_delay_ms);
            builder.worker_threads(config.workers);
            Some(config)
        }
        _ => None,
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            output::report_error(json, &format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let serves = matches!(
        &cli.command,
        cli::Command::Serve(_) | cli::Command::Proxy(_)
    );
    let result = runtime.block_on(commands::run(cli, serve_config));
    if serves {
        // A server or proxy has stopped within its grace period: work it could not finish
        // (a blocking call still running) is not waited for.
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    }
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
