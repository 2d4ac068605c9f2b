//! Moving file content between the wire and the workspace: verified writes, deletes, uploads.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use keel_core::{BaseType, FileType};

use crate::error::{Error, IoContext, Result};
use crate::landing::{Landing, temp_beside};
use crate::tuning::TransferConfig;

/// How a workspace file should look on disk, derived from its file type and workspace options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalMode {
    pub writable: bool,
    pub executable: bool,
    pub symlink: bool,
}

impl LocalMode {
    /// The mode for a file of type `file_type` (e.g. `text+x`) in a workspace with `allwrite`.
    pub fn for_type(file_type: &str, allwrite: bool) -> LocalMode {
        let parsed = FileType::parse(file_type).ok();
        LocalMode {
            writable: allwrite || parsed.as_ref().is_some_and(|t| t.writable),
            executable: parsed.as_ref().is_some_and(|t| t.executable),
            symlink: parsed.is_some_and(|t| matches!(t.base, BaseType::Symlink)),
        }
    }
}

/// A writer that hashes (BLAKE3) and counts everything passing through it.
pub struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
    size: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: blake3::Hasher::new(),
            size: 0,
        }
    }

    /// Returns the inner writer, the hex digest and the byte count.
    pub fn finish(self) -> (W, String, u64) {
        (
            self.inner,
            self.hasher.finalize().to_hex().to_string(),
            self.size,
        )
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

enum Stage<'a, W: Write> {
    Plain(HashingWriter<W>),
    Zstd(zstd::stream::write::Decoder<'a, HashingWriter<W>>),
}

/// A zstd decompression context to reuse across files (creating one costs more than
/// decompressing a small file).
pub type Decompressor = zstd::zstd_safe::DCtx<'static>;

/// Streams stored bytes (optionally one zstd stream) into `W`, hashing the raw content.
pub struct ContentDecoder<'a, W: Write> {
    stage: Stage<'a, W>,
    expected: String,
}

impl<W: Write> ContentDecoder<'static, W> {
    /// `expected` is the BLAKE3 hex digest of the raw content ("" skips verification).
    pub fn new(sink: W, compressed: bool, expected: &str) -> io::Result<Self> {
        let hashing = HashingWriter::new(sink);
        let stage = if compressed {
            Stage::Zstd(zstd::stream::write::Decoder::new(hashing)?)
        } else {
            Stage::Plain(hashing)
        };
        Ok(ContentDecoder {
            stage,
            expected: expected.to_ascii_lowercase(),
        })
    }
}

impl<'a, W: Write> ContentDecoder<'a, W> {
    /// Like [`ContentDecoder::new`], decompressing with `context` (reset first) instead of a
    /// new one.
    pub fn with_context(
        sink: W,
        compressed: bool,
        expected: &str,
        context: &'a mut Decompressor,
    ) -> Self {
        let hashing = HashingWriter::new(sink);
        let stage = if compressed {
            Stage::Zstd(zstd::stream::write::Decoder::with_context(hashing, context))
        } else {
            Stage::Plain(hashing)
        };
        ContentDecoder {
            stage,
            expected: expected.to_ascii_lowercase(),
        }
    }

    /// Feeds one chunk of stored bytes.
    pub fn write_chunk(&mut self, chunk: &[u8]) -> io::Result<()> {
        match &mut self.stage {
            Stage::Plain(w) => w.write_all(chunk),
            Stage::Zstd(w) => w.write_all(chunk),
        }
    }

    /// Flushes everything and verifies the digest; `label` names the file in errors.
    pub fn finish(self, label: &Path) -> Result<(W, u64)> {
        let hashing = match self.stage {
            Stage::Plain(mut w) => {
                w.flush().at(label)?;
                w
            }
            Stage::Zstd(mut w) => {
                w.flush().at(label)?;
                let mut inner = w.into_inner();
                inner.flush().at(label)?;
                inner
            }
        };
        let (sink, actual, size) = hashing.finish();
        if !self.expected.is_empty() && actual != self.expected {
            return Err(Error::DigestMismatch {
                path: label.to_path_buf(),
                expected: self.expected,
                actual,
            });
        }
        Ok((sink, size))
    }
}

