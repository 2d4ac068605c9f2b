//! browse through the P4 front end: the same drill-down as the native clients (`dirs` level by
//! level, then `fstat` and `filelog` of a file), sent by the bench's own P4 protocol client, so
//! one run reports P4 beside native on the same tree.

use std::time::Instant;

use crate::browse::Tally;
use crate::dataset::Shape;
use crate::error::{BenchError, Result};
use crate::p4_client::P4Conn;
use crate::rng::Rng;
use crate::stats::record;

/// One browsing P4 client: drills until the deadline, as [`crate::browse`]'s native ones do
/// (the same random files for the same client number).
pub(crate) async fn client(
    p4_addr: &str,
    user: &str,
    shape: Shape,
    id: u32,
    start: Instant,
    deadline: Instant,
) -> Result<Tally> {
    let cwd = std::env::temp_dir();
    let mut conn = P4Conn::connect(p4_addr, user, "", &cwd).await?;
    let mut rng = Rng::derive(shape.seed, 1000 + u64::from(id));
    let mut t = Tally::default();
    while Instant::now() < deadline {
        let i = rng.below(shape.files);
        for pattern in shape.drill(i) {
            let began = Instant::now();
            let reply = conn.run("dirs", &[&pattern], true).await?;
            if reply.records.is_empty() {
                return Err(BenchError::Check(format!(
                    "p4 dirs {pattern}: no directories"
                )));
            }
            record(
                &mut t.samples,
                &mut t.dirs,
                &mut t.dirs_lat,
                "p4_dirs",
                id,
                start,
                began,
            );
        }
        let file = shape.depot_path(i);
        let began = Instant::now();
        let reply = conn.run("fstat", &[&file], true).await?;
        if reply.records.len() != 1 {
            return Err(BenchError::Check(format!(
                "p4 fstat {file}: {} records, not one",
                reply.records.len()
            )));
        }
        record(
            &mut t.samples,
            &mut t.fstat,
            &mut t.fstat_lat,
            "p4_fstat",
            id,
            start,
            began,
        );
        let began = Instant::now();
        let reply = conn.run("filelog", &[&file], true).await?;
        if reply.records.is_empty() {
            return Err(BenchError::Check(format!(
                "p4 filelog {file}: no revisions"
            )));
        }
        record(
            &mut t.samples,
            &mut t.filelog,
            &mut t.filelog_lat,
            "p4_filelog",
            id,
            start,
            began,
        );
        t.browses += 1;
        t.paths.insert(i);
    }
    Ok(t)
}
