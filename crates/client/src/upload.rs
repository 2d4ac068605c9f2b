//! Streaming opened files' content to the server: the upload step submit and shelve share.
//!
//! The producer reads files on a blocking thread and feeds a bounded channel that becomes the
//! request stream, so memory stays bounded whatever the file sizes. A file whose local content
//! equals the content the server already has for it (`lazy_digest`, e.g. after unshelve) is not
//! uploaded.

use std::future::Future;
use std::path::PathBuf;

use keel_proto::v1::{FileBegin, FileEnd, FileRecord};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::transfer;
use crate::workspace::WorkspaceCtx;

/// Open actions whose content is uploaded.
pub fn needs_content(action: &str) -> bool {
    matches!(action, "add" | "edit" | "move/add" | "integrate" | "branch")
}

/// One message of an upload stream, before it is wrapped in the RPC's own message type.
pub enum UploadPart {
    File(FileBegin),
    Chunk(Vec<u8>),
    FileEnd(FileEnd),
    Commit,
}

/// One file to upload: its depot path and local file.
pub struct Upload {
    pub depot_file: String,
    pub local: PathBuf,
}

/// The files of `opened` whose content must be sent: content-carrying actions, except files
/// whose local content is exactly the lazy content the server already holds.
pub fn plan(ws: &WorkspaceCtx, opened: &[FileRecord]) -> Result<Vec<Upload>> {
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
            // The server already holds this content (branch, copy, unshelve): upload only a
            // changed workspace copy. No local copy (`integrate -v`) submits the server's.
            match transfer::hash_local(&local)? {
                None => continue,
                Some(digest) if digest.eq_ignore_ascii_case(&record.lazy_digest) => continue,
                Some(_) => {}
            }
        }
        uploads.push(Upload {
            depot_file: record.depot_file.clone(),
            local,
        });
    }
    Ok(uploads)
}

/// Sends `begin`, then every upload as file / chunks / file end, then commit, through `call`
/// (the RPC), and returns its reply. A transport failure before `commit` was handed over is
/// [`Error::Interrupted`]: the server commits nothing without it, so the caller may repeat.
pub async fn stream<M, R, F, Fut>(
    conn: &Connection,
    begin: M,
    uploads: Vec<Upload>,
    wrap: fn(UploadPart) -> M,
    call: F,
) -> Result<R>
where
    M: Send + 'static,
    F: FnOnce(ReceiverStream<M>) -> Fut,
    Fut: Future<Output = std::result::Result<tonic::Response<R>, tonic::Status>>,
{
    let (tx, rx) = mpsc::channel::<M>(8);
    let chunk = conn.tuning().upload_chunk_bytes;
    // The producer reports whether it handed `commit` over.
    let producer = tokio::task::spawn_blocking(move || -> Result<bool> {
        let send = |part: UploadPart| tx.blocking_send(wrap(part)).is_ok();
        if tx.blocking_send(begin).is_err() {
            return Ok(false);
        }
        for upload in uploads {
            if !send(UploadPart::File(FileBegin {
                depot_file: upload.depot_file,
            })) {
                return Ok(false);
            }
            let mut open = true;
            let (digest, size) = transfer::read_for_upload(&upload.local, chunk, |piece| {
                open = send(UploadPart::Chunk(piece));
                open
            })?;
            if !open || !send(UploadPart::FileEnd(FileEnd { digest, size })) {
                return Ok(false);
            }
        }
        Ok(send(UploadPart::Commit))
    });
    let reply = call(ReceiverStream::new(rx)).await;
    let produced = producer
        .await
        .map_err(|e| Error::Protocol(format!("upload task failed: {e}")))?;
    // A local read failure explains a refused request better than the server's complaint.
    let committed = produced?;
    match reply {
        Ok(reply) => Ok(reply.into_inner()),
        // A status with a source is a transport failure, not an answer from the server.
        Err(status) if !committed && std::error::Error::source(&status).is_some() => {
            Err(Error::Interrupted {
                reason: conn.status(status).to_string(),
            })
        }
        Err(status) => Err(conn.status(status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_proto::v1::Workspace;

    #[test]
    fn unchanged_lazy_files_are_not_uploaded() {
        let dir = tempfile::tempdir().expect("temp dir");
        let ws = WorkspaceCtx::from_spec(Workspace {
            name: "ws".into(),
            root: dir.path().to_string_lossy().into_owned(),
            view: vec!["//depot/... //ws/...".into()],
            options: "noallwrite noclobber normdir nomodtime".into(),
            ..Workspace::default()
        })
        .expect("workspace");
        std::fs::write(dir.path().join("same.txt"), "shelved\n").expect("write");
        std::fs::write(dir.path().join("changed.txt"), "edited\n").expect("write");
        std::fs::write(dir.path().join("plain.txt"), "new\n").expect("write");
        let shelved = blake3::hash(b"shelved\n").to_hex().to_string();
        let record = |name: &str, action: &str, lazy: &str| FileRecord {
            depot_file: format!("//depot/{name}"),
            client_file: name.into(),
            action: action.into(),
            lazy_digest: lazy.into(),
            ..FileRecord::default()
        };
        let opened = [
            record("same.txt", "edit", &shelved),
            record("changed.txt", "edit", &shelved),
            record("plain.txt", "add", ""),
            record("gone.txt", "delete", ""),
        ];
        let planned: Vec<String> = plan(&ws, &opened)
            .expect("plan")
            .into_iter()
            .map(|u| u.depot_file)
            .collect();
        assert_eq!(planned, ["//depot/changed.txt", "//depot/plain.txt"]);
    }
}
