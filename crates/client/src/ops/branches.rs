//! `branch show|list|create|edit|delete`: branch specs, the views `integrate -b` follows.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A branch spec as the server stores it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BranchSpec {
    pub name: String,
    pub owner: String,
    pub description: String,
    /// `unlocked` or `locked`.
    pub options: String,
    /// View lines, `//depot/main/... //depot/rel/...`.
    pub view: Vec<String>,
    /// Seconds since the epoch the spec was last saved (0: never).
    pub updated: u64,
}

impl BranchSpec {
    fn from_wire(b: pb::Branch) -> BranchSpec {
        BranchSpec {
            name: b.name,
            owner: b.owner,
            description: b.description,
            options: b.options,
            view: b.view,
            updated: b.updated,
        }
    }

    fn into_wire(self) -> pb::Branch {
        pb::Branch {
            name: self.name,
            owner: self.owner,
            description: self.description,
            options: self.options,
            view: self.view,
            updated: self.updated,
        }
    }
}

/// Branch `name`'s spec. `form`: it is shown to be read or edited as a form, so the server's
/// form-out triggers run on it.
pub async fn branch(conn: &Connection, name: &str, form: bool) -> Result<BranchSpec, QueryError> {
    let got = conn
        .reply(conn.client().get_branch(pb::GetBranchRequest {
            caller: conn.caller(),
            name: name.to_string(),
            form,
        }))
        .await?;
    Ok(BranchSpec::from_wire(got))
}

/// Every branch spec, in name order.
pub async fn branches(conn: &Connection) -> Result<Records<BranchSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().list_branches(pb::ListBranchesRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |b| Ok(BranchSpec::from_wire(b))))
}

/// Saves `spec` (`create_only`: refused if it exists) and returns it as stored.
pub async fn save_branch(
    conn: &Connection,
    spec: BranchSpec,
    create_only: bool,
) -> Result<BranchSpec, QueryError> {
    let saved = conn
        .reply(conn.client().save_branch(pb::SaveBranchRequest {
            caller: conn.caller(),
            branch: Some(spec.into_wire()),
            create_only,
        }))
        .await?;
    Ok(BranchSpec::from_wire(saved))
}

/// Deletes branch spec `name`.
pub async fn delete_branch(conn: &Connection, name: &str) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_branch(pb::DeleteBranchRequest {
        caller: conn.caller(),
        name: name.to_string(),
    }))
    .await?;
    Ok(())
}
