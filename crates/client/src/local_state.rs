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
//! file's newest timestamp is older than the start of the scan that hashed it; a younger file
//! is hashed again next time. The start is read from the workspace's own filesystem, as the
//! timestamp of a probe file created (and removed) in the root before the scan looks at any
//! file: any later change gets a timestamp at least as new, whatever the filesystem's
//! granularity or its clock's offset from this machine's. Where no probe can be created, the
//! start is this machine's clock less `TransferConfig::state_racy_slack`.
//!
//! Format (little-endian): magic `KEELSTAT`, version u32, server, workspace and root (u32
//! length + UTF-8), entry count u64, then per entry client file and depot file (u32 length +
//! UTF-8), have revision u32, size u64, mtime ns i64, ctime ns i64, inode u64, mode u32,
//! digest (32 bytes); last, the BLAKE3 hash of everything before it. Entries are in
//! [`path_order`] of their client files, each once (a file out of order is refused), so the
//! loaded state keeps them as they are — fixed-size records whose strings stay in the file's
//! bytes — and a scan walking the tree in the same order finds each at the next position.
//! It is written to a temp file renamed over the old one, without fsync: a file torn by a
//! crash fails its hash and is rebuilt.

use std::fs::Metadata;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::connect::Connection;
use crate::error::{IoContext, Result};
use crate::have_index::{Span, text};
use crate::path_order;
use crate::state_file::{self, Sealer};
use crate::workspace::WorkspaceCtx;

/// The state file's name at the workspace root; scans skip it.
pub const STATE_FILE_NAME: &str = ".keel-state";
const MAGIC: &[u8; 8] = b"KEELSTAT";
/// The format version; a file of another version is rebuilt.
pub const STATE_VERSION: u32 = 2;

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

    /// Whether the file is a symbolic link.
    #[cfg(unix)]
    pub fn is_symlink(&self) -> bool {
        self.mode & 0o170000 == 0o120000
    }

    #[cfg(not(unix))]
    pub fn is_symlink(&self) -> bool {
        self.mode & 2 != 0
    }

    /// Whether the file is executable; None where the platform keeps no executable bit.
    #[cfg(unix)]
    pub fn executable(&self) -> Option<bool> {
        Some(self.mode & 0o111 != 0)
    }

    #[cfg(not(unix))]
    pub fn executable(&self) -> Option<bool> {
        None
    }

    /// The later of mtime and ctime: when the file last changed in any way.
    fn newest_ns(&self) -> i64 {
        self.mtime_ns.max(self.ctime_ns)
    }
}

/// One file as last hashed, borrowed from the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateEntry<'a> {
    pub client_file: &'a str,
    pub depot_file: &'a str,
    pub have_rev: u32,
    pub stat: FileStat,
    pub digest: [u8; 32],
}

/// An entry as held: its strings in the state's arena.
#[derive(Debug, Clone, Copy)]
struct Rec {
    client: Span,
    depot: Span,
    have_rev: u32,
    stat: FileStat,
    digest: [u8; 32],
    /// False once forgotten (not written again).
    live: bool,
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
    /// Starts a scan of the workspace at `root` now, on the clock of the filesystem `root` is
    /// on (see the module docs); on this machine's clock with `slack` as the timestamp
    /// granularity to allow for when no probe file can be created there.
    pub fn start_in(root: &Path, slack: Duration, chunk: usize) -> Recording {
        match filesystem_now_ns(root) {
            Some(now) => Recording {
                started_ns: now,
                slack_ns: 0,
                buf: vec![0; chunk.max(4096)],
                hashed: 0,
            },
            None => Recording::start(slack, chunk),
        }
    }

