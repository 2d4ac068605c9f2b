//! The framing both workspace cache files share (`.keel-state`, `.keel-have`): an 8-byte magic,
//! a format version, the [`StateKey`] the file belongs to (server, workspace and root as u32
//! length + UTF-8), the body, and last the BLAKE3 hash of everything before it. A file that is
//! torn, foreign (another format version or key) or corrupt is refused with the reason, and
//! its owner rebuilds it. Files are written to a temp file renamed over the old one, without
//! fsync: a cache lost to a crash only costs a rebuild.

use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::have_index::Span;
use crate::local_state::StateKey;

/// A reader of the body of `bytes` once its magic, checksum, version and key check out.
pub(crate) fn open<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    version: u32,
    key: &StateKey,
) -> std::result::Result<Reader<'a>, String> {
    if bytes.len() < magic.len() + 4 + 32 || &bytes[..magic.len()] != magic {
        return Err("not a Keel workspace cache file".into());
    }
    // Strings are found again by u32 offsets into the file's bytes.
    if u32::try_from(bytes.len()).is_err() {
        return Err("larger than 4 GiB".into());
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    if blake3::hash(body).as_bytes() != sum {
        return Err("checksum mismatch".into());
    }
    let mut r = Reader {
        bytes: &body[magic.len()..],
    };
    let found_version = r.u32()?;
    if found_version != version {
        return Err(format!(
            "format version {found_version}, expected {version}"
        ));
    }
    let found = StateKey {
        server: r.string()?,
        workspace: r.string()?,
        root: r.string()?,
    };
    if &found != key {
        return Err(format!(
            "recorded for workspace {} at {} on {}",
            found.workspace, found.root, found.server
        ));
    }
    Ok(r)
}

/// Writes a file to `path` through a temp file (named `prefix...`) in the same directory, its
/// bytes streamed by `write` through a [`Sealer`] that ends them with their checksum: a large
/// file is never held whole in memory.
pub(crate) fn replace_streamed(
    path: &Path,
    prefix: &str,
    write: impl FnOnce(&mut Sealer<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(prefix)
        .tempfile_in(dir)
        .at(dir)?;
    let mut sealer = Sealer::new(tmp.as_file_mut());
    write(&mut sealer)
        .and_then(|()| sealer.finish().map(drop))
        .at(tmp.path())?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Bytes gathered before they are hashed and written: large enough that hashing runs over
/// whole chunks and a write carries many records.
const SEAL_CHUNK: usize = 64 * 1024;

/// A writer of a cache file that hashes its bytes on their way out and ends them with the
/// checksum.
pub(crate) struct Sealer<W: std::io::Write> {
    out: W,
    buf: Vec<u8>,
    hasher: blake3::Hasher,
}

impl<W: std::io::Write> Sealer<W> {
    pub(crate) fn new(out: W) -> Sealer<W> {
        Sealer {
            out,
            buf: Vec::with_capacity(SEAL_CHUNK),
            hasher: blake3::Hasher::new(),
        }
    }

    /// The magic, version and key that open every file.
    pub(crate) fn begin(
        &mut self,
        magic: &[u8; 8],
        version: u32,
        key: &StateKey,
    ) -> std::io::Result<()> {
        self.put(magic)?;
        self.put(&version.to_le_bytes())?;
        self.put_bytes(key.server.as_bytes())?;
        self.put_bytes(key.workspace.as_bytes())?;
        self.put_bytes(key.root.as_bytes())
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= SEAL_CHUNK {
            self.drain()?;
        }
        Ok(())
    }

    /// A string: u32 length, then its bytes.
    pub(crate) fn put_bytes(&mut self, s: &[u8]) -> std::io::Result<()> {
        self.put(&(s.len() as u32).to_le_bytes())?;
        self.put(s)
    }

    fn drain(&mut self) -> std::io::Result<()> {
        self.hasher.update(&self.buf);
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes what is left and the checksum; returns the writer.
    pub(crate) fn finish(mut self) -> std::io::Result<W> {
        self.drain()?;
        let sum = self.hasher.finalize();
        self.out.write_all(sum.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A cursor over a file's body; every read is bounded by what is left.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("truncated".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("take returned N bytes"))
    }

    pub(crate) fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> std::result::Result<i64, String> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub(crate) fn string(&mut self) -> std::result::Result<String, String> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec()).map_err(|_| "a path is not UTF-8".into())
    }

    /// A string's place in `base`, the whole file this reader reads a part of; refused unless
    /// UTF-8 (the one check: the span's text is read unchecked after, see [`Span`]).
    pub(crate) fn span(&mut self, base: &'a [u8]) -> std::result::Result<Span, String> {
        let len = self.u32()? as usize;
        let s = self.take(len)?;
        // Paths are mostly ASCII: the inlined test settles those without the general decoder.
        let s = if s.is_ascii() {
            // SAFETY: ASCII bytes are valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(s) }
        } else {
            std::str::from_utf8(s).map_err(|_| "a path is not UTF-8".to_string())?
        };
        Ok(Span::within(base, s))
    }

    /// Refuses bytes left after the last field.
    pub(crate) fn end(&self) -> std::result::Result<(), String> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err("trailing bytes".into())
        }
    }
}

/// The key the unit tests of the cache files record under.
#[cfg(test)]
pub(crate) fn test_key() -> StateKey {
    StateKey {
        server: "127.0.0.1:1666".into(),
        workspace: "ws".into(),
        root: "/w".into(),
    }
}
