//! Streaming opened files' content to the server: the upload step submit and shelve share.
//!
//! The producer reads files on a blocking thread and feeds a bounded channel that becomes the
//! request stream, so memory stays bounded whatever the file sizes. A file whose local content
//! equals the content the server already has for it (`lazy_digest`, e.g. after unshelve) is not
//! uploaded.
//!
//! Messages cross the channel in batches of about `TransferConfig::upload_batch_bytes`, and the request stream hands
//! a batch's messages to gRPC back to back, so gRPC encodes them into one large HTTP/2 DATA
//! frame run. Handed over one at a time, a tree of small files became one tiny DATA frame per
//! message (file header, 20-byte chunk, file end); a server that reads them slower than they
//! arrive buffers thousands, and HTTP/2 servers treat that as abuse: the server's h2 closes the
//! connection with `ENHANCE_YOUR_CALM` ("too_many_data_frames") and the client sees a broken
//! pipe.

use crate::keywords::form_of;
use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use keel_core::FileAction;
use keel_proto::v1::{FileBegin, FileEnd, FileRecord};
use tokio::sync::mpsc;
use tokio_stream::Stream;

use crate::actions;
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::paths::LocalResolver;
use crate::transfer;
use crate::workspace::WorkspaceCtx;

/// Open actions whose content is uploaded.
pub fn needs_content(action: FileAction) -> bool {
    matches!(
        action,
        FileAction::Add
            | FileAction::Edit
            | FileAction::MoveAdd
            | FileAction::Integrate
            | FileAction::Branch
    )
}

/// One message of an upload stream, before it is wrapped in the RPC's own message type.
pub enum UploadPart {
    File(FileBegin),
    Chunk(Vec<u8>),
    FileEnd(FileEnd),
    Commit,
}

impl UploadPart {
    /// Roughly the bytes this part takes on the wire (content plus a path or digest).
    fn wire_size(&self) -> usize {
        const OVERHEAD: usize = 16;
        OVERHEAD
            + match self {
                UploadPart::File(f) => f.depot_file.len(),
                UploadPart::Chunk(c) => c.len(),
                UploadPart::FileEnd(e) => e.digest.len() + 8,
                UploadPart::Commit => 0,
            }
    }
}

/// Gathers messages into batches of about `limit` bytes for the request stream.
struct Batcher<M> {
    tx: mpsc::Sender<Vec<M>>,
    batch: Vec<M>,
    bytes: usize,
    limit: usize,
}

impl<M> Batcher<M> {
    /// Adds a message of about `size` bytes; false when the request stream is gone.
    fn push(&mut self, message: M, size: usize) -> bool {
        self.batch.push(message);
        self.bytes += size;
        self.bytes < self.limit || self.flush()
    }

    /// Hands the gathered messages over (waiting while the connection is behind); false when
    /// the request stream is gone.
    fn flush(&mut self) -> bool {
        self.bytes = 0;
        if self.batch.is_empty() {
            return true;
        }
        self.tx
            .blocking_send(std::mem::take(&mut self.batch))
            .is_ok()
    }
}

/// The request stream: yields each batch's messages back to back (ready without waiting), so
/// gRPC encodes a batch into one buffer rather than one DATA frame per message.
pub struct BatchStream<M> {
    rx: mpsc::Receiver<Vec<M>>,
    current: VecDeque<M>,
}

