//! Subscriptions (`Watch`): each submitted change touching a subscriber's paths, as it
//! commits, in change order, from the change after the one it names.
//!
//! An idle subscription is one parked task waiting on a `watch` channel that every submit
//! bumps (the service's commit listener): no thread and no polling per subscriber. Woken, it
//! reads the changes after the last one it sent from a snapshot, a bounded batch at a time,
//! and sends them through a bounded channel; a slow subscriber is caught up from the store as
//! it takes messages, so the server never holds more for it than one batch and the channel.
//! **Invariant:** the channel is marked seen *before* each read, and a submit bumps it only
//! after its commit is visible, so no change is missed between a read and the next wait.

use crate::convert;
use crate::stopping::end_on_stop;
use crate::streams::ResponseStream;
use keel_core::ChangeNumber;
use keel_proto::v1 as pb;
use keel_service::{Caller, Service, WatchLimits, WatchedChange, command};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};
use tonic::Status;

/// What a subscription needs besides its request: the store's answers, the commit channel,
/// its limits and the server's stop flag.
pub(crate) struct Subscriptions {
    service: Arc<Service>,
    commits: watch::Receiver<Committed>,
    limits: WatchLimits,
    buffer: usize,
    stopping: watch::Receiver<bool>,
}

impl Subscriptions {
    /// Subscriptions woken through `commits`, which the server bumps after every submit
    /// (`commit_channel`) and, on a replica, after every change it applies.
    pub(crate) fn new(
        service: Arc<Service>,
        commits: watch::Receiver<Committed>,
        limits: WatchLimits,
        buffer: usize,
        stopping: watch::Receiver<bool>,
    ) -> Subscriptions {
        Subscriptions {
            service,
            commits,
            limits,
            buffer: buffer.max(1),
            stopping,
        }
    }

    /// Wakes the subscriptions through `commits` from now on.
    pub(crate) fn wake_with(&mut self, commits: watch::Receiver<Committed>) {
        self.commits = commits;
    }

    /// A receiver of the commit channel (the webhooks' dispatcher waits on it too).
    pub(crate) fn commits(&self) -> watch::Receiver<Committed> {
        self.commits.clone()
    }

    /// Ends every subscription when `flag` is set (the server stops).
    pub(crate) fn stop_with(&mut self, flag: watch::Receiver<bool>) {
        self.stopping = flag;
    }

    /// Starts a subscription for `who` to `files`; its stream ends when the client goes away,
    /// the server stops, or a read fails (the error is its last item).
    pub(crate) fn subscribe(
        &self,
        who: Caller,
        files: Vec<String>,
        since: Option<u64>,
    ) -> ResponseStream<pb::WatchMessage> {
        let (tx, rx) = mpsc::channel(self.buffer);
        let run = Run {
            service: self.service.clone(),
            commits: self.commits.clone(),
            limits: self.limits,
            who,
            files,
            tx,
        };
        tokio::spawn(run.deliver(since));
        end_on_stop(
            Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)),
            self.stopping.clone(),
        )
    }
}

/// What the commit channel holds: how many commits it was told of, and the depot paths of
/// the last one when it was small (`None`: many, or not known, as on a replica).
#[derive(Clone, Debug, Default)]
pub(crate) struct Committed {
    pub(crate) count: u64,
    pub(crate) paths: Option<Arc<[String]>>,
}

impl Committed {
    /// Counts one more commit, touching `paths` when known.
    pub(crate) fn bump(&mut self, paths: Option<Arc<[String]>>) {
        self.count = self.count.wrapping_add(1);
        self.paths = paths;
    }
}

/// The channel every submit bumps: registered as `service`'s commit listener.
pub(crate) fn commit_channel(service: &Service) -> Arc<watch::Sender<Committed>> {
    let (tx, _) = watch::channel(Committed::default());
    let tx = Arc::new(tx);
    let bump = tx.clone();
    if !service.on_commit(Box::new(move |_, paths| {
        let paths: Option<Arc<[String]>> =
            paths.map(|p| p.iter().map(|d| d.as_str().to_string()).collect());
        bump.send_modify(|c| c.bump(paths));
    })) {
        tracing::warn!(
            "a commit listener was already registered: watch subscriptions and webhooks will not wake on submits"
        );
    }
    tx
}

/// One subscription's task.
struct Run {
    service: Arc<Service>,
    commits: watch::Receiver<Committed>,
    limits: WatchLimits,
    who: Caller,
    files: Vec<String>,
    tx: mpsc::Sender<Result<pb::WatchMessage, Status>>,
}