    /// Starts a scan now on this machine's clock, with `slack` as the timestamp granularity to
    /// allow for.
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

/// The filesystem's time now: the modification time of a probe file created in `dir`, which
/// is removed again. Its name has the client's temp-file prefix, which scans skip, so a scan
/// running beside this one never takes it for a workspace file.
fn filesystem_now_ns(dir: &Path) -> Option<i64> {
    let probe = tempfile::Builder::new()
        .prefix(".keel-tmp-clock-")
        .tempfile_in(dir)
        .ok()?;
    let modified = probe.as_file().metadata().ok()?.modified().ok()?;
    Some(nanos_since_epoch(modified))
}

fn nanos_since_epoch(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The loaded state of one workspace.
pub struct LocalState {
    path: PathBuf,
    key: StateKey,
    /// The strings of `recs` and `added`: the loaded file's bytes, then strings added since.
    arena: Vec<u8>,
    /// As loaded, in [`path_order`]; updated in place.
    recs: Vec<Rec>,
    /// Files first recorded since the load, in no order (sorted in when saved).
    added: Vec<Rec>,
    /// Where the next lookup looks first.
    hint: usize,
    dirty: bool,
    pub origin: StateOrigin,
}

impl LocalState {
    /// Loads `ROOT/.keel-state` for `key`; anything unusable loads as empty (see `origin`).
    pub fn load(root: &Path, key: StateKey) -> LocalState {
        let path = root.join(STATE_FILE_NAME);
        let ((arena, recs), origin) = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (Default::default(), StateOrigin::Missing)
            }
            Err(e) => (Default::default(), StateOrigin::Discarded(e.to_string())),
            Ok(bytes) => match decode(&bytes, &key) {
                Ok(recs) => ((bytes, recs), StateOrigin::Loaded),
                Err(reason) => (Default::default(), StateOrigin::Discarded(reason)),
            },
        };
        let dirty = origin != StateOrigin::Loaded;
        LocalState {
            path,
            key,
            arena,
            recs,
            added: Vec::new(),
            hint: 0,
            dirty,
            origin,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries held (not forgotten).
    pub fn len(&self) -> usize {
        self.recs
            .iter()
            .chain(&self.added)
            .filter(|r| r.live)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn view(&self, r: &Rec) -> StateEntry<'_> {
        StateEntry {
            client_file: text(&self.arena, r.client),
            depot_file: text(&self.arena, r.depot),
            have_rev: r.have_rev,
            stat: r.stat,
            digest: r.digest,
        }
    }

    pub fn get(&self, client_file: &str) -> Option<StateEntry<'_>> {
        let found = self.position(client_file, &mut 0).map(|i| &self.recs[i]);
        let added = || {
            self.added
                .iter()
                .rev()
                .find(|r| r.client.of(&self.arena) == client_file.as_bytes())
        };
        found
            .or_else(added)
            .filter(|r| r.live)
            .map(|r| self.view(r))
    }

    /// The position in `recs` of `client_file`'s entry (forgotten or not).
    fn position(&self, client_file: &str, hint: &mut usize) -> Option<usize> {
        path_order::find(
            self.recs.len(),
            |i| self.recs[i].client.of(&self.arena),
            client_file.as_bytes(),
            hint,
        )
    }

    /// The digest of the local file at `path()` (lstat'ed as `stat`): from its entry when the
    /// stat is the recorded one, else read and hashed (and recorded when settled). `path` is
    /// called only to read the file. A keyword file (`keywords` not none) is hashed
    /// un-expanded, the form its revisions are stored in.
    #[allow(clippy::too_many_arguments)]
    pub fn digest(
        &mut self,
        rec: &mut Recording,
        client_file: &str,
        depot_file: &str,
        have_rev: u32,
        path: impl FnOnce() -> PathBuf,
        stat: &FileStat,
        keywords: crate::keywords::StoredForm,
    ) -> Result<[u8; 32]> {
        let stat = *stat;
        let mut hint = self.hint;
        let at = self.position(client_file, &mut hint);
        self.hint = hint;
        if let Some(i) = at
            && self.recs[i].live
            && self.recs[i].stat == stat
        {
            let r = self.recs[i];
            if r.have_rev != have_rev || r.depot.of(&self.arena) != depot_file.as_bytes() {
                let depot = Span::push(&mut self.arena, depot_file);
                let r = &mut self.recs[i];
                r.have_rev = have_rev;
                r.depot = depot;
                self.dirty = true;
            }
            return Ok(r.digest);
        }
        // A keyword file's entry holds the digest of its un-expanded content: what it is
        // compared with (the stored revision's) is of that form too.
        let digest = if keywords == crate::keywords::StoredForm::PLAIN || stat.is_symlink() {
            hash_file(&path(), stat.is_symlink(), &mut rec.buf)?
        } else {
            crate::keywords::hash_unexpanded(&path(), keywords)?
        };
        rec.hashed += 1;
        if rec.settled(&stat) {
            // The entry's own depot file when it is unchanged: the arena (the loaded file's
            // bytes) grows only for what is new.
            let old_depot = at
                .map(|i| self.recs[i].depot)
                .filter(|d| d.of(&self.arena) == depot_file.as_bytes());
            let depot = old_depot.unwrap_or_else(|| Span::push(&mut self.arena, depot_file));
            let mut fresh = Rec {
                client: Span::EMPTY,
                depot,
                have_rev,
                stat,
                digest,
                live: true,
            };
            match at {
                Some(i) => {
                    fresh.client = self.recs[i].client;
                    self.recs[i] = fresh;
                }
                None => {
                    fresh.client = Span::push(&mut self.arena, client_file);
                    self.added.push(fresh);
                }
            }
            self.dirty = true;
        } else if let Some(i) = at
            && self.recs[i].live
        {
            self.recs[i].live = false;
            self.dirty = true;
        }
        Ok(digest)
    }

    /// Forgets the entries `keep` says no to; it is asked in [`path_order`] for the loaded
    /// entries, then for those recorded since.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let arena = &self.arena;
        for r in self.recs.iter_mut().chain(self.added.iter_mut()) {
            if r.live && !keep(text(arena, r.client)) {
                r.live = false;
                self.dirty = true;
            }
        }
    }

