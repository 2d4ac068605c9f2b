//! `webhooks [-o|-i|--status]`: the webhooks table as a form (`Webhooks:` and one line per
//! webhook), printed (`-o`), read from stdin (`-i`) or edited in `$EDITOR`; `--status` shows
//! each webhook's deliveries.

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use keel_client::ops::{self, Webhook};
use keel_core::Form;

use crate::editor::edit_text;
use crate::output::{Record, date_time};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct WebhooksArgs {
    /// Print the table as a form (`--json`: one object per webhook).
    #[arg(short = 'o', conflicts_with_all = ["input", "status"])]
    pub output: bool,
    /// Read the table as a form from stdin and save it.
    #[arg(short = 'i', conflicts_with = "status")]
    pub input: bool,
    /// Show each webhook's deliveries: the last change delivered, failures, the last answer.
    #[arg(long)]
    pub status: bool,
}

const HEADER: &str = "\
# The Keel webhooks table: one line per webhook.
#   NAME PATH-PATTERN URL [SECRET]
#  After each submit whose files match PATH-PATTERN (a depot pattern, //depot/proj/...),
#  the server POSTs a JSON payload (the change, its matching files, a link back) to URL
#  (http://HOST[:PORT]/PATH). With a SECRET, the header X-Keel-Signature carries
#  sha256=HMAC-SHA256(SECRET, body) in hex. Failed deliveries are retried with back-off, in
#  change order; each delivery is made at least once (X-Keel-Delivery names it).
";

pub async fn webhooks(s: &mut Session, args: WebhooksArgs) -> Result<()> {
    if args.input {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the webhooks form from stdin")?;
        return save(s, &text).await;
    }
    let table = fetch(s).await?;
    if args.status {
        for hook in &table {
            let when = if hook.last_attempt > 0 {
                date_time(hook.last_attempt)
            } else {
                "never".to_string()
            };
            let retrying = if hook.attempts > 0 {
                format!(", retrying after {} failed attempt(s)", hook.attempts)
            } else {
                String::new()
            };
            s.out.emit(
                status_record(hook),
                format!(
                    "{} delivered through change {} ({} sent, {} failed{retrying}); last attempt {when}: {}",
                    hook.name,
                    hook.delivered,
                    hook.sent,
                    hook.failures,
                    if hook.last_status.is_empty() { "-" } else { &hook.last_status }
                ),
            );
        }
        return Ok(());
    }
    if args.output {
        if s.out.json {
            for hook in &table {
                s.out.emit(line_record(hook), "");
            }
        } else {
            s.out.text(render_form(&table).trim_end());
        }
        return Ok(());
    }
    let original = render_form(&table);
    let edited = edit_text(&original, "webhooks")?;
    if edited == original {
        s.out.emit(
            Record::new().s("action", "unchanged"),
            "Webhooks not changed.",
        );
        return Ok(());
    }
    save(s, &edited).await
}

async fn fetch(s: &Session) -> Result<Vec<Webhook>> {
    Ok(ops::webhooks(&s.conn).await?)
}

async fn save(s: &Session, text: &str) -> Result<()> {
    let form = Form::parse(text).context("error in webhooks specification")?;
    let lines = form.get("Webhooks").unwrap_or(&[]).to_vec();
    let saved = ops::save_webhooks(&s.conn, lines).await?;
    s.out.emit(
        Record::new()
            .s("action", "saved")
            .n("lines", saved.len() as u64),
        "Webhooks saved.",
    );
    Ok(())
}

fn line_text(hook: &Webhook) -> String {
    let mut line = format!("{} {} {}", hook.name, hook.path, hook.url);
    if !hook.secret.is_empty() {
        line.push(' ');
        line.push_str(&hook.secret);
    }
    line
}

fn line_record(hook: &Webhook) -> Record {
    Record::new()
        .s("name", &hook.name)
        .s("path", &hook.path)
        .s("url", &hook.url)
        .b("signed", !hook.secret.is_empty())
}

fn status_record(hook: &Webhook) -> Record {
    line_record(hook)
        .n("delivered", hook.delivered)
        .n("sent", hook.sent)
        .n("failures", hook.failures)
        .n("attempts", u64::from(hook.attempts))
        .n("lastAttempt", hook.last_attempt)
        .s("lastStatus", &hook.last_status)
}

fn render_form(table: &[Webhook]) -> String {
    let lines: String = table
        .iter()
        .map(|hook| format!("\t{}\n", line_text(hook)))
        .collect();
    format!("{HEADER}\nWebhooks:\n{lines}")
}
