//! End-to-end: the workspace state file (`ROOT/.keel-state`) lets `status`/`reconcile` skip
//! reading files whose stat is unchanged, and never hides a change: same-size edits with the
//! mtime put back, renames, an inode swapped under the same name, permission-only changes,
//! file ↔ symlink, deletions, a have list moved under the state, a corrupt state file and one
//! copied with the workspace (`cp -a`).

use crate::common::{Client, Fixture, str_field, write};
use std::collections::BTreeSet;
use std::fs::{File, FileTimes};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const STATE: &str = ".keel-state";

/// Longer than the client's racy slack (`TransferConfig::state_racy_slack`, 2 s, used where a
/// scan cannot read the filesystem's clock): files last changed before this wait are old enough
/// for the next scan to record whichever clock it reads.
const SETTLE: Duration = Duration::from_millis(2_300);

/// The entry count of a state file, read by its documented layout (magic, version, server,
/// workspace and root, count); panics when the file is not a state file.
fn state_entries(root: &Path) -> (String, u64) {
    let bytes = std::fs::read(root.join(STATE)).expect("state file");
    assert_eq!(&bytes[..8], b"KEELSTAT", "not a state file");
    let mut at = 12;
    let mut strings = Vec::new();
    for _ in 0..3 {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        strings.push(String::from_utf8(bytes[at + 4..at + 4 + len].to_vec()).unwrap());
        at += 4 + len;
    }
    let count = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    (strings.pop().expect("root"), count)
}

/// Replaces a file's content with `content` (same length) in place and puts its mode, mtime
/// and atime back, as a careless tool (or a `utimensat` call) would.
fn rewrite_keeping_times(path: &Path, content: &[u8]) {
    let meta = std::fs::metadata(path).unwrap();
    assert_eq!(meta.len(), content.len() as u64, "same-size edit");
    let mode = meta.permissions();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(path, content).unwrap();
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_times(
            FileTimes::new()
                .set_modified(meta.modified().unwrap())
                .set_accessed(meta.accessed().unwrap()),
        )
        .unwrap();
    std::fs::set_permissions(path, mode).unwrap();
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(after.modified().unwrap(), meta.modified().unwrap());
    assert_eq!(after.len(), meta.len());
}

/// `(action, depot file, type)` of every file `status` would reconcile.
fn status(c: &Client) -> BTreeSet<(String, String, String)> {
    status_of(c, &[])
}

fn want(rows: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    rows.iter()
        .map(|(a, d, t)| (a.to_string(), d.to_string(), t.to_string()))
        .collect()
}

/// Submits `keep/k0..k{n}` plus whatever else is already in the workspace, through reconcile.
fn submit_tree(c: &Client, n: usize) {
    for i in 0..n {
        write(&c.cwd, &format!("keep/k{i}.txt"), format!("keep {i:04}\n"));
    }
    c.ok(&["reconcile"]);
    c.ok(&["submit", "-d", "tree"]);
}

#[test]
fn a_scan_soon_after_a_sync_records_every_file_on_the_filesystems_clock() {
    // The scan reads the filesystem's clock from a probe file in the root, so files a sync
    // wrote a few ticks earlier are recorded at once, and the probe is never a workspace file.
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    submit_tree(&a, 20);
    let b = fx.workspace("bob", "b");
    b.ok(&["sync", "-q"]);
    std::thread::sleep(Duration::from_millis(100));
    assert!(status(&b).is_empty());
    let (_, recorded) = state_entries(&b.cwd);
    assert_eq!(recorded, 20, "every synced file recorded");
    let names: Vec<String> = std::fs::read_dir(&b.cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".keel-tmp-"))
        .collect();
    assert!(names.is_empty(), "probe left behind: {names:?}");
}

