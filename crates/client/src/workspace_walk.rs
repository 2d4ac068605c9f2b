//! The walk a workspace scan compares against its caches: every file (and symlink) under the
//! root with its lstat. Walking threads of their own share the directories between them (any
//! thread reads any pending directory) and hand the files over in batches, so the kernel's
//! directory reads and stats run on several cores and overlap the caller's loading of its
//! caches and its comparing. A walk is started before the caches are loaded and consumed after.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Error, IoContext, Result};
use crate::ignore_rules::{IgnoreConfig, Rules};
use crate::local_state::FileStat;

/// Most files per batch handed from a walking thread to the caller: enough that a hand-over
/// costs little beside the stats, few enough that the caller starts early.
const BATCH_FILES: usize = 256;

/// Whether a file is one of Keel's own (config, state, have cache, tickets): a reserved name
/// (`keel_core::RESERVED_FILE_NAMES`), skipped at any depth, since the server refuses to add
/// one anywhere.
pub(crate) fn is_keel_file(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| keel_core::reserved_name(n).is_some())
}

/// Files found by one walking thread in a row: their client files end to end in `clients`,
/// each with where its client file ends, its directory (in `dirs`), its name when the client
/// file's last component does not spell it (a name that is not UTF-8), its lstat and whether
/// an ignore rule covers it.
/// Directory entries are not kept: each holds its directory open.
#[derive(Default)]
struct Batch {
    clients: String,
    dirs: Vec<PathBuf>,
    files: Vec<(usize, usize, Option<OsString>, FileStat, bool)>,
}

impl Batch {
    /// The local path of the file whose client file is `client`.
    fn local(&self, client: &str, dir: usize, name: &Option<OsString>) -> PathBuf {
        let dir = &self.dirs[dir];
        match name {
            Some(name) => dir.join(name),
            None => dir.join(client.rsplit('/').next().unwrap_or(client)),
        }
    }
}

/// A directory waiting to be read: its path, its client path (relative to the root, empty
/// for the root itself) and the ignore rules of its parent.
struct PendingDir {
    path: PathBuf,
    rel: String,
    rules: Rules,
}

/// The directories the walking threads share.
#[derive(Default)]
struct Queue {
    pending: Vec<PendingDir>,
    /// Directories a thread is reading now: their subdirectories are still to come.
    reading: usize,
    /// Set when a thread failed or the caller has gone: every thread stops.
    stop: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
    /// The ignore files looked for in each directory.
    ignore: IgnoreConfig,
    /// Directories left unread because an ignore rule covers them.
    pruned: Mutex<Vec<String>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A walking thread never panics while holding the lock; recover the queue anyway.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }

    fn prune(&self, rel: &str) {
        self.pruned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rel.to_string());
    }
}

