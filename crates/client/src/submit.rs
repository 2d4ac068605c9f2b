//! The submit driver: uploads the content of opened files and commits the change.

use std::collections::HashMap;

use keel_proto::v1::submit_message::Body;
use keel_proto::v1::{
    FileBegin, FileEnd, FileRecord, SubmitBegin, SubmitCommit, SubmitMessage, SubmitReply,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::transfer::{self, LocalMode};
use crate::workspace::WorkspaceCtx;

/// Open actions whose content is uploaded at submit.
pub fn needs_content(action: &str) -> bool {
    matches!(action, "add" | "edit" | "move/add" | "integrate" | "branch")
}

/// Submits pending change `change` (0 = the default changelist) whose opened files are `opened`.
pub async fn submit(
    conn: &Connection,
    ws: &WorkspaceCtx,
    change: u64,
    description: &str,
    opened: &[FileRecord],
) -> Result<SubmitReply> {
    let mut uploads = Vec::new();
    for record in opened.iter().filter(|r| needs_content(&r.action)) {
        let client_file = ws
            .client_file_of(record)
            .ok_or_else(|| Error::BadArgument {
                arg: record.depot_file.clone(),
                reason: "not mapped in the workspace view".into(),
            })?;
        let local = ws.local(&client_file)?;
        if !record.lazy_digest.is_empty() {
            // The server already holds this content (a branch, copy or unshelve); upload only
            // when the workspace copy was changed.
            match transfer::hash_local(&local)? {
                None => continue,
                Some(digest) if digest.eq_ignore_ascii_case(&record.lazy_digest) => continue,
                Some(_) => {}
            }
        }
        uploads.push((record.depot_file.clone(), local));
    }
    let (tx, rx) = mpsc::channel::<SubmitMessage>(8);
    let begin = SubmitMessage {
        body: Some(Body::Begin(SubmitBegin {
            caller: conn.caller(),
            change,
            description: description.to_string(),
        })),
    };
    let producer = tokio::task::spawn_blocking(move || -> Result<()> {
        let send = |body: Body| tx.blocking_send(SubmitMessage { body: Some(body) }).is_ok();
        if tx.blocking_send(begin).is_err() {
            return Ok(());
        }
        for (depot_file, local) in uploads {
            if !send(Body::File(FileBegin { depot_file })) {
                return Ok(());
            }
            let mut open = true;
            let (digest, size) = transfer::read_for_upload(&local, |chunk| {
                open = send(Body::Chunk(chunk));
                open
            })?;
            if !open || !send(Body::FileEnd(FileEnd { digest, size })) {
                return Ok(());
            }
        }
        send(Body::Commit(SubmitCommit {}));
        Ok(())
    });
    let reply = conn.client().submit(ReceiverStream::new(rx)).await;
    let produced = producer
        .await
        .map_err(|e| Error::Protocol(format!("submit upload task failed: {e}")))?;
    // A local read failure explains a refused submit better than the server's complaint.
    produced?;
    // The reply arrives in batches of files; gather them into one.
    let mut stream = reply.map_err(|s| conn.status(s))?.into_inner();
    let mut whole: Option<SubmitReply> = None;
    while let Some(part) = stream.message().await.map_err(|s| conn.status(s))? {
        match whole.as_mut() {
            Some(all) => all.files.extend(part.files),
            None => whole = Some(part),
        }
    }
    whole.ok_or_else(|| Error::Protocol("submit ended without a reply".into()))
}

/// After a successful submit, makes submitted files read-only (unless allwrite or `+w`).
pub fn finish_modes(ws: &WorkspaceCtx, reply: &SubmitReply, opened: &[FileRecord]) -> Result<()> {
    let by_depot: HashMap<&str, &FileRecord> =
        opened.iter().map(|r| (r.depot_file.as_str(), r)).collect();
    for record in &reply.files {
        let opened_record = by_depot.get(record.depot_file.as_str()).copied();
        let action = if record.action.is_empty() {
            opened_record.map_or(record.head_action.as_str(), |r| r.action.as_str())
        } else {
            record.action.as_str()
        };
        if !needs_content(action) && !needs_content(&record.head_action) {
            continue;
        }
        let Some(client_file) = ws
            .client_file_of(record)
            .or_else(|| opened_record.and_then(|r| ws.client_file_of(r)))
        else {
            continue;
        };
        let file_type = [&record.head_type, &record.file_type]
            .into_iter()
            .chain(opened_record.map(|r| &r.file_type))
            .find(|t| !t.is_empty())
            .cloned()
            .unwrap_or_default();
        let mode = LocalMode::for_type(&file_type, ws.options.allwrite);
        if !mode.writable {
            transfer::make_read_only(&ws.local(&client_file)?)?;
        }
    }
    Ok(())
}
