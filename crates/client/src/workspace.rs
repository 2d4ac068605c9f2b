//! A workspace as the client uses it: name, root, parsed view and options, and path mapping.

use std::path::{Path, PathBuf};

use keel_core::{View, WorkspaceOptions};
use keel_proto::v1::{FileRecord, FilesRequest, GetWorkspaceRequest, OpenedRequest, Workspace};

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::paths;
use crate::stream::collect;

/// The caller's workspace, fetched from the server.
pub struct WorkspaceCtx {
    pub spec: Workspace,
    pub name: String,
    pub root: PathBuf,
    pub view: View,
    pub options: WorkspaceOptions,
}

/// `path` with symbolic links resolved when it exists, else lexically normalised (`.` and
/// `..` folded), so a root not created yet still compares.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

impl WorkspaceCtx {
    /// Fetches the caller's workspace spec (error when none is configured or it does not exist).
    pub async fn fetch(conn: &Connection) -> Result<WorkspaceCtx> {
        if conn.workspace().is_empty() {
            return Err(Error::NoWorkspace);
        }
        let spec = conn
            .reply(conn.client().get_workspace(GetWorkspaceRequest {
                caller: conn.caller(),
                name: conn.workspace().to_string(),
                form: false,
            }))
            .await?;
        WorkspaceCtx::from_spec(spec)
    }

    /// Builds the context from a spec, parsing its view and options.
    pub fn from_spec(spec: Workspace) -> Result<WorkspaceCtx> {
        let bad = |reason: String| Error::BadWorkspace {
            name: spec.name.clone(),
            reason,
        };
        let view = View::parse_lines(&spec.view).map_err(|e| bad(e.to_string()))?;
        let options = WorkspaceOptions::parse(&spec.options).map_err(|e| bad(e.to_string()))?;
        if spec.root.is_empty() {
            return Err(bad("has no root".into()));
        }
        Ok(WorkspaceCtx {
            name: spec.name.clone(),
            root: PathBuf::from(&spec.root),
            view,
            options,
            spec,
        })
    }

    /// Refuses writing workspace files when the Root is not `cwd` nor above it (nor above
    /// `config_dir`, the directory of the `.keel` file that named the workspace): a Root
    /// changed behind the user's back must not redirect a sync's writes to another tree.
    pub fn check_runs_inside(&self, cwd: &Path, config_dir: Option<&Path>) -> Result<()> {
        let root = canonical(&self.root);
        let inside = |dir: &Path| canonical(dir).starts_with(&root);
        if inside(cwd) || config_dir.is_some_and(inside) {
            return Ok(());
        }
        Err(Error::RootElsewhere {
            workspace: self.name.clone(),
            root: self.root.clone(),
            cwd: cwd.to_path_buf(),
        })
    }

    /// `//WS/...`: every file in the workspace.
    pub fn all_files(&self) -> String {
        format!("//{}/...", self.name)
    }

    /// `//WS/rel` for a client-relative path.
    pub fn workspace_path(&self, client_file: &str) -> String {
        format!("//{}/{}", self.name, client_file)
    }

    /// Converts a file argument (local path or `//` syntax) to what the server expects.
    pub fn arg(&self, arg: &str, cwd: &Path) -> Result<String> {
        paths::to_workspace_syntax(arg, cwd, &self.name, &self.root)
    }

    /// The safe local path of a server-supplied client file.
    pub fn local(&self, client_file: &str) -> Result<PathBuf> {
        paths::client_file_to_local(&self.root, client_file)
    }

    /// A [`LocalResolver`](crate::paths::LocalResolver) for this workspace: the same check as
    /// [`WorkspaceCtx::local`], done once per directory for a command that handles many files.
    pub fn resolver(&self) -> paths::LocalResolver {
        paths::LocalResolver::new(&self.root)
    }

    /// The local path for display, without the safety check (for `where` and messages).
    pub fn display_local(&self, client_file: &str) -> PathBuf {
        client_file
            .split('/')
            .fold(self.root.clone(), |path, segment| path.join(segment))
    }

    /// The client-relative path of a depot path through the view.
    pub fn client_of_depot(&self, depot_file: &str) -> Option<String> {
        let right = self.view.translate(depot_file)?;
        right
            .strip_prefix(&format!("//{}/", self.name))
            .map(String::from)
    }

    /// The depot path of a client-relative path through the view.
    pub fn depot_of_client(&self, client_file: &str) -> Option<String> {
        self.view.translate_back(&self.workspace_path(client_file))
    }

    /// A record's client file: the server's `client_file`, else derived from the view.
    pub fn client_file_of(&self, record: &FileRecord) -> Option<String> {
        if !record.client_file.is_empty() {
            return Some(record.client_file.trim_start_matches('/').to_string());
        }
        self.client_of_depot(&record.depot_file)
    }

    /// The have list for `files` (empty = the whole workspace).
    pub async fn have(&self, conn: &Connection, files: Vec<String>) -> Result<Vec<FileRecord>> {
        let files = if files.is_empty() {
            vec![self.all_files()]
        } else {
            files
        };
        let stream = conn
            .reply(conn.client().have(FilesRequest {
                caller: conn.caller(),
                files,
                ..Default::default()
            }))
            .await?;
        collect(conn, stream).await
    }

    /// Files opened in this workspace, optionally restricted to `files` and/or one change.
    pub async fn opened(
        &self,
        conn: &Connection,
        files: Vec<String>,
        change: Option<u64>,
    ) -> Result<Vec<FileRecord>> {
        let stream = conn
            .reply(conn.client().opened(OpenedRequest {
                caller: conn.caller(),
                files,
                all_workspaces: false,
                user: String::new(),
                change: change.unwrap_or(0),
                filter_change: change.is_some(),
                content_only: false,
            }))
            .await?;
        collect(conn, stream).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rooted_at(root: &str) -> WorkspaceCtx {
        WorkspaceCtx::from_spec(Workspace {
            name: "ws".into(),
            root: root.into(),
            view: vec!["//depot/... //ws/...".into()],
            ..Workspace::default()
        })
        .expect("spec")
    }

    #[test]
    fn writes_only_when_the_root_is_the_directory_or_above_it() {
        // Paths that do not exist compare as written, `..` folded.
        let ws = rooted_at("/nonexistent-keel-test/ws");
        let cases = [
            ("/nonexistent-keel-test/ws", None, true),
            ("/nonexistent-keel-test/ws/deep/er", None, true),
            ("/nonexistent-keel-test", None, false),
            ("/nonexistent-keel-test/ws2", None, false),
            ("/nonexistent-keel-test/other/../ws/x", None, true),
            ("/elsewhere", Some("/nonexistent-keel-test/ws/sub"), true),
            ("/elsewhere", Some("/nonexistent-keel-test"), false),
        ];
        for (cwd, config_dir, ok) in cases {
            let got = ws.check_runs_inside(Path::new(cwd), config_dir.map(Path::new));
            assert_eq!(got.is_ok(), ok, "{cwd} {config_dir:?}: {got:?}");
        }
        let moved = rooted_at("/nonexistent-keel-test/ws/../evil");
        let err = moved
            .check_runs_inside(Path::new("/nonexistent-keel-test/ws"), None)
            .expect_err("moved");
        let text = err.to_string();
        assert!(text.contains("/nonexistent-keel-test/ws/../evil"), "{text}");
        assert!(text.contains("--root-moved-ok"), "{text}");
    }
}
