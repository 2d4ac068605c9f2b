//! The content cache: stored blobs (raw or one zstd frame) in files named by digest, written
//! whole before they get their name, verified when served, least recently used evicted.
//!
//! Layout: `DIR/ab/<digest>.zst` or `.raw` (`ab` = the digest's first two hex digits) and
//! `DIR/tmp/` for files being written. The recency order lives in memory and is rebuilt at
//! start from the files' modification times, which every hit refreshes.

use keel_core::Digest;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// What the cache knows about one blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The stored bytes are one zstd frame (else the content itself).
    pub compressed: bool,
    pub stored_size: u64,
}

/// A cached blob whose content was just checked against its digest.
pub struct Verified {
    pub entry: Entry,
    pub body: Body,
}

/// What a cache lookup found.
pub enum Lookup {
    Hit(Verified),
    /// Not cached (or gone from the disk).
    Absent,
    /// Cached, but it failed verification and was dropped (logged).
    Dropped,
}

/// Where a verified blob's stored bytes are read from.
pub enum Body {
    /// Small blobs: read once, verified and sent from memory.
    Memory(Vec<u8>),
    /// Large blobs: the open file, rewound after the verifying pass.
    File(File),
}

/// The cache's sizes, for `keel info` through the proxy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub files: u64,
    pub bytes: u64,
}

#[derive(Default)]
struct Index {
    entries: HashMap<Digest, (Entry, u64)>,
    /// Recency tick → digest; the first is the least recently used.
    order: BTreeMap<u64, Digest>,
    tick: u64,
    bytes: u64,
}

impl Index {
    fn touch(&mut self, digest: Digest, entry: Entry) {
        self.tick += 1;
        if let Some((_, old)) = self.entries.insert(digest, (entry, self.tick)) {
            self.order.remove(&old);
        } else {
            self.bytes += entry.stored_size;
        }
        self.order.insert(self.tick, digest);
    }

    fn remove(&mut self, digest: &Digest) -> Option<Entry> {
        let (entry, tick) = self.entries.remove(digest)?;
        self.order.remove(&tick);
        self.bytes -= entry.stored_size;
        Some(entry)
    }
}

/// The content cache under one directory.
pub struct Cache {
    dir: PathBuf,
    limit: u64,
    index: Mutex<Index>,
    temp_seq: AtomicU64,
}

