//! The probe's timings (`keel probe`, reported with `ReportProbe`): one histogram per everyday
//! command, and the hook where the command log records them.

use keel_metrics::LATENCY_BUCKETS;
use keel_metrics::prometheus_client::encoding::EncodeLabelSet;
use keel_metrics::prometheus_client::metrics::counter::Counter;
use keel_metrics::prometheus_client::metrics::family::Family;
use keel_metrics::prometheus_client::metrics::histogram::Histogram;
use keel_metrics::prometheus_client::registry::Registry;

/// The commands a probe runs, the only label values its families take.
pub(crate) const PROBE_COMMANDS: [&str; 5] = ["info", "changes", "fstat", "sync", "opened"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CommandLabel {
    command: &'static str,
}

/// One timing as reported, its command checked against [`PROBE_COMMANDS`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProbeTiming {
    pub(crate) command: &'static str,
    pub(crate) seconds: f64,
    pub(crate) failed: bool,
}

/// A reported timing that cannot be kept.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum ProbeReportError {
    #[error("probe command '{0}' is not one of info, changes, fstat, sync, opened")]
    UnknownCommand(String),
    #[error("probe time {seconds} of '{command}' is not a number of seconds >= 0")]
    BadSeconds { command: String, seconds: f64 },
}

impl ProbeTiming {
    pub(crate) fn parse(
        command: &str,
        seconds: f64,
        failed: bool,
    ) -> Result<ProbeTiming, ProbeReportError> {
        let known = PROBE_COMMANDS
            .iter()
            .find(|c| **c == command)
            .ok_or_else(|| ProbeReportError::UnknownCommand(command.to_string()))?;
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(ProbeReportError::BadSeconds {
                command: command.to_string(),
                seconds,
            });
        }
        Ok(ProbeTiming {
            command: known,
            seconds,
            failed,
        })
    }
}

#[derive(Debug)]
pub(crate) struct ProbeMetrics {
    duration: Family<CommandLabel, Histogram>,
    failures: Family<CommandLabel, Counter>,
}

impl ProbeMetrics {
    pub(crate) fn register(registry: &mut Registry) -> ProbeMetrics {
        let metrics = ProbeMetrics {
            duration: Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS)),
            failures: Family::default(),
        };
        registry.register(
            "probe_duration_seconds",
            "Latency of the probe's everyday commands as its user felt it (keel probe), by command",
            metrics.duration.clone(),
        );
        registry.register(
            "probe_failures",
            "Probe commands that failed, by command",
            metrics.failures.clone(),
        );
        metrics
    }

    pub(crate) fn record(&self, timings: &[ProbeTiming]) {
        for t in timings {
            let label = CommandLabel { command: t.command };
            self.duration.get_or_create(&label).observe(t.seconds);
            if t.failed {
                self.failures.get_or_create(&label).inc();
            }
        }
    }
}

/// One line in the server's log per probe run, with who ran it. The command log needs nothing
/// from here: it already holds a record of each of the probe's five commands (with its lapse)
/// and of this `ReportProbe` call, whose arguments are the timings.
pub(crate) fn log_probe_run(user: &str, address: &str, timings: &[ProbeTiming]) {
    let summary = timings
        .iter()
        .map(|t| {
            format!(
                "{}={:.3}s{}",
                t.command,
                t.seconds,
                if t.failed { "(failed)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    tracing::info!(user, address, timings = %summary, "probe");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_five_commands_and_real_durations_are_kept() {
        assert!(ProbeTiming::parse("fstat", 0.002, false).is_ok());
        assert_eq!(
            ProbeTiming::parse("submit", 1.0, false),
            Err(ProbeReportError::UnknownCommand("submit".into()))
        );
        assert!(ProbeTiming::parse("info", -1.0, false).is_err());
        assert!(ProbeTiming::parse("info", f64::NAN, false).is_err());
        assert!(ProbeTiming::parse("info", f64::INFINITY, false).is_err());
    }
}
