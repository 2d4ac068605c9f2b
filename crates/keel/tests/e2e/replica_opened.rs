//! Syncing a workspace with opened files on a replica: when the sync would schedule a resolve
//! (a file opened for edit has a newer revision), which writes the primary's metadata, the
//! replica refuses it before anything is synced, naming the primary; other syncs of such a
//! workspace work, and the same sync on the primary schedules the resolve.

use crate::common::*;
use crate::replica::{replica_client, wait_caught_up};

#[test]
fn a_sync_that_would_schedule_a_resolve_is_refused_on_a_replica_naming_the_primary() {
    let f = Fixture::new();
    let a = f.workspace("alice", "ws");
    write(&a.cwd, "src/edit.txt", "one\n");
    write(&a.cwd, "src/other.txt", "other\n");
    a.ok(&["add", "src/..."]);
    a.ok(&["submit", "-d", "first"]);
    let replica = Server::start_replica(&f.dir.path().join("replica"), &f.server.addr, &[])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);
    // alice's have list on the replica holds revision 1 of both files.
    ra.ok(&["sync", "-f"]);
    a.ok(&["edit", "src/edit.txt"]);
    write(&a.cwd, "src/edit.txt", "mine\n");

    // An opened file whose head did not move: the sync works on the replica.
    let b = f.workspace("bob", "bws");
    b.ok(&["sync"]);
    write(&b.cwd, "src/new.txt", "new\n");
    b.ok(&["add", "src/new.txt"]);
    b.ok(&["submit", "-d", "new file"]);
    wait_caught_up(&a, &ra);
    ra.ok(&["sync"]);
    assert_eq!(read(&a.cwd, "src/new.txt"), b"new\n");

    // bob submits a newer revision of the file alice has opened: syncing it needs a resolve.
    b.ok(&["edit", "src/edit.txt"]);
    write(&b.cwd, "src/edit.txt", "two\n");
    write(&b.cwd, "src/later.txt", "later\n");
    b.ok(&["add", "src/later.txt"]);
    b.ok(&["submit", "-d", "second"]);
    wait_caught_up(&a, &ra);
    let refused = ra.fail(&["sync"]);
    assert!(
        refused.contains("//depot/src/edit.txt")
            && refused.contains("run this sync against the primary")
            && refused.contains(&f.server.addr),
        "{refused}"
    );
    // Nothing was synced: the other new file is not there, alice's edit is untouched.
    assert!(!a.cwd.join("src/later.txt").exists());
    assert_eq!(read(&a.cwd, "src/edit.txt"), b"mine\n");
    // A preview is only a read.
    ra.ok(&["sync", "-n"]);

    // On the primary the same sync schedules the resolve.
    a.ok(&["sync"]);
    assert_eq!(read(&a.cwd, "src/later.txt"), b"later\n");
    assert_eq!(read(&a.cwd, "src/edit.txt"), b"mine\n");
    let pending = a.json(&["resolve", "-am", "-n"]);
    assert_eq!(pending.len(), 1, "{pending:?}");
}