/// A workspace file being received: content goes to a temp file in the target's directory (or,
/// for a new file in a directory the sync created, to a file without a name, see
/// [`Landing::for_target`]) and only appears under its real name once the digest is verified.
pub struct IncomingFile<'a> {
    target: PathBuf,
    mode: LocalMode,
    modified: Option<u64>,
    decoder: ContentDecoder<'a, Landing>,
}

impl IncomingFile<'static> {
    /// Starts receiving `target` (parent directories are created).
    pub fn begin(target: PathBuf, compressed: bool, digest: &str, mode: LocalMode) -> Result<Self> {
        let landing = Landing::Temp(temp_beside(&target)?);
        let decoder = ContentDecoder::new(landing, compressed, digest).at(&target)?;
        Ok(IncomingFile {
            target,
            mode,
            modified: None,
            decoder,
        })
    }
}

impl<'a> IncomingFile<'a> {
    /// Like [`IncomingFile::begin`], decompressing with a reused `context`; with `fresh` (the
    /// sync created the target's directory and the have list holds no revision of the file),
    /// a regular file is written without a name and linked under its own once verified.
    pub fn begin_with(
        target: PathBuf,
        compressed: bool,
        digest: &str,
        mode: LocalMode,
        fresh: bool,
        context: &'a mut Decompressor,
    ) -> Result<Self> {
        let landing = Landing::for_target(&target, fresh && !mode.symlink, digest)?;
        let decoder = ContentDecoder::with_context(landing, compressed, digest, context);
        Ok(IncomingFile {
            target,
            mode,
            modified: None,
            decoder,
        })
    }

    /// Gives the file this modification time (seconds since the epoch) when it is placed;
    /// symlinks keep theirs.
    pub fn modified(mut self, secs: u64) -> Self {
        self.modified = Some(secs);
        self
    }

    /// Appends one chunk of stored bytes.
    pub fn write_chunk(&mut self, chunk: &[u8]) -> Result<()> {
        self.decoder.write_chunk(chunk).at(&self.target)
    }

    /// Verifies, sets the mode and modification time, and puts the file in place. On error
    /// the temp file (or the target created for the file) is removed.
    pub fn finish(self) -> Result<u64> {
        let target = self.target;
        let (landing, size) = self.decoder.finish(&target)?;
        let temp = match landing {
            Landing::Temp(temp) => temp,
            Landing::Unnamed(unnamed) => {
                // The mode and time through the open descriptor, then the name.
                set_mode(unnamed.as_file(), self.mode).at(&target)?;
                if let Some(secs) = self.modified {
                    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
                    unnamed.as_file().set_modified(when).at(&target)?;
                }
                unnamed.link_as(&target)?;
                return Ok(size);
            }
        };
        if self.mode.symlink {
            let mut link_target = Vec::new();
            File::open(temp.path())
                .and_then(|mut f| f.read_to_end(&mut link_target))
                .at(&target)?;
            drop(temp);
            return make_symlink(&link_target, &target)
                .map_err(|e| directory_in_the_way(&target).unwrap_or(e))
                .map(|()| size);
        }
        // Through the open descriptor: no path lookups, and nothing to reopen.
        set_mode(temp.as_file(), self.mode).at(&target)?;
        if let Some(secs) = self.modified {
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            temp.as_file().set_modified(when).at(&target)?;
        }
        temp.persist(&target).map_err(|e| {
            directory_in_the_way(&target).unwrap_or_else(|| Error::io(&target, e.error))
        })?;
        Ok(size)
    }
}

/// The error for a target that is a directory, checked after placing the file failed (a
/// rename onto a directory always fails, so the common case needs no check).
fn directory_in_the_way(target: &Path) -> Option<Error> {
    let meta = std::fs::symlink_metadata(target).ok()?;
    meta.is_dir()
        .then(|| Error::io(target, io::Error::other("a directory is in the way")))
}

#[cfg(unix)]
fn make_symlink(link_target: &[u8], target: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let dir = target.parent().unwrap_or(Path::new("."));
    let temp_name = dir.join(format!(
        ".keel-tmp-link-{}-{}",
        std::process::id(),
        blake3::hash(target.as_os_str().as_bytes()).to_hex()
    ));
    let _ = std::fs::remove_file(&temp_name);
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(link_target), &temp_name)
        .at(&temp_name)?;
    std::fs::rename(&temp_name, target).map_err(|e| {
        let _ = std::fs::remove_file(&temp_name);
        Error::io(target, e)
    })
}

