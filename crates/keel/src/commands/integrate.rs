//! `integrate`, `merge`, `copy`, `integrated`: open branch/integrate targets and show history.

use keel_client::actions;
use keel_proto::v1::FileAction;
use keel_proto::v1::IntegrateMode;
use std::collections::HashMap;

use anyhow::{Result, bail};
use keel_client::content::ContentStream;
use keel_client::transfer::{self, LocalMode};
use keel_proto::v1::{FileRecord, FilesRequest, IntegrateRequest};

use super::records::open_record;
use super::words::outcome_text;
use crate::cli::IntegrateArgs;
use crate::listing::Listing;
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

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
    let reply = s
        .client()
        .integrate(IntegrateRequest {
            caller: s.caller(),
            mode: mode as i32,
            from,
            to,
            branch: args.branch.clone().unwrap_or_default(),
            reverse: args.reverse,
            files,
            preview: args.preview,
            change: args.change.unwrap_or(0),
        })
        .await;
    let mut stream = s.check(reply)?;
    // Records are listed as they arrive; only those the workspace must act on are kept (none
    // for a preview or a virtual integrate), so a 70,000-file branch holds no list of them.
    let local_work = !(args.preview || args.virtual_only);
    let mut deleted: Vec<FileRecord> = Vec::new();
    let mut wanted: HashMap<String, FileRecord> = HashMap::new();
    let mut listing = Listing::new(s.out);
    while let Some(record) = stream.message().await.map_err(|e| s.conn.status(e))? {
        listing.item_with(
            &format!("opened for {}", actions::name(record.action())),
            || {
                open_record(Some(&ws), &record)
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
        if record.action() == FileAction::Delete {
            deleted.push(record);
        } else if !record.lazy_digest.is_empty() {
            wanted.insert(record.source_file.clone(), record);
        }
    }
    listing.finish();
    if !local_work {
        return Ok(());
    }
    // Branched and copied files get their content; deleted ones leave the workspace.
    let mut failed = false;
    let mut resolver = ws.resolver();
    for record in &deleted {
        if let Some(client_file) = ws.client_file_of(record) {
            transfer::remove_local(&ws.root, &resolver.resolve(&client_file)?, ws.options.rmdir)?;
        }
    }
    let mut specs: Vec<String> = wanted
        .values()
        .map(|r| format!("{}#{}", r.source_file, r.source_end))
        .collect();
    specs.sort();
    if specs.is_empty() {
        return Ok(());
    }
    let mut content = ContentStream::open_for(&s.conn, specs, "integrate").await?;
    while let Some((file, header)) = content.next_file().await? {
        let (Some(header), Some(record)) = (header, wanted.get(&file.depot_file)) else {
            continue;
        };
        let client_file = ws.client_file_of(record).unwrap_or_default();
        let mode = LocalMode::for_type(&record.file_type, true);
        let result = match resolver.resolve(&client_file) {
            Ok(local) => content.write_file(&header, local, mode).await,
            Err(e) => Err(e),
        };
        if mode.symlink {
            // Paths resolved from here on must see the new link.
            resolver.forget();
        }
        if let Err(e) = result {
            s.out.error(e.to_string());
            failed = true;
        }
    }
    if failed {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// `integrated FILE...`: integration records, both directions.
pub async fn integrated(s: &mut Session, files: Vec<String>) -> Result<()> {
    let files = s.file_args(&files).await?;
    let records = s
        .all(
            s.client()
                .integrated(FilesRequest {
                    caller: s.caller(),
                    files,
                    ..Default::default()
                })
                .await,
        )
        .await?;
    for r in records {
        let range = if r.start_from_rev == r.end_from_rev {
            format!("#{}", r.end_from_rev)
        } else {
            format!("#{},#{}", r.start_from_rev, r.end_from_rev)
        };
        s.out.emit(
            Record::new()
                .s("toFile", &r.to_file)
                .n("endToRev", u64::from(r.to_rev))
                .s("fromFile", &r.from_file)
                .n("startFromRev", u64::from(r.start_from_rev))
                .n("endFromRev", u64::from(r.end_from_rev))
                .s("how", actions::how_name(r.how(), r.reverse))
                .n("change", r.change),
            format!(
                "{}#{} - {} {}{range}",
                r.to_file,
                r.to_rev,
                actions::how_name(r.how(), r.reverse),
                r.from_file
            ),
        );
    }
    Ok(())
}
