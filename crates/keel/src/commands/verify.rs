//! `verify [-q] [-s] [FILESPEC...]`: re-read stored content on the server, recompute each
//! revision's BLAKE3 digest, and report every BAD and MISSING file (exit status 1 when any);
//! on a replica with on-demand content, content not fetched yet is NOT FETCHED, not damage.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Args;
use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use keel_client::actions;
use keel_proto::v1::verify_message::Body;
use keel_proto::v1::{VerifyDamage, VerifyRecord, VerifyRequest, VerifyStatus, VerifySummary};

use crate::output::Record;
use crate::session::{AlreadyReported, Session};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Quiet: print only BAD and MISSING files (and the summary).
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Also verify shelved files (reported as //path@=CHANGE).
    #[arg(short = 's')]
    pub shelved: bool,
    /// Files to verify, every revision up to the one named (default: every depot).
    pub files: Vec<String>,
}

/// The digest verify recomputes (Keel names content by it).
const DIGEST: &str = "BLAKE3";

pub async fn verify(s: &mut Session, args: VerifyArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let out = s.out;
    let progress = (!out.json && !out.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} verified {pos} files, {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    });
    let reply = s
        .client()
        .verify(VerifyRequest {
            caller: s.caller(),
            files,
            shelved: args.shelved,
            problems_only: args.quiet,
        })
        .await;
    let mut stream = s.check(reply)?;
    let mut summary = None;
    let ended = loop {
        let message = match stream.message().await {
            Ok(Some(message)) => message,
            Ok(None) => break Ok(()),
            Err(status) => break Err(s.conn.status(status)),
        };
        match message.body {
            Some(Body::File(file)) => {
                let (record, text) = file_line(&file);
                match &progress {
                    Some(bar) => bar.suspend(|| out.emit(record, text)),
                    None => out.emit(record, text),
                }
            }
            Some(Body::Progress(totals)) => {
                if let Some(bar) = &progress {
                    bar.set_position(totals.revisions + totals.shelved);
                    bar.set_message(format!("{} checked", HumanBytes(totals.bytes)));
                }
            }
            Some(Body::Summary(totals)) => summary = Some(totals),
            None => {}
        }
    };
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    ended?;
    let Some(totals) = summary else {
        anyhow::bail!("the server ended the verify without its summary");
    };
    out.emit(summary_record(&totals), summary_text(&totals));
    if totals.bad + totals.missing > 0 {
        out.error(format!(
            "verify found {} BAD and {} MISSING file(s)",
            totals.bad, totals.missing
        ));
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// `//depot/a.txt#3` for a revision, `//depot/a.txt@=5` for a shelved file.
fn name(file: &VerifyRecord) -> String {
    if file.shelved_in != 0 {
        format!("{}@={}", file.depot_file, file.shelved_in)
    } else {
        format!("{}#{}", file.depot_file, file.rev)
    }
}

/// The JSON record and the text line of one checked file (p4 verify's line, with the
/// problem spelled out after `BAD!`).
fn file_line(file: &VerifyRecord) -> (Record, String) {
    let status = match file.status() {
        VerifyStatus::Ok => "OK",
        VerifyStatus::Bad => "BAD!",
        VerifyStatus::Missing => "MISSING!",
        VerifyStatus::NotFetched => "NOT FETCHED",
        VerifyStatus::Unspecified => "?",
    };
    let (damage, problem) = match (file.status(), file.damage()) {
        (VerifyStatus::Bad, VerifyDamage::Mismatch) => (
            "mismatch",
            format!(
                " (content is {}, {} bytes)",
                file.actual_digest, file.actual_size
            ),
        ),
        (VerifyStatus::Bad, VerifyDamage::Undecodable) => {
            ("undecodable", format!(" (cannot decode: {})", file.reason))
        }
        (VerifyStatus::Bad, VerifyDamage::Unreadable) => {
            ("unreadable", format!(" (cannot read: {})", file.reason))
        }
        (VerifyStatus::NotFetched, _) => (
            "",
            " (on-demand content: fetched from the primary when first needed)".to_string(),
        ),
        _ => ("", String::new()),
    };
    let action = actions::name(file.action());
    let record = Record::new()
        .s("depotFile", &file.depot_file)
        .n("rev", u64::from(file.rev))
        .nz("shelvedChange", file.shelved_in)
        .n("change", file.change)
        .s("action", action)
        .s("type", &file.file_type)
        .s("digest", &file.digest)
        .s("digestType", DIGEST)
        .n("fileSize", file.size)
        .s("status", status)
        .s("damage", damage)
        .s("actualDigest", &file.actual_digest)
        .s("reason", &file.reason);
    let record = if damage == "mismatch" {
        record.n("actualSize", file.actual_size)
    } else {
        record
    };
    let text = format!(
        "{} - {action} change {} ({}) {} {status}{problem}",
        name(file),
        file.change,
        file.file_type,
        file.digest
    );
    (record, text)
}

fn summary_record(t: &VerifySummary) -> Record {
    Record::new()
        .n("verified", t.revisions + t.shelved)
        .n("revisions", t.revisions)
        .n("shelved", t.shelved)
        .n("ok", t.ok)
        .n("bad", t.bad)
        .n("missing", t.missing)
        .n("notFetched", t.not_fetched)
        .n("bytes", t.bytes)
        .n("contentsRead", t.contents_read)
        .n("storedBytesRead", t.stored_bytes_read)
        .s("digestType", DIGEST)
}

fn summary_text(t: &VerifySummary) -> String {
    let shelved = if t.shelved > 0 {
        format!(" and {} shelved file(s)", t.shelved)
    } else {
        String::new()
    };
    let not_fetched = if t.not_fetched > 0 {
        format!(", {} NOT FETCHED (on-demand replica)", t.not_fetched)
    } else {
        String::new()
    };
    format!(
        "Verified {} revision(s){shelved} by {DIGEST}: {} OK, {} BAD, {} MISSING{not_fetched}; \
         {} bytes checked ({}), {} stored bytes read from {} content(s).",
        t.revisions,
        t.ok,
        t.bad,
        t.missing,
        t.bytes,
        HumanBytes(t.bytes),
        t.stored_bytes_read,
        t.contents_read
    )
}
