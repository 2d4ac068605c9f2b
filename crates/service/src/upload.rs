//! Receiving file content from a client: the streamed upload step submit and shelve share.
//!
//! A client announces a file, sends its bytes in chunks and ends with the digest and size it
//! computed; the content lands in the blob store as it arrives and is checked against that claim.
//! Which files may be uploaded, and which must be, is decided by the command that owns the
//! upload (open actions that carry content; files with lazy content need no upload).

use crate::error::UploadError;
use crate::upload_pool::{Done, HashPool, checked};
use crate::{Service, ServiceError};
use keel_blob::{BlobInfo, BlobStore, BlobWriter, PendingBlob};
use keel_core::{ChangeNumber, DepotPath, Digest, FileAction};
use keel_store::OpenedRow;
use std::collections::{BTreeMap, HashMap};

/// Open actions whose revision carries content.
pub(crate) fn needs_content(action: FileAction) -> bool {
    matches!(
        action,
        FileAction::Add
            | FileAction::Edit
            | FileAction::MoveAdd
            | FileAction::Branch
            | FileAction::Integrate
    )
}

/// Content uploaded for a set of opened files.
pub struct Uploads {
    /// The opened files content may be sent for, by depot path: all of them (shelve), or only
    /// those whose content must be sent (submit, see `others`).
    files: BTreeMap<DepotPath, OpenedRow>,
    /// Submit: the workspace and change whose other open records (lazy content, optional
    /// upload) are looked up in the store when the client sends content for one.
    others: Option<(String, ChangeNumber)>,
    /// Each path's content, with the order its file was sent in: a path sent twice keeps
    /// what was sent last, whichever hashing thread finished first.
    uploaded: HashMap<String, (u64, BlobInfo)>,
    /// The modification time the client recorded for each path it sent (the last one sent).
    mod_times: HashMap<String, i64>,
    /// Received content not yet durable: published in batches, at the latest by `finish`.
    pending: Vec<PendingBlob>,
    pending_bytes: u64,
    current: Option<(String, Receiving)>,
    /// Files begun so far: the next file's sequence number.
    sent: u64,
    /// Hashes and compresses whole small files beside the receive loop; made at the first.
    pool: Option<HashPool>,
}

/// The file being received.
enum Receiving {
    /// Small so far: its bytes, hashed and compressed on a pool thread once it ends.
    Whole(Vec<u8>),
    /// Past `ServiceConfig::upload_whole_bytes`: streamed through a writer as it arrives.
    Streaming(Box<BlobWriter>),
}

impl Uploads {
    pub(crate) fn new(files: BTreeMap<DepotPath, OpenedRow>) -> Uploads {
        Uploads {
            files,
            others: None,
            uploaded: HashMap::new(),
            mod_times: HashMap::new(),
            pending: Vec::new(),
            pending_bytes: 0,
            current: None,
            sent: 0,
            pool: None,
        }
    }

    /// Uploads for a submit: `required` are the open records whose content must be sent; any
    /// other open record of `workspace`'s `change` may be sent too (a changed lazy copy) and is
    /// looked up when it is, so a branch of any size holds no open record here.
    pub(crate) fn for_change(
        required: BTreeMap<DepotPath, OpenedRow>,
        workspace: &str,
        change: ChangeNumber,
    ) -> Uploads {
        let mut uploads = Uploads::new(required);
        uploads.others = Some((workspace.to_string(), change));
        uploads
    }

    /// The open record content is being sent for.
    fn opened(&self, service: &Service, depot_file: &str) -> Result<OpenedRow, ServiceError> {
        if let Some(row) = self.files.get(depot_file) {
            return Ok(row.clone());
        }
        let found = match &self.others {
            Some((workspace, change)) => match DepotPath::parse(depot_file) {
                Ok(path) => service
                    .meta
                    .snapshot()?
                    .opened_file(&path)?
                    .into_iter()
                    .find(|r| &r.workspace == workspace && r.change == *change),
                // A text that is no depot path is opened nowhere.
                Err(_) => None,
            },
            None => None,
        };
        found.ok_or_else(|| {
            UploadError::NotInChange {
                path: depot_file.to_string(),
            }
            .into()
        })
    }

    /// Depot paths the client must upload, in order: content-carrying files without lazy content.
    pub fn expected(&self) -> impl Iterator<Item = &str> {
        self.files
            .values()
            .filter(|r| needs_content(r.action) && r.lazy.is_none())
            .map(|r| r.path.as_str())
    }

    /// Starts receiving one file's content.
    pub fn begin_file(&mut self, service: &Service, depot_file: &str) -> Result<(), ServiceError> {
        if let Some((path, _)) = &self.current {
            return Err(UploadError::Unfinished { path: path.clone() }.into());
        }
        let row = self.opened(service, depot_file)?;
        if !needs_content(row.action) {
            return Err(UploadError::TakesNoContent {
                path: depot_file.to_string(),
                action: row.action,
            }
            .into());
        }
        self.current = Some((depot_file.to_string(), Receiving::Whole(Vec::new())));
        Ok(())
    }

    pub fn write_chunk(&mut self, service: &Service, data: &[u8]) -> Result<(), ServiceError> {
        let (_, receiving) = self.current.as_mut().ok_or(UploadError::OutOfOrder {
            what: "file content sent before its file header",
        })?;
        match receiving {
            Receiving::Whole(bytes)
                if bytes.len() + data.len() <= service.config.upload_whole_bytes =>
            {
                bytes.extend_from_slice(data);
            }
            Receiving::Whole(bytes) => {
                let mut writer = service.blobs.writer()?;
                writer.write(bytes)?;
                writer.write(data)?;
                *receiving = Receiving::Streaming(Box::new(writer));
            }
            Receiving::Streaming(writer) => writer.write(data)?,
        }
        Ok(())
    }

