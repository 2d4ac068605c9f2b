//! `counter`/`key` and `counters`/`keys`: named values scripts keep on the server (read, set,
//! delete, atomic increment, compare-and-set), such as the change a CI job built last.

use keel_proto::v1 as pb;
use keel_proto::v1::update_counter_request::Op;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// Which of the two name spaces: counters (some reserved by the server, such as `change`) or
/// keys (the caller's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Counter,
    Key,
}

impl Space {
    fn wire(self) -> i32 {
        match self {
            Space::Counter => pb::CounterSpace::Counter as i32,
            Space::Key => pb::CounterSpace::Key as i32,
        }
    }
}

/// A named value; `"0"` when none is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    pub name: String,
    pub value: String,
}

/// How to change a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterOp {
    Set(String),
    /// Remove it: it reads as `"0"` again.
    Delete,
    /// Add one (a number; absent counts as 0).
    Increment,
    /// Set it to `to` only if it holds `from` now (absent counts as `"0"`).
    CompareAndSet {
        from: String,
        to: String,
    },
}

/// A change of one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterUpdate {
    pub space: Space,
    pub name: String,
    pub op: CounterOp,
    /// Change a counter the server reserves (super users).
    pub force: bool,
}

/// What an update did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterUpdated {
    pub name: String,
    /// The value now; `None` when it was deleted.
    pub value: Option<String>,
    /// The value before (`"0"` when none was stored).
    pub previous: String,
}

/// The value of `name` (`"0"` when none is stored).
pub async fn counter(conn: &Connection, space: Space, name: &str) -> Result<Counter, QueryError> {
    let got = conn
        .reply(conn.client().get_counter(pb::GetCounterRequest {
            caller: conn.caller(),
            space: space.wire(),
            name: name.to_string(),
        }))
        .await?;
    Ok(Counter {
        name: got.name,
        value: got.value,
    })
}

/// Changes one value, atomically.
pub async fn update_counter(
    conn: &Connection,
    update: CounterUpdate,
) -> Result<CounterUpdated, QueryError> {
    let op = match update.op {
        CounterOp::Set(value) => Op::Set(value),
        CounterOp::Delete => Op::Delete(true),
        CounterOp::Increment => Op::Increment(true),
        CounterOp::CompareAndSet { from, to } => Op::CompareAndSet(pb::CompareAndSet { from, to }),
    };
    let done = conn
        .reply(conn.client().update_counter(pb::UpdateCounterRequest {
            caller: conn.caller(),
            space: update.space.wire(),
            name: update.name,
            op: Some(op),
            force: update.force,
        }))
        .await?;
    Ok(CounterUpdated {
        name: done.name,
        value: (!done.deleted).then_some(done.value),
        previous: done.previous,
    })
}

/// The stored values whose names match `filter` (`*` matches any run of characters; `None`:
/// all), in name order, at most `max` (0: all).
pub async fn counters(
    conn: &Connection,
    space: Space,
    filter: Option<&str>,
    max: u64,
) -> Result<Records<Counter>, QueryError> {
    let stream = conn
        .reply(conn.client().list_counters(pb::ListCountersRequest {
            caller: conn.caller(),
            space: space.wire(),
            filter: filter.unwrap_or_default().to_string(),
            max,
        }))
        .await?;
    Ok(Records::new(conn, stream, |c| {
        Ok(Counter {
            name: c.name,
            value: c.value,
        })
    }))
}