/// Why a cache file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Fetched content whose bytes do not hash to the digest that named it.
    #[error("content {digest} does not match its digest ({reason})")]
    Mismatch { digest: String, reason: String },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Cache {
    /// Opens (creating) the cache under `dir`: drops unfinished temp files, indexes every
    /// blob by its modification time, and evicts down to `limit` bytes.
    pub fn open(dir: &Path, limit: u64) -> Result<Cache, CacheError> {
        let temp = dir.join("tmp");
        if temp.exists() {
            std::fs::remove_dir_all(&temp).map_err(io_at(&temp))?;
        }
        std::fs::create_dir_all(&temp).map_err(io_at(&temp))?;
        let mut found: Vec<(SystemTime, Digest, Entry)> = Vec::new();
        for fan in std::fs::read_dir(dir).map_err(io_at(dir))? {
            let fan = fan.map_err(io_at(dir))?.path();
            if !fan.is_dir() || fan == temp {
                continue;
            }
            for file in std::fs::read_dir(&fan).map_err(io_at(&fan))? {
                let path = file.map_err(io_at(&fan))?.path();
                let Some((digest, compressed)) = parse_name(&path) else {
                    continue;
                };
                let meta = std::fs::metadata(&path).map_err(io_at(&path))?;
                let time = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                let entry = Entry {
                    compressed,
                    stored_size: meta.len(),
                };
                found.push((time, digest, entry));
            }
        }
        found.sort_by_key(|(time, digest, _)| (*time, *digest));
        let mut index = Index::default();
        for (_, digest, entry) in found {
            index.touch(digest, entry);
        }
        let cache = Cache {
            dir: dir.to_path_buf(),
            limit,
            index: Mutex::new(index),
            temp_seq: AtomicU64::new(0),
        };
        cache.evict(None);
        Ok(cache)
    }

    /// The directory the cache lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most stored bytes kept.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn usage(&self) -> Usage {
        let index = self.lock();
        Usage {
            files: index.entries.len() as u64,
            bytes: index.bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        // A panic while holding the index leaves it consistent (each step is one map update).
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn path(&self, digest: &Digest, compressed: bool) -> PathBuf {
        let hex = digest.to_hex();
        let ext = if compressed { "zst" } else { "raw" };
        self.dir.join(&hex[..2]).join(format!("{hex}.{ext}"))
    }

    /// Reads the cached blob, checks its content against `digest` and marks it recently
    /// used.
    pub fn read_verified(&self, digest: &Digest, small: u64) -> Result<Lookup, CacheError> {
        let Some((entry, _)) = self.lock().entries.get(digest).copied() else {
            return Ok(Lookup::Absent);
        };
        let path = self.path(digest, entry.compressed);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::warn!(path = %path.display(), "cache file vanished; fetching it again");
                self.lock().remove(digest);
                return Ok(Lookup::Absent);
            }
            Err(e) => return Err(io_at(&path)(e)),
        };
        // Recency survives a restart through the file's modification time.
        if let Err(e) = file.set_modified(SystemTime::now()) {
            tracing::debug!(path = %path.display(), error = %e, "cannot refresh cache file time");
        }
        let stored_size = file.metadata().map_err(io_at(&path))?.len();
        let entry = Entry {
            stored_size,
            ..entry
        };
        let (checked, body) = if stored_size <= small {
            let mut bytes = Vec::with_capacity(stored_size as usize);
            file.read_to_end(&mut bytes).map_err(io_at(&path))?;
            (
                check(&bytes[..], entry.compressed, digest),
                Body::Memory(bytes),
            )
        } else {
            let checked = check(BufReader::new(&mut file), entry.compressed, digest);
            file.rewind().map_err(io_at(&path))?;
            (checked, Body::File(file))
        };
        if let Err(reason) = checked {
            tracing::warn!(path = %path.display(), %reason, "cache file is corrupt; dropped, fetching it again");
            self.lock().remove(digest);
            // Should a concurrent refetch have renamed a new file here meanwhile, this removes
            // it and the index entry finds no file: the next read fetches it again.
            let _ = std::fs::remove_file(&path);
            return Ok(Lookup::Dropped);
        }
        self.lock().touch(*digest, entry);
        Ok(Lookup::Hit(Verified { entry, body }))
    }

    /// Starts writing `digest`'s stored bytes into a temp file.
    pub fn writer(&self, digest: Digest, compressed: bool) -> Result<CacheWriter<'_>, CacheError> {
        let seq = self.temp_seq.fetch_add(1, Ordering::Relaxed);
        let temp =
            self.dir
                .join("tmp")
                .join(format!("{}.{}.{seq}", digest.to_hex(), std::process::id()));
        let file = File::create(&temp).map_err(io_at(&temp))?;
        let check = if compressed {
            Checker::Zstd(Box::new(
                zstd::stream::write::Decoder::new(Hashing::default()).map_err(io_at(&temp))?,
            ))
        } else {
            Checker::Raw(Box::default())
        };
        Ok(CacheWriter {
            cache: self,
            digest,
            compressed,
            temp,
            file: Some(file),
            check: Some(check),
            written: 0,
        })
    }

    /// Evicts least recently used blobs until the cache fits its limit, never `keep`.
    fn evict(&self, keep: Option<&Digest>) {
        loop {
            let victim = {
                let mut index = self.lock();
                if index.bytes <= self.limit {
                    return;
                }
                let Some(digest) = index.order.values().find(|d| Some(*d) != keep).copied() else {
                    return;
                };
                let entry = index.remove(&digest).expect("ordered digests are indexed");
                (digest, entry)
            };
            let path = self.path(&victim.0, victim.1.compressed);
            tracing::debug!(digest = %victim.0.to_hex(), bytes = victim.1.stored_size, "evicted");
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), error = %e, "cannot remove evicted cache file");
            }
        }
    }
}

/// `<64 hex>.zst|.raw` → digest and encoding.
fn parse_name(path: &Path) -> Option<(Digest, bool)> {
    let name = path.file_name()?.to_str()?;
    let (hex, ext) = name.split_once('.')?;
    let compressed = match ext {
        "zst" => true,
        "raw" => false,
        _ => return None,
    };
    Some((Digest::from_hex(hex).ok()?, compressed))
}

thread_local! {
    /// One zstd decompression context per thread, reused: creating one per blob costs more
    /// than decompressing a small file.
    static DCTX: RefCell<zstd::zstd_safe::DCtx<'static>> =
        RefCell::new(zstd::zstd_safe::DCtx::create());
}

