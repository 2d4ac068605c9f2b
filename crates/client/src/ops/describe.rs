//! `describe`: one change, its files and (unless a summary is asked) their differences.

use keel_core::ChangeNumber;
use keel_proto::v1 as pb;
use keel_proto::v1::describe_message::Body;

use super::records::{ChangeSummary, QueryError, Records, Revision};
use crate::connect::Connection;

/// Which change `describe` shows, and how much of it.
#[derive(Clone, Debug)]
pub struct DescribeQuery {
    pub change: ChangeNumber,
    /// Only the change and its files: no differences.
    pub summary: bool,
    /// The change's shelved files rather than its submitted or opened ones.
    pub shelved: bool,
}

impl DescribeQuery {
    /// The whole change `change`: its files and their differences.
    pub fn new(change: u64) -> DescribeQuery {
        DescribeQuery {
            change: ChangeNumber(change),
            summary: false,
            shelved: false,
        }
    }
}

/// What `describe` streams, in this order: the change, its files, the differences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescribeItem {
    Change(ChangeSummary),
    File(Revision),
    /// One file's unified difference.
    Diff(String),
}

/// Describes a change as `query` asks.
pub async fn describe(
    conn: &Connection,
    query: DescribeQuery,
) -> Result<Records<DescribeItem>, QueryError> {
    let stream = conn
        .reply(conn.client().describe(pb::DescribeRequest {
            caller: conn.caller(),
            change: query.change.0,
            summary: query.summary,
            shelved: query.shelved,
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |message| {
        Some(match message.body? {
            Body::Change(change) => DescribeItem::Change(ChangeSummary::from_wire(&change)),
            Body::File(file) => DescribeItem::File(Revision::in_change(&file)),
            Body::Diff(diff) => DescribeItem::Diff(diff),
        })
    }))
}