impl Run {
    async fn deliver(mut self, since: Option<u64>) {
        // Marked seen before the first read: a submit from here on wakes the wait below.
        self.commits.borrow_and_update();
        let since = match since {
            Some(n) => ChangeNumber(n),
            None => {
                let (svc, who) = (self.service.clone(), self.who.clone());
                match blocking(move || svc.last_submitted(&who)).await {
                    Ok(n) => n,
                    Err(status) => {
                        let _ = self.tx.send(Err(status)).await;
                        return;
                    }
                }
            }
        };
        // Paths that cannot be watched (a bad pattern, no workspace for a local path) fail
        // the subscription before it says it started.
        let (svc, who, files) = (self.service.clone(), self.who.clone(), self.files.clone());
        if let Err(status) = blocking(move || svc.watch_scopes(&who, &files)).await {
            let _ = self.tx.send(Err(status)).await;
            return;
        }
        let start = pb::WatchMessage {
            since: since.0,
            ..Default::default()
        };
        if self.tx.send(Ok(start)).await.is_err() {
            return;
        }
        let mut since = since;
        loop {
            let mut seen = self.commits.borrow_and_update().count;
            let (svc, who, files) = (self.service.clone(), self.who.clone(), self.files.clone());
            // Where the paths can select files, for skipping commits elsewhere unread.
            let scopes = match blocking(move || svc.watch_scopes(&who, &files)).await {
                Ok(scopes) => scopes,
                Err(status) => {
                    let _ = self.tx.send(Err(status)).await;
                    return;
                }
            };
            let (svc, who, files, limits) = (
                self.service.clone(),
                self.who.clone(),
                self.files.clone(),
                self.limits,
            );
            let batch =
                match blocking(move || svc.watched_changes(&who, &files, since, limits)).await {
                    Ok(batch) => batch,
                    Err(status) => {
                        let _ = self.tx.send(Err(status)).await;
                        return;
                    }
                };
            let full = batch.len() >= limits.changes.max(1);
            for watched in batch {
                since = watched.change.change;
                // Waits while the subscriber's queue is full: it is behind.
                if self.tx.send(Ok(message(watched, since))).await.is_err() {
                    return;
                }
            }
            if full {
                continue;
            }
            // Wait for a commit this subscription may care about: one right after the last
            // seen whose paths are known and all outside the scopes is skipped unread.
            loop {
                tokio::select! {
                    changed = self.commits.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                    () = self.tx.closed() => return,
                }
                let now = self.commits.borrow_and_update().clone();
                let elsewhere = now.count == seen.wrapping_add(1)
                    && now.paths.as_ref().is_some_and(|paths| {
                        !paths
                            .iter()
                            .any(|p| scopes.iter().any(|scope| scope.contains(p)))
                    });
                if !elsewhere {
                    break;
                }
                seen = now.count;
            }
        }
    }
}

/// Runs a store read on the blocking pool; a service error becomes the stream's status.
async fn blocking<T: Send + 'static>(
    read: impl FnOnce() -> Result<T, keel_service::ServiceError> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(read).await {
        Ok(result) => result.map_err(convert::status),
        Err(e) => Err(Status::internal(format!("a watch read failed: {e}"))),
    }
}

fn message(watched: WatchedChange, since: ChangeNumber) -> pb::WatchMessage {
    pb::WatchMessage {
        change: Some(convert::change(watched.change)),
        files: watched.files.into_iter().map(convert::file).collect(),
        more_files: watched.more_files,
        since: since.0,
    }
}

/// `Changes` with `since` (`changes --since`): for each path, the submitted changes after its
/// number, newest first, in one call; each reply names its path by `since_index`.
pub(crate) fn changes_since(
    streams: &crate::streams::Streams,
    svc: Arc<Service>,
    who: Caller,
    req: pb::ChangesRequest,
) -> Result<tonic::Response<ResponseStream<pb::Change>>, Status> {
    if !req.files.is_empty()
        || !req.user.is_empty()
        || !req.workspace.is_empty()
        || req.status != pb::ChangeStatus::Unspecified as i32
    {
        return Err(Status::invalid_argument(
            "changes --since lists submitted changes per path: give no other file arguments, -u, -c or -s with it",
        ));
    }
    let specs: Vec<keel_service::SinceSpec> = req
        .since
        .into_iter()
        .map(|s| keel_service::SinceSpec {
            filespec: s.file,
            since: ChangeNumber(s.since),
        })
        .collect();
    let max = req.max;
    Ok(tonic::Response::new(streams.read(
        command::CHANGES,
        false,
        move |sink| {
            svc.changes_since(&who, &specs, max, &mut |index, change| {
                let mut wire = convert::change(change);
                wire.since_index = u32::try_from(index).unwrap_or(u32::MAX);
                sink.send(wire)
            })
        },
    )))
}
