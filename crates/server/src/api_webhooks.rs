//! Translation of the webhooks table and delivery states to the wire.

use keel_core::WebhookLine;
use keel_proto::v1 as pb;
use keel_store::WebhookStateRow;

pub(crate) fn table_to_wire(table: Vec<(WebhookLine, WebhookStateRow)>) -> pb::WebhooksTable {
    pb::WebhooksTable {
        webhooks: table
            .into_iter()
            .map(|(line, state)| pb::Webhook {
                name: line.name,
                path: line.path,
                url: line.url,
                secret: line.secret.unwrap_or_default(),
                delivered: state.delivered.0,
                attempts: state.attempts,
                sent: state.sent,
                failures: state.failures,
                last_attempt: state.last_attempt,
                last_status: state.last_status,
            })
            .collect(),
    }
}
