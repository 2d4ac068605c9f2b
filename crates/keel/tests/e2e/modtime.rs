//! End-to-end: a file's own modification time is recorded at submit and shelve; a `+m` file,
//! or any file of a `modtime` workspace, syncs to it; other files get the time of the sync;
//! `fstat` and `filelog --json` show it as `headModTime`; revert puts it back; an unshelved file
//! is written with, and submitted with, the shelved time; checkpoint, journal restore and a
//! replica carry it.

use crate::backup::{copy_dir, journals_from, restore_args};
use crate::common::*;
use crate::replica::{replica_client, wait_caught_up};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// 2001-09-09: the time the `+m` file is given before it is submitted.
const KEPT: u64 = 1_000_000_000;
/// 2004-11-09: the plain file's time before it is submitted.
const PLAIN: u64 = 1_100_000_000;

fn set_mtime(root: &Path, rel: &str, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(root.join(rel))
        .expect("open")
        .set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .expect("set mtime");
}

fn mtime(root: &Path, rel: &str) -> u64 {
    std::fs::metadata(root.join(rel))
        .expect("stat")
        .modified()
        .expect("mtime")
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs()
}

fn fstat_u64(c: &Client, file: &str, key: &str) -> Option<u64> {
    c.json(&["fstat", file])
        .first()
        .and_then(|r| r.get(key))
        .and_then(serde_json::Value::as_u64)
}

/// Submits `keep.bin` (`binary+m`, mtime [`KEPT`]) and `plain.txt` (text, mtime [`PLAIN`]).
fn submit_both(a: &Client) {
    write(&a.cwd, "keep.bin", b"\x00kept\x01");
    write(&a.cwd, "plain.txt", "plain\n");
    set_mtime(&a.cwd, "keep.bin", KEPT);
    set_mtime(&a.cwd, "plain.txt", PLAIN);
    a.ok(&["add", "-t", "binary+m", "keep.bin"]);
    a.ok(&["add", "plain.txt"]);
    a.ok(&["submit", "-d", "two files"]);
}

/// A workspace `name` of `user` with the `modtime` option.
fn modtime_workspace(fx: &Fixture, user: &str, name: &str) -> Client {
    let root = fx.dir.path().join(name);
    std::fs::create_dir_all(&root).expect("root");
    let c = fx.server.client(user, name, &root);
    c.ok(&[
        "workspace",
        "create",
        name,
        "--root",
        root.to_str().expect("utf-8"),
        "--options",
        "noallwrite noclobber normdir modtime",
    ]);
    c
}

#[test]
fn a_plus_m_file_syncs_to_its_own_modification_time_and_others_to_the_sync_time() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    submit_both(&a);
    assert_eq!(fstat_u64(&a, "//depot/keep.bin", "headModTime"), Some(KEPT));
    assert_eq!(
        fstat_u64(&a, "//depot/plain.txt", "headModTime"),
        Some(PLAIN),
        "recorded for every file"
    );
    let log = a.json(&["filelog", "//depot/keep.bin"]);
    assert_eq!(
        field(&log[0], "headModTime").as_u64(),
        Some(KEPT),
        "{log:?}"
    );
    let submitted = fstat_u64(&a, "//depot/plain.txt", "headTime").expect("headTime");

    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    assert_eq!(mtime(&b.cwd, "keep.bin"), KEPT, "+m: its own time");
    assert!(
        mtime(&b.cwd, "plain.txt") >= submitted,
        "a plain file gets the time of the sync, not its recorded {PLAIN}"
    );
    assert!(b.json(&["status"]).is_empty(), "status after sync");

    // An edit records the new time; the next sync gives it.
    b.ok(&["edit", "keep.bin"]);
    write(&b.cwd, "keep.bin", b"\x00kept twice\x01");
    set_mtime(&b.cwd, "keep.bin", KEPT + 3600);
    b.ok(&["submit", "-d", "again"]);
    a.ok(&["sync"]);
    assert_eq!(mtime(&a.cwd, "keep.bin"), KEPT + 3600);
    // Syncing back to the first revision gives that revision's time.
    a.ok(&["sync", "//depot/keep.bin#1"]);
    assert_eq!(mtime(&a.cwd, "keep.bin"), KEPT);
    // Revert puts back the have revision with its time.
    a.ok(&["edit", "keep.bin"]);
    write(&a.cwd, "keep.bin", b"changed locally");
    a.ok(&["revert", "keep.bin"]);
    assert_eq!(read(&a.cwd, "keep.bin"), b"\x00kept\x01");
    assert_eq!(mtime(&a.cwd, "keep.bin"), KEPT, "revert: the recorded time");
}