    /// Finishes one file; the client's digest and size must match what arrived. A small file
    /// is checked on a pool thread: a mismatch fails a later call, at the latest `finish`.
    pub fn end_file(
        &mut self,
        service: &Service,
        digest: &str,
        size: u64,
    ) -> Result<(), ServiceError> {
        self.end_file_at(service, digest, size, 0)
    }

    /// [`Uploads::end_file`] with the file's own modification time as the client read it
    /// (seconds since the epoch; 0: none recorded), which the revision or shelved file keeps.
    pub fn end_file_at(
        &mut self,
        service: &Service,
        digest: &str,
        size: u64,
        mod_time: i64,
    ) -> Result<(), ServiceError> {
        let (path, receiving) = self.current.take().ok_or(UploadError::OutOfOrder {
            what: "file end sent before its file header",
        })?;
        self.mod_times.insert(path.clone(), mod_time.max(0));
        let seq = self.sent;
        self.sent += 1;
        match receiving {
            Receiving::Whole(bytes) => {
                self.pool
                    .get_or_insert_with(|| {
                        HashPool::new(
                            service.blobs.clone(),
                            service.config.upload_threads,
                            service.config.upload_batch_bytes,
                        )
                    })
                    .submit(seq, path, bytes, digest.to_string(), size)?;
                while let Some(done) = self.pool.as_mut().and_then(|pool| pool.next(false)) {
                    self.accept(service, done?)?;
                }
                Ok(())
            }
            Receiving::Streaming(writer) => {
                let pending = checked(&path, digest, size, (*writer).finish()?);
                self.accept(service, (seq, path, pending))
            }
        }
    }

    /// Takes in one checked file: remembered under its path, and published with its batch.
    fn accept(
        &mut self,
        service: &Service,
        (seq, path, pending): Done,
    ) -> Result<(), ServiceError> {
        let pending = pending?;
        let info = pending.info.clone();
        match self.uploaded.get(&path) {
            Some((newer, _)) if *newer > seq => {}
            _ => {
                self.uploaded.insert(path, (seq, info));
            }
        }
        self.pending_bytes += pending.info.stored_size;
        self.pending.push(pending);
        if self.pending_bytes > service.config.publish_batch_bytes {
            // Small blobs wait in memory; past the budget they are published early (until the
            // command commits they are unreferenced, which is harmless).
            self.pending_bytes = 0;
            service.blobs.publish(std::mem::take(&mut self.pending))?;
        }
        Ok(())
    }

    /// Ends the upload: every expected file arrived, none is half-sent, and all content is
    /// durable under its digest (one flush for the batch) before any metadata refers to it.
    pub(crate) fn finish(mut self, service: &Service) -> Result<FileContents, ServiceError> {
        if let Some((path, _)) = &self.current {
            return Err(UploadError::Unfinished { path: path.clone() }.into());
        }
        while let Some(done) = self.pool.as_mut().and_then(|pool| pool.next(true)) {
            self.accept(service, done?)?;
        }
        if let Some(missing) = self.expected().find(|p| !self.uploaded.contains_key(*p)) {
            return Err(UploadError::Missing {
                path: missing.to_string(),
            }
            .into());
        }
        service.blobs.publish(self.pending)?;
        Ok(FileContents {
            files: self.files,
            uploaded: self
                .uploaded
                .into_iter()
                .map(|(path, (_, info))| (path, info))
                .collect(),
            mod_times: self.mod_times,
        })
    }
}

/// The opened files of a finished upload and the content each one carries.
pub(crate) struct FileContents {
    pub files: BTreeMap<DepotPath, OpenedRow>,
    uploaded: HashMap<String, BlobInfo>,
    mod_times: HashMap<String, i64>,
}

/// A file's content: the uploaded blob, else the lazy copy the open record carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileContent {
    pub digest: Digest,
    pub size: u64,
    pub md5: String,
    /// The file's recorded modification time (0: none).
    pub mod_time: i64,
}

impl FileContents {
    /// Whether the client sent content for `path` (rather than relying on lazy content).
    pub(crate) fn was_uploaded(&self, path: &DepotPath) -> bool {
        self.uploaded.contains_key(path.as_str())
    }

    /// Files the client sent content for although their open record carried some (a lazy
    /// copy changed in the workspace): the uploads beyond the required ones.
    pub(crate) fn resent(&self) -> impl Iterator<Item = &str> {
        self.uploaded
            .keys()
            .map(String::as_str)
            .filter(|p| !self.files.contains_key(*p))
    }

    pub(crate) fn content_of(&self, row: &OpenedRow) -> Option<FileContent> {
        match self.uploaded.get(row.path.as_str()) {
            Some(info) => Some(FileContent {
                digest: info.digest,
                size: info.size,
                md5: info.md5.clone(),
                mod_time: self.mod_times.get(row.path.as_str()).copied().unwrap_or(0),
            }),
            None if needs_content(row.action) => row.lazy.as_ref().map(|l| FileContent {
                digest: l.digest,
                size: l.size,
                md5: l.md5.clone(),
                mod_time: l.mod_time,
            }),
            None => None,
        }
    }
}

/// Refuses when content a write job is about to reference is gone from the blob store.
///
/// Call inside the write job that adds the reference: obliterate's purge step deletes blobs
/// inside write jobs too, so the writer orders the two and a purged blob is never referenced.
pub(crate) fn check_present(
    blobs: &dyn BlobStore,
    path: &DepotPath,
    digest: &Digest,
) -> Result<(), ServiceError> {
    if blobs.contains(digest)? {
        Ok(())
    } else {
        Err(ServiceError::ContentPurged {
            path: path.to_string(),
            digest: digest.to_hex(),
        })
    }
}
