//! `istat`: what needs merging between a source and a target, both ways (the counts of what
//! `interchanges` would list each way); and `prune`: removing a branch's files that were
//! never changed after branching (or, without `execute`, listing them).

use keel_proto::v1 as pb;
use keel_proto::v1::prune_message::Body;

use super::obliterate::ObliterateSummary;
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// Which source and target to compare: two paths, or a branch spec's view.
#[derive(Clone, Debug, Default)]
pub struct IstatQuery {
    /// The source and target depot paths; empty with `branch`.
    pub from: String,
    pub to: String,
    /// A branch spec: its view's left side is the source, its right the target.
    pub branch: Option<String>,
    /// With `branch`: the view's right side is the source.
    pub reverse: bool,
}

/// The submitted changes of one side the other has not taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingFlow {
    pub changes: u64,
    /// The newest of them (0: none).
    pub newest_change: u64,
}

/// Both directions between a source and a target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeState {
    /// The source and target patterns compared (the first of a branch view's lines).
    pub source: String,
    pub target: String,
    /// Source changes the target lacks: a merge is due when there are any.
    pub from_source: PendingFlow,
    /// Target changes the source lacks: a copy back is due when there are any.
    pub to_source: PendingFlow,
}

/// What needs merging each way between `query`'s source and target.
pub async fn istat(conn: &Connection, query: IstatQuery) -> Result<MergeState, QueryError> {
    let reply = conn
        .reply(conn.client().istat(pb::IstatRequest {
            caller: conn.caller(),
            from: query.from,
            to: query.to,
            branch: query.branch.unwrap_or_default(),
            reverse: query.reverse,
        }))
        .await?;
    let flow = |f: Option<pb::PendingFlow>| {
        let f = f.unwrap_or_default();
        PendingFlow {
            changes: f.changes,
            newest_change: f.newest_change,
        }
    };
    Ok(MergeState {
        source: reply.source,
        target: reply.target,
        from_source: flow(reply.from_source),
        to_source: flow(reply.to_source),
    })
}

/// A file `prune` removed (or, in a preview, would remove): every revision an unchanged copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrunedFile {
    pub depot_file: String,
    /// Its head revision, and how many revisions it has.
    pub rev: u32,
    pub revisions: u32,
    /// What its head was copied from.
    pub from_file: String,
    pub from_rev: u32,
}

/// What `prune` streams: each file, then the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PruneItem {
    File(PrunedFile),
    Summary(ObliterateSummary),
}

/// Prunes the unmodified branched files under `paths` when `execute`, else lists them.
pub async fn prune(
    conn: &Connection,
    paths: Vec<String>,
    execute: bool,
) -> Result<Records<PruneItem>, QueryError> {
    let stream = conn
        .reply(conn.client().prune(pb::PruneRequest {
            caller: conn.caller(),
            files: paths,
            execute,
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |message| {
        Some(match message.body? {
            Body::File(f) => PruneItem::File(PrunedFile {
                depot_file: f.depot_file,
                rev: f.rev,
                revisions: f.revisions,
                from_file: f.from_file,
                from_rev: f.from_rev,
            }),
            Body::Summary(sum) => PruneItem::Summary(ObliterateSummary {
                revisions: sum.revisions,
                integrations: sum.integrations,
                label_entries: sum.label_entries,
                blobs_deleted: sum.blobs_deleted,
                bytes_reclaimed: sum.bytes_reclaimed,
                executed: sum.executed,
            }),
        })
    }))
}