#[test]
fn a_modtime_workspace_gives_every_file_its_recorded_time_or_else_its_submit_time() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    submit_both(&a);
    let m = modtime_workspace(&fx, "bob", "m");
    m.ok(&["sync"]);
    assert_eq!(mtime(&m.cwd, "keep.bin"), KEPT);
    assert_eq!(mtime(&m.cwd, "plain.txt"), PLAIN, "modtime: every file");
    // Populate copies the source's recorded time: a branch keeps it too.
    a.ok(&["populate", "//depot/plain.txt", "//depot/copy/plain.txt"]);
    m.ok(&["sync"]);
    assert_eq!(
        mtime(&m.cwd, "copy/plain.txt"),
        PLAIN,
        "a copy keeps the time"
    );
}

#[test]
fn an_unshelved_plus_m_file_keeps_the_shelved_time_when_submitted() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "shelved.bin", b"\x00shelved\x02");
    set_mtime(&a.cwd, "shelved.bin", KEPT);
    a.ok(&["add", "-t", "binary+m", "shelved.bin"]);
    let out = a.ok(&["shelve"]);
    assert!(out.contains("Change 1 files shelved."), "{out}");
    // Later edits in the shelving workspace do not change what the shelf recorded.
    set_mtime(&a.cwd, "shelved.bin", PLAIN);

    let b = fx.workspace("bob", "b");
    b.ok(&["unshelve", "-s", "1"]);
    assert_eq!(
        mtime(&b.cwd, "shelved.bin"),
        KEPT,
        "unshelve writes the shelved time"
    );
    // A later touch does not change what is submitted unchanged from the shelf.
    set_mtime(&b.cwd, "shelved.bin", PLAIN);
    b.ok(&["submit", "-d", "from the shelf"]);
    assert_eq!(
        fstat_u64(&b, "//depot/shelved.bin", "headModTime"),
        Some(KEPT),
        "the shelved time, not the time unshelve wrote the file"
    );
    let c = fx.workspace("carol", "c");
    c.ok(&["sync"]);
    assert_eq!(mtime(&c.cwd, "shelved.bin"), KEPT);
}

#[test]
fn checkpoint_journal_restore_and_a_replica_keep_the_recorded_time() {
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "before.bin", b"\x00before");
    set_mtime(&a.cwd, "before.bin", KEPT);
    a.ok(&["add", "-t", "binary+m", "before.bin"]);
    a.ok(&["submit", "-d", "before the checkpoint"]);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let number = field(&ckpt[0], "number").as_u64().expect("number");
    // After the checkpoint: carried by the journal (and followed by the replica).
    let replica = Server::start_replica(&fx.dir.path().join("replica"), &fx.server.addr, &[])
        .expect("replica starts");
    // A build workspace (created on the primary, before the submit the replica waits for).
    let build = workspace_on(&fx.server, fx.dir.path(), "builder", "build");
    write(&a.cwd, "after.bin", b"\x00after");
    set_mtime(&a.cwd, "after.bin", PLAIN);
    a.ok(&["add", "-t", "binary+m", "after.bin"]);
    a.ok(&["submit", "-d", "after the checkpoint"]);

    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);
    assert_eq!(
        fstat_u64(&ra, "//depot/before.bin", "headModTime"),
        Some(KEPT)
    );
    assert_eq!(
        fstat_u64(&ra, "//depot/after.bin", "headModTime"),
        Some(PLAIN)
    );
    let build = replica_client(&replica, &build);
    build.ok(&["sync"]);
    assert_eq!(
        mtime(&build.cwd, "after.bin"),
        PLAIN,
        "synced from the replica"
    );

    fx.server.kill9();
    let new_root = fx.dir.path().join("restored");
    let args = restore_args(&path, &journals_from(&fx.server.root, number), &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    a.ok(&args);
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let r = restored.client("alice", "a", &a.cwd);
    assert_eq!(
        fstat_u64(&r, "//depot/before.bin", "headModTime"),
        Some(KEPT)
    );
    assert_eq!(
        fstat_u64(&r, "//depot/after.bin", "headModTime"),
        Some(PLAIN)
    );
}