    /// Writes the state when it changed: a temp file beside it, renamed over it. Returns
    /// whether it wrote.
    /// Nothing is written while the workspace root does not exist.
    pub fn save(&mut self) -> Result<bool> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if !self.dirty || !dir.is_dir() {
            return Ok(false);
        }
        let path = self.path.clone();
        state_file::replace_streamed(&path, ".keel-tmp-state-", |out| self.encode(out))?;
        self.dirty = false;
        Ok(true)
    }

    /// Writes the live entries in order: the loaded ones merged with those added since
    /// (sorted; of two for one file the later wins).
    fn encode<W: std::io::Write>(&mut self, out: &mut Sealer<W>) -> std::io::Result<()> {
        let arena = &self.arena;
        let by_path = |a: &Rec, b: &Rec| path_order::cmp(a.client.of(arena), b.client.of(arena));
        self.added.sort_by(by_path);
        let mut added: Vec<Rec> = Vec::with_capacity(self.added.len());
        for r in &self.added {
            match added.last_mut() {
                Some(last) if by_path(last, r).is_eq() => *last = *r,
                _ => added.push(*r),
            }
        }
        let live = |r: &&Rec| r.live;
        let mut old = self.recs.iter().filter(live).peekable();
        let mut new = added.iter().filter(live).peekable();
        let mut merged: Vec<&Rec> = Vec::with_capacity(self.recs.len() + added.len());
        loop {
            let next = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(_), None) => old.next(),
                (None, Some(_)) => new.next(),
                (Some(a), Some(b)) => match by_path(a, b) {
                    std::cmp::Ordering::Less => old.next(),
                    std::cmp::Ordering::Greater => new.next(),
                    std::cmp::Ordering::Equal => {
                        old.next();
                        new.next()
                    }
                },
            };
            merged.extend(next);
        }
        out.begin(MAGIC, STATE_VERSION, &self.key)?;
        out.put(&(merged.len() as u64).to_le_bytes())?;
        for r in merged {
            out.put_bytes(r.client.of(arena))?;
            out.put_bytes(r.depot.of(arena))?;
            let mut fixed = [0u8; 4 + 8 * 4 + 4 + 32];
            fixed[..4].copy_from_slice(&r.have_rev.to_le_bytes());
            fixed[4..12].copy_from_slice(&r.stat.size.to_le_bytes());
            fixed[12..20].copy_from_slice(&r.stat.mtime_ns.to_le_bytes());
            fixed[20..28].copy_from_slice(&r.stat.ctime_ns.to_le_bytes());
            fixed[28..36].copy_from_slice(&r.stat.ino.to_le_bytes());
            fixed[36..40].copy_from_slice(&r.stat.mode.to_le_bytes());
            fixed[40..].copy_from_slice(&r.digest);
            out.put(&fixed)?;
        }
        Ok(())
    }

    /// The file [`save`](Self::save) would write, in memory.
    #[cfg(test)]
    fn encoded(&mut self) -> Vec<u8> {
        let mut out = Sealer::new(Vec::new());
        self.encode(&mut out).expect("writing to memory");
        out.finish().expect("writing to memory")
    }
}

/// The BLAKE3 digest of a workspace file's content as Keel sees it (a symlink's content is its
/// target), reading through `buf`.
pub fn hash_meta(path: &Path, meta: &Metadata, buf: &mut [u8]) -> Result<[u8; 32]> {
    hash_file(path, meta.file_type().is_symlink(), buf)
}

