//! Reading a journal file record by record: checksums verified, positions checked to follow
//! one another, and a torn tail (a record cut short or damaged at the very end) told apart
//! from damage in the middle.

use super::JournalError;
use super::format::{
    Encoding, FILE_HEADER_LEN, FileHeader, RECORD_HEADER_LEN, RecordHeader, Target,
};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One record read from a journal file.
#[derive(Debug)]
pub struct Record {
    pub position: u64,
    /// The record's commit never happened: readers skip it.
    pub void: bool,
    pub target: Target,
    /// Schema version of the database the changeset was taken from.
    pub schema: u16,
    /// Where the record starts in its file.
    pub offset: u64,
    /// Bytes from the start of the header to the end of the body.
    pub len: u64,
    encoding: Encoding,
    raw_len: u64,
    body: Vec<u8>,
}

impl Record {
    /// The record's changeset, decompressed (empty for a dropped have list). A body that does
    /// not decompress is damage in `path` (the file the record was read from).
    pub fn changeset(&self, path: &Path) -> Result<Vec<u8>, JournalError> {
        match self.encoding {
            Encoding::Raw => Ok(self.body.clone()),
            Encoding::Zstd => zstd::bulk::decompress(&self.body, self.raw_len as usize),
        }
        .map_err(|e| JournalError::Damaged {
            path: path.to_path_buf(),
            offset: self.offset,
            reason: format!(
                "record at position {} does not decompress: {e}",
                self.position
            ),
        })
    }
}

/// What follows the last complete record of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// Where the torn record starts; the file is complete up to here.
    pub offset: u64,
    /// Bytes after `offset`.
    pub bytes: u64,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads one journal file from the start.
pub struct JournalFile {
    path: PathBuf,
    header: FileHeader,
    reader: BufReader<File>,
    offset: u64,
    len: u64,
    next_position: u64,
    torn: Option<TornTail>,
}

impl JournalFile {
    /// Opens `path` and checks its file header.
    pub fn open(path: &Path) -> Result<JournalFile, JournalError> {
        let io = |source| JournalError::Io {
            path: path.into(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut bytes = [0u8; FILE_HEADER_LEN];
        reader.read_exact(&mut bytes).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                JournalError::BadFile {
                    path: path.into(),
                    reason: "shorter than a journal file header".into(),
                }
            } else {
                io(e)
            }
        })?;
        let header = FileHeader::decode(&bytes).map_err(|e| JournalError::BadFile {
            path: path.into(),
            reason: e.to_string(),
        })?;
        Ok(JournalFile {
            path: path.into(),
            header,
            reader,
            offset: FILE_HEADER_LEN as u64,
            len,
            next_position: header.first_position,
            torn: None,
        })
    }

    /// Opens `path` to read on from `offset`, where the record at `next_position` starts (where
    /// an earlier reader of the same file stopped: a live file grows between readings).
    pub fn open_at(
        path: &Path,
        offset: u64,
        next_position: u64,
    ) -> Result<JournalFile, JournalError> {
        let mut file = JournalFile::open(path)?;
        if offset > file.len {
            return Err(JournalError::BadFile {
                path: path.into(),
                reason: format!(
                    "shorter ({} bytes) than an earlier reading ({offset})",
                    file.len
                ),
            });
        }
        file.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| file.io(e))?;
        file.offset = offset;
        file.next_position = next_position;
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> FileHeader {
        self.header
    }

    /// Position the next record will have (one past the last one read).
    pub fn next_position(&self) -> u64 {
        self.next_position
    }

    /// Where the complete records end (the file's length unless the tail is torn).
    pub fn complete_len(&self) -> u64 {
        self.offset
    }

    /// The torn tail found at the end, once `next` has returned `None`.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// The next complete record, `None` at the end of the complete records (see
    /// [`JournalFile::torn_tail`]). Damage followed by more data is an error.
    pub fn next_record(&mut self) -> Result<Option<Record>, JournalError> {
        if self.torn.is_some() || self.offset == self.len {
            return Ok(None);
        }
        let remaining = self.len - self.offset;
        let torn = |reason: String| TornTail {
            offset: self.offset,
            bytes: remaining,
            reason,
        };
        if remaining < RECORD_HEADER_LEN as u64 {
            self.torn = Some(torn(format!(
                "{remaining} bytes, shorter than a record header"
            )));
            return Ok(None);
        }
        let mut raw = [0u8; RECORD_HEADER_LEN];
        self.reader.read_exact(&mut raw).map_err(|e| self.io(e))?;
        let header = match RecordHeader::decode(&raw) {
            Ok(header) => header,
            Err(e) => {
                // Zeros or garbage at the end are a write the crash cut short; damage with
                // records after it is not.
                let mut rest = Vec::new();
                self.reader.read_to_end(&mut rest).map_err(|e| self.io(e))?;
                if raw.iter().chain(rest.iter()).all(|b| *b == 0) {
                    self.torn = Some(torn(format!("zero bytes where a record should be ({e})")));
                    return Ok(None);
                }
                return Err(self.damaged(format!("unreadable record header: {e}")));
            }
        };
        if header.total_len() > remaining {
            self.torn = Some(torn(format!(
                "record at position {} is cut short: {} of its {} bytes are there",
                header.position,
                remaining,
                header.total_len()
            )));
            return Ok(None);
        }
        let mut name = vec![0u8; header.name_len];
        self.reader.read_exact(&mut name).map_err(|e| self.io(e))?;
        let mut body = vec![0u8; header.body_len as usize];
        self.reader.read_exact(&mut body).map_err(|e| self.io(e))?;
        if !header.verify(&raw, &name, &body) {
            if header.total_len() == remaining {
                self.torn = Some(torn(format!(
                    "record at position {} fails its checksum",
                    header.position
                )));
                return Ok(None);
            }
            return Err(self.damaged(format!(
                "record at position {} fails its checksum",
                header.position
            )));
        }
        if header.position != self.next_position {
            return Err(JournalError::Gap {
                path: self.path.clone(),
                expected: self.next_position,
                found: header.position,
            });
        }
        let target = header
            .target(name)
            .map_err(|e| self.damaged(e.to_string()))?;
        let record = Record {
            position: header.position,
            void: header.void,
            target,
            schema: header.schema,
            offset: self.offset,
            len: header.total_len(),
            encoding: header.encoding,
            raw_len: header.raw_len,
            body,
        };
        self.offset += header.total_len();
        self.next_position += 1;
        Ok(Some(record))
    }

    fn io(&self, source: std::io::Error) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn damaged(&self, reason: String) -> JournalError {
        JournalError::Damaged {
            path: self.path.clone(),
            offset: self.offset,
            reason,
        }
    }
}
