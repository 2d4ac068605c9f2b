//! `status` and `reconcile`: find work done outside Keel and open it.

use std::collections::BTreeMap;

use anyhow::Result;
use keel_client::have_cache;
use keel_client::local_state::{LocalState, Recording, StateKey};
use keel_client::ops::OpenFor;
use keel_client::transfer;
use keel_client::workspace_scan::{ScanEntry, ScanResult, scan};
use keel_client::workspace_walk::Walk;

use super::file_results::print_results;
use super::open::open_files;
use super::records::rev_text;
use crate::cli::{ReconcileArgs, StatusArgs};
use crate::listing::Listing;
use crate::output::Record;
use crate::session::Session;

/// Compares the workspace with its have list, leaving alone new files the ignore files cover
/// unless `honour_ignores` is false.
pub(super) async fn scan_workspace(
    s: &mut Session,
    files: &[String],
    honour_ignores: bool,
) -> Result<ScanResult> {
    let patterns = s.file_args_or_cwd(files).await?;
    let ws = s.workspace().await?;
    let ignore = s.ignore_config(honour_ignores);
    // The walk of the workspace starts first, on threads of its own, so its directory reads
    // and stats overlap the caches' loading; the recording's clock starts before any stat.
    let tuning = s.conn.tuning();
    let mut rec = Recording::start_in(&ws.root, tuning.state_racy_slack, tuning.scan_read_bytes);
    let walk = Walk::start(
        &ws.root,
        tuning.scan_threads,
        tuning.scan_files_ahead,
        &ignore,
    )?;
    // The have list first, the state after it: refreshing and saving the have list's cache
    // (its peak memory) happens before the state is loaded, so the two never add up. The
    // opened files are asked for alongside the have list: one round trip for both.
    let (have, opened) = tokio::join!(
        have_cache::fetch(&ws, &s.conn),
        ws.opened(&s.conn, Vec::new(), None)
    );
    let have = have?;
    if let Some(e) = &have.save_error {
        s.out.note(format!(
            "warning: cannot save the have-list cache (the next scan fetches the list again): {e}"
        ));
    }
    let have = have.index;
    let opened = opened?;
    let mut state = LocalState::load(&ws.root, StateKey::of(&ws, &s.conn));
    let result = scan(&ws, &have, &opened, &patterns, &mut state, &mut rec, walk)?;
    // Let go of the have list before the state's bytes are encoded to be saved.
    drop(have);
    save_state(s, &mut state);
    Ok(result)
}

/// Saves the workspace state; failing to is worth a warning, not a failed command (the next
/// scan reads the files again).
pub(super) fn save_state(s: &Session, state: &mut LocalState) {
    if let Err(e) = state.save() {
        s.out.note(format!(
            "warning: cannot save the workspace state {} (the next scan reads every file again): {e}",
            state.path().display()
        ));
    }
}

fn preview(s: &Session, result: &ScanResult) {
    let groups: [(&str, &Vec<ScanEntry>); 3] = [
        ("add", &result.add),
        ("edit", &result.edit),
        ("delete", &result.delete),
    ];
    let mut listing = Listing::new(s.out);
    for (action, entries) in groups {
        for entry in entries {
            let rev = if action == "add" { 1 } else { entry.have_rev };
            let local = entry.local.display().to_string();
            let mut record = Record::new()
                .s("clientFile", &local)
                .s("depotFile", &entry.depot_file)
                .s("action", action)
                .n("workRev", u64::from(rev));
            let mut text = format!(
                "{local} - reconcile to {action} {}{}",
                entry.depot_file,
                rev_text(rev)
            );
            match &entry.new_type {
                // The executable bit or the kind changed: `type` is what it will be opened as.
                Some(new_type) => {
                    record = record.s("type", new_type).s("haveType", &entry.file_type);
                    text.push_str(&format!(" (type {} -> {new_type})", entry.file_type));
                }
                None => record = record.s("type", &entry.file_type),
            }
            listing.item(&format!("to be opened for {action}"), record, text);
        }
    }
    if listing.total() == 0 {
        s.out.note("No file(s) to reconcile.");
    }
    listing.finish();
}

pub async fn status(s: &mut Session, args: StatusArgs) -> Result<()> {
    let result = scan_workspace(s, &args.files, !args.no_ignore).await?;
    preview(s, &result);
    Ok(())
}

pub async fn reconcile(s: &mut Session, args: ReconcileArgs) -> Result<()> {
    if !args.preview {
        // Checked before the scan, so a moved root is named before anything else.
        s.writing_workspace().await?;
    }
    let result = scan_workspace(s, &args.files, !args.no_ignore).await?;
    if args.preview {
        preview(s, &result);
        return Ok(());
    }
    let ws = s.writing_workspace().await?;
    let ScanResult { add, edit, delete } = result;
    if add.is_empty() && edit.is_empty() && delete.is_empty() {
        s.out.note("No file(s) to reconcile.");
        return Ok(());
    }
    let add_files = add
        .iter()
        .map(|e| ws.workspace_path(&e.client_file))
        .collect();
    let add_types = add.iter().map(|e| e.file_type.clone()).collect();
    let mut listing = Listing::new(s.out);
    let added = open_files(s, OpenFor::Add, add_files, args.change, None, add_types).await?;
    print_results(&mut listing, Some(&ws), &added);
    // One Open per new type: files whose executable bit or kind changed are opened with the
    // type that matches them now, the rest keep theirs.
    let mut by_type: BTreeMap<Option<&str>, Vec<String>> = BTreeMap::new();
    for entry in &edit {
        by_type
            .entry(entry.new_type.as_deref())
            .or_default()
            .push(entry.depot_file.clone());
    }
    for (new_type, files) in by_type {
        let file_type = new_type.map(str::to_string);
        let edited =
            open_files(s, OpenFor::Edit, files, args.change, file_type, Vec::new()).await?;
        print_results(&mut listing, Some(&ws), &edited);
    }
    for entry in &edit {
        transfer::make_writable(&entry.local)?;
    }
    let delete_files = delete.iter().map(|e| e.depot_file.clone()).collect();
    let deleted = open_files(
        s,
        OpenFor::Delete,
        delete_files,
        args.change,
        None,
        Vec::new(),
    )
    .await?;
    print_results(&mut listing, Some(&ws), &deleted);
    listing.finish();
    Ok(())
}