/// [`hash_meta`] of a file known to be a symlink or not.
pub fn hash_file(path: &Path, symlink: bool, buf: &mut [u8]) -> Result<[u8; 32]> {
    let mut hasher = blake3::Hasher::new();
    if symlink {
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

/// The entries of a state file's bytes (their strings left in `bytes`), or why they cannot be
/// used.
fn decode(bytes: &[u8], key: &StateKey) -> Result<Vec<Rec>, String> {
    let mut r = state_file::open(bytes, MAGIC, STATE_VERSION, key)?;
    let count = r.u64()?;
    let mut recs: Vec<Rec> = Vec::with_capacity(count.min(r.bytes.len() as u64 / 80) as usize);
    for _ in 0..count {
        let client = r.span(bytes)?;
        let rec = Rec {
            client,
            depot: r.span(bytes)?,
            have_rev: r.u32()?,
            stat: FileStat {
                size: r.u64()?,
                mtime_ns: r.i64()?,
                ctime_ns: r.i64()?,
                ino: r.u64()?,
                mode: r.u32()?,
            },
            digest: r.array()?,
            live: true,
        };
        if let Some(last) = recs.last()
            && path_order::cmp(last.client.of(bytes), client.of(bytes)).is_ge()
        {
            return Err("entries out of order".into());
        }
        recs.push(rec);
    }
    r.end()?;
    Ok(recs)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state_file::test_key as key;

    /// A state (for root `/w`, never saved there) holding `files` as if recorded, in the
    /// order given.
    fn sample(files: &[&str]) -> LocalState {
        let mut state = LocalState::load(Path::new("/nonexistent-keel-root"), key());
        for (n, client_file) in files.iter().enumerate() {
            let rec = Rec {
                client: Span::push(&mut state.arena, client_file),
                depot: Span::push(&mut state.arena, &format!("//depot/{client_file}")),
                have_rev: 3,
                stat: FileStat {
                    size: 10 + n as u64,
                    mtime_ns: 1_700_000_000_123_456_789,
                    ctime_ns: 1_700_000_001_000_000_000,
                    ino: 42,
                    mode: 0o100644,
                },
                digest: [7; 32],
                live: true,
            };
            state.added.push(rec);
        }
        state
    }

    fn entries(state: &LocalState, recs: &[Rec]) -> Vec<(String, String, u64)> {
        recs.iter()
            .filter(|r| r.live)
            .map(|r| {
                let v = state.view(r);
                (v.client_file.into(), v.depot_file.into(), v.stat.size)
            })
            .collect()
    }

    #[test]
    fn round_trips_in_path_order() {
        let mut state = sample(&["b", "a.c", "a/x"]);
        let bytes = state.encoded();
        let recs = decode(&bytes, &key()).unwrap();
        let loaded = LocalState {
            arena: bytes.clone(),
            ..sample(&[])
        };
        assert_eq!(
            entries(&loaded, &recs),
            [
                ("a/x".into(), "//depot/a/x".into(), 12),
                ("a.c".into(), "//depot/a.c".into(), 11),
                ("b".into(), "//depot/b".into(), 10),
            ]
        );
    }

    #[test]
    fn every_torn_or_flipped_file_is_refused() {
        let bytes = sample(&["a/b.c", "d"]).encoded();
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], &key()).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x01;
            assert!(decode(&flipped, &key()).is_err(), "flip at {at}");
        }
    }

    /// Re-seals `bytes` after `edit` changed its body, as a writer of that content would.
    fn resealed(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut body = bytes[..bytes.len() - 32].to_vec();
        edit(&mut body);
        let mut out = Sealer::new(Vec::new());
        out.put(&body).unwrap();
        out.finish().unwrap()
    }

    #[test]
    fn another_key_version_or_order_is_refused() {
        let bytes = sample(&["a/b.c"]).encoded();
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
        for version in [1, STATE_VERSION + 1] {
            let old = resealed(&bytes, |b| b[8..12].copy_from_slice(&version.to_le_bytes()));
            assert!(decode(&old, &key()).unwrap_err().contains("version"));
        }
        // Two entries swapped (same length, so the file stays well formed): out of order.
        let two = sample(&["a", "b"]).encoded();
        let swapped = resealed(&two, |b| {
            let a = b.windows(5).position(|w| w == [1, 0, 0, 0, b'a']).unwrap();
            let z = b.windows(5).position(|w| w == [1, 0, 0, 0, b'b']).unwrap();
            b[a + 4] = b'b';
            b[z + 4] = b'a';
        });
        assert!(decode(&swapped, &key()).unwrap_err().contains("order"));
    }

    /// The digest `state` answers for the tests' one file `f` (`//d/f` at `have_rev`, stored
    /// plain), lstat'ed as `meta`.
    #[cfg(unix)]
    fn digest_f(
        state: &mut LocalState,
        rec: &mut Recording,
        have_rev: u32,
        file: &Path,
        meta: &Metadata,
    ) -> [u8; 32] {
        state
            .digest(
                rec,
                "f",
                "//d/f",
                have_rev,
                || file.to_path_buf(),
                &FileStat::of(meta),
                crate::keywords::StoredForm::PLAIN,
            )
            .unwrap()
    }

    /// On the filesystem's clock a file is settled as soon as its timestamps are older than
    /// the probe's, and a change after the probe always shows: here a same-size rewrite whose
    /// mtime is put back, which only the ctime gives away.
    #[cfg(unix)]
    #[test]
    fn the_filesystems_clock_settles_files_older_than_the_probe() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"hello").unwrap();
        let mut state = LocalState::load(dir.path(), key());
        // Right after the write the probe may fall in the same timestamp tick: the entry is
        // kept exactly when the file is older than the probe.
        let mut rec = Recording::start_in(dir.path(), Duration::from_secs(3600), 4096);
        let meta = std::fs::symlink_metadata(&file).unwrap();
        digest_f(&mut state, &mut rec, 1, &file, &meta);
        let older = FileStat::of(&meta).newest_ns() < rec.started_ns;
        assert_eq!(state.get("f").is_some(), older);
        // Ticks of the kernel's file clock are at most 10 ms; a probe after 50 ms is newer.
        std::thread::sleep(Duration::from_millis(50));
        let mut rec = Recording::start_in(dir.path(), Duration::from_secs(3600), 4096);
        digest_f(&mut state, &mut rec, 1, &file, &meta);
        assert!(
            state.get("f").is_some(),
            "settled without the hour of slack"
        );
        // The probe is gone.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // Rewritten after the probe with the same size, its mtime put back: read again.
        std::thread::sleep(Duration::from_millis(50));
        let mtime = meta.modified().unwrap();
        std::fs::write(&file, b"jello").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let moved = std::fs::symlink_metadata(&file).unwrap();
        assert_eq!(moved.modified().unwrap(), mtime);
        let mut rec = Recording::start_in(dir.path(), Duration::ZERO, 4096);
        let digest = digest_f(&mut state, &mut rec, 1, &file, &moved);
        assert_eq!(rec.hashed, 1);
        assert_eq!(digest, *blake3::hash(b"jello").as_bytes());
    }

    #[cfg(unix)]
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
        let digest = digest_f(&mut state, &mut rec, 1, &file, &meta);
        assert_eq!(digest, *blake3::hash(b"hello").as_bytes());
        assert!(state.get("f").is_none());
        // No slack, a scan started after the write: settled and kept, then answered from
        // the entry without reading (and its have revision refreshed).
        std::thread::sleep(Duration::from_millis(5));
        let mut rec = Recording::start(Duration::ZERO, 4096);
        digest_f(&mut state, &mut rec, 1, &file, &meta);
        assert_eq!(rec.hashed, 1);
        assert!(state.get("f").is_some());
        assert!(state.save().unwrap());
        let mut reloaded = LocalState::load(dir.path(), key());
        assert_eq!(reloaded.origin, StateOrigin::Loaded);
        assert_eq!(reloaded.get("f"), state.get("f"));
        digest_f(&mut reloaded, &mut rec, 2, &file, &meta);
        assert_eq!(rec.hashed, 1);
        assert_eq!(reloaded.get("f").unwrap().have_rev, 2);
        assert!(reloaded.save().unwrap());
        let again = LocalState::load(dir.path(), key());
        assert_eq!(again.get("f").unwrap().have_rev, 2);
        // A stat that moved (here: the mode) reads the file again.
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let meta = std::fs::symlink_metadata(&file).unwrap();
        digest_f(&mut reloaded, &mut rec, 2, &file, &meta);
        assert_eq!(rec.hashed, 2);
    }
}
