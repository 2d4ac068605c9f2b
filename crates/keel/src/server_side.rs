//! `keel-server`, the executable that holds every command: how it runs the ones that run a
//! server or work on its files (`serve`, `proxy`, `bench`, `admin restore`), and how `keel`
//! hands it every command line that is not a quick read (`quick_read`).
//!
//! `keel` hands a line over by `exec`: the same process id, arguments, environment and
//! descriptors, so a service manager, a test or a script sees `keel serve` or `keel edit` as
//! if `keel` ran it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::commands::{backup, bench, proxy, serve};
use crate::{allocator, exit_code, hints, output, private_dir};

/// The server executable's file name, beside `keel`'s own.
pub const SERVER_EXECUTABLE: &str = "keel-server";

/// Runs `cli`, a server-side command, in this process.
pub fn run(cli: Cli) -> ExitCode {
    let json = cli.globals.json;
    // A server, replica, proxy or restore creates only files its own account may read.
    if matches!(
        &cli.command,
        Command::Serve(_) | Command::Proxy(_) | Command::Admin(backup::AdminCmd::Restore(_))
    ) {
        private_dir::restrict_umask();
    }
    if cli.command.long_running() {
        allocator::release_huge_pages();
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // The server's configuration sizes its runtime, so it is read before the runtime starts.
    let serve_config = match &cli.command {
        Command::Serve(args) => {
            let config = match serve::config(args) {
                Ok(config) => config,
                Err(e) => {
                    output::report_error(json, &hints::chain_text(&e));
                    return ExitCode::FAILURE;
                }
            };
            if args.print_config {
                return exit_code(json, serve::print_config(&config, json));
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
    let serves = matches!(&cli.command, Command::Serve(_) | Command::Proxy(_));
    let result = runtime.block_on(dispatch(cli, serve_config));
    if serves {
        // A server or proxy has stopped within its grace period: work it could not finish
        // (a blocking call still running) is not waited for.
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    }
    exit_code(json, result)
}

/// The server-side command's implementation.
async fn dispatch(cli: Cli, serve_config: Option<keel_server::ServerConfig>) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => {
            let config = match serve_config {
                Some(config) => config,
                None => serve::config(&args)?,
            };
            serve::serve(&args, config).await
        }
        Command::Bench(args) => {
            bench::run(&args, cli.globals.server.as_deref(), cli.globals.json).await
        }
        Command::Proxy(args) => proxy::run(&args, cli.globals.json).await,
        Command::Admin(backup::AdminCmd::Restore(args)) => {
            let mut out = output::Out::new(cli.globals.json);
            out.quiet = cli.globals.quiet;
            backup::restore(&out, args)
        }
        other => anyhow::bail!("{other:?} is not a server-side command"),
    }
}

/// Becomes `keel-server` with this process's own arguments (in `keel`): returns only when that
/// cannot be done, with the reason reported (as JSON with `json`).
pub fn exec(json: bool) -> ExitCode {
    // keel-server decides about huge pages itself; the flag would survive the exec.
    allocator::release_huge_pages();
    let error = match server_executable() {
        Ok(path) => {
            let mut args = std::env::args_os();
            let arg0 = args.next().unwrap_or_else(|| OsString::from("keel"));
            let error = std::process::Command::new(&path)
                .arg0(arg0)
                .args(args)
                .exec();
            format!("cannot start {}: {error}", path.display())
        }
        Err(reason) => reason,
    };
    output::report_error(json, &error);
    ExitCode::FAILURE
}

/// `keel-server` beside this executable, or why there is none.
fn server_executable() -> Result<PathBuf, String> {
    let me = std::env::current_exe()
        .map_err(|e| format!("cannot find this executable's directory: {e}"))?;
    let path = me.with_file_name(SERVER_EXECUTABLE);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: keel answers the quick reads (files, fstat, filelog, changes, \
             describe, dirs, opened, have, where, info) itself and runs every other command in \
             {SERVER_EXECUTABLE}, installed beside it (`cargo install --path crates/keel` and \
             the Debian package install both)",
            path.display()
        ))
    }
}
