//! Webhooks: after each submit the server POSTs every webhook whose path the change touches
//! (`payload.rs`, `post.rs`), in change order per webhook, retrying with back-off.
//!
//! One task serves the whole table. It wakes on a submit (the same commit channel as `watch`
//! subscriptions), on a save of the table, or when a retry is due; it never runs inside a
//! submit, so a slow or absent receiver never delays one. **Invariant (at-least-once):** a
//! webhook's state records the last change delivered, and only a 2xx answer moves it, in the
//! store; after a restart delivery resumes from there, so a change is posted once or more,
//! never skipped. Receivers tell repeats apart by `X-Keel-Delivery`.

mod payload;
mod post;

use keel_core::{WebhookLine, check_url};
use keel_service::Service;
use keel_store::WebhookStateRow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// Most changes one webhook is sent in a row before the others get their turn.
const TURN: usize = 32;

/// Delivery counters for the metrics.
#[derive(Default)]
pub(crate) struct WebhookStats {
    pub(crate) delivered: AtomicU64,
    pub(crate) failed: AtomicU64,
    /// Webhooks waiting to retry a failed delivery now.
    pub(crate) retrying: AtomicU64,
}

/// The dispatcher's knobs (`ServerConfig::webhook_*`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WebhookLimits {
    pub(crate) timeout: Duration,
    pub(crate) retry_min: Duration,
    pub(crate) retry_max: Duration,
    pub(crate) max_files: usize,
}

/// The dispatcher, before it runs.
pub(crate) struct Dispatcher {
    pub(crate) service: Arc<Service>,
    pub(crate) commits: watch::Receiver<crate::api_watch::Committed>,
    /// Poked when the table is saved.
    pub(crate) saved: Arc<Notify>,
    pub(crate) stats: Arc<WebhookStats>,
    pub(crate) limits: WebhookLimits,
    /// The server's address, named in payloads.
    pub(crate) server: String,
    pub(crate) stopping: watch::Receiver<bool>,
}

impl Dispatcher {
    /// Runs until the server stops.
    pub(crate) async fn run(mut self) {
        let mut retry_at: HashMap<String, Instant> = HashMap::new();
        loop {
            self.commits.borrow_and_update();
            let service = self.service.clone();
            let table = match tokio::task::spawn_blocking(move || service.webhook_table()).await {
                Ok(Ok(table)) => table,
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "cannot read the webhooks table");
                    Vec::new()
                }
                Err(e) => {
                    tracing::error!(error = %e, "reading the webhooks table failed");
                    Vec::new()
                }
            };
            retry_at.retain(|name, _| table.iter().any(|(l, _)| l.name == *name));
            let mut wake: Option<Instant> = None;
            for (line, state) in table {
                let now = Instant::now();
                if let Some(&at) = retry_at.get(&line.name)
                    && at > now
                {
                    wake = Some(wake.map_or(at, |w| w.min(at)));
                    continue;
                }
                match self.serve(&line, state).await {
                    Turn::Done => {
                        retry_at.remove(&line.name);
                    }
                    Turn::More => {
                        retry_at.remove(&line.name);
                        wake = Some(now);
                    }
                    Turn::RetryAfter(delay) => {
                        let at = Instant::now() + delay;
                        retry_at.insert(line.name.clone(), at);
                        wake = Some(wake.map_or(at, |w| w.min(at)));
                    }
                }
            }
            self.stats
                .retrying
                .store(retry_at.len() as u64, Ordering::Relaxed);
            let sleep = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = self.commits.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = self.saved.notified() => {}
                () = sleep => {}
                () = crate::stopping::stopped(self.stopping.clone()) => return,
            }
        }
    }

    /// Sends `line` the changes it is owed, up to a turn's worth.
    async fn serve(&self, line: &WebhookLine, mut state: WebhookStateRow) -> Turn {
        for _ in 0..TURN {
            let (service, hook, after, max) = (
                self.service.clone(),
                line.clone(),
                state.delivered,
                self.limits.max_files,
            );
            let next =
                tokio::task::spawn_blocking(move || service.webhook_next(&hook, after, max)).await;
            let watched = match next {
                Ok(Ok(Some(watched))) => watched,
                Ok(Ok(None)) => return Turn::Done,
                Ok(Err(e)) => return self.failed(line, state, e.to_string()).await,
                Err(e) => return self.failed(line, state, e.to_string()).await,
            };
            let change = watched.change.change;
            let body = payload::body(&line.name, &self.server, &watched);
            let mut headers = vec![
                ("x-keel-event", "change-submitted".to_string()),
                (
                    "x-keel-delivery",
                    payload::delivery_id(&line.name, change.0),
                ),
            ];
            if let Some(secret) = &line.secret {
                headers.push(("x-keel-signature", payload::signature(secret, &body)));
            }
            let outcome = match check_url(&line.url) {
                Ok(url) => post::post(&url, &headers, body, self.limits.timeout).await,
                Err(why) => Err(format!("URL '{}': {why}", line.url)),
            };
            match outcome {
                Ok(status) => {
                    state.delivered = change;
                    state.attempts = 0;
                    state.sent += 1;
                    state.last_attempt = now_secs();
                    state.last_status = status;
                    self.stats.delivered.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(webhook = %line.name, change = change.0, "webhook delivered");
                    if !self.record(line, &state).await {
                        return Turn::RetryAfter(self.limits.retry_min);
                    }
                }
                Err(why) => return self.failed(line, state, why).await,
            }
        }
        Turn::More
    }

    async fn failed(&self, line: &WebhookLine, mut state: WebhookStateRow, why: String) -> Turn {
        state.attempts = state.attempts.saturating_add(1);
        state.failures += 1;
        state.last_attempt = now_secs();
        tracing::warn!(webhook = %line.name, attempts = state.attempts, reason = %why, "webhook delivery failed");
        state.last_status = why;
        self.stats.failed.fetch_add(1, Ordering::Relaxed);
        let delay = backoff(self.limits, state.attempts);
        self.record(line, &state).await;
        Turn::RetryAfter(delay)
    }

    /// Stores `state`; false (logged) when the store refused.
    async fn record(&self, line: &WebhookLine, state: &WebhookStateRow) -> bool {
        let (service, name, state) = (self.service.clone(), line.name.clone(), state.clone());
        match tokio::task::spawn_blocking(move || service.record_webhook(&name, state)).await {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                tracing::error!(webhook = %line.name, error = %e, "cannot record a webhook's state");
                false
            }
            Err(e) => {
                tracing::error!(webhook = %line.name, error = %e, "recording a webhook's state failed");
                false
            }
        }
    }
}

/// What a webhook's turn ended with.
enum Turn {
    /// Nothing more is owed.
    Done,
    /// More is owed: come back at once, after the others.
    More,
    /// The last attempt failed: try again after this long.
    RetryAfter(Duration),
}

/// The wait before retry `attempts` + 1: doubling from `retry_min`, at most `retry_max`.
fn backoff(limits: WebhookLimits, attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(20);
    limits
        .retry_min
        .saturating_mul(1 << doublings)
        .min(limits.retry_max)
        .max(limits.retry_min.min(limits.retry_max))
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_the_cap() {
        let limits = WebhookLimits {
            timeout: Duration::from_secs(1),
            retry_min: Duration::from_millis(100),
            retry_max: Duration::from_millis(500),
            max_files: 1,
        };
        let waits: Vec<u128> = (1..=5).map(|a| backoff(limits, a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
    }
}
