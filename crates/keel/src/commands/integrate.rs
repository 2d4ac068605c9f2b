//! `integrate`, `merge`, `copy`, `integrated`: open branch/integrate targets and show history.

use std::collections::HashMap;

use anyhow::{Result, bail};
use keel_client::ops::{self, FileResult, IntegrateMode, IntegrateQuery};
use keel_client::transfer;
use keel_core::FileAction;

use super::file_results::{outcome_text, result_record};
use super::opened_content::write_opened;
use crate::cli::IntegrateArgs;
use crate::listing::Listing;
use crate::output::Record;
use crate::session::Session;

/// Runs `integrate`/`merge` (mode integrate) or `copy` (mode copy).
pub async fn integrate(s: &mut Session, args: IntegrateArgs, mode: IntegrateMode) -> Result<()> {
    let verb = match mode {
        IntegrateMode::Integrate => "integrate",
        IntegrateMode::Copy => "copy",
    };
    let ws = s.writing_workspace().await?;
    let (from, to, files) = match (&args.branch, args.files.as_slice()) {
        (Some(_), files) => (String::new(), String::new(), s.file_args(files).await?),
        (None, [from, to]) => (from.clone(), to.clone(), Vec::new()),
        (None, _) => {
            bail!("Usage: {verb} [-n] [-v] [-c N] FROM TO, or {verb} -b BRANCH [-r] [TOFILE...]")
        }
    };
    let query = IntegrateQuery {
        mode,
        from,
        to,
        branch: args.branch.clone(),
        reverse: args.reverse,
        paths: files,
        preview: args.preview,
        change: args.change,
    };
    let mut stream = ops::integrate(&s.conn, query).await?;
    // Records are listed as they arrive; only those the workspace must act on are kept (none
    // for a preview or a virtual integrate), so a 70,000-file branch holds no list of them.
    let local_work = !(args.preview || args.virtual_only);
    let mut deleted: Vec<FileResult> = Vec::new();
    let mut wanted: HashMap<String, FileResult> = HashMap::new();
    let mut listing = Listing::new(s.out);
    while let Some(record) = stream.next().await? {
        listing.item_with(
            &format!("opened for {}", record.action.map_or("", |a| a.as_str())),
            || {
                result_record(Some(&ws), &record)
                    .s("fromFile", &record.source_file)
                    .n("startFromRev", u64::from(record.source_start + 1))
                    .n("endFromRev", u64::from(record.source_end))
                    .s("baseFile", &record.base_file)
                    .nz("baseRev", u64::from(record.base_rev))
            },
            || format!("{} - {}", record.depot_file, outcome_text(&record)),
        );
        if !local_work {
            continue;
        }
        if record.action == Some(FileAction::Delete) {
            deleted.push(record);
        } else if !record.server_digest.is_empty() {
            wanted.insert(record.source_file.clone(), record);
        }
    }
    listing.finish();
    if !local_work {
        return Ok(());
    }
    // Branched and copied files get their content; deleted ones leave the workspace.
    let mut resolver = ws.resolver();
    for record in &deleted {
        if let Some(client_file) = record.client_file_in(&ws) {
            transfer::remove_local(&ws.root, &resolver.resolve(&client_file)?, ws.options.rmdir)?;
        }
    }
    write_opened(
        s,
        &ws,
        &mut resolver,
        &wanted,
        |r| r.source_end,
        "integrate",
    )
    .await
}

/// `integrated FILE...`: integration records, both directions.
pub async fn integrated(s: &mut Session, files: Vec<String>) -> Result<()> {
    let files = s.file_args(&files).await?;
    let records = ops::integrated(&s.conn, files).await?.all().await?;
    for r in records {
        let range = if r.start_rev == r.end_rev {
            format!("#{}", r.end_rev)
        } else {
            format!("#{},#{}", r.start_rev, r.end_rev)
        };
        s.out.emit(
            Record::new()
                .s("toFile", &r.to_file)
                .n("endToRev", u64::from(r.to_rev))
                .s("fromFile", &r.file)
                .n("startFromRev", u64::from(r.start_rev))
                .n("endFromRev", u64::from(r.end_rev))
                .s("how", r.how_str())
                .n("change", r.change),
            format!(
                "{}#{} - {} {}{range}",
                r.to_file,
                r.to_rev,
                r.how_str(),
                r.file
            ),
        );
    }
    Ok(())
}
