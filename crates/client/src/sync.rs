//! The sync driver: consumes the Sync stream, writes files, then records the have list.

use std::collections::HashMap;
use std::path::PathBuf;

use keel_proto::v1::sync_message::Body;
use keel_proto::v1::{SyncFile, SyncMessage, SyncRequest};

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::have::HaveUpdater;
use crate::stream::PeekStream;
use crate::transfer::{self, IncomingFile, LocalMode};
use crate::workspace::WorkspaceCtx;

/// What to sync and how (Perforce `sync` flags).
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// Server-syntax file arguments; empty = the whole view at head.
    pub files: Vec<String>,
    /// `-n`: report only.
    pub preview: bool,
    /// `-f`: rewrite files and overwrite writable ones.
    pub force: bool,
    /// `-k`: update the have list without touching files.
    pub have_only: bool,
    /// `-p`: write files without recording them in the have list.
    pub populate_only: bool,
}

/// One file the sync dealt with.
#[derive(Debug)]
pub struct SyncEvent {
    pub file: SyncFile,
    /// The local path (None when the server's path was refused).
    pub local: Option<PathBuf>,
    /// Bytes written for this file.
    pub bytes: u64,
    /// Ok when the file is in the announced state; the reason otherwise.
    pub result: Result<()>,
}

/// Totals of a finished sync.
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncTotals {
    pub files: u64,
    pub bytes: u64,
    pub failed: u64,
    /// Totals the server announced in its summary.
    pub server_files: u64,
    pub server_bytes: u64,
}

/// Runs a sync, calling `report` for every file as it is handled.
pub async fn sync(
    conn: &Connection,
    ws: &WorkspaceCtx,
    options: &SyncOptions,
    mut report: impl FnMut(&SyncEvent),
) -> Result<SyncTotals> {
    let inner = conn
        .client()
        .sync(SyncRequest {
            caller: conn.caller(),
            files: options.files.clone(),
            preview: options.preview,
            force: options.force,
            have_only: options.have_only,
            populate_only: options.populate_only,
        })
        .await
        .map_err(|s| conn.status(s))?
        .into_inner();
    let mut stream = PeekStream::new(conn, inner);
    let record_have = !options.preview && !options.populate_only;
    let mut have = HaveUpdater::new(conn);
    let mut have_digests: Option<HashMap<String, String>> = None;
    let mut totals = SyncTotals::default();
    let outcome: Result<()> = async {
        while let Some(message) = stream.next().await? {
            match message.body {
                Some(Body::File(file)) => {
                    let event =
                        handle_file(conn, ws, options, &mut stream, &mut have_digests, file)
                            .await?;
                    if event.result.is_ok() {
                        totals.files += 1;
                        totals.bytes += event.bytes;
                        // A scheduled resolve: the server moved the have list itself.
                        if record_have && event.file.action != "resolve" {
                            let rev = if event.file.action == "deleted" {
                                0
                            } else {
                                event.file.rev
                            };
                            have.push(&event.file.depot_file, rev).await?;
                        }
                    } else {
                        totals.failed += 1;
                    }
                    report(&event);
                }
                Some(Body::Summary(summary)) => {
                    totals.server_files = summary.files;
                    totals.server_bytes = summary.bytes;
                }
                Some(Body::Chunk(_)) => {
                    return Err(Error::Protocol("sync content without a file".into()));
                }
                None => {}
            }
        }
        Ok(())
    }
    .await;
    // Record what was written even when the stream broke off.
    let recorded = have.finish().await;
    outcome?;
    recorded?;
    Ok(totals)
}

