//! `ReportProbe`: the probe's timings of the everyday commands, kept in the metrics and logged
//! by the server. Any user with list access may report (the probe runs as an ordinary user, as
//! the site's own probe did); a server without metrics keeps nothing and says so.

use crate::access::authorize;
use crate::identity::Peer;
use crate::metrics::ProbeMetrics;
use crate::metrics::probe::{ProbeTiming, log_probe_run};
use keel_proto::v1 as pb;
use keel_service::command;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub(crate) fn report_probe(
    service: &keel_service::Service,
    probe: Option<Arc<ProbeMetrics>>,
    req: Request<pb::ReportProbeRequest>,
) -> Result<Response<pb::ReportProbeReply>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(service, &peer, req.caller, command::REPORT_PROBE)?;
    let timings = req
        .timings
        .iter()
        .map(|t| ProbeTiming::parse(&t.command, t.seconds, t.failed))
        .collect::<Result<Vec<_>, _>>()
        .map_err(crate::convert::probe_status)?;
    let address = who.address.map(|a| a.to_string()).unwrap_or_default();
    log_probe_run(&who.user, &address, &timings);
    let recorded = match probe {
        Some(metrics) => {
            metrics.record(&timings);
            true
        }
        None => false,
    };
    Ok(Response::new(pb::ReportProbeReply { recorded }))
}
