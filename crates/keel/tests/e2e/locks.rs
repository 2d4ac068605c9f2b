//! End-to-end: `lock` and `unlock` of opened files. A locked file may be opened elsewhere but
//! not submitted there (nor locked) until its holder submits, reverts or unlocks it; `opened`
//! shows `*locked*`; `unlock -f` is an admin's; a user without write access cannot lock.

use crate::access::protect;
use crate::common::{Client, Fixture, field, str_field, write};

/// alice and bob, each with a workspace that has `a`, `b` and `ro/c` synced.
fn two_users(fx: &Fixture) -> (Client, Client) {
    let alice = fx.workspace("alice", "alice-ws");
    for rel in ["a", "b", "ro/c"] {
        write(&alice.cwd, rel, format!("{rel}\n"));
    }
    alice.ok(&["add", "a", "b", "ro/c"]);
    alice.ok(&["submit", "-d", "first"]);
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    (alice, bob)
}

fn changes(client: &Client) -> usize {
    client.json(&["changes"]).len()
}

#[test]
fn a_locked_file_can_be_opened_elsewhere_but_not_submitted_until_it_is_unlocked() {
    let fx = Fixture::new();
    let (alice, bob) = two_users(&fx);
    alice.ok(&["edit", "a", "b"]);
    let locked = alice.json(&["lock", "a"]);
    assert_eq!(locked.len(), 1);
    assert_eq!(str_field(&locked[0], "depotFile"), "//depot/a");
    assert_eq!(field(&locked[0], "locked"), true);
    let opened = alice.ok(&["opened"]);
    assert!(
        opened.contains("//depot/a#1 - edit default change (text) *locked*"),
        "{opened}"
    );
    assert!(
        !opened.contains("//depot/b#1 - edit default change (text) *locked*"),
        "{opened}"
    );
    let json = alice.json(&["opened", "a"]);
    assert_eq!(field(&json[0], "locked"), true);

    // fstat says who holds it: ourLock for the holder, otherLock for everyone else.
    let ours = alice.json(&["fstat", "a"]);
    assert_eq!(field(&ours[0], "ourLock"), 1, "{ours:?}");
    assert!(ours[0].get("otherLock").is_none(), "{ours:?}");
    let theirs = bob.json(&["fstat", "a"]);
    assert_eq!(field(&theirs[0], "otherLock"), 1, "{theirs:?}");
    assert!(theirs[0].get("ourLock").is_none(), "{theirs:?}");

    // bob may open it, and sees the lock with opened -a.
    bob.ok(&["edit", "a"]);
    let all = bob.ok(&["opened", "-a", "//depot/a"]);
    assert!(all.contains("by alice@alice-ws *locked*"), "{all}");
    // ... but neither lock nor submit it.
    let err = bob.fail(&["lock", "a"]);
    assert!(
        err.contains("//depot/a - locked by alice@alice-ws"),
        "{err}"
    );
    let before = changes(&bob);
    let err = bob.fail(&["submit", "-d", "bob's edit"]);
    assert!(
        err.contains("//depot/a - locked by alice@alice-ws"),
        "{err}"
    );
    assert_eq!(changes(&bob), before, "nothing submitted");
    assert_eq!(bob.json(&["opened"]).len(), 1, "bob's file stays opened");

    // Unlocked, bob's submit goes through.
    let unlocked = alice.json(&["unlock", "a"]);
    assert_eq!(unlocked.len(), 1);
    assert_eq!(field(&unlocked[0], "locked"), false);
    assert!(!alice.ok(&["opened"]).contains("*locked*"));
    bob.ok(&["submit", "-d", "bob's edit"]);
}

#[test]
fn submit_and_revert_release_the_lock() {
    let fx = Fixture::new();
    let (alice, bob) = two_users(&fx);
    alice.ok(&["edit", "a", "b"]);
    alice.ok(&["lock"]);
    let opened = alice.ok(&["opened"]);
    assert_eq!(opened.matches("*locked*").count(), 2, "{opened}");
    alice.ok(&["revert", "b"]);
    bob.ok(&["edit", "b"]);
    bob.ok(&["lock", "b"]);
    bob.ok(&["submit", "-d", "bob's b"]);

    // alice's own lock does not stop her submit, and goes with it.
    alice.ok(&["submit", "-d", "alice's a"]);
    bob.ok(&["sync"]);
    bob.ok(&["edit", "a"]);
    bob.ok(&["lock", "a"]);
    bob.ok(&["submit", "-d", "bob's a"]);
}

#[test]
fn lock_c_takes_one_change_and_files_not_opened_are_refused() {
    let fx = Fixture::new();
    let (alice, _bob) = two_users(&fx);
    let out = alice.ok(&["change", "-d", "numbered"]);
    assert!(out.contains("Change 2 created"), "{out}");
    alice.ok(&["edit", "-c", "2", "a"]);
    alice.ok(&["edit", "b"]);
    let locked = alice.json(&["lock", "-c", "2"]);
    let files: Vec<String> = locked.iter().map(|r| str_field(r, "depotFile")).collect();
    assert_eq!(files, ["//depot/a"]);
    let err = alice.fail(&["lock", "ro/c"]);
    assert!(err.contains("not opened"), "{err}");
    let err = alice.fail(&["lock", "-c", "99"]);
    assert!(err.contains("99"), "{err}");
}

#[test]
fn only_an_admin_unlocks_another_users_file_and_locking_needs_write_access() {
    let fx = Fixture::new();
    let (alice, bob) = two_users(&fx);
    protect(
        &alice,
        &[
            "write user * * //...",
            "write user bob * -//depot/ro/...",
            "super user alice * //...",
        ],
    );
    bob.ok(&["edit", "a", "ro/c"]);
    let err = bob.fail(&["lock", "ro/c"]);
    assert!(err.contains("//depot/ro/c"), "{err}");
    assert!(!bob.ok(&["opened"]).contains("*locked*"));
    bob.ok(&["lock", "a"]);

    // bob cannot force his way past alice's lock, nor can alice's plain unlock touch his.
    alice.ok(&["edit", "b"]);
    alice.ok(&["lock", "b"]);
    let err = bob.fail(&["unlock", "-f", "//depot/b"]);
    assert!(err.contains("//depot/b"), "{err}");
    assert!(bob.ok(&["opened", "-a", "//depot/b"]).contains("*locked*"));
    let err = alice.fail(&["unlock", "//depot/a"]);
    assert!(err.contains("not opened"), "{err}");

    // alice, a super user, releases bob's lock with -f.
    let out = alice.ok(&["unlock", "-f", "//depot/a"]);
    assert!(
        out.contains("//depot/a#1 - unlocking by bob@bob-ws"),
        "{out}"
    );
    assert!(
        !alice
            .ok(&["opened", "-a", "//depot/a"])
            .contains("*locked*")
    );
    let err = alice.fail(&["unlock", "-f", "//depot/a"]);
    assert!(err.contains("not locked"), "{err}");
}
