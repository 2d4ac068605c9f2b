//! Reading file content from the server (the Print stream): decompress, verify, deliver.
//! A keyword file's (`+k`) content is delivered expanded, as `print` and a workspace show it;
//! a `utf16` file's is delivered as stored (UTF-8) to readers and written as UTF-16 to files.

use std::io::Write;
use std::path::{Path, PathBuf};

use keel_proto::v1::content_message::Body;
use keel_proto::v1::{ContentHeader, ContentMessage, FileRecord, FilesRequest};

use keel_core::KeywordValues;
use keel_core::keyword::expand;

use crate::connect::Connection;
use crate::error::{Error, IoContext, Result};
use crate::keywords::{StoredForm, form_of};
use crate::stream::PeekStream;
use crate::transfer::{ContentDecoder, IncomingFile, LocalMode};

/// A Print stream read file by file.
pub struct ContentStream {
    stream: PeekStream<ContentMessage>,
    /// The current file's record when its workspace form is not its stored form.
    keyworded: Option<FileRecord>,
}

impl ContentStream {
    /// Starts printing `files` (depot or workspace syntax, with revisions).
    pub async fn open(conn: &Connection, files: Vec<String>) -> Result<ContentStream> {
        ContentStream::open_for(conn, files, "print").await
    }

    /// Starts reading `files` for `purpose` (`diff`, `unshelve`, `integrate`, `resolve`,
    /// `revert`), which the server's audit log records as the action.
    pub async fn open_for(
        conn: &Connection,
        files: Vec<String>,
        purpose: &str,
    ) -> Result<ContentStream> {
        let inner = conn
            .reply(conn.client().print(FilesRequest {
                caller: conn.caller(),
                files,
                purpose: purpose.to_string(),
                ..Default::default()
            }))
            .await?;
        Ok(ContentStream {
            stream: PeekStream::new(conn, inner),
            keyworded: None,
        })
    }

    /// The next file and its content header (None when the revision has no content).
    /// Unread chunks of the previous file are skipped.
    pub async fn next_file(&mut self) -> Result<Option<(FileRecord, Option<ContentHeader>)>> {
        loop {
            let Some(message) = self.stream.next().await? else {
                return Ok(None);
            };
            match message.body {
                Some(Body::File(record)) => {
                    self.keyworded =
                        (form_of(&record.head_type) != StoredForm::PLAIN).then(|| record.clone());
                    let header = match self.stream.next().await? {
                        Some(ContentMessage {
                            body: Some(Body::Header(h)),
                        }) => Some(h),
                        Some(other) => {
                            self.stream.push_back(other);
                            None
                        }
                        None => None,
                    };
                    return Ok(Some((record, header)));
                }
                Some(Body::Header(_)) => {
                    return Err(Error::Protocol("content header without a file".into()));
                }
                Some(Body::Chunk(_)) | None => continue,
            }
        }
    }

