//! The one "connect + caller" helper every client command uses.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use keel_client::paths;
use keel_client::{Connection, Overrides, Settings, WorkspaceCtx};

use crate::cli::Globals;
use crate::output::Out;

/// A connected invocation: settings, connection, output mode and the current directory.
pub struct Session {
    pub settings: Settings,
    pub conn: Connection,
    pub out: Out,
    pub cwd: PathBuf,
    workspace: Option<Arc<WorkspaceCtx>>,
    /// `--root-moved-ok`: write workspace files outside the tree keel runs in.
    root_moved_ok: bool,
}

/// Marker error: the problem was already printed; just exit with status 1.
#[derive(Debug)]
pub struct AlreadyReported;

impl std::fmt::Display for AlreadyReported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("errors were reported")
    }
}

impl std::error::Error for AlreadyReported {}

/// The directory keel runs in.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().context("cannot determine the current directory")
}

/// The settings the options before the verb give (`-s`, `-u`, `-w`).
pub fn overrides(cli: &Globals) -> Overrides {
    Overrides {
        server: cli.server.clone(),
        user: cli.user.clone(),
        workspace: cli.workspace.clone(),
    }
}

impl Session {
    /// Resolves settings and connects.
    pub async fn connect(cli: &Globals) -> Result<Session> {
        let cwd = current_dir()?;
        let settings = Settings::resolve(&overrides(cli), &cwd)?;
        Session::connect_resolved(cli, settings, cwd).await
    }

    /// Connects with settings already resolved in `cwd`.
    pub async fn connect_resolved(
        cli: &Globals,
        settings: Settings,
        cwd: PathBuf,
    ) -> Result<Session> {
        let mut conn = Connection::connect(&settings).await?;
        conn.set_force(cli.override_owner);
        Ok(Session {
            settings,
            conn,
            out: Out {
                quiet: cli.quiet,
                verbose: cli.verbose,
                ..Out::new(cli.json)
            },
            cwd,
            workspace: None,
            root_moved_ok: cli.root_moved_ok,
        })
    }

    /// The caller's workspace, fetched once.
    pub async fn workspace(&mut self) -> Result<Arc<WorkspaceCtx>> {
        if let Some(ws) = &self.workspace {
            return Ok(ws.clone());
        }
        let ws = Arc::new(WorkspaceCtx::fetch(&self.conn).await?);
        self.workspace = Some(ws.clone());
        Ok(ws)
    }

    /// The caller's workspace for a command that writes its files: refused when its Root is
    /// not the directory keel runs in nor above it (or above the `.keel` file's directory),
    /// unless `--root-moved-ok` was given.
    pub async fn writing_workspace(&mut self) -> Result<Arc<WorkspaceCtx>> {
        let ws = self.workspace().await?;
        if !self.root_moved_ok {
            let config_dir = self
                .settings
                .config_file
                .as_deref()
                .and_then(|f| f.parent());
            ws.check_runs_inside(&self.cwd, config_dir)?;
        }
        Ok(ws)
    }

    /// The ignore files this invocation honours (`P4IGNORE`, `KEEL_IGNORE`, the `.keel` file's
    /// setting, else `.p4ignore`), or none when `honour` is false (a command's `-I`).
    pub fn ignore_config(&self, honour: bool) -> keel_client::ignore_rules::IgnoreConfig {
        use keel_client::ignore_rules::IgnoreConfig;
        if !honour {
            return IgnoreConfig::none();
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        IgnoreConfig::from_setting(self.settings.ignore.as_deref(), home.as_deref())
    }

    /// Asks to act as a super user on another user's workspace or change (a command's `-f`).
    pub fn override_owner(&mut self) {
        self.conn.set_force(true);
    }

    /// Converts file arguments to server syntax: `//` paths pass through; local paths (and
    /// bare `@N`/`#rev`) become `//WS/...`; an existing local directory means everything in it.
    pub async fn file_args(&mut self, args: &[String]) -> Result<Vec<String>> {
        if args.iter().all(|a| paths::is_depot_syntax(a)) {
            return Ok(args.to_vec());
        }
        let ws = self.workspace().await?;
        args.iter()
            .map(|arg| {
                let (path, rev) = paths::split_rev(arg);
                let arg = if !paths::is_depot_syntax(path)
                    && !path.is_empty()
                    && !paths::has_wildcards(path)
                    && self.cwd.join(path).is_dir()
                {
                    format!("{}/...{rev}", path.trim_end_matches('/'))
                } else {
                    arg.clone()
                };
                ws.arg(&arg, &self.cwd).map_err(|e| match e {
                    keel_client::Error::OutsideRoot { path, .. } => not_under_root(&path, &ws),
                    other => other.into(),
                })
            })
            .collect()
    }

    /// File arguments of a command that defaults to the current directory (`status`,
    /// `reconcile`, `where`): none means `...` under it, which must lie inside the workspace
    /// root. A copied working copy whose `.keel` names the original workspace is refused here
    /// instead of silently acting on the original's root.
    pub async fn file_args_or_cwd(&mut self, args: &[String]) -> Result<Vec<String>> {
        if !args.is_empty() {
            return self.file_args(args).await;
        }
        let ws = self.workspace().await?;
        if paths::relative_to_root(&self.cwd, &ws.root).is_err() {
            return Err(not_under_root(&self.cwd, &ws));
        }
        self.file_args(&["...".to_string()]).await
    }

    /// Like [`Session::file_args`], defaulting to the whole workspace when `args` is empty.
    pub async fn file_args_or_all(&mut self, args: &[String]) -> Result<Vec<String>> {
        if args.is_empty() {
            Ok(vec![self.workspace().await?.all_files()])
        } else {
            self.file_args(args).await
        }
    }
}

/// Perforce's refusal of a local path outside the workspace root, naming the workspace.
fn not_under_root(path: &std::path::Path, ws: &WorkspaceCtx) -> anyhow::Error {
    anyhow::anyhow!(
        "Path {} is not under client's root {} (workspace {}).",
        path.display(),
        ws.root.display(),
        ws.name
    )
}