/// A walk of a workspace under way: every file (and symlink) under the root and its lstat,
/// found by `threads` walking threads. Skips Keel's own files at the root and the client's
/// temp files; symlinked directories are not followed. Files an ignore rule covers come
/// marked; directories one covers are not read, and are named when the walk ends (a file
/// the have list holds there is still the workspace's, and is looked up on its own). Files come in batches of runs of one
/// directory, each run sorted bytewise by name; the runs come in no set order. Each file is
/// stat'ed relative to its open directory (no path walk per file). A file removed between the
/// directory read and its stat is left out (reported missing); a root that does not exist has
/// no files. Dropping the walk stops its threads and waits for them.
pub struct Walk {
    rx: Option<Receiver<Result<Batch>>>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Walk {
    /// Starts walking `root` on `threads` threads (at least one), at most about `files_ahead`
    /// files found ahead of the caller, honouring the ignore files `ignore` names
    /// (`IgnoreConfig::none()` for none). A global ignore file that does not parse fails here;
    /// a directory's fails the walk.
    pub fn start(
        root: &Path,
        threads: usize,
        files_ahead: usize,
        ignore: &IgnoreConfig,
    ) -> Result<Walk> {
        let (tx, rx) = sync_channel((files_ahead / BATCH_FILES).max(1));
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                pending: vec![PendingDir {
                    path: root.to_path_buf(),
                    rel: String::new(),
                    rules: Rules::globals(ignore)?,
                }],
                ..Queue::default()
            }),
            changed: Condvar::new(),
            ignore: ignore.clone(),
            pruned: Mutex::new(Vec::new()),
        });
        let mut walk = Walk {
            rx: Some(rx),
            shared,
            threads: Vec::new(),
        };
        for n in 0..threads.max(1) {
            let shared = Arc::clone(&walk.shared);
            let tx = tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("keel-walk-{n}"))
                .spawn(move || walk_thread(&shared, tx))
                .map_err(|e| Error::io(root, e))?;
            walk.threads.push(thread);
        }
        Ok(walk)
    }

    /// Calls `each` with every file the walk finds: its client file (relative to the root,
    /// `/`-separated), a maker of its local path, its lstat and whether an ignore rule covers
    /// it. When `each` fails, or a directory cannot be read, the walk stops with that error.
    /// Returns the directories left unread because ignore rules cover them, sorted.
    pub fn for_each(
        mut self,
        mut each: impl FnMut(&str, &dyn Fn() -> PathBuf, &FileStat, bool) -> Result<()>,
    ) -> Result<Vec<String>> {
        let rx = self.rx.take().expect("a walk is consumed once");
        for batch in rx {
            let batch = batch?;
            let mut start = 0;
            for (end, dir, name, stat, ignored) in &batch.files {
                let client = &batch.clients[start..*end];
                each(client, &|| batch.local(client, *dir, name), stat, *ignored)?;
                start = *end;
            }
        }
        let mut pruned =
            std::mem::take(&mut *self.shared.pruned.lock().unwrap_or_else(|e| e.into_inner()));
        pruned.sort_unstable();
        Ok(pruned)
    }
}

impl Drop for Walk {
    fn drop(&mut self) {
        // Threads waiting for a directory wake to the stop; one waiting to hand over a batch
        // finds the receiver gone.
        self.shared.stop();
        drop(self.rx.take());
        for thread in self.threads.drain(..) {
            // A walking thread reports its failures as errors; a panic there is a bug the
            // caller has already seen as a missing batch.
            let _ = thread.join();
        }
    }
}

