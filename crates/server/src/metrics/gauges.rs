//! Values the server already keeps, read at each scrape: the writer's queue and transaction
//! counters, content bytes sent, the content store's totals, the journal's and the WAL's size,
//! the newest checkpoint's age, the password checks, and on a replica its lag.

use super::content_scan::ContentTotals;
use crate::replica::ReplicaStatus;
use keel_metrics::collect::{counter, gauge};
use keel_metrics::prometheus_client::collector::Collector;
use keel_metrics::prometheus_client::encoding::DescriptorEncoder;
use keel_store::SqliteStore;
use keel_store::journal::Journal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Where each value lives.
pub(crate) struct Sources {
    pub(crate) meta: Arc<SqliteStore>,
    pub(crate) journal: Option<Arc<Journal>>,
    pub(crate) checkpoints: PathBuf,
    /// Stored content bytes sent in chunks (`InfoReply.content_bytes_sent`).
    pub(crate) content_sent: Arc<AtomicU64>,
    pub(crate) replica: Option<Arc<ReplicaStatus>>,
    /// The listeners' connection counters (`grpc`, `metrics`).
    pub(crate) connections: Vec<Arc<keel_tls::ConnTracker>>,
    /// The service, for its password-check counters.
    pub(crate) service: Arc<keel_service::Service>,
    /// The webhooks' delivery counters.
    pub(crate) webhooks: Arc<crate::webhooks::WebhookStats>,
}

/// The collector: the sources and the content store's last totals.
pub(crate) struct Gauges {
    pub(crate) sources: Sources,
    pub(crate) content: Arc<ContentTotals>,
}

impl std::fmt::Debug for Gauges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("server gauges")
    }
}

impl Collector for Gauges {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (s, content) = (&self.sources, &self.content);
        for tracker in &s.connections {
            keel_metrics::collect::connections(&mut e, tracker.name, counts(tracker.stats()))?;
        }
        counter(
            &mut e,
            "webhook_deliveries",
            "Webhook payloads a receiver accepted (answered 2xx)",
            s.webhooks.delivered.load(Ordering::Relaxed) as f64,
        )?;
        counter(
            &mut e,
            "webhook_failures",
            "Webhook delivery attempts that failed (retried with back-off)",
            s.webhooks.failed.load(Ordering::Relaxed) as f64,
        )?;
        gauge(
            &mut e,
            "webhooks_retrying",
            "Webhooks waiting to retry a failed delivery now",
            s.webhooks.retrying.load(Ordering::Relaxed) as f64,
        )?;
        let w = s.meta.writer_stats();
        gauge(
            &mut e,
            "writer_queued",
            "Write jobs waiting for the metadata writer now",
            w.queued as f64,
        )?;
        gauge(
            &mut e,
            "writer_holding",
            "Write jobs running in the writer's transaction now",
            w.holding as f64,
        )?;
        counter(
            &mut e,
            "writer_jobs",
            "Write jobs the metadata writer ran",
            w.jobs as f64,
        )?;
        counter(
            &mut e,
            "writer_wait_seconds",
            "Time write jobs waited for the metadata writer, summed (divide by writer_jobs for the mean)",
            w.wait_seconds,
        )?;
        counter(
            &mut e,
            "writer_hold_seconds",
            "Time write jobs spent from their start on the writer to their transaction's commit, summed",
            w.hold_seconds,
        )?;
        counter(
            &mut e,
            "content_sent_bytes",
            "Stored (compressed) content bytes sent to clients in sync, print and content replies",
            s.content_sent.load(Ordering::Relaxed) as f64,
        )?;
        if content.scans.load(Ordering::Relaxed) > 0 {
            gauge(
                &mut e,
                "content_objects",
                "Blobs in the content store at the last count (every metrics_content_scan_secs)",
                content.objects.load(Ordering::Relaxed) as f64,
            )?;
            gauge(
                &mut e,
                "content_bytes",
                "Bytes of the content store's blobs on disk at the last count",
                content.bytes.load(Ordering::Relaxed) as f64,
            )?;
        }
        if let Some(journal) = &s.journal {
            let (_, path) = journal.current();
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            gauge(
                &mut e,
                "journal_bytes",
                "Size of the journal file being written (since the last checkpoint)",
                size as f64,
            )?;
            gauge(
                &mut e,
                "journal_position",
                "Newest committed journal position",
                journal.committed_position() as f64,
            )?;
        }
        let passwords = s.service.password_check_stats();
        counter(
            &mut e,
            "password_checks",
            "Passwords hashed to be checked (logins and old passwords; a user without a password costs one too)",
            passwords.checked as f64,
        )?;
        counter(
            &mut e,
            "password_checks_limited",
            "Password attempts refused by the login limits before any hash",
            passwords.limited as f64,
        )?;
        counter(
            &mut e,
            "password_checks_busy",
            "Password checks refused because every check slot and its queue were taken",
            passwords.busy as f64,
        )?;
        let mut wal = s.meta.path().as_os_str().to_owned();
        wal.push("-wal");
        let wal = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        gauge(
            &mut e,
            "wal_bytes",
            "Size of the metadata database's write-ahead log",
            wal as f64,
        )?;
        if let Some(age) = newest_checkpoint_age(&s.checkpoints) {
            gauge(
                &mut e,
                "checkpoint_age_seconds",
                "Seconds since the newest checkpoint file was written (absent before the first)",
                age,
            )?;
        }
        if let Some(replica) = &s.replica {
            let info = replica.info();
            gauge(
                &mut e,
                "replica_connected",
                "1 when the replica's follower is connected to its primary",
                f64::from(u8::from(info.connected)),
            )?;
            gauge(
                &mut e,
                "replica_applied_position",
                "Newest journal position of the primary this replica has applied",
                info.applied_position as f64,
            )?;
            gauge(
                &mut e,
                "replica_primary_position",
                "The primary's newest committed journal position, as this replica last heard it",
                info.primary_position as f64,
            )?;
            gauge(
                &mut e,
                "replica_lag_records",
                "Journal records the primary has committed that this replica has not applied",
                info.lag_records as f64,
            )?;
            gauge(
                &mut e,
                "replica_lag_seconds",
                "Seconds since this replica last held everything its primary had committed",
                info.lag_seconds,
            )?;
        }
        Ok(())
    }
}

/// Seconds since the newest `checkpoint.N` in `dir` was modified.
fn newest_checkpoint_age(dir: &std::path::Path) -> Option<f64> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("checkpoint.")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|entry| entry.metadata().ok()?.modified().ok())
        .max()?;
    Some(
        SystemTime::now()
            .duration_since(newest)
            .map_or(0.0, |d| d.as_secs_f64()),
    )
}

/// A listener's counters as the metrics crate takes them.
pub(crate) fn counts(s: keel_tls::ConnStats) -> keel_metrics::collect::ConnectionCounts {
    keel_metrics::collect::ConnectionCounts {
        open: s.open,
        refused_max_connections: s.refused_total_cap,
        refused_per_address: s.refused_address_cap,
        idle_closed: s.idle_closed,
        accept_errors: s.accept_errors,
    }
}
