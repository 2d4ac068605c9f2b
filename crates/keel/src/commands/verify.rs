//! `verify [-q] [-s] [FILESPEC...]`: re-read stored content on the server, recompute each
//! revision's BLAKE3 digest, and report every BAD and MISSING file (exit status 1 when any);
//! on a replica with on-demand content, content not fetched yet is NOT FETCHED, not damage.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Args;
use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use keel_client::ops::{self, VerifiedFile, VerifyItem, VerifyQuery, VerifyStatus, VerifyTotals};

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
    let query = VerifyQuery {
        paths: files,
        shelved: args.shelved,
        problems_only: args.quiet,
    };
    let mut stream = ops::verify(&s.conn, query).await?;
    let mut summary = None;
    let ended = loop {
        let item = match stream.next().await {
            Ok(Some(item)) => item,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        match item {
            VerifyItem::File(file) => {
                let (record, text) = file_line(&file);
                match &progress {
                    Some(bar) => bar.suspend(|| out.emit(record, text)),
                    None => out.emit(record, text),
                }
            }
            VerifyItem::Progress(totals) => {
                if let Some(bar) = &progress {
                    bar.set_position(totals.revisions + totals.shelved);
                    bar.set_message(format!("{} checked", HumanBytes(totals.bytes)));
                }
            }
            VerifyItem::Summary(totals) => summary = Some(totals),
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
fn name(file: &VerifiedFile) -> String {
    if file.shelved_in != 0 {
        format!("{}@={}", file.depot_file, file.shelved_in)
    } else {
        format!("{}#{}", file.depot_file, file.rev)
    }
}

/// The JSON record and the text line of one checked file (p4 verify's line, with the
/// problem spelled out after `BAD!`).
fn file_line(file: &VerifiedFile) -> (Record, String) {
    let status = match &file.status {
        VerifyStatus::Ok => "OK",
        VerifyStatus::Mismatch { .. }
        | VerifyStatus::Undecodable(_)
        | VerifyStatus::Unreadable(_)
        | VerifyStatus::Bad => "BAD!",
        VerifyStatus::Missing => "MISSING!",
        VerifyStatus::NotFetched => "NOT FETCHED",
        VerifyStatus::Unspecified => "?",
    };
    let (mut actual_digest, mut actual_size, mut reason) = ("", None, "");
    let (damage, problem) = match &file.status {
        VerifyStatus::Mismatch {
            actual_digest: digest,
            actual_size: size,
        } => {
            (actual_digest, actual_size) = (digest.as_str(), Some(*size));
            ("mismatch", format!(" (content is {digest}, {size} bytes)"))
        }
        VerifyStatus::Undecodable(why) => {
            reason = why;
            ("undecodable", format!(" (cannot decode: {why})"))
        }
        VerifyStatus::Unreadable(why) => {
            reason = why;
            ("unreadable", format!(" (cannot read: {why})"))
        }
        VerifyStatus::NotFetched => (
            "",
            " (on-demand content: fetched from the primary when first needed)".to_string(),
        ),
        _ => ("", String::new()),
    };
    let action = file.action.map_or("", |a| a.as_str());
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
        .s("actualDigest", actual_digest)
        .s("reason", reason);
    let record = match actual_size {
        Some(size) => record.n("actualSize", size),
        None => record,
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

fn summary_record(t: &VerifyTotals) -> Record {
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

fn summary_text(t: &VerifyTotals) -> String {
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
