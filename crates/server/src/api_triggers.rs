//! Translation of the triggers table and of trigger failures to and from the wire.

use keel_core::TriggerLine;
use keel_proto::v1 as pb;
use keel_service::TriggerFailure;

pub(crate) fn table_to_wire(table: Vec<TriggerLine>) -> pb::TriggersTable {
    pb::TriggersTable {
        lines: table
            .into_iter()
            .map(|l| pb::TriggerLine {
                name: l.name,
                r#type: l.kind.as_str().to_string(),
                path: l.path,
                command: l.command,
            })
            .collect(),
    }
}

pub(crate) fn failure_to_wire(f: TriggerFailure) -> pb::TriggerFailure {
    pb::TriggerFailure {
        name: f.name,
        r#type: f.kind.as_str().to_string(),
        subject: f.subject,
        reason: f.reason.to_string(),
        output: f.output,
    }
}
