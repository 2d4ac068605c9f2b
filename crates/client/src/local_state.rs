//! The workspace's local state file (`ROOT/.keel-state`): for each file the scan has hashed,
//! the stat it had (size, mtime, ctime, inode, mode) and the BLAKE3 digest of its content then,
//! so `status`, `reconcile` and `diff` read only the files whose stat changed.
//!
//! It is a cache, never the truth: the server's have list is. An entry says only "a file with
//! exactly this stat held content with this digest", so it stays right whatever the have list
//! says (the depot path and have revision beside it are refreshed when the have list moves).
//! A missing, unreadable, corrupt or foreign file (another format version, server, workspace
//! or root, e.g. one copied with the workspace) loads as empty and is rebuilt by the next scan.
//!
//! Racy entries, as git calls them: a file changed again within the timestamp granularity of
//! the moment it was hashed keeps the same mtime and ctime, so an entry is kept only when the
//! file's newest timestamp is older than the start of the scan that hashed it by at least
//! `TransferConfig::state_racy_slack`; a younger file is hashed again next time.
//!
//! Format (little-endian): magic `KEELSTAT`, version u32, server, workspace and root (u32
//! length + UTF-8), entry count u64, then per entry client file and depot file (u32 length +
//! UTF-8), have revision u32, size u64, mtime ns i64, ctime ns i64, inode u64, mode u32,
//! digest (32 bytes); last, the BLAKE3 hash of everything before it. It is written to a temp
//! file renamed over the old one, without fsync: a file torn by a crash fails its hash and is
//! rebuilt.

use std::collections::HashMap;
use std::fs::Metadata;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::connect::Connection;
use crate::error::{IoContext, Result};
use crate::state_file::{self, put_str};
use crate::workspace::WorkspaceCtx;

/// The state file's name at the workspace root; scans skip it.
pub const STATE_FILE_NAME: &str = ".keel-state";
const MAGIC: &[u8; 8] = b"KEELSTAT";
/// The format version; a file of another version is rebuilt.
pub const STATE_VERSION: u32 = 1;

/// What a state file belongs to; a file recorded for another key is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateKey {
    pub server: String,
    pub workspace: String,
    pub root: String,
}

impl StateKey {
    /// The key of `ws` as reached through `conn`.
    pub fn of(ws: &WorkspaceCtx, conn: &Connection) -> StateKey {
        StateKey {
            server: conn.addr().to_string(),
            workspace: ws.name.clone(),
            root: ws.root.display().to_string(),
        }
    }
}

/// The parts of a file's stat that change when its content, mode or identity does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
}

impl FileStat {
    #[cfg(unix)]
    pub fn of(meta: &Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            mode: meta.mode(),
        }
    }

    /// Without a change time no entry is ever kept (see `Recording::settled`).
    #[cfg(not(unix))]
    pub fn of(meta: &Metadata) -> FileStat {
        FileStat {
            size: meta.len(),
            mtime_ns: meta.modified().map_or(0, nanos_since_epoch),
            ctime_ns: 0,
            ino: 0,
            mode: u32::from(meta.file_type().is_symlink()) << 1 | u32::from(meta.is_file()),
        }
    }

    /// The later of mtime and ctime: when the file last changed in any way.
    fn newest_ns(&self) -> i64 {
        self.mtime_ns.max(self.ctime_ns)
    }
}

/// One file as last hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateEntry {
    pub depot_file: String,
    pub have_rev: u32,
    pub stat: FileStat,
    pub digest: [u8; 32],
}

/// How the state was found when loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateOrigin {
    Loaded,
    Missing,
    /// It existed but could not be used (the reason); the next save replaces it.
    Discarded(String),
}

/// One scan's clock and buffer: entries recorded during it are kept only when settled.
pub struct Recording {
    started_ns: i64,
    slack_ns: i64,
    buf: Vec<u8>,
    /// Files hashed (read) during this scan.
    pub hashed: u64,
}

impl Recording {
    /// Starts a scan now, with `slack` as the timestamp granularity to allow for.
    pub fn start(slack: Duration, chunk: usize) -> Recording {
        Recording {
            started_ns: nanos_since_epoch(SystemTime::now()),
            slack_ns: i64::try_from(slack.as_nanos()).unwrap_or(i64::MAX),
            buf: vec![0; chunk.max(4096)],
            hashed: 0,
        }
    }

