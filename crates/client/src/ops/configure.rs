//! `configure set|unset|show`: the settings the server stores (security level, limits, ...).

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A server setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub name: String,
    pub value: String,
    /// The value is the default (it was never set, or was unset).
    pub is_default: bool,
    /// What the setting does.
    pub description: String,
}

/// What a `configure set` or `unset` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configured {
    pub name: String,
    /// The value now (after an unset: the default).
    pub value: String,
    /// Whether it held a value of its own before.
    pub was_set: bool,
}

async fn configure(
    conn: &Connection,
    name: &str,
    value: &str,
    unset: bool,
) -> Result<Configured, QueryError> {
    let reply = conn
        .reply(conn.client().configure(pb::ConfigureRequest {
            caller: conn.caller(),
            name: name.to_string(),
            value: value.to_string(),
            unset,
        }))
        .await?;
    Ok(Configured {
        name: reply.name,
        value: reply.value,
        was_set: reply.was_set,
    })
}

/// Sets server setting `name` to `value` (super users); the server checks both, naming
/// what is wrong.
pub async fn set_setting(
    conn: &Connection,
    name: &str,
    value: &str,
) -> Result<Configured, QueryError> {
    configure(conn, name, value, false).await
}

/// Returns setting `name` to its default (super users).
pub async fn unset_setting(conn: &Connection, name: &str) -> Result<Configured, QueryError> {
    configure(conn, name, "", true).await
}

/// Every server setting with its value, in name order.
pub async fn settings(conn: &Connection) -> Result<Records<Setting>, QueryError> {
    let stream = conn
        .reply(conn.client().list_settings(pb::ListSettingsRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |s| {
        Ok(Setting {
            name: s.name,
            value: s.value,
            is_default: s.is_default,
            description: s.description,
        })
    }))
}