/// Why a walking thread stopped early.
enum Stop {
    /// The caller stopped listening, or another thread failed.
    Gone,
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// Reads directories from the shared queue until none is pending or being read, sending the
/// files found to `tx`; a failure is sent last, and stops the other threads.
fn walk_thread(shared: &Shared, tx: SyncSender<Result<Batch>>) {
    let mut sender = Batcher {
        tx,
        batch: Batch::default(),
    };
    let mut entries = Default::default();
    let walked = loop {
        let dir = {
            let mut queue = shared.lock();
            loop {
                if queue.stop {
                    break None;
                }
                if let Some(dir) = queue.pending.pop() {
                    queue.reading += 1;
                    break Some(dir);
                }
                if queue.reading == 0 {
                    break None;
                }
                queue = shared
                    .changed
                    .wait(queue)
                    .unwrap_or_else(|e| e.into_inner());
            }
        };
        let Some(dir) = dir else {
            break sender.flush();
        };
        let read = read_dir(shared, &dir, &mut entries, &mut sender);
        let mut queue = shared.lock();
        queue.reading -= 1;
        match read {
            Ok(mut subdirs) => {
                // Popped last first: the first subdirectory is read next.
                subdirs.reverse();
                queue.pending.append(&mut subdirs);
                drop(queue);
                shared.changed.notify_all();
            }
            Err(stop) => {
                drop(queue);
                break Err(stop);
            }
        }
    };
    if let Err(stop) = walked {
        shared.stop();
        if let Stop::Failed(e) = stop {
            // Nobody to tell when the caller has gone.
            let _ = sender.tx.send(Err(e));
        }
    }
}

struct Batcher {
    tx: SyncSender<Result<Batch>>,
    batch: Batch,
}

impl Batcher {
    fn push(
        &mut self,
        rel: &str,
        dir: &Path,
        name: Option<OsString>,
        stat: FileStat,
        ignored: bool,
    ) -> std::result::Result<(), Stop> {
        self.batch.clients.push_str(rel);
        let end = self.batch.clients.len();
        let dirs = &mut self.batch.dirs;
        if dirs.last().is_none_or(|d| d.as_os_str() != dir.as_os_str()) {
            dirs.push(dir.to_path_buf());
        }
        self.batch
            .files
            .push((end, dirs.len() - 1, name, stat, ignored));
        if self.batch.files.len() >= BATCH_FILES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::result::Result<(), Stop> {
        if self.batch.files.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.tx.send(Ok(batch)).map_err(|_| Stop::Gone)
    }
}

/// Reads one directory: its files (names sorted bytewise) go to `out`, its subdirectories are
/// returned in the same order. `entries` is the walking thread's buffer, reused.
#[cfg(target_os = "linux")]
fn read_dir(
    shared: &Shared,
    dir: &PendingDir,
    entries: &mut crate::dir_read::Entries,
    out: &mut Batcher,
) -> std::result::Result<Vec<PendingDir>, Stop> {
    use crate::dir_read::{Dir, Kind, is_dir};
    use std::os::unix::ffi::OsStrExt;
    let at_root = dir.rel.is_empty();
    let open = match Dir::open(&dir.path) {
        Ok(open) => open,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && at_root => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&dir.path, e).into()),
    };
    open.read(entries).at(&dir.path)?;
    // The directory's own ignore files join its parent's rules; with none anywhere, the
    // rules stay empty and no file is matched against them.
    let rules = if shared.ignore.is_empty() {
        dir.rules.clone()
    } else {
        let present: Vec<String> = entries
            .sorted()
            .filter(|(_, _, kind)| !matches!(kind, Kind::Dir))
            .filter_map(|(bytes, _, _)| std::str::from_utf8(bytes).ok())
            .filter(|name| shared.ignore.is_ignore_file_name(name))
            .map(str::to_string)
            .collect();
        if present.is_empty() {
            dir.rules.clone()
        } else {
            dir.rules
                .enter(&shared.ignore, &dir.path, &dir.rel, |name| {
                    present.iter().any(|p| p == name)
                })?
        }
    };
    let mut rel = dir.rel.clone();
    let base = rel.len();
    let mut subdirs = Vec::new();
    for (bytes, c_name, kind) in entries.sorted() {
        let name = std::ffi::OsStr::from_bytes(bytes);
        let text = name.to_string_lossy();
        if !at_root {
            rel.push('/');
        }
        rel.push_str(&text);
        let skip = |name| is_keel_file(name) || text.starts_with(".keel-tmp-");
        let stat = match kind {
            Kind::Dir => None,
            Kind::NotDir if skip(name) => {
                rel.truncate(base);
                continue;
            }
            Kind::NotDir | Kind::Unknown => match open.lstat(c_name) {
                // Removed since the directory was read: reported as missing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    rel.truncate(base);
                    continue;
                }
                Err(e) => return Err(Error::io(dir.path.join(name), e).into()),
                Ok(stat) if is_dir(&stat) => None,
                Ok(stat) => Some(stat),
            },
        };
        match stat {
            None if rules.ignores(&rel, true) => shared.prune(&rel),
            None => subdirs.push(PendingDir {
                path: dir.path.join(name),
                rel: rel.clone(),
                rules: rules.clone(),
            }),
            Some(_) if skip(name) => {}
            Some(stat) => {
                let ignored = rules.ignores(&rel, false);
                let name = matches!(text, Cow::Owned(_)).then(|| name.to_os_string());
                out.push(&rel, &dir.path, name, stat, ignored)?
            }
        }
        rel.truncate(base);
    }
    Ok(subdirs)
}

