//! `watch`: a subscription to the submitted changes touching some paths, delivered as they
//! commit, in change order. A lost connection is waited out (bounded back-off, a bounded
//! number of reconnects) and the subscription resumes after the last change delivered, so a
//! subscriber sees every change once, with no gaps.

use std::time::Duration;

use keel_proto::v1 as pb;
use tonic::codec::Streaming;

use super::records::{ChangeSummary, Revision};
use crate::connect::Connection;

/// Longest wait between two reconnects.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The wait before the first reconnect; each failure in a row adds as much again.
const BACKOFF_STEP: Duration = Duration::from_millis(200);

/// What to subscribe to.
#[derive(Clone, Debug)]
pub struct WatchQuery {
    /// Depot paths without revisions (`//depot/app/...`).
    pub paths: Vec<String>,
    /// Deliver the changes after this one; `None`: only changes submitted from now on.
    pub since: Option<u64>,
    /// Reconnects in a row to try before giving up.
    pub retries: u32,
}

impl WatchQuery {
    /// The changes submitted from now on under `paths`, reconnecting up to 10 times in a row.
    pub fn new(paths: Vec<String>) -> WatchQuery {
        WatchQuery {
            paths,
            since: None,
            retries: 10,
        }
    }
}

/// A submitted change and its files that the subscription's paths match (those the caller
/// may list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchedChange {
    pub change: ChangeSummary,
    pub files: Vec<Revision>,
    /// More files matched than are listed.
    pub more_files: bool,
}

/// What [`Watch::next`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// The next change.
    Change(WatchedChange),
    /// The connection was lost; the next call waits `wait`, then resumes after change `after`.
    Reconnecting { wait: Duration, after: u64 },
}

/// Why a subscription ended.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The server refused the subscription (rights, a bad path): retrying cannot help.
    #[error(transparent)]
    Refused(crate::Error),
    /// The connection failed `retries + 1` times in a row; `source` is the last failure.
    #[error("{source} (gave up after {retries} reconnects)")]
    GaveUp {
        retries: u32,
        #[source]
        source: crate::Error,
    },
    /// The server ended the subscription (it stopped) `retries + 1` times in a row.
    #[error("the server ended the subscription; gave up after {retries} reconnects")]
    Ended { retries: u32 },
}

impl WatchError {
    /// The connection's or server's error inside, if any (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            WatchError::Refused(e) | WatchError::GaveUp { source: e, .. } => Some(e),
            WatchError::Ended { .. } => None,
        }
    }
}

/// A subscription: call [`Watch::next`] for each change.
pub struct Watch {
    conn: Connection,
    paths: Vec<String>,
    /// `None`: from now on; after the first message, the last change delivered.
    since: Option<u64>,
    retries: u32,
    /// Failures in a row.
    failures: u32,
    /// The wait owed before the next reconnect.
    wait: Option<Duration>,
    stream: Option<Streaming<pb::WatchMessage>>,
    /// A change [`Watch::open`] read, delivered by the next [`Watch::next`].
    pending: Option<WatchedChange>,
}

impl Watch {
    /// A subscription on `conn` (many may share one connection); nothing is sent until
    /// [`Watch::open`] or the first [`Watch::next`].
    pub fn new(conn: &Connection, query: WatchQuery) -> Watch {
        Watch {
            conn: conn.clone(),
            paths: query.paths,
            since: query.since,
            retries: query.retries,
            failures: 0,
            wait: None,
            stream: None,
            pending: None,
        }
    }

    /// Opens the subscription now and returns once the server has fixed where it starts: a
    /// change submitted after this returns is delivered.
    pub async fn open(&mut self) -> Result<(), WatchError> {
        let mut stream = self.request().await.map_err(WatchError::Refused)?;
        match stream.message().await {
            Ok(Some(message)) => {
                self.since = Some(message.since);
                // The first message names no change; should one come, it is delivered next.
                self.pending = WatchedChange::from_wire(message);
            }
            Ok(None) => return Err(WatchError::Ended { retries: 0 }),
            Err(status) => return Err(WatchError::Refused(self.conn.status(status))),
        }
        self.stream = Some(stream);
        Ok(())
    }

    /// The last change delivered (or where the subscription started), once known.
    pub fn since(&self) -> Option<u64> {
        self.since
    }

    /// The next change, or a note that the connection was lost and is being re-made.
    pub async fn next(&mut self) -> Result<WatchEvent, WatchError> {
        if let Some(change) = self.pending.take() {
            return Ok(WatchEvent::Change(change));
        }
        loop {
            if let Some(wait) = self.wait.take() {
                tokio::time::sleep(wait).await;
            }
            let stream = match &mut self.stream {
                Some(stream) => stream,
                None => match self.request().await {
                    Ok(stream) => self.stream.insert(stream),
                    Err(e) => return self.lost(Some(e)),
                },
            };
            match stream.message().await {
                Ok(Some(message)) => {
                    self.failures = 0;
                    self.since = Some(message.since);
                    if let Some(change) = WatchedChange::from_wire(message) {
                        return Ok(WatchEvent::Change(change));
                    }
                }
                Ok(None) => {
                    self.stream = None;
                    return self.lost(None);
                }
                Err(status) => {
                    self.stream = None;
                    let e = self.conn.status(status);
                    return self.lost(Some(e));
                }
            }
        }
    }

    async fn request(&self) -> Result<Streaming<pb::WatchMessage>, crate::Error> {
        self.conn
            .client()
            .watch(pb::WatchRequest {
                caller: self.conn.caller(),
                files: self.paths.clone(),
                since: self.since.unwrap_or(0),
                from_now: self.since.is_none(),
            })
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| self.conn.status(s))
    }

    /// A refusal is final; a lost connection or a stopping server is waited out.
    fn lost(&mut self, error: Option<crate::Error>) -> Result<WatchEvent, WatchError> {
        if let Some(e) = &error
            && !retryable(e)
        {
            return Err(WatchError::Refused(error.expect("just matched")));
        }
        self.failures += 1;
        if self.failures > self.retries {
            return Err(match error {
                Some(source) => WatchError::GaveUp {
                    retries: self.retries,
                    source,
                },
                None => WatchError::Ended {
                    retries: self.retries,
                },
            });
        }
        let wait = (BACKOFF_STEP * self.failures).min(MAX_BACKOFF);
        self.wait = Some(wait);
        Ok(WatchEvent::Reconnecting {
            wait,
            after: self.since.unwrap_or(0),
        })
    }
}

/// Failures a reconnect may cure: the server unreachable or going away.
fn retryable(error: &crate::Error) -> bool {
    use tonic::Code;
    match error {
        crate::Error::Connect { .. } => true,
        crate::Error::Server { code, .. } => matches!(
            code,
            Code::Unavailable | Code::Unknown | Code::Cancelled | Code::Aborted
        ),
        _ => false,
    }
}

impl WatchedChange {
    /// The message's change, if it carries one.
    fn from_wire(message: pb::WatchMessage) -> Option<WatchedChange> {
        Some(WatchedChange {
            change: ChangeSummary::from_wire(message.change.as_ref()?),
            files: message.files.iter().map(Revision::in_change).collect(),
            more_files: message.more_files,
        })
    }
}
