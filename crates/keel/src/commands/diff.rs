//! Differences: `diff` (workspace files vs have revisions) and `diff2` (two depot revisions).

use std::collections::HashMap;

use anyhow::{Result, bail};
use keel_client::content::ContentStream;
use keel_client::local_state::{FileStat, LocalState, Recording, StateKey};
use keel_client::ops::{self, Have};
use keel_core::{detect_base_type, unified_diff};

use super::records::rev_text;
use crate::cli::{Diff2Args, FilesArgs};
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

pub async fn diff(s: &mut Session, args: FilesArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let candidates: Vec<Have> = if args.files.is_empty() {
        let candidates = ops::diff_candidates(&s.conn, &ws, Vec::new()).await?;
        if candidates.is_empty() {
            s.out.note("File(s) not opened for edit.");
            return Ok(());
        }
        candidates
    } else {
        // As p4: only opened files are compared; naming others is an error, not silence.
        let files = s.file_args(&args.files).await?;
        let candidates = ops::diff_candidates(&s.conn, &ws, files).await?;
        if candidates.is_empty() {
            bail!(
                "{} - file(s) not opened for edit on this client",
                args.files.join(" ")
            );
        }
        candidates
    };
    // Only files whose local content differs from the have revision need the server's copy;
    // the workspace state spares reading files whose stat is as last hashed.
    let mut changed: HashMap<String, (Have, std::path::PathBuf)> = HashMap::new();
    let mut failed = false;
    let mut state = LocalState::load(&ws.root, StateKey::of(&ws, &s.conn));
    let tuning = s.conn.tuning();
    let mut rec = Recording::start_in(&ws.root, tuning.state_racy_slack, tuning.scan_read_bytes);
    for record in candidates {
        if record.client_file.is_empty() {
            continue;
        }
        let client_file = record.client_file.clone();
        let local = ws.local(&client_file)?;
        let meta = match std::fs::symlink_metadata(&local) {
            Ok(meta) if !meta.is_dir() => meta,
            Ok(_) => {
                s.out.error(format!("{} - file missing", local.display()));
                failed = true;
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                s.out.error(format!("{} - file missing", local.display()));
                failed = true;
                continue;
            }
            Err(e) => return Err(keel_client::Error::io(&local, e).into()),
        };
        let digest = state.digest(
            &mut rec,
            &client_file,
            &record.depot_file,
            record.have_rev,
            || local.clone(),
            &FileStat::of(&meta),
            keel_client::keywords::form_of(&record.file_type),
        )?;
        if !blake3::Hash::from(digest)
            .to_hex()
            .eq_ignore_ascii_case(&record.digest)
        {
            changed.insert(record.depot_file.clone(), (record, local));
        }
    }
    super::reconcile::save_state(s, &mut state);
    if !changed.is_empty() {
        let specs = changed
            .values()
            .map(|(r, _)| format!("{}#{}", r.depot_file, r.have_rev))
            .collect();
        let mut content = ContentStream::open_for(&s.conn, specs, "diff").await?;
        let mut outputs = Vec::new();
        while let Some((file, header)) = content.next_file().await? {
            let (Some(header), Some((record, local))) = (header, changed.get(&file.depot_file))
            else {
                continue;
            };
            let label = format!("{}{}", record.depot_file, rev_text(record.have_rev));
            let old = content.read_all(&header, &label).await?;
            let new = std::fs::read(local).unwrap_or_default();
            // A utf16 file is compared as the UTF-8 text it is stored as.
            let new = if keel_client::keywords::form_of(&record.file_type).utf16 {
                keel_core::utf16::from_workspace(&new).unwrap_or(new)
            } else {
                new
            };
            outputs.push((label, local.display().to_string(), record.clone(), old, new));
        }
        outputs.sort_by(|a, b| a.0.cmp(&b.0));
        for (label, local, record, old, new) in outputs {
            let header = format!("==== {label} - {local} ====");
            let binary =
                !detect_base_type(&old).is_line_text() || !detect_base_type(&new).is_line_text();
            let text = if binary {
                "(... files differ ...)".to_string()
            } else {
                unified_diff(
                    &String::from_utf8_lossy(&old),
                    &String::from_utf8_lossy(&new),
                    &label,
                    &local,
                )
            };
            s.out.emit(
                Record::new()
                    .s("depotFile", &record.depot_file)
                    .s("clientFile", &local)
                    .n("rev", u64::from(record.have_rev))
                    .b("binary", binary)
                    .s("diff", &text),
                format!("{header}\n{}", text.trim_end_matches('\n')),
            );
        }
    }
    if failed {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

pub async fn diff2(s: &mut Session, args: Diff2Args) -> Result<()> {
    let mut files = s.file_args(&[args.left, args.right]).await?;
    if files.len() != 2 {
        bail!("diff2 needs exactly two files");
    }
    let right = files.remove(1);
    let left = files.remove(0);
    let reply = ops::diff2(&s.conn, left, right).await?;
    let (l, r) = (&reply.left, &reply.right);
    let status = if reply.identical {
        "identical"
    } else if reply.binary {
        "binary"
    } else {
        "content"
    };
    let header = format!(
        "==== {}{} ({}) - {}{} ({}) ==== {status}",
        l.depot_file,
        rev_text(l.rev),
        l.file_type,
        r.depot_file,
        rev_text(r.rev),
        r.file_type
    );
    let text = if reply.diff.is_empty() {
        header
    } else {
        format!("{header}\n{}", reply.diff.trim_end_matches('\n'))
    };
    s.out.emit(
        Record::new()
            .s("depotFile", &l.depot_file)
            .n("rev", u64::from(l.rev))
            .s("type", &l.file_type)
            .s("depotFile2", &r.depot_file)
            .n("rev2", u64::from(r.rev))
            .s("type2", &r.file_type)
            .s("status", status)
            .s("diff", &reply.diff),
        text,
    );
    Ok(())
}