#[cfg(not(unix))]
fn make_symlink(link_target: &[u8], target: &Path) -> Result<()> {
    // No portable symlinks: store the target text as a plain file.
    std::fs::write(target, link_target).at(target)
}

/// Sets an open file's permissions: read-only unless writable, executable bits when executable.
fn set_mode(file: &File, mode: LocalMode) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let bits = match (mode.writable, mode.executable) {
            (true, true) => 0o755,
            (true, false) => 0o644,
            (false, true) => 0o555,
            (false, false) => 0o444,
        };
        file.set_permissions(std::fs::Permissions::from_mode(bits))
    }
    #[cfg(not(unix))]
    {
        let mut perms = file.metadata()?.permissions();
        perms.set_readonly(!mode.writable);
        file.set_permissions(perms)
    }
}

/// Makes an existing regular file writable by its owner (symlinks and missing files are left).
///
/// A file with other hard links (a cloned workspace shares its source's read-only files, see
/// `clone.rs`) is first replaced by a private copy, so that writing it changes no other
/// workspace.
pub fn make_writable(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        unshare(path)?;
    }
    let mut perms = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        perms.set_mode(perms.mode() | 0o200);
    }
    #[cfg(not(unix))]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).at(path)
}

/// Replaces a hard-linked file by a copy of its own (through a temp file renamed over it, so
/// the path always holds the content).
#[cfg(unix)]
fn unshare(path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = tempfile::Builder::new()
        .prefix(".keel-tmp-")
        .tempfile_in(dir)
        .at(dir)?;
    std::fs::copy(path, temp.path()).at(path)?;
    temp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Makes an existing regular file read-only, keeping its executable bits.
pub fn make_read_only(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    let mut perms = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        perms.set_mode(perms.mode() & !0o222);
    }
    #[cfg(not(unix))]
    perms.set_readonly(true);
    std::fs::set_permissions(path, perms).at(path)
}

/// True when `path` is a regular file its owner may write.
pub fn is_writable_file(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o200 != 0
            }
            #[cfg(not(unix))]
            {
                !meta.permissions().readonly()
            }
        }
        _ => false,
    }
}

/// Removes a workspace file; with `rmdir`, also removes emptied parents up to (not including) `root`.
pub fn remove_local(root: &Path, path: &Path, rmdir: bool) -> Result<bool> {
    let removed = match std::fs::remove_file(path) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io(path, e)),
    };
    if rmdir {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
    Ok(removed)
}