    /// Whether an entry for a file with `stat` may be kept. Only where files have a change
    /// time the user cannot set (unix ctime) does an unchanged stat prove unchanged content;
    /// elsewhere nothing is kept and every scan reads every file.
    fn settled(&self, stat: &FileStat) -> bool {
        cfg!(unix) && stat.newest_ns().saturating_add(self.slack_ns) < self.started_ns
    }
}

fn nanos_since_epoch(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The loaded state of one workspace.
pub struct LocalState {
    path: PathBuf,
    key: StateKey,
    entries: HashMap<String, StateEntry>,
    dirty: bool,
    pub origin: StateOrigin,
}

impl LocalState {
    /// Loads `ROOT/.keel-state` for `key`; anything unusable loads as empty (see `origin`).
    pub fn load(root: &Path, key: StateKey) -> LocalState {
        let path = root.join(STATE_FILE_NAME);
        let (entries, origin) = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (HashMap::new(), StateOrigin::Missing)
            }
            Err(e) => (HashMap::new(), StateOrigin::Discarded(e.to_string())),
            Ok(bytes) => match decode(&bytes, &key) {
                Ok(entries) => (entries, StateOrigin::Loaded),
                Err(reason) => (HashMap::new(), StateOrigin::Discarded(reason)),
            },
        };
        let dirty = origin != StateOrigin::Loaded;
        LocalState {
            path,
            key,
            entries,
            dirty,
            origin,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, client_file: &str) -> Option<&StateEntry> {
        self.entries.get(client_file)
    }

    /// The digest of the local file `path` (lstat'ed as `meta`): from its entry when the stat
    /// is the recorded one, else read and hashed (and recorded when settled).
    pub fn digest(
        &mut self,
        rec: &mut Recording,
        client_file: &str,
        depot_file: &str,
        have_rev: u32,
        path: &Path,
        meta: &Metadata,
    ) -> Result<[u8; 32]> {
        let stat = FileStat::of(meta);
        if let Some(entry) = self.entries.get_mut(client_file)
            && entry.stat == stat
        {
            if entry.have_rev != have_rev || entry.depot_file != depot_file {
                entry.have_rev = have_rev;
                entry.depot_file = depot_file.to_string();
                self.dirty = true;
            }
            return Ok(entry.digest);
        }
        let digest = hash_meta(path, meta, &mut rec.buf)?;
        rec.hashed += 1;
        if rec.settled(&stat) {
            self.entries.insert(
                client_file.to_string(),
                StateEntry {
                    depot_file: depot_file.to_string(),
                    have_rev,
                    stat,
                    digest,
                },
            );
            self.dirty = true;
        } else if self.entries.remove(client_file).is_some() {
            self.dirty = true;
        }
        Ok(digest)
    }

    /// Forgets the entries `keep` says no to.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|client_file, _| keep(client_file));
        self.dirty |= self.entries.len() != before;
    }

    /// Writes the state when it changed: a temp file beside it, renamed over it. Returns
    /// whether it wrote.
    /// Nothing is written while the workspace root does not exist.
    pub fn save(&mut self) -> Result<bool> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if !self.dirty || !dir.is_dir() {
            return Ok(false);
        }
        let bytes = encode(&self.key, &self.entries);
        state_file::replace(&self.path, ".keel-tmp-state-", &bytes)?;
        self.dirty = false;
        Ok(true)
    }
}

