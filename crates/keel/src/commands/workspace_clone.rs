//! `workspace clone SOURCE NEW --root DIR`: a prebuilt workspace in the time it takes to link
//! its files. The server makes the workspace (view, options, have list) in one call; the
//! client fills DIR from SOURCE's root without copying bytes (`keel_client::clone`) and fetches
//! from the server only what it cannot take (files opened or changed in the source).

use std::collections::HashSet;

use anyhow::{Context, Result, bail};
use keel_client::clone::{CloneEntry, CloneOptions, populate};
use keel_client::sync::{SyncOptions, sync};
use keel_client::workspace::WorkspaceCtx;
use keel_core::WorkspaceName;
use keel_proto::v1::{CloneWorkspaceRequest, GetWorkspaceRequest, Workspace};

use crate::cli::WorkspaceCloneArgs;
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

pub async fn clone(s: &mut Session, args: WorkspaceCloneArgs) -> Result<()> {
    WorkspaceName::parse(&args.name)?;
    let root = keel_client::paths::normalize(
        &std::path::absolute(&args.root)
            .with_context(|| format!("clone root {}", args.root.display()))?,
    );
    if let Ok(mut items) = std::fs::read_dir(&root)
        && items.next().is_some()
    {
        bail!(
            "clone root {} is not empty: a clone never writes over files (choose an empty or new directory)",
            root.display()
        );
    }
    let source = s.check(
        s.client()
            .get_workspace(GetWorkspaceRequest {
                caller: s.caller(),
                name: args.source.clone(),
                form: false,
            })
            .await,
    )?;
    let source_root = keel_client::paths::normalize(std::path::Path::new(&source.root));
    if root.starts_with(&source_root) || source_root.starts_with(&root) {
        bail!(
            "clone root {} and the root of workspace '{}' ({}) must not contain one another",
            root.display(),
            source.name,
            source_root.display()
        );
    }
    let reply = s.check(
        s.client()
            .clone_workspace(CloneWorkspaceRequest {
                caller: s.caller(),
                source: args.source.clone(),
                workspace: Some(Workspace {
                    name: args.name.clone(),
                    root: root.display().to_string(),
                    host: args.host.clone().unwrap_or_default(),
                    description: args.description.clone().unwrap_or_default(),
                    ..Default::default()
                }),
            })
            .await,
    )?;
    let ws = WorkspaceCtx::from_spec(reply.workspace.unwrap_or_default())?;
    let conn = s.conn.with_workspace(&ws.name);
    let have = ws.have(&conn, Vec::new()).await?;
    let opened: HashSet<&str> = reply.opened_in_source.iter().map(String::as_str).collect();
    let mut entries = Vec::with_capacity(have.len());
    let mut revisions = Vec::with_capacity(have.len());
    for record in &have {
        let Some(client_file) = ws.client_file_of(record) else {
            continue;
        };
        let local = ws.local(&client_file)?;
        let Ok(relative) = local.strip_prefix(&ws.root) else {
            continue;
        };
        entries.push(CloneEntry {
            relative: relative.display().to_string(),
            digest: record.head_digest.clone(),
            opened_in_source: opened.contains(record.depot_file.as_str()),
        });
        revisions.push(format!("{}#{}", record.depot_file, record.have_rev));
    }
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let options = CloneOptions {
        writable: ws.options.allwrite,
        with_untracked: args.with_untracked,
    };
    let (from, to) = (source_root.clone(), root.clone());
    let totals = tokio::task::spawn_blocking(move || populate(&from, &to, &entries, options))
        .await
        .context("filling the clone")??;
    // What could not be taken from the source comes from the server, at the have revision,
    // without touching the have list the server already wrote.
    let fetch: Vec<String> = totals
        .to_fetch
        .iter()
        .map(|&i| revisions[i].clone())
        .collect();
    let mut failed = 0u64;
    if !fetch.is_empty() {
        let sync_options = SyncOptions {
            files: fetch.clone(),
            force: true,
            populate_only: true,
            ..Default::default()
        };
        let out = &s.out;
        sync(&conn, &ws, &sync_options, |event| {
            if let Err(e) = &event.result {
                failed += 1;
                out.error(format!("{}: {e}", event.file.depot_file));
            }
        })
        .await?;
    }
    copy_config(&source_root, &root, &ws.name)?;
    let text = format!(
        "Workspace {} cloned from {}: {} files ({} hard-linked, {} reflinked, {} copied, {} symlinks, {} from the server){}.",
        ws.name,
        source.name,
        revisions.len(),
        totals.hard_linked,
        totals.reflinked,
        totals.copied,
        totals.symlinks,
        fetch.len(),
        if args.with_untracked {
            format!(", {} untracked files", totals.untracked)
        } else {
            String::new()
        }
    );
    s.out.emit(
        Record::new()
            .s("client", &ws.name)
            .s("source", &source.name)
            .s("root", root.display().to_string())
            .n("files", revisions.len() as u64)
            .n("hardLinked", totals.hard_linked)
            .n("reflinked", totals.reflinked)
            .n("copied", totals.copied)
            .n("symlinks", totals.symlinks)
            .n("fetched", fetch.len() as u64)
            .n("untracked", totals.untracked)
            .b("marked", reply.marked),
        text,
    );
    if failed > 0 {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// When the source's root holds a `.keel` settings file, the clone gets one naming itself.
fn copy_config(source_root: &std::path::Path, root: &std::path::Path, name: &str) -> Result<()> {
    let from = source_root.join(".keel");
    let Ok(text) = std::fs::read_to_string(&from) else {
        return Ok(());
    };
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("KEEL_WORKSPACE"))
        .map(str::to_string)
        .collect();
    lines.push(format!("KEEL_WORKSPACE={name}"));
    let to = root.join(".keel");
    std::fs::write(&to, lines.join("\n") + "\n")
        .with_context(|| format!("writing {}", to.display()))
}
