//! Seeding a replica, through the real binaries: a replica whose position is older than the
//! oldest journal the primary keeps is refused with a message saying to seed it from a
//! checkpoint; a replica seeded with `keel admin restore` of a checkpoint (and the content
//! directory) catches up from the checkpoint's position and answers as the primary does.

use crate::backup::copy_dir;
use crate::common::*;
use crate::replica::{answers, info, replica_client, submit_one, wait_caught_up, wait_for};
use std::time::Duration;

#[test]
fn a_replica_behind_the_oldest_journal_is_told_to_seed_and_a_seeded_one_catches_up() {
    let f = Fixture::new();
    let a = f.workspace("alice", "ws");
    submit_one(&a, 0);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let checkpoint = str_field(&ckpt[0], "checkpoint");
    submit_one(&a, 1);
    // The operator keeps only the journals after the checkpoint (it is backed up).
    let journal0 = f.server.root.join("journal").join("journal.0");
    std::fs::remove_file(&journal0).expect("remove journal.0");

    // An empty replica starts at position 1, which no journal holds any more.
    let stale_root = f.dir.path().join("stale");
    let stale = Server::start_replica(&stale_root, &f.server.addr, &[]).expect("replica starts");
    let rs = replica_client(&stale, &a);
    wait_for(
        "the replica is told to seed from a checkpoint",
        Duration::from_secs(30),
        || {
            let why = replica_last_error(&info(&rs));
            if why.contains("seed the replica from a checkpoint") {
                Ok(())
            } else {
                Err(why)
            }
        },
    );
    let why = str_field(&info(&rs), "replicaLastError");
    assert!(why.contains("older than the oldest journal kept"), "{why}");
    assert!(why.contains("journal.1"), "names the oldest journal: {why}");
    assert!(rs.json(&["changes"]).is_empty(), "nothing applied");
    assert_eq!(field(&info(&rs), "replicaAppliedPosition"), 0);

    // Seed a replica from the checkpoint and the primary's content, then follow.
    let seeded_root = f.dir.path().join("seeded");
    let out = a.run(&[
        "admin",
        "restore",
        "--checkpoint",
        &checkpoint,
        "--root",
        seeded_root.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{out:?}");
    copy_dir(&f.server.root.join("content"), &seeded_root.join("content"));
    let seeded =
        Server::start_replica(&seeded_root, &f.server.addr, &[]).expect("seeded replica starts");
    let rd = replica_client(&seeded, &a);
    let start = field(&info(&rd), "replicaAppliedPosition")
        .as_u64()
        .expect("a position");
    assert!(start > 0, "the checkpoint's position");
    wait_caught_up(&a, &rd);
    submit_one(&a, 2);
    wait_caught_up(&a, &rd);
    assert_eq!(answers(&a), answers(&rd));
    assert_eq!(content_files(&seeded_root), content_files(&f.server.root));
    assert_eq!(
        rd.ok(&["print", "-q", "//depot/s/1/f0.txt"]),
        "change 1 file 0\n"
    );
    assert!(
        info(&rd).get("replicaLastError").is_none(),
        "no error shown"
    );
}