/// Reads one directory: its files (names sorted bytewise) go to `out`, its subdirectories are
/// returned in the same order.
#[cfg(not(target_os = "linux"))]
fn read_dir(
    shared: &Shared,
    dir: &PendingDir,
    _entries: &mut (),
    out: &mut Batcher,
) -> std::result::Result<Vec<PendingDir>, Stop> {
    let at_root = dir.rel.is_empty();
    let entries = match std::fs::read_dir(&dir.path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && at_root => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&dir.path, e).into()),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.at(&dir.path)?;
        names.push((entry.file_name(), entry));
    }
    names.sort_unstable_by(|(a, _), (b, _)| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let rules = dir
        .rules
        .enter(&shared.ignore, &dir.path, &dir.rel, |wanted| {
            names.iter().any(|(n, _)| n.to_str() == Some(wanted))
        })?;
    let mut rel = dir.rel.clone();
    let base = rel.len();
    let mut subdirs = Vec::new();
    for (name, entry) in names {
        let text = name.to_string_lossy();
        if !at_root {
            rel.push('/');
        }
        rel.push_str(&text);
        let file_type = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        let skip = !file_type.is_dir() && (is_keel_file(&name) || text.starts_with(".keel-tmp-"));
        if file_type.is_dir() && rules.ignores(&rel, true) {
            shared.prune(&rel);
        } else if file_type.is_dir() {
            subdirs.push(PendingDir {
                path: entry.path(),
                rel: rel.clone(),
                rules: rules.clone(),
            });
        } else if !skip {
            match entry.metadata() {
                // Removed since the directory was read: reported as missing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(entry.path(), e).into()),
                Ok(meta) => {
                    let name = matches!(text, Cow::Owned(_)).then_some(name);
                    let ignored = rules.ignores(&rel, false);
                    out.push(&rel, &dir.path, name, FileStat::of(&meta), ignored)?
                }
            }
        }
        rel.truncate(base);
    }
    Ok(subdirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CONFIG_FILE_NAME;
    use crate::have_cache::HAVE_CACHE_FILE_NAME;
    use crate::local_state::STATE_FILE_NAME;

    #[test]
    fn the_client_files_are_reserved_names() {
        for name in [
            CONFIG_FILE_NAME,
            STATE_FILE_NAME,
            HAVE_CACHE_FILE_NAME,
            crate::tickets::TICKETS_FILE_NAME,
        ] {
            assert!(is_keel_file(std::ffi::OsStr::new(name)), "{name}");
        }
    }

    /// Files of a tree wider than a batch, nested, with Keel's own files at the root.
    fn tree() -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut expected = Vec::new();
        for d in ["a", "a/b", "a.c", "z", "z/1/2/3"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for i in 0..(BATCH_FILES + 10) {
            let rel = format!("a/b/f{i:04}");
            std::fs::write(dir.path().join(&rel), b"x").unwrap();
            expected.push(rel);
        }
        for rel in ["a-b", "a.c/y", "z/.keel-hive", "z/1/2/3/deep", "top"] {
            std::fs::write(dir.path().join(rel), b"y").unwrap();
            expected.push(rel.to_string());
        }
        for own in [STATE_FILE_NAME, HAVE_CACHE_FILE_NAME, ".keel-tmp-state-1"] {
            std::fs::write(dir.path().join(own), b"k").unwrap();
        }
        std::fs::write(dir.path().join("a/.keel-tmp-have-2"), b"k").unwrap();
        // Reserved names are Keel's at any depth.
        std::fs::write(dir.path().join("z/.keel-have"), b"k").unwrap();
        std::fs::write(dir.path().join("a.c/.keel"), b"k").unwrap();
        expected.sort();
        (dir, expected)
    }

    #[test]
    fn every_file_comes_once_with_its_local_path_and_stat_on_any_thread_count() {
        let (dir, expected) = tree();
        for threads in [1, 2, 3] {
            // A queue of one batch: the threads wait on the caller, and on each other.
            for files_ahead in [1, 1 << 16] {
                let mut seen = Vec::new();
                let mut dir_runs: Vec<String> = Vec::new();
                Walk::start(dir.path(), threads, files_ahead, &IgnoreConfig::none())
                    .unwrap()
                    .for_each(|client, local, stat, _| {
                        assert_eq!(local(), dir.path().join(client));
                        let meta = std::fs::symlink_metadata(local()).unwrap();
                        assert_eq!(*stat, FileStat::of(&meta));
                        // Within a directory's run, names come sorted.
                        let parent = client.rsplit_once('/').map_or("", |(d, _)| d);
                        if dir_runs.last().is_some_and(|d| d == parent) {
                            assert!(seen.last().is_some_and(|prev: &String| **prev < *client));
                        }
                        dir_runs.push(parent.to_string());
                        seen.push(client.to_string());
                        Ok(())
                    })
                    .unwrap();
                seen.sort();
                assert_eq!(seen, expected, "{threads} threads");
            }
        }
    }

    #[test]
    fn a_failing_caller_stops_the_walk_and_a_missing_root_has_no_files() {
        let (dir, _) = tree();
        let mut calls = 0;
        let err = Walk::start(dir.path(), 2, 1, &IgnoreConfig::none())
            .unwrap()
            .for_each(|client, _, _, _| {
                calls += 1;
                Err(Error::io(
                    Path::new(client),
                    std::io::Error::other("stop here"),
                ))
            })
            .unwrap_err();
        assert!(err.to_string().contains("stop here"), "{err}");
        assert_eq!(calls, 1);
        let gone = dir.path().join("gone");
        Walk::start(&gone, 2, 1, &IgnoreConfig::none())
            .unwrap()
            .for_each(|client, _, _, _| panic!("{client} found under a missing root"))
            .unwrap();
        // A walk dropped unconsumed stops its threads.
        drop(Walk::start(dir.path(), 2, 1, &IgnoreConfig::none()).unwrap());
    }

    #[test]
    fn ignored_files_come_marked_and_ignored_directories_are_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in [
            (".p4ignore", "*.o\nbuild/\n"),
            ("src/.p4ignore", "!keep.o\n"),
            ("src/a.c", "x"),
            ("src/a.o", "x"),
            ("src/keep.o", "x"),
            ("build/out", "x"),
            ("src/build/deep/x", "x"),
        ] {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let config = IgnoreConfig::from_setting(None, None);
        for threads in [1, 3] {
            let mut seen = Vec::new();
            let pruned = Walk::start(dir.path(), threads, 1, &config)
                .unwrap()
                .for_each(|client, _, _, ignored| {
                    seen.push((client.to_string(), ignored));
                    Ok(())
                })
                .unwrap();
            seen.sort();
            let expected: Vec<(String, bool)> = [
                (".p4ignore", false),
                ("src/.p4ignore", false),
                ("src/a.c", false),
                ("src/a.o", true),
                ("src/keep.o", false),
            ]
            .iter()
            .map(|(c, i)| (c.to_string(), *i))
            .collect();
            assert_eq!(seen, expected, "{threads} threads");
            assert_eq!(pruned, ["build", "src/build"]);
        }
        // A broken pattern stops the walk with its file and line.
        std::fs::write(dir.path().join("src/.p4ignore"), "ok\n[z-a]\n").unwrap();
        let err = Walk::start(dir.path(), 2, 1, &config)
            .unwrap()
            .for_each(|_, _, _, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("src/.p4ignore") && err.contains("line 2"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_directory_is_a_file_of_its_own_and_is_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), b"x").unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("real/f", dir.path().join("real/to-f")).unwrap();
        let mut seen = Vec::new();
        Walk::start(dir.path(), 2, 1, &IgnoreConfig::none())
            .unwrap()
            .for_each(|client, _, stat, _| {
                seen.push((client.to_string(), stat.is_symlink()));
                Ok(())
            })
            .unwrap();
        seen.sort();
        let expected = [("link", true), ("real/f", false), ("real/to-f", true)];
        let expected: Vec<(String, bool)> =
            expected.iter().map(|(c, l)| (c.to_string(), *l)).collect();
        assert_eq!(seen, expected);
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_keeps_its_own_local_path() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let odd = dir
            .path()
            .join("d")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        std::fs::write(&odd, b"x").unwrap();
        std::fs::write(dir.path().join("d/plain"), b"x").unwrap();
        let mut seen = Vec::new();
        Walk::start(dir.path(), 2, 1, &IgnoreConfig::none())
            .unwrap()
            .for_each(|client, local, _, _| {
                seen.push((client.to_string(), local()));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            seen,
            [
                ("d/caf\u{fffd}".to_string(), odd),
                ("d/plain".to_string(), dir.path().join("d/plain")),
            ]
        );
    }
}