/// Handles one announced file; per-file problems go into the event, stream failures are errors.
async fn handle_file(
    conn: &Connection,
    ws: &WorkspaceCtx,
    options: &SyncOptions,
    stream: &mut PeekStream<SyncMessage>,
    have_digests: &mut Option<HashMap<String, String>>,
    file: SyncFile,
) -> Result<SyncEvent> {
    let mut event = SyncEvent {
        local: None,
        bytes: 0,
        result: Ok(()),
        file,
    };
    if event.file.action == "deleted" && event.file.client_file.is_empty() {
        // The revision left the view: the server cannot say where it was, so only the have
        // list entry goes (the caller reports the missing local path).
        skip_chunks(stream).await?;
        return Ok(event);
    }
    let local = match ws.local(&event.file.client_file) {
        Ok(path) => path,
        Err(e) => {
            skip_chunks(stream).await?;
            event.result = Err(e);
            return Ok(event);
        }
    };
    event.local = Some(local.clone());
    // An opened file whose head moved: the workspace file stays, a resolve is scheduled.
    if options.preview || options.have_only || event.file.action == "resolve" {
        skip_chunks(stream).await?;
        return Ok(event);
    }
    if !options.force
        && !ws.options.clobber
        && transfer::is_writable_file(&local)
        && !safe_to_overwrite(conn, ws, &event.file, &local, have_digests).await?
    {
        skip_chunks(stream).await?;
        event.result = Err(Error::CantClobber(local));
        return Ok(event);
    }
    if event.file.action == "deleted" {
        event.result = transfer::remove_local(&ws.root, &local, ws.options.rmdir).map(|_| ());
        skip_chunks(stream).await?;
        return Ok(event);
    }
    let mode = LocalMode::for_type(&event.file.file_type, ws.options.allwrite);
    let mut incoming = match IncomingFile::begin(
        local.clone(),
        event.file.compressed,
        &event.file.digest,
        mode,
    ) {
        Ok(incoming) => incoming,
        Err(e) => {
            skip_chunks(stream).await?;
            event.result = Err(e);
            return Ok(event);
        }
    };
    let mut failure = None;
    while let Some(chunk) = next_chunk(stream).await? {
        if failure.is_none()
            && let Err(e) = incoming.write_chunk(&chunk)
        {
            failure = Some(e);
        }
    }
    event.result = match failure {
        Some(e) => Err(e),
        None => incoming.finish().map(|bytes| event.bytes = bytes),
    };
    // `modtime`: the file's modification time is the revision's submit time, as in Perforce.
    if event.result.is_ok() && ws.options.modtime && event.file.mod_time > 0 {
        event.result = transfer::set_modified(&local, event.file.mod_time);
    }
    Ok(event)
}

/// A writable unopened file may be replaced only if no local work would be lost: its content
/// equals the incoming revision, or (with `allwrite`, where every file is writable) the have one.
async fn safe_to_overwrite(
    conn: &Connection,
    ws: &WorkspaceCtx,
    file: &SyncFile,
    local: &std::path::Path,
    have_digests: &mut Option<HashMap<String, String>>,
) -> Result<bool> {
    let Some(local_digest) = transfer::hash_local(local)? else {
        return Ok(true);
    };
    if !file.digest.is_empty() && local_digest.eq_ignore_ascii_case(&file.digest) {
        return Ok(true);
    }
    if !ws.options.allwrite {
        return Ok(false);
    }
    if have_digests.is_none() {
        let records = ws.have(conn, Vec::new()).await?;
        *have_digests = Some(
            records
                .into_iter()
                .map(|r| (r.depot_file, r.head_digest))
                .collect(),
        );
    }
    Ok(have_digests
        .as_ref()
        .and_then(|m| m.get(&file.depot_file))
        .is_some_and(|d| d.eq_ignore_ascii_case(&local_digest)))
}

async fn next_chunk(stream: &mut PeekStream<SyncMessage>) -> Result<Option<Vec<u8>>> {
    match stream.next().await? {
        Some(SyncMessage {
            body: Some(Body::Chunk(bytes)),
        }) => Ok(Some(bytes)),
        Some(other) => {
            stream.push_back(other);
            Ok(None)
        }
        None => Ok(None),
    }
}

async fn skip_chunks(stream: &mut PeekStream<SyncMessage>) -> Result<()> {
    while next_chunk(stream).await?.is_some() {}
    Ok(())
}
