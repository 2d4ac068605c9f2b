//! `ReportProbe`: the probe's timings of the everyday commands, kept in the metrics and handed
//! to the command log's hook. Any authenticated user may report (the probe runs as an
//! ordinary user, as the site's own probe did); a server without metrics keeps nothing and
//! says so.

use crate::identity::{Peer, caller};
use crate::metrics::ProbeMetrics;
use crate::metrics::probe::{ProbeTiming, log_probe_run};
use keel_proto::v1 as pb;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub(crate) fn report_probe(
    probe: Option<Arc<ProbeMetrics>>,
    req: Request<pb::ReportProbeRequest>,
) -> Result<Response<pb::ReportProbeReply>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = caller(&peer, req.caller)?;
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