impl<M> Stream for BatchStream<M> {
    type Item = M;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<M>> {
        loop {
            if let Some(message) = self.current.pop_front() {
                return Poll::Ready(Some(message));
            }
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(batch)) => self.current = batch.into(),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

// The stream holds no self-references; it may move freely between polls.
impl<M> Unpin for BatchStream<M> {}

/// One file to upload: its depot path and local file.
#[derive(Clone, Debug)]
pub struct Upload {
    pub depot_file: String,
    pub local: PathBuf,
    /// The keywords the file's type expands: its content is sent un-expanded.
    pub keywords: crate::keywords::StoredForm,
}

/// Decides, one opened record at a time, which files' content must be sent: content-carrying
/// actions, except files whose local content is exactly the lazy content the server already
/// holds. Records are looked at and let go, so a plan holds only the uploads.
pub struct Planner<'a> {
    ws: &'a WorkspaceCtx,
    resolver: LocalResolver,
    uploads: Vec<Upload>,
    /// The directory of the last lazy copy found missing, and whether that directory exists:
    /// records come in path order, so a branch never written into the workspace costs one
    /// look per directory rather than one per file.
    last_dir: Option<(PathBuf, bool)>,
}

impl<'a> Planner<'a> {
    pub fn new(ws: &'a WorkspaceCtx) -> Planner<'a> {
        Planner {
            ws,
            resolver: ws.resolver(),
            uploads: Vec::new(),
            last_dir: None,
        }
    }

    /// Plans one opened record. Returns the local file when the record carries content and
    /// the file is in the workspace (uploaded, or a lazy copy present unchanged); `None` for
    /// other actions and for a lazy copy with no local file (`integrate -v`), which submits
    /// the server's content.
    pub fn add(&mut self, record: &FileRecord) -> Result<Option<PathBuf>> {
        if !actions::from_wire(record.action()).is_some_and(needs_content) {
            return Ok(None);
        }
        let client_file = self
            .ws
            .client_file_of(record)
            .ok_or_else(|| Error::BadArgument {
                arg: record.depot_file.clone(),
                reason: "not mapped in the workspace view".into(),
            })?;
        let local = self.resolver.resolve(&client_file)?;
        if !record.lazy_digest.is_empty() {
            // The server already holds this content (branch, copy, unshelve): upload only a
            // changed workspace copy.
            if self.in_missing_dir(&local) {
                return Ok(None);
            }
            match transfer::hash_local_as(&local, form_of(&record.file_type))? {
                None => {
                    self.note_missing(&local);
                    return Ok(None);
                }
                Some(digest) if digest.eq_ignore_ascii_case(&record.lazy_digest) => {
                    return Ok(Some(local));
                }
                Some(_) => {}
            }
        }
        self.uploads.push(Upload {
            depot_file: record.depot_file.clone(),
            local: local.clone(),
            keywords: form_of(&record.file_type),
        });
        Ok(Some(local))
    }

    /// Whether `local`'s directory was found missing (so `local` cannot exist either).
    fn in_missing_dir(&self, local: &Path) -> bool {
        matches!(&self.last_dir, Some((dir, false)) if Some(dir.as_path()) == local.parent())
    }

    /// `local` is missing: finds out, once per directory, whether its directory is too.
    fn note_missing(&mut self, local: &Path) {
        let Some(dir) = local.parent() else { return };
        if self.last_dir.as_ref().is_some_and(|(d, _)| d == dir) {
            return;
        }
        let exists = std::fs::symlink_metadata(dir).is_ok();
        self.last_dir = Some((dir.to_path_buf(), exists));
    }

    /// The files to upload, in the order their records came.
    pub fn finish(self) -> Vec<Upload> {
        self.uploads
    }
}

/// `local`'s own modification time in seconds since the epoch (a symlink's own, not its
/// target's), recorded with the revision for `+m` and `modtime` syncs; 0 when unreadable.
fn mod_time_of(local: &Path) -> i64 {
    std::fs::symlink_metadata(local)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

/// The files of `opened` whose content must be sent (see [`Planner`]).
pub fn plan(ws: &WorkspaceCtx, opened: &[FileRecord]) -> Result<Vec<Upload>> {
    let mut planner = Planner::new(ws);
    for record in opened {
        planner.add(record)?;
    }
    Ok(planner.finish())
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
    F: FnOnce(BatchStream<M>) -> Fut,
    Fut: Future<Output = std::result::Result<tonic::Response<R>, tonic::Status>>,
{
    let chunk = conn.tuning().upload_chunk_bytes;
    let (batch_bytes, in_flight) = (
        conn.tuning().upload_batch_bytes,
        conn.tuning().upload_batches_in_flight,
    );
    let (tx, rx) = mpsc::channel::<Vec<M>>(in_flight);
    // The producer reports whether it handed `commit` over.
    let producer = tokio::task::spawn_blocking(move || -> Result<bool> {
        let mut batcher = Batcher {
            tx,
            batch: Vec::new(),
            bytes: 0,
            limit: batch_bytes,
        };
        // The opening message goes alone, so the server plans the change while the files are
        // still being read here.
        if !(batcher.push(begin, 0) && batcher.flush()) {
            return Ok(false);
        }
        let mut send = |part: UploadPart| {
            let size = part.wire_size();
            batcher.push(wrap(part), size)
        };
        for upload in uploads {
            if !send(UploadPart::File(FileBegin {
                depot_file: upload.depot_file,
            })) {
                return Ok(false);
            }
            let mut open = true;
            let (digest, size) =
                transfer::read_for_upload_as(&upload.local, upload.keywords, chunk, |piece| {
                    open = send(UploadPart::Chunk(piece));
                    open
                })?;
            let mod_time = mod_time_of(&upload.local);
            if !open
                || !send(UploadPart::FileEnd(FileEnd {
                    digest,
                    size,
                    mod_time,
                }))
            {
                return Ok(false);
            }
        }
        Ok(send(UploadPart::Commit) && batcher.flush())
    });
    let reply = call(BatchStream {
        rx,
        current: VecDeque::new(),
    })
    .await;
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
    use keel_proto::v1::{FileAction as WireAction, Workspace};

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
        let record = |name: &str, action: WireAction, lazy: &str| FileRecord {
            depot_file: format!("//depot/{name}"),
            client_file: name.into(),
            action: action as i32,
            lazy_digest: lazy.into(),
            ..FileRecord::default()
        };
        let opened = [
            record("same.txt", WireAction::Edit, &shelved),
            record("changed.txt", WireAction::Edit, &shelved),
            record("plain.txt", WireAction::Add, ""),
            record("gone.txt", WireAction::Delete, ""),
            record("virtual.txt", WireAction::Branch, &shelved),
            record("rel/one.txt", WireAction::Branch, &shelved),
            record("rel/two.txt", WireAction::Branch, &shelved),
        ];
        let planned: Vec<String> = plan(&ws, &opened)
            .expect("plan")
            .into_iter()
            .map(|u| u.depot_file)
            .collect();
        assert_eq!(planned, ["//depot/changed.txt", "//depot/plain.txt"]);
        // The local files a submit touches: present and content-carrying, uploaded or not.
        let mut planner = Planner::new(&ws);
        let touched: Vec<Option<PathBuf>> = opened
            .iter()
            .map(|r| planner.add(r).expect("plan"))
            .collect();
        let local = |name: &str| Some(dir.path().join(name));
        assert_eq!(
            touched,
            [
                local("same.txt"),
                local("changed.txt"),
                local("plain.txt"),
                None,
                None,
                None,
                None
            ]
        );
        // A directory made after it was found missing is looked at again by a new plan.
        std::fs::create_dir(dir.path().join("rel")).expect("mkdir");
        std::fs::write(dir.path().join("rel/two.txt"), "shelved\n").expect("write");
        let mut planner = Planner::new(&ws);
        assert_eq!(planner.add(&opened[5]).expect("plan"), None);
        assert_eq!(planner.add(&opened[6]).expect("plan"), local("rel/two.txt"));
    }
}