#[test]
fn reconcile_finds_every_change_the_stat_cache_could_hide() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let root = a.cwd.clone();
    write(&root, "same/size.txt", "aaaaaaaaaaaaaaaa\n");
    write(&root, "swap/inode.txt", "1111111111111111\n");
    write(&root, "ren/old.txt", "renamed content\n");
    write(&root, "perm/run.sh", "echo run\n");
    write(&root, "kind/to_link.txt", "a file\n");
    write(&root, "gone/deleted.txt", "deleted\n");
    std::os::unix::fs::symlink("keep/k0.txt", root.join("kind/to_file")).unwrap();
    submit_tree(&a, 20);
    assert!(status(&a).is_empty());

    // Once the files are older than the racy slack, a status records every one of them.
    std::thread::sleep(SETTLE);
    assert!(status(&a).is_empty());
    let (_, recorded) = state_entries(&root);
    assert_eq!(recorded, 27, "every file recorded");

    // Same size, mtime put back.
    rewrite_keeping_times(&root.join("same/size.txt"), b"bbbbbbbbbbbbbbbb\n");
    // Another inode under the same name, same size and mtime.
    let swap = root.join("swap/inode.txt");
    let mtime = std::fs::metadata(&swap).unwrap().modified().unwrap();
    write(&root, "swap/.new", "2222222222222222\n");
    File::options()
        .write(true)
        .open(root.join("swap/.new"))
        .unwrap()
        .set_times(FileTimes::new().set_modified(mtime))
        .unwrap();
    std::fs::rename(root.join("swap/.new"), &swap).unwrap();
    // Renamed, content unchanged.
    std::fs::rename(root.join("ren/old.txt"), root.join("ren/new.txt")).unwrap();
    // The executable bit only.
    let run = root.join("perm/run.sh");
    let mode = std::fs::metadata(&run).unwrap().permissions().mode();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(mode | 0o111)).unwrap();
    // A file becomes a symlink; a symlink becomes a file holding its old target (same digest).
    std::fs::remove_file(root.join("kind/to_link.txt")).unwrap();
    std::os::unix::fs::symlink("keep/k1.txt", root.join("kind/to_link.txt")).unwrap();
    std::fs::remove_file(root.join("kind/to_file")).unwrap();
    write(&root, "kind/to_file", "keep/k0.txt");
    std::fs::remove_file(root.join("gone/deleted.txt")).unwrap();

    let expected = want(&[
        ("add", "//depot/ren/new.txt", "text"),
        ("delete", "//depot/gone/deleted.txt", "text"),
        ("delete", "//depot/ren/old.txt", "text"),
        ("edit", "//depot/kind/to_file", "text"),
        ("edit", "//depot/kind/to_link.txt", "symlink"),
        ("edit", "//depot/perm/run.sh", "text+x"),
        ("edit", "//depot/same/size.txt", "text"),
        ("edit", "//depot/swap/inode.txt", "text"),
    ]);
    assert_eq!(status(&a), expected);
    // Asked again (now from the refreshed state), the answer is the same.
    assert_eq!(status(&a), expected);

    a.ok(&["reconcile"]);
    let opened: BTreeSet<(String, String)> = a
        .json(&["opened"])
        .iter()
        .map(|r| (str_field(r, "action"), str_field(r, "depotFile")))
        .collect();
    let expected_opened: BTreeSet<(String, String)> = expected
        .iter()
        .map(|(a, d, _)| (a.clone(), d.clone()))
        .collect();
    assert_eq!(opened, expected_opened);
    a.ok(&["submit", "-d", "every kind of change"]);
    assert!(status(&a).is_empty(), "clean after the submit");
    assert!(
        !a.ok(&["files", "//depot/..."]).contains(STATE),
        "the state file is never submitted"
    );
}

