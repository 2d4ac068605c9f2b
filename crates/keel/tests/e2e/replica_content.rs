//! A replica's content through the real binaries: with `--content on-demand` it applies
//! metadata only and fetches each blob from the primary the first time a client needs it
//! (once, however many clients ask at the same time), `verify` reports what it has not
//! fetched yet as such, and a primary that is down is named when a fetch fails. Obliterate on
//! the primary never strands a replica: content purged before the replica fetched it is passed
//! over, content purged after is deleted on the replica too, and content the primary lost
//! (not purged) is reported.

use crate::common::*;
use crate::replica::{answers, info, replica_client, wait_caught_up, wait_for};
use std::path::Path;
use std::time::Duration;

/// The stored size of the blob `digest` in `root`'s content store (a pack record or a file).
fn stored_size(root: &Path, digest: &str) -> u64 {
    blob_at(root, digest).len
}

/// Waits until the replica answers every read as the primary does and holds the same
/// content files.
fn wait_same(primary: &Client, primary_root: &Path, replica: &Client, replica_root: &Path) {
    wait_for(
        "replica matches the primary",
        Duration::from_secs(30),
        || {
            let (p, r) = (answers(primary), answers(replica));
            let (pc, rc) = (content_files(primary_root), content_files(replica_root));
            if p == r && pc == rc {
                Ok(())
            } else {
                Err(format!(
                    "content files {pc} vs {rc}; replica {:?}",
                    info(replica)
                ))
            }
        },
    );
}

/// Stored content bytes the server has sent since it started (`keel info`).
fn sent(c: &Client) -> u64 {
    field(&info(c), "contentBytesSent")
        .as_u64()
        .expect("contentBytesSent")
}

/// Head digests of the files `spec` selects.
fn digests(c: &Client, spec: &str) -> Vec<String> {
    c.json(&["fstat", spec])
        .iter()
        .map(|f| str_field(f, "digest"))
        .collect()
}

#[test]
fn an_on_demand_replica_fetches_each_blob_once_when_first_needed() {
    let mut f = Fixture::new();
    let a = f.workspace("alice", "ws");
    write(&a.cwd, "a/one.txt", "one\n");
    write(&a.cwd, "a/two.bin", bytes(3, 300_000));
    write(&a.cwd, "b/three.txt", "three\n");
    a.ok(&["add", "a/...", "b/..."]);
    a.ok(&["submit", "-d", "first"]);
    let replica_root = f.dir.path().join("replica");
    let replica = Server::start_replica(&replica_root, &f.server.addr, &["--content", "on-demand"])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);
    assert_eq!(content_files(&replica_root), 0, "metadata only so far");

    // Two build workspaces sync the same tree through the replica at the same time.
    let builds: Vec<Client> = ["w1", "w2", "w3"]
        .iter()
        .map(|w| f.workspace_with_view("builder", w, &[&format!("//depot/a/... //{w}/...")]))
        .collect();
    // Workspaces make no change for `wait_caught_up` to compare: wait until the replica has
    // applied all three before syncing through it.
    wait_for(
        "the replica has the build workspaces",
        Duration::from_secs(30),
        || {
            let names: Vec<String> = ra
                .json(&["workspace", "list"])
                .iter()
                .map(|w| str_field(w, "name"))
                .collect();
            match ["w1", "w2", "w3"]
                .iter()
                .find(|w| !names.iter().any(|n| n == *w))
            {
                None => Ok(()),
                Some(w) => Err(format!("{w} not on the replica yet: {names:?}")),
            }
        },
    );
    let before = sent(&a);
    std::thread::scope(|scope| {
        for b in &builds[..2] {
            let rb = replica_client(&replica, b);
            scope.spawn(move || rb.ok(&["sync", "-q"]));
        }
    });
    for b in &builds[..2] {
        assert_eq!(read(&b.cwd, "one.txt"), b"one\n");
        assert_eq!(read(&b.cwd, "two.bin"), bytes(3, 300_000));
    }
    let needed: u64 = digests(&a, "//depot/a/...")
        .iter()
        .map(|d| stored_size(&f.server.root, d))
        .sum();
    assert_eq!(sent(&a) - before, needed, "each needed blob sent once");
    assert_eq!(content_files(&replica_root), 2);

    // A third sync of the same tree fetches nothing.
    replica_client(&replica, &builds[2]).ok(&["sync", "-q"]);
    assert_eq!(read(&builds[2].cwd, "two.bin"), bytes(3, 300_000));
    assert_eq!(sent(&a) - before, needed, "the second sync fetched nothing");

    // verify reports what is held as OK and the rest as not fetched yet, not as damage.
    let out = ra.run(&["--json", "verify"]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let status = |path: &str| {
        lines
            .iter()
            .find(|l| l.get("depotFile").and_then(|v| v.as_str()) == Some(path))
            .map(|l| str_field(l, "status"))
    };
    assert_eq!(status("//depot/a/one.txt").as_deref(), Some("OK"));
    assert_eq!(
        status("//depot/b/three.txt").as_deref(),
        Some("NOT FETCHED")
    );
    let summary = lines.last().expect("a summary");
    assert_eq!(field(summary, "notFetched"), 1);
    assert_eq!(field(summary, "missing"), 0);
    let text = ra.ok(&["verify", "-q"]);
    assert!(text.contains("1 NOT FETCHED"), "{text}");

    // print fetches the one blob it needs.
    let before = sent(&a);
    assert_eq!(ra.ok(&["print", "-q", "//depot/b/three.txt"]), "three\n");
    let three = digests(&a, "//depot/b/three.txt");
    assert_eq!(sent(&a) - before, stored_size(&f.server.root, &three[0]));

    // With the primary down, content not held yet fails naming the primary; held content
    // is still served.
    write(&a.cwd, "c/four.txt", "four\n");
    a.ok(&["add", "c/four.txt"]);
    a.ok(&["submit", "-d", "second"]);
    wait_caught_up(&a, &ra);
    f.server.kill9();
    let refused = ra.fail(&["print", "-q", "//depot/c/four.txt"]);
    assert!(refused.contains(&f.server.addr), "{refused}");
    assert_eq!(ra.ok(&["print", "-q", "//depot/a/one.txt"]), "one\n");
    f.server.restart_same_address();
    assert_eq!(ra.ok(&["print", "-q", "//depot/c/four.txt"]), "four\n");
}

