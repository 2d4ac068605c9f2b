//! `review` and `reviews`: what a review daemon reads — the submitted changes after its
//! counter, with their authors' addresses, and the users who review some files.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use super::users::UserSpec;
use crate::connect::Connection;

/// A submitted change to send to its reviewers, with its author's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewedChange {
    pub change: u64,
    pub user: String,
    pub email: String,
    pub full_name: String,
}

/// The submitted changes from `change` on (`Some`), or after the value of counter `counter`
/// (`Some`), in change order; neither: every submitted change. (Setting the counter is
/// [`super::update_counter`]'s.)
pub async fn review(
    conn: &Connection,
    change: Option<u64>,
    counter: Option<&str>,
) -> Result<Records<ReviewedChange>, QueryError> {
    let stream = conn
        .reply(conn.client().review(pb::ReviewRequest {
            caller: conn.caller(),
            change: change.unwrap_or(0),
            counter: counter.unwrap_or_default().to_string(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |c| {
        Ok(ReviewedChange {
            change: c.change,
            user: c.user,
            email: c.email,
            full_name: c.full_name,
        })
    }))
}

/// The users whose `Reviews` paths cover any of `files` (depot paths) or, with `change`, any
/// file of that submitted change; neither: every user who reviews anything.
pub async fn reviews(
    conn: &Connection,
    change: Option<u64>,
    files: Vec<String>,
) -> Result<Records<UserSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().reviews(pb::ReviewsRequest {
            caller: conn.caller(),
            change: change.unwrap_or(0),
            files,
        }))
        .await?;
    Ok(Records::new(conn, stream, |u| Ok(UserSpec::from_wire(u))))
}