/// Checks that stored bytes decode to content whose BLAKE3 is `digest`.
fn check(stored: impl BufRead, compressed: bool, digest: &Digest) -> Result<(), String> {
    let mut hasher = blake3::Hasher::new();
    let copied = if compressed {
        DCTX.with_borrow_mut(|dctx| {
            dctx.reset(zstd::zstd_safe::ResetDirective::SessionOnly)
                .map_err(|code| format!("cannot reset the zstd context ({code})"))?;
            let mut decoder = zstd::stream::read::Decoder::with_context(stored, dctx);
            io::copy(&mut decoder, &mut hasher).map_err(|e| format!("cannot decompress: {e}"))
        })
    } else {
        let mut stored = stored;
        io::copy(&mut stored, &mut hasher).map_err(|e| format!("cannot read: {e}"))
    };
    copied?;
    let got = Digest(*hasher.finalize().as_bytes());
    if got == *digest {
        Ok(())
    } else {
        Err(format!("content hashes to {}", got.to_hex()))
    }
}

/// A BLAKE3 hasher as an `io::Write` sink.
#[derive(Default)]
struct Hashing(blake3::Hasher);

impl Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Checker {
    Raw(Box<Hashing>),
    Zstd(Box<zstd::stream::write::Decoder<'static, Hashing>>),
}

/// One blob being written: bytes go to a temp file and through the digest check; `finish`
/// makes it durable and gives it its name only when the content matches the digest.
pub struct CacheWriter<'a> {
    cache: &'a Cache,
    digest: Digest,
    compressed: bool,
    temp: PathBuf,
    file: Option<File>,
    check: Option<Checker>,
    written: u64,
}

