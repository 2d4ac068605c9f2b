//! Pack files: small blobs appended to a few large files instead of one file each.
//!
//! `DIR/pack-NNNNNNNN.pack` holds records (`record.rs`) back to back. The newest pack is the
//! *active* one: publishes append to it and then sync it once per batch. When it reaches
//! `pack_bytes` it is *sealed*: synced, its index (`index.rs`) written, and a new pack started;
//! a sealed pack is never appended to again. The in-memory index maps every digest to its
//! place; on open it is loaded from the sealed packs' index files, and the active pack (and a
//! sealed one whose index is missing or damaged) is scanned (`scan.rs`), which also cuts off
//! what a crash left of an unfinished append.
//!
//! Reclaiming (obliterate) appends the record's place to the tombstone log (`tombstones.rs`),
//! syncs it, drops the digest from the index and punches a hole over the record's data, so the
//! filesystem frees its whole blocks; the header stays for scans to step over.
//!
//! Durability: a blob becomes visible in the index when its bytes are written, and durable
//! when a sync of its pack covers them. Every publish that names a blob in the active pack
//! (one it wrote, or one another publish wrote and has not synced yet) makes sure a sync
//! covers it before returning, so content is durable before any metadata can name it.

pub(crate) mod index;
mod record;
pub(crate) mod scan;
pub(crate) mod tombstones;

use crate::{BlobError, Encoding};
use keel_core::Digest;
use record::{HEADER_LEN, Header};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tombstones::Tombstones;

/// Bytes of a pack record's header, before the blob's stored bytes.
pub const PACK_RECORD_HEADER_BYTES: u64 = HEADER_LEN as u64;

/// Where one packed blob is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Loc {
    pub pack: u32,
    /// Offset of the record (its header) in the pack.
    pub offset: u64,
    pub stored_len: u32,
    pub encoding: Encoding,
    /// The record's bytes did not match its header's check when the pack was scanned
    /// (damaged after it was written): it stays readable for `verify` to report, and storing
    /// the same content again writes a fresh copy.
    pub damaged: bool,
}

impl Loc {
    pub fn data_offset(&self) -> u64 {
        self.offset + HEADER_LEN as u64
    }

    fn end(&self) -> u64 {
        self.data_offset() + u64::from(self.stored_len)
    }
}

/// The pack being appended to.
struct Active {
    id: u32,
    file: Arc<File>,
    /// Bytes written.
    len: u64,
    /// Bytes known durable.
    synced: u64,
}

/// All packs of one store.
pub(crate) struct Packs {
    dir: PathBuf,
    pack_bytes: u64,
    index: RwLock<HashMap<Digest, Loc>>,
    files: RwLock<HashMap<u32, Arc<File>>>,
    active: Mutex<Active>,
    tombstones: Mutex<Tombstones>,
}

/// A small blob to pack: its digest, encoding and stored bytes.
pub(crate) struct ToPack<'a> {
    pub digest: Digest,
    pub encoding: Encoding,
    pub data: &'a [u8],
}

pub(crate) fn pack_path(dir: &Path, id: u32) -> PathBuf {
    dir.join(format!("pack-{id:08}.pack"))
}

