//! `keel`: the Keel command line (client verbs and `keel serve`).

mod cli;
mod commands;
mod editor;
mod listing;
mod output;
mod session;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let json = cli.json;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if matches!(cli.command, cli::Command::Serve(_)) {
        builder.worker_threads(server_workers());
    }
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            output::report_error(json, &format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is::<session::AlreadyReported>() {
                output::report_error(json, &format!("{e:#}"));
            }
            ExitCode::FAILURE
        }
    }
}

/// The server's async worker threads: twice the cores (at least four), unless
/// `TOKIO_WORKER_THREADS` says otherwise. With one worker per core, a submit's RPC task can wait
/// behind other tasks on its worker (a long read's HTTP/2 framing, an inline read); with more
/// workers than cores the kernel time-slices them instead (see BENCHMARKS.md, Design choices).
fn server_workers() -> usize {
    std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            (2 * cores).max(4)
        })
}