impl CacheWriter<'_> {
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), CacheError> {
        let temp = &self.temp;
        let file = self.file.as_mut().expect("written before finish");
        file.write_all(bytes).map_err(io_at(temp))?;
        let checked = match self.check.as_mut().expect("written before finish") {
            Checker::Raw(h) => h.write_all(bytes),
            Checker::Zstd(d) => d.write_all(bytes),
        };
        checked.map_err(|e| CacheError::Mismatch {
            digest: self.digest.to_hex(),
            reason: format!("cannot decompress: {e}"),
        })?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Checks the digest, fsyncs, renames under the digest and indexes the blob (evicting
    /// beyond the limit). Returns the blob, opened before eviction could remove it (so it
    /// can be served even when it alone outgrows the cache), checked as it was written.
    pub fn finish(mut self, small: u64) -> Result<Verified, CacheError> {
        let hashed = match self.check.take().expect("finished once") {
            Checker::Raw(h) => Ok(h.0),
            Checker::Zstd(mut d) => d.flush().map(|()| d.into_inner().0),
        };
        let hasher = hashed.map_err(|e| CacheError::Mismatch {
            digest: self.digest.to_hex(),
            reason: format!("cannot decompress: {e}"),
        })?;
        let got = Digest(*hasher.finalize().as_bytes());
        if got != self.digest {
            return Err(CacheError::Mismatch {
                digest: self.digest.to_hex(),
                reason: format!("content hashes to {}", got.to_hex()),
            });
        }
        let file = self.file.take().expect("finished once");
        file.sync_all().map_err(io_at(&self.temp))?;
        drop(file);
        let path = self.cache.path(&self.digest, self.compressed);
        let parent = path.parent().expect("cache paths have a fan-out directory");
        std::fs::create_dir_all(parent).map_err(io_at(parent))?;
        // The bytes are durable before the name exists, so a crash never leaves a bad file
        // under a digest's name. The rename itself is not flushed: losing it in a crash only
        // means fetching that blob again.
        std::fs::rename(&self.temp, &path).map_err(io_at(&path))?;
        let mut file = File::open(&path).map_err(io_at(&path))?;
        let body = if self.written <= small {
            let mut bytes = Vec::with_capacity(self.written as usize);
            file.read_to_end(&mut bytes).map_err(io_at(&path))?;
            Body::Memory(bytes)
        } else {
            Body::File(file)
        };
        let entry = Entry {
            compressed: self.compressed,
            stored_size: self.written,
        };
        if entry.stored_size > self.cache.limit {
            // Larger than the whole cache: served from the open file, not kept.
            std::fs::remove_file(&path).map_err(io_at(&path))?;
        } else {
            self.cache.lock().touch(self.digest, entry);
            self.cache.evict(Some(&self.digest));
        }
        Ok(Verified { entry, body })
    }
}

impl Drop for CacheWriter<'_> {
    fn drop(&mut self) {
        // An unfinished or refused blob leaves no temp file behind.
        if self.file.is_some() || self.check.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest_of(content: &[u8]) -> Digest {
        Digest(*blake3::hash(content).as_bytes())
    }

    /// Stores `content` raw, as a fetch would.
    fn put(cache: &Cache, content: &[u8]) -> Digest {
        let digest = digest_of(content);
        let mut w = cache.writer(digest, false).expect("writer");
        w.write(content).expect("write");
        w.finish(1 << 20).expect("finish");
        digest
    }

    fn hit(cache: &Cache, digest: &Digest) -> bool {
        matches!(
            cache.read_verified(digest, 1 << 20).expect("read"),
            Lookup::Hit(_)
        )
    }

    #[test]
    fn content_that_does_not_match_its_digest_is_refused_and_leaves_no_file() {
        let dir = tempfile::tempdir().expect("temp");
        let cache = Cache::open(dir.path(), 1 << 20).expect("open");
        let mut w = cache.writer(digest_of(b"right"), false).expect("writer");
        w.write(b"wrong").expect("write");
        assert!(matches!(
            w.finish(1 << 20),
            Err(CacheError::Mismatch { .. })
        ));
        assert_eq!(cache.usage().files, 0);
        assert_eq!(
            std::fs::read_dir(dir.path().join("tmp"))
                .expect("tmp")
                .count(),
            0
        );
    }

    #[test]
    fn compressed_blobs_are_checked_after_decompression() {
        let dir = tempfile::tempdir().expect("temp");
        let cache = Cache::open(dir.path(), 1 << 20).expect("open");
        let content = b"hello hello hello hello".repeat(100);
        let frame = zstd::encode_all(&content[..], 3).expect("compress");
        let digest = digest_of(&content);
        let mut w = cache.writer(digest, true).expect("writer");
        w.write(&frame).expect("write");
        let verified = w.finish(1 << 20).expect("finish");
        assert!(verified.entry.compressed);
        assert_eq!(verified.entry.stored_size, frame.len() as u64);
        assert!(hit(&cache, &digest));
    }

    #[test]
    fn least_recently_used_goes_first_and_the_order_survives_reopening() {
        let dir = tempfile::tempdir().expect("temp");
        let cache = Cache::open(dir.path(), 300).expect("open");
        let a = put(&cache, &[b'a'; 100]);
        let b = put(&cache, &[b'b'; 100]);
        let c = put(&cache, &[b'c'; 100]);
        // Use `a` again, so `b` is the least recently used.
        assert!(hit(&cache, &a));
        put(&cache, &[b'd'; 100]);
        assert!(!hit(&cache, &b), "b was evicted");
        assert!(hit(&cache, &a) && hit(&cache, &c));
        assert_eq!(cache.usage().bytes, 300);
        drop(cache);

        let cache = Cache::open(dir.path(), 300).expect("reopen");
        assert_eq!(cache.usage().files, 3);
        // Age `c` well before the others (files written in one instant tie, broken by
        // digest): after reopening it is the one evicted.
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options()
            .write(true)
            .open(cache.path(&c, false))
            .and_then(|f| f.set_modified(old))
            .expect("age c");
        drop(cache);
        let cache = Cache::open(dir.path(), 300).expect("reopen");
        put(&cache, &[b'e'; 100]);
        assert!(
            !hit(&cache, &c),
            "c was the least recently used after the restart"
        );
        assert!(hit(&cache, &a));
    }

    #[test]
    fn a_blob_larger_than_the_cache_is_served_but_not_kept() {
        let dir = tempfile::tempdir().expect("temp");
        let cache = Cache::open(dir.path(), 50).expect("open");
        let content = [b'x'; 100];
        let digest = digest_of(&content);
        let mut w = cache.writer(digest, false).expect("writer");
        w.write(&content).expect("write");
        let verified = w.finish(1 << 20).expect("finish");
        assert!(matches!(verified.body, Body::Memory(ref m) if m[..] == content[..]));
        assert_eq!(cache.usage().files, 0);
        assert!(!cache.path(&digest, false).exists());
    }

    #[test]
    fn a_corrupt_file_is_dropped_on_read() {
        let dir = tempfile::tempdir().expect("temp");
        let cache = Cache::open(dir.path(), 1 << 20).expect("open");
        let digest = put(&cache, b"good content");
        std::fs::write(cache.path(&digest, false), b"bad content!").expect("corrupt");
        assert!(matches!(
            cache.read_verified(&digest, 1 << 20).expect("read"),
            Lookup::Dropped
        ));
        assert!(!cache.path(&digest, false).exists());
        assert_eq!(cache.usage().files, 0);
    }
}
