//! End-to-end: a sync into an `allwrite` workspace cut off by kill -9 of the server, after a
//! chosen number of files has landed, leaves a workspace whose have list is never ahead of its
//! files and that the next plain `keel sync` (no `-f`) brings to head, even after the head has
//! moved on again.

use crate::common::{Client, Fixture, bytes, read, str_field, write};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Small files, synced first (path order).
const FILES: usize = 200;
/// Size of the last file in path order: the sync is still busy with it when a kill point
/// among the small files is reached.
const BIG: usize = 8 << 20;
/// Small files seen at the new revision before the server is killed, one round each.
const KILL_AFTER: [usize; 3] = [1, FILES / 3, FILES - 20];
/// Longest wait for a kill point, and for the cut-off sync to exit.
const WAIT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(1);

fn rel(i: usize) -> String {
    format!("small/f{i:03}.bin")
}

/// Content of small file `i` at revision `rev`: random bytes whose length tells the revision.
fn content(i: usize, rev: u32) -> Vec<u8> {
    bytes((i as u64) << 16 | u64::from(rev), 1000 + rev as usize)
}

/// Opens every small file, writes revision `rev` and submits it.
fn submit_small(a: &Client, rev: u32) {
    if rev > 1 {
        a.ok(&["edit", "small/..."]);
    }
    for i in 0..FILES {
        let path = a.cwd.join(rel(i));
        if path.exists() {
            std::fs::remove_file(&path).expect("remove");
        }
        write(&a.cwd, &rel(i), content(i, rev));
    }
    if rev == 1 {
        a.ok(&["add", "small/..."]);
    }
    a.ok(&["submit", "-d", &format!("small files #{rev}")]);
}

/// How many small files in `root` hold revision `rev` (by size; the content is checked later).
fn landed(root: &std::path::Path, rev: u32) -> usize {
    (0..FILES)
        .filter(|&i| {
            std::fs::symlink_metadata(root.join(rel(i)))
                .is_ok_and(|m| m.len() == content(i, rev).len() as u64)
        })
        .count()
}

fn have_revs(c: &Client) -> HashMap<String, u32> {
    c.json(&["have"])
        .iter()
        .map(|r| {
            let rev = str_field(r, "haveRev").parse().expect("haveRev");
            (str_field(r, "depotFile"), rev)
        })
        .collect()
}