/// The BLAKE3 digest of a workspace file's content as Keel sees it (a symlink's content is its
/// target), reading through `buf`.
pub fn hash_meta(path: &Path, meta: &Metadata, buf: &mut [u8]) -> Result<[u8; 32]> {
    let mut hasher = blake3::Hasher::new();
    if meta.file_type().is_symlink() {
        hasher.update(&crate::transfer::link_bytes(path)?);
    } else {
        let mut file = std::fs::File::open(path).at(path)?;
        loop {
            let n = file.read(buf).at(path)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
    }
    Ok(*hasher.finalize().as_bytes())
}

fn encode(key: &StateKey, entries: &HashMap<String, StateEntry>) -> Vec<u8> {
    let mut out = state_file::begin(MAGIC, STATE_VERSION, key, entries.len() * 160);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (client_file, e) in entries {
        put_str(&mut out, client_file);
        put_str(&mut out, &e.depot_file);
        out.extend_from_slice(&e.have_rev.to_le_bytes());
        out.extend_from_slice(&e.stat.size.to_le_bytes());
        out.extend_from_slice(&e.stat.mtime_ns.to_le_bytes());
        out.extend_from_slice(&e.stat.ctime_ns.to_le_bytes());
        out.extend_from_slice(&e.stat.ino.to_le_bytes());
        out.extend_from_slice(&e.stat.mode.to_le_bytes());
        out.extend_from_slice(&e.digest);
    }
    state_file::seal(out)
}

/// The entries of a state file's bytes, or why they cannot be used.
fn decode(bytes: &[u8], key: &StateKey) -> Result<HashMap<String, StateEntry>, String> {
    let mut r = state_file::open(bytes, MAGIC, STATE_VERSION, key)?;
    let count = r.u64()?;
    let mut entries = HashMap::with_capacity(count.min(r.bytes.len() as u64 / 80) as usize);
    for _ in 0..count {
        let client_file = r.string()?;
        let entry = StateEntry {
            depot_file: r.string()?,
            have_rev: r.u32()?,
            stat: FileStat {
                size: r.u64()?,
                mtime_ns: r.i64()?,
                ctime_ns: r.i64()?,
                ino: r.u64()?,
                mode: r.u32()?,
            },
            digest: r.array()?,
        };
        entries.insert(client_file, entry);
    }
    r.end()?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state_file::test_key as key;

    fn sample() -> HashMap<String, StateEntry> {
        let mut entries = HashMap::new();
        entries.insert(
            "a/b.c".to_string(),
            StateEntry {
                depot_file: "//depot/a/b.c".into(),
                have_rev: 3,
                stat: FileStat {
                    size: 10,
                    mtime_ns: 1_700_000_000_123_456_789,
                    ctime_ns: 1_700_000_001_000_000_000,
                    ino: 42,
                    mode: 0o100644,
                },
                digest: [7; 32],
            },
        );
        entries
    }

    #[test]
    fn round_trips() {
        let bytes = encode(&key(), &sample());
        assert_eq!(decode(&bytes, &key()).unwrap(), sample());
    }

    #[test]
    fn every_torn_or_flipped_file_is_refused() {
        let bytes = encode(&key(), &sample());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], &key()).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x01;
            assert!(decode(&flipped, &key()).is_err(), "flip at {at}");
        }
    }

    #[test]
    fn another_key_or_version_is_refused() {
        let bytes = encode(&key(), &sample());
        for other in [
            StateKey {
                server: "127.0.0.1:1667".into(),
                ..key()
            },
            StateKey {
                workspace: "ws2".into(),
                ..key()
            },
            StateKey {
                root: "/w2".into(),
                ..key()
            },
        ] {
            assert!(decode(&bytes, &other).unwrap_err().contains("recorded for"));
        }
        let mut body = bytes[..bytes.len() - 32].to_vec();
        body[8..12].copy_from_slice(&(STATE_VERSION + 1).to_le_bytes());
        let sum = blake3::hash(&body);
        body.extend_from_slice(sum.as_bytes());
        assert!(decode(&body, &key()).unwrap_err().contains("version"));
    }

    #[test]
    fn young_files_are_not_recorded_until_they_settle() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"hello").unwrap();
        let meta = std::fs::symlink_metadata(&file).unwrap();
        let mut state = LocalState::load(dir.path(), key());
        assert_eq!(state.origin, StateOrigin::Missing);
        // Just written: within the slack of the scan's start, so hashed but not kept.
        let mut rec = Recording::start(Duration::from_secs(3600), 4096);
        let digest = state
            .digest(&mut rec, "f", "//d/f", 1, &file, &meta)
            .unwrap();
        assert_eq!(digest, *blake3::hash(b"hello").as_bytes());
        assert!(state.get("f").is_none());
        // No slack, a scan started after the write: settled and kept, then answered from
        // the entry without reading (and its have revision refreshed).
        std::thread::sleep(Duration::from_millis(5));
        let mut rec = Recording::start(Duration::ZERO, 4096);
        state
            .digest(&mut rec, "f", "//d/f", 1, &file, &meta)
            .unwrap();
        assert_eq!(rec.hashed, 1);
        assert!(state.get("f").is_some());
        state
            .digest(&mut rec, "f", "//d/f", 2, &file, &meta)
            .unwrap();
        assert_eq!(rec.hashed, 1);
        assert_eq!(state.get("f").unwrap().have_rev, 2);
        assert!(state.save().unwrap());
        let reloaded = LocalState::load(dir.path(), key());
        assert_eq!(reloaded.origin, StateOrigin::Loaded);
        assert_eq!(reloaded.get("f"), state.get("f"));
    }
}
