//! `keel serve`: runs the server crate with logging to stderr.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use tracing_subscriber::EnvFilter;

use crate::cli::ServeArgs;

pub async fn serve(args: &ServeArgs) -> Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let cwd = std::env::current_dir().context("cannot determine the current directory")?;
    let root = args
        .root
        .clone()
        .unwrap_or_else(|| PathBuf::from(".keel-data"));
    let root = if root.is_absolute() {
        root
    } else {
        cwd.join(root)
    };
    let shown = root.display().to_string();
    let options = keel_server::ServeOptions {
        root,
        listen: args.listen.clone(),
    };
    keel_server::serve(options, move |addr: std::net::SocketAddr| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "keel serve: listening on {addr} (root {shown})");
        let _ = stdout.flush();
    })
    .await
    .context("keel serve failed")?;
    Ok(())
}
