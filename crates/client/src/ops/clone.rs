//! `workspace clone`: a prebuilt workspace in the time it takes to link its files. The server
//! makes the workspace (view, options, have list) in one call and streams the new have list
//! while it copies it; this fills the new root from the source workspace's root without copying
//! bytes ([`crate::clone::populate_from`]: reflinks, hard links for read-only files, copies
//! otherwise) as the entries arrive, and fetches from the server only what it cannot take
//! (files opened or changed in the source), at their have revisions.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use keel_core::WorkspaceName;
use keel_proto::v1 as pb;
use pb::clone_workspace_message::Body;

use crate::clone::{CHUNK_ENTRIES, Chunker, CloneEntry, CloneOptions, populate_from};
use crate::connect::Connection;
use crate::sync::{SyncOptions, sync};
use crate::workspace::WorkspaceCtx;

/// The clone to make.
#[derive(Clone, Debug)]
pub struct CloneQuery {
    /// The workspace cloned (a synced, perhaps built, one on this machine).
    pub source: String,
    /// The new workspace's name.
    pub name: String,
    /// The new workspace's root: empty or not yet there, outside the source's root.
    pub root: PathBuf,
    /// The new workspace's host (empty: any).
    pub host: Option<String>,
    pub description: Option<String>,
    /// Also take the files the depot does not track (build outputs).
    pub with_untracked: bool,
}

/// What a clone did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cloned {
    pub name: String,
    pub source: String,
    /// The source's root, absolute.
    pub source_root: PathBuf,
    /// The new root, absolute.
    pub root: PathBuf,
    /// Files in the new workspace's have list.
    pub files: u64,
    pub hard_linked: u64,
    pub reflinked: u64,
    pub copied: u64,
    pub symlinks: u64,
    /// Files fetched from the server (opened or changed in the source).
    pub fetched: u64,
    /// Files fetched that could not be written (each given to the caller's callback).
    pub failed: u64,
    pub untracked: u64,
    /// The new have list is marked synced: its first sync is a shortcut.
    pub marked: bool,
}

/// Why a clone was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum CloneError {
    #[error(transparent)]
    Name(#[from] keel_core::IdError),
    #[error(
        "clone root {} is not empty: a clone never writes over files (choose an empty or new directory)",
        .0.display()
    )]
    RootNotEmpty(PathBuf),
    #[error(
        "clone root {} and the root of workspace '{source_name}' ({}) must not contain one another",
        root.display(),
        source_root.display()
    )]
    Nested {
        root: PathBuf,
        source_name: String,
        source_root: PathBuf,
    },
    /// The server refused (rights, no such source), or a local file operation failed.
    #[error(transparent)]
    Call(#[from] crate::Error),
    #[error("filling the clone stopped: {0}")]
    Stopped(String),
}

impl CloneError {
    /// The connection's or server's error inside, if any (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            CloneError::Call(e) => Some(e),
            _ => None,
        }
    }
}

