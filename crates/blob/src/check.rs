//! Re-reading a stored blob to recompute its content's BLAKE3 digest (what `verify` checks).
//!
//! The stored bytes are decoded as the store wrote them (raw, or one zstd stream) and hashed
//! chunk by chunk, so memory stays at one read buffer whatever the blob's size. A failure is an
//! answer, not an error: damaged stored bytes are [`ContentCheck::Undecodable`], a file the
//! system cannot read is [`ContentCheck::Unreadable`], and a verify goes on to the next blob.

use crate::{BlobStore, Encoding, StoredBlob};
use keel_core::Digest;
use std::cell::RefCell;
use std::io::{self, BufReader, Read};
use std::rc::Rc;

/// What re-reading one stored blob found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentCheck {
    /// The stored bytes decode to content with this BLAKE3 digest and size.
    Content { digest: Digest, size: u64 },
    /// The store holds no blob under the digest.
    Missing,
    /// The stored bytes are not a valid encoding (a damaged or truncated zstd stream);
    /// `reason` is the decoder's message.
    Undecodable { reason: String },
    /// The blob could not be read (an I/O error on its file); `reason` names the file.
    Unreadable { reason: String },
}

/// A finished check, with the stored bytes it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedContent {
    pub check: ContentCheck,
    /// Bytes read from the stored file (compressed bytes for a zstd blob).
    pub stored_bytes: u64,
}

/// Opens the blob named `digest` (only if held: nothing is fetched) and recomputes its content's digest, reading the stored file
/// `buf.len()` bytes at a time. Returns `None` when `stop` says so between two reads (the
/// caller went away); a check never fails otherwise.
pub fn check_content(
    store: &dyn BlobStore,
    digest: &Digest,
    buf: &mut [u8],
    stop: &dyn Fn() -> bool,
) -> Option<CheckedContent> {
    let blob = match store.open_held(digest) {
        Ok(Some(blob)) => blob,
        Ok(None) => {
            return Some(CheckedContent {
                check: ContentCheck::Missing,
                stored_bytes: 0,
            });
        }
        Err(e) => {
            return Some(CheckedContent {
                check: ContentCheck::Unreadable {
                    reason: e.to_string(),
                },
                stored_bytes: 0,
            });
        }
    };
    recompute(blob, buf, stop)
}

/// Decodes and hashes an opened blob (see [`check_content`]).
pub fn recompute(
    blob: StoredBlob,
    buf: &mut [u8],
    stop: &dyn Fn() -> bool,
) -> Option<CheckedContent> {
    let tracked = Tracked {
        inner: blob.reader,
        read: Rc::new(RefCell::new(0)),
        failure: Rc::new(RefCell::new(None)),
    };
    let (read, failure) = (tracked.read.clone(), tracked.failure.clone());
    let chunk = buf.len().max(1);
    let mut content: Box<dyn Read> = match blob.encoding {
        Encoding::Raw => Box::new(tracked),
        Encoding::Zstd => {
            match zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(chunk, tracked))
            {
                Ok(decoder) => Box::new(decoder),
                Err(e) => {
                    return Some(CheckedContent {
                        check: ContentCheck::Undecodable {
                            reason: e.to_string(),
                        },
                        stored_bytes: 0,
                    });
                }
            }
        }
    };
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    let outcome = loop {
        if stop() {
            return None;
        }
        match content.read(buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                hasher.update(&buf[..n]);
                size += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let check = match outcome {
        Ok(()) => ContentCheck::Content {
            digest: Digest(*hasher.finalize().as_bytes()),
            size,
        },
        // An error the file itself raised is a read failure; any other came from the decoder.
        Err(e) => match failure.borrow_mut().take() {
            Some(reason) => ContentCheck::Unreadable { reason },
            None => ContentCheck::Undecodable {
                reason: e.to_string(),
            },
        },
    };
    let stored_bytes = *read.borrow();
    Some(CheckedContent {
        check,
        stored_bytes,
    })
}

/// The stored file's reader, noting how many bytes it gave and the error it raised, so a
/// decoder's failure can be told apart from the file's.
struct Tracked {
    inner: Box<dyn Read + Send>,
    read: Rc<RefCell<u64>>,
    failure: Rc<RefCell<Option<String>>>,
}

impl Read for Tracked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                *self.read.borrow_mut() += n as u64;
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    *self.failure.borrow_mut() = Some(format!("reading stored content: {e}"));
                }
                Err(e)
            }
        }
    }
}
