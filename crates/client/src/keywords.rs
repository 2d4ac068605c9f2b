//! Keyword expansion on the client (`+k`/`+ko` files): the server stores and sends the
//! unexpanded text; sync expands it as it writes the workspace file, and every comparison or
//! upload of a workspace file (scan, diff, submit, the clobber check) un-expands it first, so
//! digests are always those of the stored form. A `utf16` file is stored as UTF-8 and
//! written to the workspace as UTF-16LE with a byte order mark; it is converted back the same
//! way before it is compared or sent.

use std::borrow::Cow;
use std::path::Path;

use keel_core::keyword::{expand, unexpand};
use keel_core::{BaseType, FileType, KeywordValues, Keywords};
use keel_proto::v1::SyncFile;

use crate::error::{Error, IoContext, Result};
use crate::transfer::ContentDecoder;

/// How a file's workspace form differs from its stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoredForm {
    /// The keywords expanded in the workspace and un-expanded when stored.
    pub keywords: Keywords,
    /// UTF-16 (with a byte order mark) in the workspace, UTF-8 when stored.
    pub utf16: bool,
}

impl StoredForm {
    /// The workspace holds exactly the stored bytes.
    pub const PLAIN: StoredForm = StoredForm {
        keywords: Keywords::None,
        utf16: false,
    };
}

/// The workspace form of a file of type `file_type` (as text); plain for an unknown type.
pub fn form_of(file_type: &str) -> StoredForm {
    FileType::parse(file_type).map_or(StoredForm::PLAIN, |t| StoredForm {
        keywords: t.expanded_keywords(),
        utf16: t.base == BaseType::Utf16,
    })
}

/// Stored content `raw` as the workspace holds it: keywords expanded for `values`, then
/// converted to UTF-16 for a `utf16` file.
pub fn to_workspace(raw: Vec<u8>, form: StoredForm, values: &KeywordValues<'_>) -> Vec<u8> {
    let expanded = match expand(&raw, form.keywords, values) {
        Cow::Borrowed(_) => raw,
        Cow::Owned(expanded) => expanded,
    };
    if form.utf16 {
        keel_core::utf16::to_workspace(&expanded)
    } else {
        expanded
    }
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
    Ok(to_workspace(raw, form_of(&file.file_type), &values))
}

/// A workspace file's content in its stored form: converted from UTF-16 for a `utf16` file
/// (refused, naming the file, when it is not valid UTF-16), keywords un-expanded.
pub fn read_unexpanded(path: &Path, form: StoredForm) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).at(path)?;
    let bytes = if form.utf16 {
        keel_core::utf16::from_workspace(&bytes).map_err(|e| Error::NotUtf16 {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?
    } else {
        bytes
    };
    Ok(match unexpand(&bytes, form.keywords) {
        Cow::Borrowed(_) => bytes,
        Cow::Owned(plain) => plain,
    })
}

/// The BLAKE3 digest of a workspace file's content in its stored form. A `utf16` file that is
/// not valid UTF-16 is hashed as it is: it differs from every stored revision, so it shows as
/// changed (and submitting it is refused).
pub fn hash_unexpanded(path: &Path, form: StoredForm) -> Result<[u8; 32]> {
    match read_unexpanded(path, form) {
        Err(Error::NotUtf16 { .. }) => Ok(*blake3::hash(&std::fs::read(path).at(path)?).as_bytes()),
        other => Ok(*blake3::hash(&other?).as_bytes()),
    }
}

/// Refuses, naming it, a `utf16` workspace file that is not valid UTF-16 (a symlink is not
/// read).
pub fn check_utf16(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(());
    }
    read_unexpanded(
        path,
        StoredForm {
            keywords: Keywords::None,
            utf16: true,
        },
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_follow_the_type() {
        assert_eq!(form_of("text"), StoredForm::PLAIN);
        assert_eq!(form_of("not a type"), StoredForm::PLAIN);
        assert!(form_of("utf16+x").utf16);
        assert_eq!(form_of("xutf16").keywords, Keywords::None);
        assert_eq!(form_of("ktext").keywords, Keywords::All);
        assert!(!form_of("ktext").utf16);
    }

    #[test]
    fn utf16_files_read_back_as_stored_or_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let values = KeywordValues {
            depot_file: "//depot/a.txt",
            rev: 1,
            change: 1,
            time: 0,
            author: "ana",
        };
        let form = form_of("utf16");
        let good = dir.path().join("good.txt");
        std::fs::write(&good, to_workspace(b"h\xC3\xA9\n".to_vec(), form, &values)).unwrap();
        assert_eq!(std::fs::read(&good).unwrap(), b"\xFF\xFEh\0\xE9\0\n\0");
        assert_eq!(read_unexpanded(&good, form).unwrap(), b"h\xC3\xA9\n");
        check_utf16(&good).unwrap();

        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, b"\xFF\xFEh").unwrap();
        let err = check_utf16(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.txt") && err.contains("odd number"),
            "{err}"
        );
        // Hashing for a comparison does not fail: the raw bytes differ from any revision.
        assert_eq!(
            hash_unexpanded(&bad, form).unwrap(),
            *blake3::hash(b"\xFF\xFEh").as_bytes()
        );
    }
}
