//! The walk a workspace scan compares against its caches: every file (and symlink) under the
//! root with its lstat, in [`crate::path_order`]. A thread of its own reads and stats the
//! directories and hands the files over in batches, so the kernel's directory reads and stats
//! overlap the caller's comparing.

use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::config::CONFIG_FILE_NAME;
use crate::error::{Error, IoContext, Result};
use crate::have_cache::HAVE_CACHE_FILE_NAME;
use crate::local_state::STATE_FILE_NAME;

/// Files per batch handed from the walking thread to the caller: enough that a hand-over
/// costs little beside the stats, few enough that the caller starts early.
const BATCH_FILES: usize = 256;
/// Batches the walking thread may be ahead of the caller; bounds the memory the walk holds.
const BATCHES_AHEAD: usize = 8;

/// Whether a file at the workspace root is one of Keel's own (config, state, have cache).
pub(crate) fn is_keel_file(name: &std::ffi::OsStr) -> bool {
    name == CONFIG_FILE_NAME || name == STATE_FILE_NAME || name == HAVE_CACHE_FILE_NAME
}

/// Files found in a row: their client files end to end in `clients`, each with where its
/// client file ends, its directory (in `dirs`) and name (for its local path) and its lstat.
/// Directory entries are not kept: each holds its directory open.
#[derive(Default)]
struct Batch {
    clients: String,
    dirs: Vec<PathBuf>,
    files: Vec<(usize, usize, OsString, Metadata)>,
}

/// Calls `each` with every file (and symlink) under the workspace `root`: its client file
/// (relative to the root, `/`-separated), a maker of its local path and its lstat. Skips
/// Keel's own files at the root and the client's temp files; symlinked directories are not
/// followed. Each directory's names are visited sorted bytewise, depth first, so files come in
/// [`crate::path_order`]; each is stat'ed relative to its open directory (no path walk per
/// file). A file removed between the directory read and its stat is left out (reported
/// missing); a root that does not exist has no files. When `each` fails the walk stops.
pub(crate) fn walk_stat(
    root: &Path,
    mut each: impl FnMut(&str, &dyn Fn() -> PathBuf, &Metadata) -> Result<()>,
) -> Result<()> {
    let (tx, rx) = sync_channel(BATCHES_AHEAD);
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("keel-walk".into())
            .spawn_scoped(scope, move || walk_thread(root, tx))
            .map_err(|e| Error::io(root, e))?;
        consume(rx, &mut each)
        // The receiver is gone once this returns: a walk still going stops at its next batch.
    })
}

fn consume(
    rx: Receiver<Result<Batch>>,
    each: &mut impl FnMut(&str, &dyn Fn() -> PathBuf, &Metadata) -> Result<()>,
) -> Result<()> {
    for batch in rx {
        let batch = batch?;
        let mut start = 0;
        for (end, dir, name, meta) in &batch.files {
            each(
                &batch.clients[start..*end],
                &|| batch.dirs[*dir].join(name),
                meta,
            )?;
            start = *end;
        }
    }
    Ok(())
}

/// Why the walking thread stopped early.
enum Stop {
    /// The caller stopped listening.
    Gone,
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// Walks `root`, sending batches to `tx`; a failure is sent last.
fn walk_thread(root: &Path, tx: SyncSender<Result<Batch>>) {
    let mut sender = Batcher {
        tx,
        batch: Batch::default(),
    };
    let mut rel = String::new();
    let walked = walk_dir(root, &mut rel, &mut sender).and_then(|()| sender.flush());
    if let Err(Stop::Failed(e)) = walked {
        // Nobody to tell when the caller has gone.
        let _ = sender.tx.send(Err(e));
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
        name: OsString,
        meta: Metadata,
    ) -> std::result::Result<(), Stop> {
        self.batch.clients.push_str(rel);
        let end = self.batch.clients.len();
        let dirs = &mut self.batch.dirs;
        if dirs.last().is_none_or(|d| d.as_os_str() != dir.as_os_str()) {
            dirs.push(dir.to_path_buf());
        }
        self.batch.files.push((end, dirs.len() - 1, name, meta));
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

fn walk_dir(dir: &Path, rel: &mut String, out: &mut Batcher) -> std::result::Result<(), Stop> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && rel.is_empty() => return Ok(()),
        Err(e) => return Err(Error::io(dir, e).into()),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.at(dir)?;
        names.push((entry.file_name(), entry));
    }
    names.sort_unstable_by(|(a, _), (b, _)| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let at_root = rel.is_empty();
    let base = rel.len();
    for (name, entry) in names {
        let text = name.to_string_lossy();
        if !at_root {
            rel.push('/');
        }
        rel.push_str(&text);
        let file_type = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        let skip = !file_type.is_dir()
            && ((at_root && is_keel_file(&name)) || text.starts_with(".keel-tmp-"));
        if file_type.is_dir() {
            walk_dir(&entry.path(), rel, out)?;
        } else if !skip {
            match entry.metadata() {
                // Removed since the directory was read: reported as missing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(entry.path(), e).into()),
                Ok(meta) => out.push(rel, dir, name, meta)?,
            }
        }
        rel.truncate(base);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files of a tree wider than a batch, nested, with Keel's own files at the root.
    fn tree() -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut expected = Vec::new();
        for d in ["a", "a/b", "a.c", "z"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for i in 0..(BATCH_FILES + 10) {
            let rel = format!("a/b/f{i:04}");
            std::fs::write(dir.path().join(&rel), b"x").unwrap();
            expected.push(rel);
        }
        for rel in ["a-b", "a.c/y", "z/.keel-have", "top"] {
            std::fs::write(dir.path().join(rel), b"y").unwrap();
            expected.push(rel.to_string());
        }
        for own in [STATE_FILE_NAME, HAVE_CACHE_FILE_NAME, ".keel-tmp-state-1"] {
            std::fs::write(dir.path().join(own), b"k").unwrap();
        }
        std::fs::write(dir.path().join("a/.keel-tmp-have-2"), b"k").unwrap();
        expected.sort_by(|a, b| crate::path_order::cmp(a.as_bytes(), b.as_bytes()));
        (dir, expected)
    }

    #[test]
    fn files_come_in_path_order_with_their_local_paths_and_stats() {
        let (dir, expected) = tree();
        let mut seen = Vec::new();
        walk_stat(dir.path(), |client, local, meta| {
            assert_eq!(local(), dir.path().join(client));
            assert_eq!(
                meta.len(),
                std::fs::symlink_metadata(local()).unwrap().len()
            );
            seen.push(client.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_failing_caller_stops_the_walk_and_a_missing_root_has_no_files() {
        let (dir, _) = tree();
        let mut calls = 0;
        let err = walk_stat(dir.path(), |client, _, _| {
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
        walk_stat(&gone, |client, _, _| {
            panic!("{client} found under a missing root")
        })
        .unwrap();
    }
}
