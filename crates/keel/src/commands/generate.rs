//! `keel generate`: shell completions and man pages written from the clap definition of the
//! command line itself, so what a packager ships cannot drift from what the binary accepts.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{CommandFactory, Subcommand};
use clap_complete::Shell;

use crate::cli::Cli;

/// What to generate.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum GenerateCmd {
    /// The completion script for SHELL, on standard output.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: Shell,
    },
    /// `keel.1` and one `keel-VERB.1` page per verb, written into DIR.
    Man {
        /// The directory to write the pages into (created if missing).
        dir: PathBuf,
    },
}

/// Writes `command`'s page and, recursively, its visible verbs' (`keel-admin-checkpoint.1`);
/// hidden commands and clap's own `help` verbs get none.
fn write_pages(command: &clap::Command, dir: &std::path::Path) -> Result<()> {
    let name = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name())
        .to_string();
    let path = dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .with_context(|| format!("cannot render the man page {name}"))?;
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    for sub in command.get_subcommands() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            write_pages(sub, dir)?;
        }
    }
    Ok(())
}

/// Writes what `what` asks for.
pub fn run(what: &GenerateCmd) -> Result<()> {
    let mut command = Cli::command();
    match what {
        GenerateCmd::Completions { shell } => {
            clap_complete::generate(*shell, &mut command, "keel", &mut std::io::stdout().lock());
        }
        GenerateCmd::Man { dir } => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            command.build();
            write_pages(&command, dir)?;
        }
    }
    Ok(())
}