#[test]
fn obliterate_on_the_primary_never_strands_a_replica() {
    let mut f = Fixture::new();
    let a = f.workspace("alice", "ws");
    write(&a.cwd, "o/keep.txt", "keep\n");
    write(&a.cwd, "o/gone.txt", "gone before the replica fetched it\n");
    a.ok(&["add", "o/keep.txt", "o/gone.txt"]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["obliterate", "-y", "//depot/o/gone.txt"]);

    // A replica started now reads the first change, whose content for gone.txt the primary
    // has purged: it moves on, and the obliterate's records follow.
    let replica_root = f.dir.path().join("replica");
    let replica = Server::start_replica(&replica_root, &f.server.addr, &[]).expect("replica");
    let ra = replica_client(&replica, &a);
    wait_same(&a, &f.server.root, &ra, &replica_root);
    assert_eq!(ra.ok(&["print", "-q", "//depot/o/keep.txt"]), "keep\n");
    assert!(
        info(&ra).get("replicaLastError").is_none(),
        "{:?}",
        info(&ra)
    );

    // Content purged on the primary after the replica fetched it is deleted there too.
    write(&a.cwd, "o/live.txt", "live\n");
    a.ok(&["add", "o/live.txt"]);
    a.ok(&["submit", "-d", "live"]);
    wait_caught_up(&a, &ra);
    assert_eq!(content_files(&replica_root), 2);
    a.ok(&["obliterate", "-y", "//depot/o/live.txt"]);
    wait_same(&a, &f.server.root, &ra, &replica_root);
    assert_eq!(content_files(&replica_root), 1);

    // Content lost on the primary (not purged: revisions still name it) is reported by a
    // replica that needs it, which still follows.
    write(&a.cwd, "o/lost.txt", "lost\n");
    a.ok(&["add", "o/lost.txt"]);
    a.ok(&["submit", "-d", "lost"]);
    let lost = str_field(&a.json(&["fstat", "//depot/o/lost.txt"])[0], "digest");
    remove_blobs(&mut f, std::slice::from_ref(&lost));
    let second_root = f.dir.path().join("second");
    let second = Server::start_replica(&second_root, &f.server.addr, &[]).expect("replica");
    let rs = replica_client(&second, &a);
    wait_for(
        "the replica reports content lost on the primary",
        Duration::from_secs(30),
        || {
            let i = info(&rs);
            match i.get("replicaLastError").and_then(|v| v.as_str()) {
                Some(why) if why.contains(&lost) && why.contains("missing on the primary") => {
                    Ok(())
                }
                _ => Err(i.to_string()),
            }
        },
    );
    wait_caught_up(&a, &rs);
    // (describe would fail on both: it reads the lost content for its diff.)
    for args in [&["files", "//depot/..."][..], &["changes"]] {
        assert_eq!(a.json(args), rs.json(args), "{args:?}");
    }
}
