//! The per-RPC families: how many calls of each RPC ended, with which gRPC code, how long they
//! took (to the last byte of the reply), and how many run now.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::collections::HashSet;

/// Upper bounds (seconds) of the latency histograms' buckets: 0.5 ms doubling to 262 s, so a
/// 1 ms `fstat` and a 200 s sync stuck behind a jam both land in a bucket of their own scale.
/// Part of the metrics' definition (dashboards compute quantiles from them), not a knob.
pub const LATENCY_BUCKETS: [f64; 20] = [
    0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048,
    4.096, 8.192, 16.384, 32.768, 65.536, 131.072, 262.144,
];

/// The label value for a call whose method is not one of the known RPCs.
const OTHER: &str = "other";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RpcLabel {
    pub(crate) rpc: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CodeLabel {
    pub(crate) rpc: &'static str,
    pub(crate) code: &'static str,
}

/// The per-RPC families, shared by every connection's layer.
#[derive(Debug)]
pub struct RpcMetrics {
    known: HashSet<&'static str>,
    pub(crate) calls: Family<RpcLabel, Counter>,
    pub(crate) errors: Family<CodeLabel, Counter>,
    pub(crate) latency: Family<RpcLabel, Histogram>,
    pub(crate) active: Family<RpcLabel, Gauge>,
    pub(crate) received: Family<RpcLabel, Counter>,
    pub(crate) sent: Family<RpcLabel, Counter>,
}

impl RpcMetrics {
    /// Registers the families in `registry` (names under its prefix); `known` are the RPC
    /// names used as label values (any other method counts as `other`).
    pub fn register(registry: &mut Registry, known: &[&'static str]) -> RpcMetrics {
        let metrics = RpcMetrics {
            known: known.iter().copied().collect(),
            calls: Family::default(),
            errors: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS)),
            active: Family::default(),
            received: Family::default(),
            sent: Family::default(),
        };
        registry.register(
            "rpc_calls",
            "Calls that ended, by RPC (the command's RPC name, e.g. Sync, Submit, Fstat)",
            metrics.calls.clone(),
        );
        registry.register(
            "rpc_errors",
            "Calls that ended with an error, by RPC and gRPC code (cancelled: the client went away first)",
            metrics.errors.clone(),
        );
        registry.register(
            "rpc_duration_seconds",
            "Time from a call's arrival to the last byte of its reply, by RPC",
            metrics.latency.clone(),
        );
        registry.register(
            "rpc_active",
            "Calls running now (arrived, reply not yet finished), by RPC",
            metrics.active.clone(),
        );
        registry.register(
            "rpc_received_bytes",
            "Request body bytes (gRPC-framed messages) received, by RPC",
            metrics.received.clone(),
        );
        registry.register(
            "rpc_sent_bytes",
            "Reply body bytes (gRPC-framed messages) sent, by RPC",
            metrics.sent.clone(),
        );
        metrics
    }

    /// The label value for a request path `/package.Service/Method`.
    pub(crate) fn label(&self, path: &str) -> &'static str {
        let method = path.rsplit('/').next().unwrap_or("");
        self.known.get(method).copied().unwrap_or(OTHER)
    }

    /// The label value for command `name` (a known RPC's name, else `other`), for a front end
    /// that runs commands without HTTP requests.
    pub fn command_label(&self, name: &str) -> &'static str {
        self.known.get(name).copied().unwrap_or(OTHER)
    }

    /// Records a call that ended after `seconds` with gRPC `code`, having received and sent
    /// `bytes` in its bodies.
    pub fn ended(
        &self,
        rpc: &'static str,
        seconds: f64,
        code: Option<tonic::Code>,
        (received, sent): (u64, u64),
    ) {
        let label = RpcLabel { rpc };
        self.calls.get_or_create(&label).inc();
        self.received.get_or_create(&label).inc_by(received);
        self.sent.get_or_create(&label).inc_by(sent);
        self.latency.get_or_create(&label).observe(seconds);
        self.active.get_or_create(&label).dec();
        match code {
            Some(tonic::Code::Ok) => {}
            Some(code) => {
                self.errors
                    .get_or_create(&CodeLabel {
                        rpc,
                        code: code_name(code),
                    })
                    .inc();
            }
            None => {
                self.errors
                    .get_or_create(&CodeLabel {
                        rpc,
                        code: "unknown",
                    })
                    .inc();
            }
        }
    }

    /// Counts a call of `rpc` (a label value) as running until [`RpcMetrics::ended`].
    pub fn started(&self, rpc: &'static str) {
        self.active.get_or_create(&RpcLabel { rpc }).inc();
    }
}

/// gRPC's name for `code`, in lower snake case (`not_found`), as label values are written.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "ok",
        Cancelled => "cancelled",
        Unknown => "unknown",
        InvalidArgument => "invalid_argument",
        DeadlineExceeded => "deadline_exceeded",
        NotFound => "not_found",
        AlreadyExists => "already_exists",
        PermissionDenied => "permission_denied",
        ResourceExhausted => "resource_exhausted",
        FailedPrecondition => "failed_precondition",
        Aborted => "aborted",
        OutOfRange => "out_of_range",
        Unimplemented => "unimplemented",
        Internal => "internal",
        Unavailable => "unavailable",
        DataLoss => "data_loss",
        Unauthenticated => "unauthenticated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_share_one_label() {
        let mut registry = Registry::default();
        let m = RpcMetrics::register(&mut registry, &["Sync", "Fstat"]);
        assert_eq!(m.label("/keel.v1.Keel/Sync"), "Sync");
        assert_eq!(m.label("/keel.v1.Keel/Fstat"), "Fstat");
        assert_eq!(m.label("/keel.v1.Keel/MadeUp1"), "other");
        assert_eq!(m.label("/x/MadeUp2"), "other");
        assert_eq!(m.label(""), "other");
    }

    #[test]
    fn an_ended_call_counts_once_and_leaves_the_active_gauge() {
        let mut registry = Registry::default();
        let m = RpcMetrics::register(&mut registry, &["Sync"]);
        m.started("Sync");
        m.started("Sync");
        m.ended("Sync", 0.003, Some(tonic::Code::Ok), (10, 100));
        m.ended("Sync", 0.5, Some(tonic::Code::NotFound), (10, 0));
        let label = RpcLabel { rpc: "Sync" };
        assert_eq!(m.calls.get_or_create(&label).get(), 2);
        assert_eq!(m.active.get_or_create(&label).get(), 0);
        assert_eq!(m.received.get_or_create(&label).get(), 20);
        assert_eq!(m.sent.get_or_create(&label).get(), 100);
        let errors = CodeLabel {
            rpc: "Sync",
            code: "not_found",
        };
        assert_eq!(m.errors.get_or_create(&errors).get(), 1);
    }
}
