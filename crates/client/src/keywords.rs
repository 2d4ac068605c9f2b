//! Keyword expansion on the client (`+k`/`+ko` files): the server stores and sends the
//! unexpanded text; sync expands it as it writes the workspace file, and every comparison or
//! upload of a workspace file (scan, diff, submit, the clobber check) un-expands it first, so
//! digests are always those of the stored form.

use std::borrow::Cow;
use std::path::Path;

use keel_core::keyword::{expand, unexpand};
use keel_core::{FileType, KeywordValues, Keywords};
use keel_proto::v1::SyncFile;

use crate::error::{IoContext, Result};
use crate::transfer::ContentDecoder;

/// The keywords a file of type `file_type` (as text) expands; none for an unknown type.
pub fn keywords_of(file_type: &str) -> Keywords {
    FileType::parse(file_type).map_or(Keywords::None, |t| t.expanded_keywords())
}

/// Decodes (and verifies) a synced file's stored bytes and expands its keywords.
pub fn expanded_for_sync(file: &SyncFile, stored: &[u8], label: &Path) -> Result<Vec<u8>> {
    let mut decoder = ContentDecoder::new(Vec::new(), file.compressed, &file.digest).at(label)?;
    decoder.write_chunk(stored).at(label)?;
    let (raw, _) = decoder.finish(label)?;
    let values = KeywordValues {
        depot_file: &file.depot_file,
        rev: file.rev,
        change: file.change,
        time: i64::try_from(file.mod_time).unwrap_or(i64::MAX),
        author: &file.author,
    };
    Ok(match expand(&raw, keywords_of(&file.file_type), &values) {
        Cow::Borrowed(_) => raw,
        Cow::Owned(expanded) => expanded,
    })
}

/// A workspace file's content in its stored (unexpanded) form.
pub fn read_unexpanded(path: &Path, keywords: Keywords) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).at(path)?;
    Ok(match unexpand(&bytes, keywords) {
        Cow::Borrowed(_) => bytes,
        Cow::Owned(plain) => plain,
    })
}

/// The BLAKE3 digest of a workspace file's unexpanded content.
pub fn hash_unexpanded(path: &Path, keywords: Keywords) -> Result<[u8; 32]> {
    Ok(*blake3::hash(&read_unexpanded(path, keywords)?).as_bytes())
}
