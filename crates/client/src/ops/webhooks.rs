//! `webhooks`: the table of URLs the server POSTs each matching submitted change to, and each
//! webhook's delivery state.

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;

/// One webhook and how its deliveries stand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Webhook {
    pub name: String,
    /// The depot pattern a change's files must match.
    pub path: String,
    pub url: String,
    /// Empty: payloads are not signed.
    pub secret: String,
    /// The last change delivered (or the last before the webhook was made).
    pub delivered: u64,
    /// Failed attempts at the next change.
    pub attempts: u32,
    /// Deliveries that succeeded.
    pub sent: u64,
    /// Attempts that failed.
    pub failures: u64,
    /// Seconds since the epoch of the last attempt; 0: never.
    pub last_attempt: u64,
    /// `200 OK`, or why the last attempt failed.
    pub last_status: String,
}

fn from_wire(table: pb::WebhooksTable) -> Vec<Webhook> {
    table
        .webhooks
        .into_iter()
        .map(|w| Webhook {
            name: w.name,
            path: w.path,
            url: w.url,
            secret: w.secret,
            delivered: w.delivered,
            attempts: w.attempts,
            sent: w.sent,
            failures: w.failures,
            last_attempt: w.last_attempt.max(0) as u64,
            last_status: w.last_status,
        })
        .collect()
}

/// The webhooks table with each webhook's delivery state (super users).
pub async fn webhooks(conn: &Connection) -> Result<Vec<Webhook>, QueryError> {
    let table = conn
        .reply(conn.client().get_webhooks(pb::GetWebhooksRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(from_wire(table))
}

/// Replaces the webhooks table (super users) with `lines` as a form holds them
/// (`NAME PATH-PATTERN URL [SECRET]`); the server refuses the whole table over a bad line,
/// naming it. Returns the table as stored.
pub async fn save_webhooks(
    conn: &Connection,
    lines: Vec<String>,
) -> Result<Vec<Webhook>, QueryError> {
    let table = conn
        .reply(conn.client().save_webhooks(pb::SaveWebhooksRequest {
            caller: conn.caller(),
            lines,
        }))
        .await?;
    Ok(from_wire(table))
}