/// Reads a workspace file's content as submitted: a symlink's content is its target.
/// Calls `each` with chunks of at most `chunk` bytes; `each` returns false to stop.
/// Returns the BLAKE3 hex digest and size of everything read.
pub fn read_for_upload(
    path: &Path,
    chunk: usize,
    mut each: impl FnMut(Vec<u8>) -> bool,
) -> Result<(String, u64)> {
    let meta = std::fs::symlink_metadata(path).at(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    if meta.file_type().is_symlink() {
        let target = link_bytes(path)?;
        hasher.update(&target);
        size = target.len() as u64;
        each(target);
        return Ok((hasher.finalize().to_hex().to_string(), size));
    }
    let mut file = File::open(path).at(path)?;
    let expected = meta.len();
    loop {
        // Each buffer is sized to what the file still holds by its stat (one byte more, so the
        // read that reaches the end shows it), never more than a chunk: a small file costs one
        // buffer of its own size, not a zeroed chunk. A file that grew reads on in chunks.
        let want = if size < expected {
            chunk.min(
                usize::try_from(expected - size)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1),
            )
        } else if size == 0 {
            1
        } else {
            chunk
        }
        .max(1);
        let mut buf = vec![0u8; want];
        let mut filled = 0;
        while filled < buf.len() {
            let n = file.read(&mut buf[filled..]).at(path)?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        buf.truncate(filled);
        hasher.update(&buf);
        size += filled as u64;
        if !each(buf) {
            break;
        }
        if filled < want {
            break;
        }
    }
    Ok((hasher.finalize().to_hex().to_string(), size))
}

/// [`read_for_upload`] of a file whose type expands `keywords`: its content un-expanded (the
/// form that is stored), in one piece.
pub fn read_for_upload_as(
    path: &Path,
    keywords: crate::keywords::StoredForm,
    chunk: usize,
    mut each: impl FnMut(Vec<u8>) -> bool,
) -> Result<(String, u64)> {
    let symlink = std::fs::symlink_metadata(path)
        .at(path)?
        .file_type()
        .is_symlink();
    if keywords == crate::keywords::StoredForm::PLAIN || symlink {
        return read_for_upload(path, chunk, each);
    }
    let plain = crate::keywords::read_unexpanded(path, keywords)?;
    let digest = blake3::hash(&plain).to_hex().to_string();
    let size = plain.len() as u64;
    for piece in plain.chunks(chunk.max(1)) {
        if !each(piece.to_vec()) {
            break;
        }
    }
    Ok((digest, size))
}

/// [`hash_local`] of a file whose type expands `keywords`: the digest of its un-expanded
/// content, the form that is stored.
pub fn hash_local_as(path: &Path, keywords: crate::keywords::StoredForm) -> Result<Option<String>> {
    if keywords == crate::keywords::StoredForm::PLAIN {
        return hash_local(path);
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
        Ok(meta) if meta.is_dir() => Ok(None),
        Ok(meta) if meta.file_type().is_symlink() => hash_local(path),
        Ok(_) => Ok(Some(hex::encode(crate::keywords::hash_unexpanded(
            path, keywords,
        )?))),
    }
}

/// The BLAKE3 hex digest of a local workspace file (symlinks hash their target), or None
/// when it does not exist.
pub fn hash_local(path: &Path) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
        Ok(meta) if meta.is_dir() => Ok(None),
        Ok(meta) => {
            let mut buf = vec![0; TransferConfig::default().scan_read_bytes];
            let digest = crate::local_state::hash_meta(path, &meta, &mut buf)?;
            Ok(Some(hex::encode(digest)))
        }
    }
}

#[cfg(unix)]
pub(crate) fn link_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Ok(std::fs::read_link(path)
        .at(path)?
        .as_os_str()
        .as_bytes()
        .to_vec())
}

#[cfg(not(unix))]
pub(crate) fn link_bytes(path: &Path) -> Result<Vec<u8>> {
    Ok(std::fs::read_link(path)
        .at(path)?
        .to_string_lossy()
        .into_owned()
        .into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(bytes: &[u8]) -> String {
        blake3::hash(bytes).to_hex().to_string()
    }

    #[test]
    fn compressed_write_verifies_and_appears() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/file.txt");
        let content = b"hello hello hello hello\n".repeat(1000);
        let packed = zstd::encode_all(&content[..], 3).unwrap();
        let mut incoming = IncomingFile::begin(
            target.clone(),
            true,
            &digest(&content),
            LocalMode::default(),
        )
        .unwrap();
        for chunk in packed.chunks(100) {
            incoming.write_chunk(chunk).unwrap();
        }
        assert_eq!(incoming.finish().unwrap(), content.len() as u64);
        assert_eq!(std::fs::read(&target).unwrap(), content);
        assert!(!is_writable_file(&target));
    }

    #[test]
    fn digest_mismatch_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        let mut incoming = IncomingFile::begin(
            target.clone(),
            false,
            &digest(b"other"),
            LocalMode::default(),
        )
        .unwrap();
        incoming.write_chunk(b"content").unwrap();
        let err = incoming.finish().unwrap_err();
        assert!(matches!(err, Error::DigestMismatch { .. }));
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn upload_reads_chunks_and_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let chunk = 4096;
        let content: Vec<u8> = (0..(chunk * 2 + 17)).map(|i| i as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let mut chunks = Vec::new();
        let (hex, size) = read_for_upload(&path, chunk, |c| {
            chunks.push(c.len());
            true
        })
        .unwrap();
        assert_eq!(chunks, vec![chunk, chunk, 17]);
        assert_eq!(size, content.len() as u64);
        assert_eq!(hex, digest(&content));
    }
}