    /// The next content chunk of the current file, or None when it is complete.
    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        match self.stream.next().await? {
            Some(ContentMessage {
                body: Some(Body::Chunk(bytes)),
            }) => Ok(Some(bytes)),
            Some(other) => {
                self.stream.push_back(other);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// Decodes the current file's content into `sink`, verifying its digest.
    pub async fn copy_to<W: Write>(
        &mut self,
        sink: W,
        header: &ContentHeader,
        label: &Path,
    ) -> Result<(W, u64)> {
        if let Some(record) = self.keyworded.take() {
            let expanded = self.expanded(&record, header, label, false).await?;
            let mut sink = sink;
            sink.write_all(&expanded).at(label)?;
            return Ok((sink, expanded.len() as u64));
        }
        let mut decoder = ContentDecoder::new(sink, header.compressed, &header.digest).at(label)?;
        while let Some(chunk) = self.next_chunk().await? {
            decoder.write_chunk(&chunk).at(label)?;
        }
        decoder.finish(label)
    }

    /// A keyword or `utf16` file's content, verified as stored, then expanded for `record`'s
    /// revision (and, for a `workspace` file, converted to its workspace form).
    async fn expanded(
        &mut self,
        record: &FileRecord,
        header: &ContentHeader,
        label: &Path,
        workspace: bool,
    ) -> Result<Vec<u8>> {
        let mut decoder =
            ContentDecoder::new(Vec::new(), header.compressed, &header.digest).at(label)?;
        while let Some(chunk) = self.next_chunk().await? {
            decoder.write_chunk(&chunk).at(label)?;
        }
        let (raw, _) = decoder.finish(label)?;
        let values = KeywordValues {
            depot_file: &record.depot_file,
            rev: record.head_rev,
            change: record.head_change,
            time: i64::try_from(record.head_time).unwrap_or(i64::MAX),
            author: &record.user,
        };
        Ok(raw_and_values(
            raw,
            &values,
            form_of(&record.head_type),
            workspace,
        ))
    }

    /// Reads the current file's content into memory.
    pub async fn read_all(&mut self, header: &ContentHeader, label: &str) -> Result<Vec<u8>> {
        let capacity = usize::try_from(header.size.min(64 << 20)).unwrap_or(0);
        let (bytes, _) = self
            .copy_to(Vec::with_capacity(capacity), header, Path::new(label))
            .await?;
        Ok(bytes)
    }

    /// Writes the current file's content to `target` atomically with the given mode.
    pub async fn write_file(
        &mut self,
        header: &ContentHeader,
        target: PathBuf,
        mode: LocalMode,
    ) -> Result<u64> {
        self.write_file_at(header, target, mode, None).await
    }

    /// [`ContentStream::write_file`], giving the file the modification time `modified`
    /// (seconds since the epoch; `None`: the time of writing). See [`kept_mod_time`].
    pub async fn write_file_at(
        &mut self,
        header: &ContentHeader,
        target: PathBuf,
        mode: LocalMode,
        modified: Option<u64>,
    ) -> Result<u64> {
        let with_time = |incoming: IncomingFile<'static>| match modified {
            Some(secs) => incoming.modified(secs),
            None => incoming,
        };
        if let Some(record) = self.keyworded.take() {
            let expanded = self.expanded(&record, header, &target, true).await?;
            let mut incoming = with_time(IncomingFile::begin(target, false, "", mode)?);
            incoming.write_chunk(&expanded)?;
            return incoming.finish();
        }
        let mut incoming = with_time(IncomingFile::begin(
            target,
            header.compressed,
            &header.digest,
            mode,
        )?);
        let mut failure = None;
        while let Some(chunk) = self.next_chunk().await? {
            if failure.is_none()
                && let Err(e) = incoming.write_chunk(&chunk)
            {
                failure = Some(e);
            }
        }
        match failure {
            Some(e) => Err(e),
            None => incoming.finish(),
        }
    }
}

/// The modification time a workspace file written from `record`'s revision gets: for a `+m`
/// `file_type`, or any file of a `modtime` workspace, the time recorded at submit (else the
/// revision's submit time); `None` (the time of writing) otherwise.
pub fn kept_mod_time(record: &FileRecord, file_type: &str, modtime: bool) -> Option<u64> {
    let keep = modtime || keel_core::FileType::parse(file_type).is_ok_and(|t| t.modtime);
    let time = u64::try_from(record.head_mod_time)
        .ok()
        .filter(|t| *t > 0)
        .unwrap_or(record.head_time);
    (keep && time > 0).then_some(time)
}

/// Stored content `raw` expanded for `values`: as the workspace holds it when `workspace`,
/// else with keywords expanded only (`utf16` text stays UTF-8, for display and diff).
fn raw_and_values(
    raw: Vec<u8>,
    values: &KeywordValues<'_>,
    form: StoredForm,
    workspace: bool,
) -> Vec<u8> {
    if workspace {
        crate::keywords::to_workspace(raw, form, values)
    } else {
        expand(&raw, form.keywords, values).into_owned()
    }
}