#[test]
fn interrupted_allwrite_sync_recovers_without_force() {
    if crate::common::skip_slow("interrupted_allwrite_sync_recovers_without_force") {
        return;
    }
    let mut fx = Fixture::new();
    let mut a = fx.workspace("alice", "a");
    let big = bytes(99, BIG);
    write(&a.cwd, "zz/big.bin", &big);
    a.ok(&["add", "zz/big.bin"]);
    a.ok(&["submit", "-d", "big"]);
    submit_small(&a, 1);
    let mut head = 1;
    let mut interrupted = 0;
    for (round, kill_after) in KILL_AFTER.into_iter().enumerate() {
        let name = format!("w{round}");
        let w = allwrite_workspace(&fx, "walt", &name);
        let root = w.cwd.clone();
        w.ok(&["sync", "-q", "//depot/small/..."]);
        submit_small(&a, head + 1);
        head += 1;

        let mut sync = w.spawn(&["sync"]);
        let started = Instant::now();
        while landed(&root, head) < kill_after && started.elapsed() < WAIT {
            if sync.try_wait().expect("poll sync").is_some() {
                break;
            }
            std::thread::sleep(POLL);
        }
        fx.server.kill9();
        let status = loop {
            if let Some(status) = sync.try_wait().expect("poll sync") {
                break status;
            }
            assert!(
                started.elapsed() < WAIT,
                "round {round}: the cut-off sync never exited"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        if !status.success() {
            interrupted += 1;
        }
        fx.server.restart();
        a = fx.server.client("alice", "a", &a.cwd);
        let w = fx.server.client("walt", &name, &root);

        // The have list may lag behind the files, never run ahead of them: a file recorded at
        // the sync's target holds it; one recorded at the older revision holds either.
        for (depot, rev) in have_revs(&w) {
            if let Some(i) = depot
                .strip_prefix("//depot/small/f")
                .and_then(|n| n.strip_suffix(".bin"))
                .and_then(|n| n.parse::<usize>().ok())
            {
                let local = std::fs::read(root.join(rel(i))).expect("a recorded file exists");
                let holds = |r: u32| local == content(i, r);
                assert!(
                    holds(head) || (rev < head && holds(rev)),
                    "round {round}: {depot} recorded at #{rev}, the file holds neither it nor #{head}"
                );
            } else {
                assert_eq!(depot, "//depot/zz/big.bin");
                assert_eq!(std::fs::read(root.join("zz/big.bin")).expect("big"), big);
            }
        }

        // The head moves on before the workspace syncs again.
        submit_small(&a, head + 1);
        head += 1;
        w.ok(&["sync", "-q"]);
        for i in 0..FILES {
            let local = std::fs::read(root.join(rel(i))).expect("small file");
            assert!(
                local == content(i, head),
                "round {round}: {} is not at #{head}",
                rel(i)
            );
        }
        assert_eq!(std::fs::read(root.join("zz/big.bin")).expect("big"), big);
        let have = have_revs(&w);
        assert_eq!(have.len(), FILES + 1, "round {round}: every file recorded");
        for (depot, rev) in &have {
            let want = if depot.ends_with("big.bin") { 1 } else { head };
            assert_eq!(*rev, want, "round {round}: {depot}");
        }
        assert!(w.json(&["status"]).is_empty(), "round {round}: clean");
    }
    assert!(
        interrupted > 0,
        "no sync was cut off: the kill points all came after the sync finished"
    );
}

/// Creates an `allwrite` workspace `name` for `user` mapping `//depot/...`.
fn allwrite_workspace(fx: &Fixture, user: &str, name: &str) -> Client {
    let root = fx.dir.path().join(name);
    std::fs::create_dir_all(&root).expect("root");
    let c = fx.server.client(user, name, &root);
    c.ok(&[
        "workspace",
        "create",
        name,
        "--root",
        root.to_str().expect("utf-8 root"),
        "--options",
        "allwrite noclobber normdir nomodtime",
    ]);
    c
}

#[test]
fn files_newer_than_the_have_list_are_not_clobber_conflicts() {
    // `sync -p` writes files without recording them: the state a cut-off sync leaves behind,
    // reached without a kill.
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "run.txt", "#1\n");
    write(&a.cwd, "gone.txt", "#1\n");
    write(&a.cwd, "mine.txt", "#1\n");
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "#1"]);
    let w = allwrite_workspace(&fx, "walt", "w");
    w.ok(&["sync"]);
    a.ok(&["edit", "..."]);
    for name in ["run.txt", "gone.txt", "mine.txt"] {
        write(&a.cwd, name, "#2\n");
    }
    a.ok(&["submit", "-d", "#2"]);
    w.ok(&["sync", "-p"]);
    assert!(
        have_revs(&w).values().all(|rev| *rev == 1),
        "-p records nothing"
    );
    // Walt's own unsubmitted work in a file that is writable anyway.
    write(&w.cwd, "mine.txt", "walt's work\n");
    // The head moves on: run.txt to #3, gone.txt deleted.
    a.ok(&["edit", "run.txt", "mine.txt"]);
    write(&a.cwd, "run.txt", "#3\n");
    write(&a.cwd, "mine.txt", "#3\n");
    a.ok(&["delete", "gone.txt"]);
    a.ok(&["submit", "-d", "#3"]);

    let err = w.fail(&["sync"]);
    assert!(err.contains("Can't clobber writable file"), "{err}");
    assert!(err.contains("mine.txt"), "{err}");
    assert!(
        !err.contains("run.txt") && !err.contains("gone.txt"),
        "{err}"
    );
    assert_eq!(read(&w.cwd, "run.txt"), b"#3\n");
    assert!(!w.cwd.join("gone.txt").exists(), "the delete went through");
    assert_eq!(
        read(&w.cwd, "mine.txt"),
        b"walt's work\n",
        "local work kept"
    );
    let have = have_revs(&w);
    assert_eq!(have.get("//depot/run.txt"), Some(&3));
    assert_eq!(have.get("//depot/gone.txt"), None);
    assert_eq!(have.get("//depot/mine.txt"), Some(&1));
}

#[test]
fn client_killed_in_a_new_directory_leaves_no_file_under_its_name_but_whole() {
    // A first sync writes the files of new directories without a name and links them under
    // their own once verified: a client killed in the middle of one leaves nothing under that
    // name, and the next plain sync brings the workspace to head.
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let big = bytes(7, 48 << 20);
    write(&a.cwd, "new/deeper/big.bin", &big);
    for i in 0..20 {
        write(
            &a.cwd,
            &format!("new/small{i:02}.txt"),
            format!("small {i}\n"),
        );
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "new directories"]);
    let w = allwrite_workspace(&fx, "walt", "w");
    let target = w.cwd.join("new/deeper/big.bin");

    // The sync creates the large file's directory just before it begins the file.
    let mut sync = w.spawn(&["sync"]);
    let started = Instant::now();
    let mut still_running = false;
    while started.elapsed() < WAIT {
        still_running = sync.try_wait().expect("poll sync").is_none();
        if !still_running || target.parent().expect("parent").exists() {
            break;
        }
        std::thread::sleep(POLL);
    }
    sync.kill().expect("kill -9 the sync");
    sync.wait().expect("reap the sync");
    assert!(
        still_running,
        "the sync finished before its large file was begun"
    );

    match std::fs::read(&target) {
        Ok(local) => assert!(local == big, "a file under its name is whole"),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}"),
    }
    let have = have_revs(&w);
    for depot in have.keys() {
        let rel = depot.strip_prefix("//depot/").expect("depot path");
        assert_eq!(
            std::fs::read(w.cwd.join(rel)).expect("a recorded file exists"),
            std::fs::read(a.cwd.join(rel)).expect("submitted"),
            "{depot} is recorded and complete"
        );
    }

    w.ok(&["sync", "-q"]);
    assert_eq!(std::fs::read(&target).expect("big"), big);
    assert!(
        !std::fs::metadata(&target)
            .expect("stat")
            .permissions()
            .readonly(),
        "allwrite"
    );
    assert_eq!(have_revs(&w).len(), 21, "every file recorded");
    assert!(w.json(&["status"]).is_empty(), "clean");
}