#[test]
fn a_corrupt_moved_or_copied_state_is_rebuilt_and_misses_nothing() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let root = a.cwd.clone();
    submit_tree(&a, 10);
    std::thread::sleep(SETTLE);
    assert!(status(&a).is_empty());
    let (recorded_root, recorded) = state_entries(&root);
    assert_eq!(recorded, 10);
    assert_eq!(recorded_root, root.display().to_string());

    // A corrupt state file: ignored, the change found, the file rewritten whole.
    std::fs::write(
        root.join(STATE),
        b"KEELSTAT garbage that is not a state file",
    )
    .unwrap();
    rewrite_keeping_times(&root.join("keep/k3.txt"), b"KEEP 0003\n");
    assert_eq!(status(&a), want(&[("edit", "//depot/keep/k3.txt", "text")]));
    let (_, recorded) = state_entries(&root);
    assert!((9..=10).contains(&recorded), "{recorded} entries");
    a.ok(&["sync", "-f", "keep/k3.txt"]);
    assert!(status(&a).is_empty());

    // A state file cut short (as a crash mid-write would leave a temp file) and one whose
    // format version field says another version: both rebuilt, the change found.
    std::thread::sleep(SETTLE);
    assert!(status(&a).is_empty());
    let good = std::fs::read(root.join(STATE)).unwrap();
    let mut other_version = good.clone();
    other_version[8..12].copy_from_slice(&1u32.to_le_bytes());
    for (what, bytes) in [
        ("cut short", good[..good.len() / 2].to_vec()),
        ("another version", other_version),
    ] {
        std::fs::write(root.join(STATE), &bytes).unwrap();
        rewrite_keeping_times(&root.join("keep/k4.txt"), b"KEEP 0004\n");
        assert_eq!(
            status(&a),
            want(&[("edit", "//depot/keep/k4.txt", "text")]),
            "{what}"
        );
        a.ok(&["sync", "-f", "keep/k4.txt"]);
        assert!(status(&a).is_empty(), "{what}");
    }

    // The have list moves under an unchanged file (a newer revision recorded with sync -k):
    // the entry's digest is the local content's, so the difference shows.
    b.ok(&["sync"]);
    b.ok(&["edit", "keep/k5.txt"]);
    write(&b.cwd, "keep/k5.txt", "keep 0005 v2\n");
    b.ok(&["submit", "-d", "k5 v2"]);
    a.ok(&["sync", "-k", "keep/k5.txt"]);
    assert_eq!(status(&a), want(&[("edit", "//depot/keep/k5.txt", "text")]));
    a.ok(&["sync", "-f", "keep/k5.txt"]);
    assert!(status(&a).is_empty());

    // The workspace copied with `cp -a`, state file and all, into another workspace.
    std::thread::sleep(SETTLE);
    assert!(status(&a).is_empty());
    let c = fx.workspace("carol", "c");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", root.display()))
        .arg(&c.cwd)
        .status()
        .unwrap();
    assert!(copied.success());
    c.ok(&["sync", "-k"]);
    rewrite_keeping_times(&c.cwd.join("keep/k7.txt"), b"KEEP 0007\n");
    assert_eq!(status(&c), want(&[("edit", "//depot/keep/k7.txt", "text")]));
    let (copied_root, _) = state_entries(&c.cwd);
    assert_eq!(
        copied_root,
        c.cwd.display().to_string(),
        "rebuilt for its own root"
    );
    assert!(status(&a).is_empty(), "the original is untouched");
}

/// The have-list cache's inode: a rewrite (temp file renamed over it) gives a new one.
fn have_cache_inode(root: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(root.join(".keel-have"))
        .expect("have-list cache")
        .ino()
}

