//! `workspace show|list|create|edit|delete`: workspace specs (name, owner, root, options,
//! view) read, listed, saved and deleted.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A workspace spec as the server stores it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSpec {
    pub name: String,
    pub owner: String,
    /// Empty: usable from any host.
    pub host: String,
    /// The local directory holding the workspace's files, absolute.
    pub root: String,
    pub description: String,
    /// The options line (`noallwrite noclobber ...`).
    pub options: String,
    /// View lines, `//depot/... //NAME/...`.
    pub view: Vec<String>,
    /// Seconds since the epoch the spec was last saved (0: never).
    pub updated: u64,
    /// Seconds since the epoch the workspace was last used (0: never).
    pub accessed: u64,
}

impl WorkspaceSpec {
    fn from_wire(w: pb::Workspace) -> WorkspaceSpec {
        WorkspaceSpec {
            name: w.name,
            owner: w.owner,
            host: w.host,
            root: w.root,
            description: w.description,
            options: w.options,
            view: w.view,
            updated: w.updated,
            accessed: w.accessed,
        }
    }

    fn into_wire(self) -> pb::Workspace {
        pb::Workspace {
            name: self.name,
            owner: self.owner,
            host: self.host,
            root: self.root,
            description: self.description,
            options: self.options,
            view: self.view,
            updated: self.updated,
            accessed: self.accessed,
        }
    }
}

/// Workspace `name`'s spec. `form`: it is shown to be read or edited as a form, so the
/// server's form-out triggers run on it.
pub async fn workspace(
    conn: &Connection,
    name: &str,
    form: bool,
) -> Result<WorkspaceSpec, QueryError> {
    let got = conn
        .reply(conn.client().get_workspace(pb::GetWorkspaceRequest {
            caller: conn.caller(),
            name: name.to_string(),
            form,
        }))
        .await?;
    Ok(WorkspaceSpec::from_wire(got))
}

/// Every workspace the caller may list, in name order.
pub async fn workspaces(conn: &Connection) -> Result<Records<WorkspaceSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().list_workspaces(pb::ListWorkspacesRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |w| {
        Ok(WorkspaceSpec::from_wire(w))
    }))
}

/// Saves `spec` (creating or replacing it; `create_only`: refused if it exists) and returns
/// it as the server stored it. The root directory is not made here.
///
/// A provisioning script making a build agent's workspace:
///
/// ```no_run
/// # async fn example(conn: keel_client::Connection) -> Result<(), keel_client::ops::QueryError> {
/// use keel_client::ops::{self, WorkspaceSpec};
///
/// let spec = WorkspaceSpec {
///     name: "agent-7".into(),
///     owner: "ci".into(),
///     root: "/build/agent-7".into(),
///     description: "Build agent 7.".into(),
///     options: "allwrite clobber normdir nomodtime".into(),
///     view: vec!["//depot/app/... //agent-7/app/...".into()],
///     ..Default::default()
/// };
/// let saved = ops::save_workspace(&conn, spec, false).await?;
/// println!("workspace {} saved", saved.name);
/// # Ok(())
/// # }
/// ```
pub async fn save_workspace(
    conn: &Connection,
    spec: WorkspaceSpec,
    create_only: bool,
) -> Result<WorkspaceSpec, QueryError> {
    let saved = conn
        .reply(conn.client().save_workspace(pb::SaveWorkspaceRequest {
            caller: conn.caller(),
            workspace: Some(spec.into_wire()),
            create_only,
        }))
        .await?;
    Ok(WorkspaceSpec::from_wire(saved))
}

/// Deletes workspace `name` (refused while it has opened files).
pub async fn delete_workspace(conn: &Connection, name: &str) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_workspace(pb::DeleteWorkspaceRequest {
        caller: conn.caller(),
        name: name.to_string(),
    }))
    .await?;
    Ok(())
}