/// The ids of the pack files (`pack-ID.pack`) in `dir`, in order.
pub(crate) fn pack_ids(dir: &Path) -> Result<Vec<u32>, BlobError> {
    let mut ids: Vec<u32> = fs::read_dir(dir)
        .map_err(|e| BlobError::io(dir, e))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix("pack-")?
                .strip_suffix(".pack")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

pub(crate) fn index_path(dir: &Path, id: u32) -> PathBuf {
    dir.join(format!("pack-{id:08}.idx"))
}

fn lock_poisoned(dir: &Path) -> BlobError {
    BlobError::io(
        dir,
        std::io::Error::other("a thread panicked while holding the pack lock"),
    )
}

impl Packs {
    /// Opens (creating) the packs under `dir`, rebuilding what a crash left unfinished.
    pub fn open(dir: &Path, pack_bytes: u64) -> Result<Packs, BlobError> {
        fs::create_dir_all(dir).map_err(|e| BlobError::io(dir, e))?;
        let (tombstones, reclaimed) = Tombstones::open(&dir.join("reclaimed"))?;
        let ids = pack_ids(dir)?;
        let mut index = HashMap::new();
        let mut files = HashMap::new();
        let mut active = None;
        for (i, &id) in ids.iter().enumerate() {
            let path = pack_path(dir, id);
            let last = i + 1 == ids.len();
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| BlobError::io(&path, e))?;
            let entries = match index::read(&index_path(dir, id), id) {
                Some(entries) => entries,
                None => {
                    let scanned = scan::scan(&path, id, &reclaimed)?;
                    let len = file.metadata().map_err(|e| BlobError::io(&path, e))?.len();
                    if scanned.good_len != len {
                        // What a crash left of an unfinished append: never acknowledged.
                        file.set_len(scanned.good_len)
                            .and_then(|()| file.sync_all())
                            .map_err(|e| BlobError::io(&path, e))?;
                    }
                    if last {
                        active = Some(Active {
                            id,
                            file: Arc::new(file.try_clone().map_err(|e| BlobError::io(&path, e))?),
                            len: scanned.good_len,
                            synced: 0,
                        });
                    } else {
                        index::write(&index_path(dir, id), &scanned.entries)?;
                    }
                    scanned.entries
                }
            };
            for (digest, loc) in entries {
                if !reclaimed.contains(&(id, loc.offset)) {
                    let kept = index.entry(digest).or_insert(loc);
                    if kept.damaged && !loc.damaged {
                        *kept = loc;
                    }
                }
            }
            files.insert(id, Arc::new(file));
        }
        let active = match active {
            Some(mut active) => {
                // Whatever the scan kept is on disk now; the next sync covers the rest.
                active
                    .file
                    .sync_data()
                    .map_err(|e| BlobError::io(pack_path(dir, active.id), e))?;
                active.synced = active.len;
                active
            }
            None => {
                let id = ids.last().map_or(1, |last| last + 1);
                let active = create_pack(dir, id)?;
                files.insert(id, active.file.clone());
                active
            }
        };
        let packs = Packs {
            dir: dir.to_path_buf(),
            pack_bytes,
            index: RwLock::new(index),
            files: RwLock::new(files),
            active: Mutex::new(active),
            tombstones: Mutex::new(tombstones),
        };
        // A crash may have come between a tombstone and its hole punch: free them again.
        for &(pack, offset) in &reclaimed {
            packs.punch_record(pack, offset);
        }
        Ok(packs)
    }

    /// The place of a packed blob, if the digest is packed.
    pub fn get(&self, digest: &Digest) -> Option<Loc> {
        self.index.read().ok()?.get(digest).copied()
    }

    /// Reads a packed blob's stored bytes.
    pub fn read(&self, loc: &Loc) -> Result<Vec<u8>, BlobError> {
        let file = self
            .files
            .read()
            .map_err(|_| lock_poisoned(&self.dir))?
            .get(&loc.pack)
            .cloned();
        let path = pack_path(&self.dir, loc.pack);
        let file = file.ok_or_else(|| {
            BlobError::io(
                &path,
                std::io::Error::other("the index names a pack that is not open"),
            )
        })?;
        let mut data = vec![0u8; loc.stored_len as usize];
        file.read_exact_at(&mut data, loc.data_offset())
            .map_err(|e| BlobError::io(&path, e))?;
        Ok(data)
    }

    /// Appends the blobs not yet packed and returns once every named blob is durable.
    pub fn publish(&self, blobs: &[ToPack<'_>]) -> Result<(), BlobError> {
        let mut active = self.active.lock().map_err(|_| lock_poisoned(&self.dir))?;
        let mut buf = Vec::new();
        let mut added: Vec<(Digest, Loc)> = Vec::new();
        // The furthest byte of the active pack a blob of this batch lies in.
        let mut needed = 0u64;
        {
            let index = self.index.read().map_err(|_| lock_poisoned(&self.dir))?;
            let mut fresh = std::collections::HashSet::new();
            for blob in blobs {
                if let Some(loc) = index.get(&blob.digest).filter(|loc| !loc.damaged) {
                    if loc.pack == active.id {
                        needed = needed.max(loc.end());
                    }
                    continue;
                }
                if !fresh.insert(blob.digest) {
                    continue;
                }
                let header = Header::for_data(blob.digest, blob.encoding, blob.data);
                let loc = Loc {
                    pack: active.id,
                    offset: active.len + buf.len() as u64,
                    stored_len: header.stored_len,
                    encoding: blob.encoding,
                    damaged: false,
                };
                buf.extend_from_slice(&header.encode());
                buf.extend_from_slice(blob.data);
                needed = needed.max(loc.end());
                added.push((blob.digest, loc));
            }
        }
        let path = pack_path(&self.dir, active.id);
        if !buf.is_empty() {
            if let Err(e) = active.file.write_all_at(&buf, active.len) {
                // Leave no partial record for the next append to follow.
                let _ = active.file.set_len(active.len);
                return Err(BlobError::io(&path, e));
            }
            active.len += buf.len() as u64;
            let mut index = self.index.write().map_err(|_| lock_poisoned(&self.dir))?;
            for (digest, loc) in &added {
                index.insert(*digest, *loc);
            }
        }
        if needed <= active.synced {
            return Ok(());
        }
        // Sync without holding the lock, so other publishes append meanwhile.
        let (id, file, len) = (active.id, active.file.clone(), active.len);
        drop(active);
        if let Err(e) = file.sync_data() {
            let mut index = self.index.write().map_err(|_| lock_poisoned(&self.dir))?;
            for (digest, loc) in &added {
                if index.get(digest) == Some(loc) {
                    index.remove(digest);
                }
            }
            return Err(BlobError::io(&path, e));
        }
        let mut active = self.active.lock().map_err(|_| lock_poisoned(&self.dir))?;
        if active.id == id {
            active.synced = active.synced.max(len);
            if active.len >= self.pack_bytes {
                self.seal(&mut active)?;
            }
        }
        Ok(())
    }

    /// Seals the active pack (synced, indexed) and starts the next one.
    fn seal(&self, active: &mut Active) -> Result<(), BlobError> {
        let path = pack_path(&self.dir, active.id);
        active
            .file
            .sync_data()
            .map_err(|e| BlobError::io(&path, e))?;
        active.synced = active.len;
        let mut entries: Vec<(Digest, Loc)> = self
            .index
            .read()
            .map_err(|_| lock_poisoned(&self.dir))?
            .iter()
            .filter(|(_, loc)| loc.pack == active.id)
            .map(|(d, l)| (*d, *l))
            .collect();
        entries.sort_unstable_by_key(|(_, loc)| loc.offset);
        index::write(&index_path(&self.dir, active.id), &entries)?;
        let next = create_pack(&self.dir, active.id + 1)?;
        self.files
            .write()
            .map_err(|_| lock_poisoned(&self.dir))?
            .insert(next.id, next.file.clone());
        *active = next;
        Ok(())
    }

    /// Reclaims a packed blob: durable tombstone, out of the index, hole over its data.
    /// Returns the stored bytes freed, or `None` when the digest is not packed.
    pub fn delete(&self, digest: &Digest) -> Result<Option<u64>, BlobError> {
        let mut tombstones = self
            .tombstones
            .lock()
            .map_err(|_| lock_poisoned(&self.dir))?;
        let Some(loc) = self.get(digest) else {
            return Ok(None);
        };
        tombstones.add(loc.pack, loc.offset, digest)?;
        {
            let mut index = self.index.write().map_err(|_| lock_poisoned(&self.dir))?;
            if index.get(digest) == Some(&loc) {
                index.remove(digest);
            }
        }
        self.punch(&loc);
        Ok(Some(u64::from(loc.stored_len)))
    }

    /// Punches a hole over the data of the record at (`pack`, `offset`), reading its header.
    fn punch_record(&self, pack: u32, offset: u64) {
        let file = self.files.read().ok().and_then(|f| f.get(&pack).cloned());
        let Some(file) = file else { return };
        let mut head = [0u8; HEADER_LEN];
        if file.read_exact_at(&mut head, offset).is_err() {
            return;
        }
        if let Some(header) = Header::decode(&head) {
            self.punch(&Loc {
                pack,
                offset,
                stored_len: header.stored_len,
                encoding: header.encoding,
                damaged: false,
            });
        }
    }

    /// Frees the blocks under a record's data. Best effort: the tombstone already made the
    /// record dead, and a filesystem without hole punching only keeps the bytes.
    fn punch(&self, loc: &Loc) {
        let file = self
            .files
            .read()
            .ok()
            .and_then(|f| f.get(&loc.pack).cloned());
        if let Some(file) = file {
            punch_hole(&file, loc.data_offset(), u64::from(loc.stored_len));
        }
    }

    /// The pack file holding `loc`.
    pub fn path_of(&self, loc: &Loc) -> PathBuf {
        pack_path(&self.dir, loc.pack)
    }
}

fn create_pack(dir: &Path, id: u32) -> Result<Active, BlobError> {
    let path = pack_path(dir, id);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| BlobError::io(&path, e))?;
    // The new name must survive a crash before anything is acknowledged from it.
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| BlobError::io(dir, e))?;
    let len = file.metadata().map_err(|e| BlobError::io(&path, e))?.len();
    Ok(Active {
        id,
        file: Arc::new(file),
        len,
        synced: len,
    })
}

#[cfg(target_os = "linux")]
fn punch_hole(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    if len == 0 {
        return;
    }
    // SAFETY: `file` is an open descriptor for the duration of the call.
    unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn punch_hole(_file: &File, _offset: u64, _len: u64) {}