/// Makes the clone `query` asks for; `fetch_failed` hears of each file fetched from the server
/// that could not be written (the clone goes on; [`Cloned::failed`] counts them).
pub async fn clone_workspace(
    conn: &Connection,
    query: CloneQuery,
    mut fetch_failed: impl FnMut(&str, &crate::Error),
) -> Result<Cloned, CloneError> {
    WorkspaceName::parse(&query.name)?;
    let absolute = std::path::absolute(&query.root).map_err(|e| crate::Error::Io {
        path: query.root.clone(),
        source: e,
    })?;
    let root = crate::paths::normalize(&absolute);
    if let Ok(mut items) = std::fs::read_dir(&root)
        && items.next().is_some()
    {
        return Err(CloneError::RootNotEmpty(root));
    }
    let source = conn
        .client()
        .get_workspace(pb::GetWorkspaceRequest {
            caller: conn.caller(),
            name: query.source.clone(),
            form: false,
        })
        .await
        .map_err(|s| conn.status(s))?
        .into_inner();
    let source_root = crate::paths::normalize(Path::new(&source.root));
    if root.starts_with(&source_root) || source_root.starts_with(&root) {
        return Err(CloneError::Nested {
            root,
            source_name: source.name,
            source_root,
        });
    }
    let mut stream = conn
        .client()
        .clone_workspace(pb::CloneWorkspaceRequest {
            caller: conn.caller(),
            source: query.source.clone(),
            workspace: Some(pb::Workspace {
                name: query.name.clone(),
                root: root.display().to_string(),
                host: query.host.unwrap_or_default(),
                description: query.description.unwrap_or_default(),
                ..Default::default()
            }),
        })
        .await
        .map_err(|s| conn.status(s))?
        .into_inner();
    let started = match stream.message().await.map_err(|s| conn.status(s))? {
        Some(pb::CloneWorkspaceMessage {
            body: Some(Body::Started(started)),
        }) => started,
        _ => {
            return Err(CloneError::Stopped(
                "the server's answer did not begin with the new workspace".to_string(),
            ));
        }
    };
    let ws = WorkspaceCtx::from_spec(started.workspace.unwrap_or_default())?;
    let conn = conn.with_workspace(&ws.name);
    let opened: HashSet<&str> = started
        .opened_in_source
        .iter()
        .map(String::as_str)
        .collect();
    std::fs::create_dir_all(&root).map_err(|e| crate::Error::Io {
        path: root.clone(),
        source: e,
    })?;
    let options = CloneOptions {
        writable: ws.options.allwrite,
        with_untracked: query.with_untracked,
    };
    // The files are made while the have list arrives (the server streams it while it copies
    // it): each run of whole directories goes to the filling threads as soon as it is read.
    let (sender, chunks) = std::sync::mpsc::channel();
    let (from, to) = (source_root.clone(), root.clone());
    let filling = tokio::task::spawn_blocking(move || populate_from(&from, &to, chunks, options));
    let mut revisions = Vec::new();
    let read = async {
        let mut chunker = Chunker::new(CHUNK_ENTRIES);
        // Each directory's safety check once, not each file's.
        let mut resolver = ws.resolver();
        let mut done = None;
        while let Some(message) = stream.message().await.map_err(|s| conn.status(s))? {
            let record = match message.body {
                Some(Body::File(record)) => record,
                Some(Body::Done(last)) => {
                    done = Some(last);
                    break;
                }
                _ => continue,
            };
            let Some(client_file) = ws.client_file_of(&record) else {
                continue;
            };
            let local = resolver.resolve(&client_file)?;
            let Ok(relative) = local.strip_prefix(&ws.root) else {
                continue;
            };
            let entry = CloneEntry {
                relative: relative.display().to_string(),
                digest: record.head_digest,
                opened_in_source: opened.contains(record.depot_file.as_str()),
            };
            revisions.push(format!("{}#{}", record.depot_file, record.have_rev));
            if let Some(chunk) = chunker.push(entry) {
                // Refused only once the fillers stopped on an error, which `filling` reports.
                let _ = sender.send(chunk);
            }
        }
        if let Some(chunk) = chunker.finish() {
            let _ = sender.send(chunk);
        }
        Ok::<Option<pb::CloneDone>, crate::Error>(done)
    }
    .await;
    drop(sender);
    let totals = filling
        .await
        .map_err(|e| CloneError::Stopped(e.to_string()))?;
    let done = read?.ok_or_else(|| {
        CloneError::Stopped("the server's answer ended before the clone was done".to_string())
    })?;
    let totals = totals?;
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
        sync(&conn, &ws, &sync_options, |event| {
            if let Err(e) = &event.result {
                failed += 1;
                fetch_failed(&event.file.depot_file, e);
            }
        })
        .await?;
    }
    Ok(Cloned {
        name: ws.name.clone(),
        source: source.name,
        source_root,
        root,
        files: revisions.len() as u64,
        hard_linked: totals.hard_linked,
        reflinked: totals.reflinked,
        copied: totals.copied,
        symlinks: totals.symlinks,
        fetched: fetch.len() as u64,
        failed,
        untracked: totals.untracked,
        marked: done.marked,
    })
}
