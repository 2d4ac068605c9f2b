//! `triggers`: the table of commands the server runs around submits and spec forms.

use keel_core::{TriggerKind, TriggerLine};
use keel_proto::v1 as pb;

use crate::connect::Connection;

/// Why reading or saving the triggers table failed.
#[derive(Debug, thiserror::Error)]
pub enum TriggersError {
    /// The server could not be reached, or refused (rights, a bad line).
    #[error(transparent)]
    Call(#[from] crate::Error),
    /// The server sent a line of a type this client does not know.
    #[error("the server sent an unknown trigger type {0:?}")]
    UnknownType(String),
}

impl TriggersError {
    /// The connection's or server's error inside, if that is what it is (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            TriggersError::Call(e) => Some(e),
            TriggersError::UnknownType(_) => None,
        }
    }
}

fn from_wire(table: pb::TriggersTable) -> Result<Vec<TriggerLine>, TriggersError> {
    table
        .lines
        .into_iter()
        .map(|l| {
            let kind = TriggerKind::parse(&l.r#type)
                .ok_or_else(|| TriggersError::UnknownType(l.r#type.clone()))?;
            Ok(TriggerLine {
                name: l.name,
                kind,
                path: l.path,
                command: l.command,
            })
        })
        .collect()
}

/// The triggers table, in table order (super users).
pub async fn triggers(conn: &Connection) -> Result<Vec<TriggerLine>, TriggersError> {
    let table = conn
        .reply(conn.client().get_triggers(pb::GetTriggersRequest {
            caller: conn.caller(),
        }))
        .await?;
    from_wire(table)
}

/// Replaces the triggers table (super users) with `lines` as a form holds them
/// (`NAME TYPE PATH "COMMAND"`); the server refuses the whole table over a bad line, naming
/// it. Returns the table as stored.
pub async fn save_triggers(
    conn: &Connection,
    lines: Vec<String>,
) -> Result<Vec<TriggerLine>, TriggersError> {
    let table = conn
        .reply(conn.client().save_triggers(pb::SaveTriggersRequest {
            caller: conn.caller(),
            lines,
        }))
        .await?;
    from_wire(table)
}