#[test]
fn the_have_list_cache_is_reused_only_while_the_server_says_it_is_current() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let root = a.cwd.clone();
    submit_tree(&a, 6);
    assert!(status(&a).is_empty());
    let first = have_cache_inode(&root);
    // Asked again with nothing changed: the cached list is used, the file not rewritten.
    assert!(status(&a).is_empty());
    assert_eq!(have_cache_inode(&root), first, "unchanged list reused");

    // Another workspace's submit leaves alice's have list alone; her sync then moves it.
    b.ok(&["sync"]);
    b.ok(&["edit", "keep/k2.txt"]);
    write(&b.cwd, "keep/k2.txt", "keep 0002 v2\n");
    b.ok(&["submit", "-d", "k2 v2"]);
    assert!(status(&a).is_empty());
    assert_eq!(have_cache_inode(&root), first, "another workspace's submit");
    a.ok(&["sync"]);
    assert!(status(&a).is_empty(), "in step after the sync");
    let synced = have_cache_inode(&root);
    assert_ne!(synced, first, "the moved list is fetched and cached again");

    // The have list moved back under an unchanged file (sync -k of #1, by another process):
    // the cached list of #2 must not be used.
    a.ok(&["sync", "-k", "keep/k2.txt#1"]);
    assert_eq!(status(&a), want(&[("edit", "//depot/keep/k2.txt", "text")]));
    a.ok(&["sync", "-f", "keep/k2.txt#1"]);
    assert!(status(&a).is_empty());

    // A protections table that hides a file from alice: the cache cannot show it to her.
    crate::access::protect(
        &b,
        &[
            "write user * * //...",
            "list user alice * -//depot/keep/k4.txt",
            "super user bob * //...",
        ],
    );
    let listed = a.ok(&["have"]);
    assert!(!listed.contains("k4.txt"), "hidden from have: {listed}");
    assert_eq!(
        status(&a),
        want(&[("add", "//depot/keep/k4.txt", "text")]),
        "a file alice may not list is not in her have list"
    );

    // A corrupt cache is ignored and replaced.
    std::fs::write(root.join(".keel-have"), b"KEELHAVE not a cache").unwrap();
    assert_eq!(status(&a), want(&[("add", "//depot/keep/k4.txt", "text")]));
    assert!(
        !a.ok(&["files", "//depot/..."]).contains(".keel-have"),
        "the cache is never submitted"
    );

    // A cache cut short in place (the same file truncated, as another process could): read,
    // refused, and replaced by a new file.
    let before = have_cache_inode(&root);
    let whole = std::fs::metadata(root.join(".keel-have")).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(root.join(".keel-have"))
        .unwrap()
        .set_len(whole / 2)
        .unwrap();
    assert_eq!(status(&a), want(&[("add", "//depot/keep/k4.txt", "text")]));
    assert_ne!(have_cache_inode(&root), before, "the cut cache is replaced");
}

/// `(action, depot file, type)` of every file `status ARGS` run from `c`'s directory would
/// reconcile.
fn status_of(c: &Client, args: &[&str]) -> BTreeSet<(String, String, String)> {
    let mut all = vec!["status"];
    all.extend(args);
    c.json(&all)
        .iter()
        .map(|r| {
            (
                str_field(r, "action"),
                str_field(r, "depotFile"),
                str_field(r, "type"),
            )
        })
        .collect()
}

#[test]
fn a_scan_of_the_whole_workspace_or_of_a_subdirectory_sees_exactly_its_files() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let root = a.cwd.clone();
    // More files than the walk hands over at once, spread over directories, one symlink.
    for i in 0..600 {
        write(
            &root,
            &format!("d{}/f{i:03}.txt", i % 7),
            format!("file {i}\n"),
        );
    }
    std::os::unix::fs::symlink("f001.txt", root.join("d1/link")).unwrap();
    a.ok(&["reconcile"]);
    a.ok(&["submit", "-d", "tree"]);
    std::thread::sleep(SETTLE);
    assert!(status(&a).is_empty());
    assert_eq!(state_entries(&root).1, 601, "every file recorded");

    // A change in each of two directories, and the first and last files of the walk.
    std::fs::remove_file(root.join("d1/f008.txt")).unwrap();
    write(&root, "d1/new.txt", "new in d1\n");
    write(&root, "d6/zz.txt", "new in d6\n");
    rewrite_keeping_times(&root.join("d0/f000.txt"), b"FILE 0\n");
    let everything = want(&[
        ("edit", "//depot/d0/f000.txt", "text"),
        ("delete", "//depot/d1/f008.txt", "text"),
        ("add", "//depot/d1/new.txt", "text"),
        ("add", "//depot/d6/zz.txt", "text"),
    ]);
    assert_eq!(status(&a), everything, "from the root");
    assert_eq!(
        status_of(&a, &["//a/..."]),
        everything,
        "the whole workspace named"
    );

    let in_d1 = Client {
        cwd: root.join("d1"),
        ..a.clone()
    };
    let d1 = want(&[
        ("delete", "//depot/d1/f008.txt", "text"),
        ("add", "//depot/d1/new.txt", "text"),
    ]);
    assert_eq!(status_of(&in_d1, &[]), d1, "from a subdirectory");
    assert_eq!(status_of(&a, &["//a/d1/..."]), d1, "a subdirectory named");
    // The restricted scans kept the entries of the files they did not look at.
    assert_eq!(status(&a), everything);
}
