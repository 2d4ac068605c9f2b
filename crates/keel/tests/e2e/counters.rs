//! End-to-end: `counter`/`counters` and `key`/`keys` through the real CLI: values read as 0
//! until set, `-i` is atomic under concurrent clients, `change` reads the newest change and is
//! never set, reserved counters need `-f` from a super user, compare-and-set refuses a stale
//! value, the protections (`list` reads, `review` sets, `keys.hide`) refuse and change
//! nothing, and a replica follows the values through the journal.

use crate::access::protect;
use crate::common::{Client, Fixture, Server, str_field, write};
use crate::replica::{replica_client, wait_for};
use std::collections::BTreeSet;
use std::time::Duration;

fn value(c: &Client, args: &[&str]) -> String {
    c.ok(args).trim().to_string()
}

#[test]
fn counters_read_set_increment_delete_and_list() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    assert_eq!(value(&ws, &["counter", "build"]), "0");
    assert_eq!(
        ws.ok(&["counter", "build", "17"]).trim(),
        "Counter build set."
    );
    assert_eq!(value(&ws, &["counter", "build"]), "17");
    assert_eq!(value(&ws, &["counter", "-i", "build"]), "18");
    let set = ws.json(&["counter", "-v", "build", "release-2"]);
    assert_eq!(str_field(&set[0], "counter"), "build");
    assert_eq!(str_field(&set[0], "value"), "release-2");
    assert_eq!(str_field(&set[0], "previous"), "18");
    // Textual values are fine to hold but not to increment; the refusal keeps the value.
    let err = ws.fail(&["counter", "-i", "build"]);
    assert!(err.contains("not a number"), "{err}");
    assert_eq!(value(&ws, &["counter", "build"]), "release-2");

    // Keys are a namespace of their own.
    assert_eq!(value(&ws, &["key", "build"]), "0");
    ws.ok(&["key", "build", "k"]);
    assert_eq!(value(&ws, &["key", "-i", "seq"]), "1");
    assert_eq!(value(&ws, &["counter", "build"]), "release-2");

    // `change` is the newest change number.
    write(&ws.cwd, "a.txt", "a\n");
    ws.ok(&["add", "a.txt"]);
    ws.ok(&["submit", "-d", "first"]);
    assert_eq!(value(&ws, &["counter", "change"]), "1");

    ws.ok(&["counter", "build.nightly", "3"]);
    ws.ok(&["counter", "review", "0"]);
    let all: Vec<(String, String)> = ws
        .json(&["counters"])
        .iter()
        .map(|r| (str_field(r, "counter"), str_field(r, "value")))
        .collect();
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        all,
        pairs(&[
            ("build", "release-2"),
            ("build.nightly", "3"),
            ("change", "1"),
            ("review", "0")
        ])
    );
    let filtered = ws.ok(&["counters", "-e", "build*", "-m", "1"]);
    assert_eq!(filtered, "build = release-2\n");
    let keys = ws.json(&["keys", "-e", "s*"]);
    assert_eq!(keys.len(), 1);
    assert_eq!(str_field(&keys[0], "key"), "seq");

    let deleted = ws.json(&["counter", "-d", "build"]);
    assert_eq!(str_field(&deleted[0], "action"), "deleted");
    assert_eq!(value(&ws, &["counter", "build"]), "0");
    assert_eq!(value(&ws, &["key", "build"]), "k");
}

#[test]
fn counter_refusals_name_the_problem_and_change_nothing() {
    let fx = Fixture::new();
    let admin = fx.server.client("admin", "", fx.dir.path());
    let dev = fx.server.client("dev", "", fx.dir.path());
    let daemon = fx.server.client("daemon", "", fx.dir.path());
    admin.ok(&["counter", "ci", "5"]);
    protect(
        &admin,
        &[
            "write user dev * //...",
            "review user daemon * //...",
            "super user admin * //...",
        ],
    );

    for (args, needle) in [
        (&["counter", "a b", "1"][..], "whitespace"),
        (&["counter", "123", "1"], "is a number"),
        (&["counter", "x*", "1"], "wildcard"),
        (&["counter", "change", "7"], "newest change"),
        (&["counter", "-f", "change", "7"], "newest change"),
        (&["counter", "journal", "7"], "needs -f"),
        (
            &["counter", "--from", "4", "--to", "6", "ci"],
            "holds '5', not '4'",
        ),
    ] {
        let err = daemon.fail(args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(value(&admin, &["counter", "ci"]), "5");
    assert_eq!(value(&admin, &["counter", "journal"]), "0");

    // -f on a reserved counter is for super users.
    let err = daemon.fail(&["counter", "-f", "journal", "7"]);
    assert!(err.contains("-f needs super"), "{err}");
    admin.ok(&["counter", "-f", "journal", "7"]);
    assert_eq!(value(&admin, &["counter", "journal"]), "7");

    // write access reads counters but cannot set them; review can.
    assert_eq!(value(&dev, &["counter", "ci"]), "5");
    let err = dev.fail(&["counter", "ci", "9"]);
    assert!(err.contains("needs review access"), "{err}");
    let err = dev.fail(&["counter", "-i", "ci"]);
    assert!(err.contains("needs review access"), "{err}");
    daemon.ok(&["counter", "--from", "5", "--to", "6", "ci"]);
    assert_eq!(value(&dev, &["counter", "ci"]), "6");

    // keys.hide: 1 hides keys from readers below admin, 2 also from setters.
    daemon.ok(&["key", "token", "abc"]);
    admin.ok(&["configure", "set", "keys.hide=1"]);
    let err = daemon.fail(&["key", "token"]);
    assert!(err.contains("reading keys needs admin"), "{err}");
    let err = daemon.fail(&["keys"]);
    assert!(err.contains("reading keys needs admin"), "{err}");
    daemon.ok(&["key", "token", "def"]);
    admin.ok(&["configure", "set", "keys.hide=2"]);
    let err = daemon.fail(&["key", "token", "ghi"]);
    assert!(err.contains("setting keys needs admin"), "{err}");
    assert_eq!(value(&admin, &["key", "token"]), "def");
    let err = admin.fail(&["configure", "set", "keys.hide=3"]);
    assert!(err.contains("0, 1 or 2"), "{err}");
}

/// Several clients increment one counter at once: every value is handed out exactly once.
#[test]
fn concurrent_increments_never_hand_out_a_value_twice() {
    const CLIENTS: usize = 4;
    const EACH: usize = 8;
    let fx = Fixture::new();
    let threads: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let c = fx.server.client(&format!("u{i}"), "", fx.dir.path());
            std::thread::spawn(move || {
                (0..EACH)
                    .map(|_| value(&c, &["counter", "-i", "seq"]))
                    .collect::<Vec<String>>()
            })
        })
        .collect();
    let mut seen = BTreeSet::new();
    for t in threads {
        for v in t.join().expect("client thread") {
            let n: u64 = v.parse().unwrap_or_else(|_| panic!("not a number: {v}"));
            assert!(seen.insert(n), "value {n} handed out twice");
        }
    }
    let total = (CLIENTS * EACH) as u64;
    assert_eq!(seen, (1..=total).collect::<BTreeSet<u64>>());
    let c = fx.server.client("u0", "", fx.dir.path());
    assert_eq!(value(&c, &["counter", "seq"]), total.to_string());
}

/// Counters and keys reach a replica through the journal; the replica refuses to set them.
#[test]
fn a_replica_follows_counters_and_keys() {
    let fx = Fixture::new();
    let c = fx.server.client("alice", "", fx.dir.path());
    c.ok(&["counter", "review", "41"]);
    c.ok(&["key", "deploy", "blue"]);
    let replica = Server::start_replica(&fx.dir.path().join("replica"), &fx.server.addr, &[])
        .expect("replica starts");
    let r = replica_client(&replica, &c);
    c.ok(&["counter", "-i", "review"]);
    wait_for(
        "replica has the counter",
        Duration::from_secs(30),
        || match value(&r, &["counter", "review"]).as_str() {
            "42" => Ok(()),
            other => Err(format!("replica reads {other}")),
        },
    );
    assert_eq!(value(&r, &["key", "deploy"]), "blue");
    let err = r.fail(&["counter", "review", "1"]);
    assert!(err.contains("replica"), "{err}");
    assert_eq!(value(&c, &["counter", "review"]), "42");
}

/// A review daemon's round: `reviews` finds the users whose Reviews cover a change's files,
/// `review -t review` lists the changes after the `review` counter, and `review -c N -t
/// review` moves the counter on.
#[test]
fn review_daemon_reads_changes_after_its_counter_and_their_reviewers() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    let bob = fx.server.client("bob", "", fx.dir.path());
    let carol = fx.server.client("carol", "", fx.dir.path());
    let form = |name: &str, reviews: &[&str]| {
        let mut text = format!("User: {name}\nEmail: {name}@example.com\nFullName: {name} R.\n");
        if !reviews.is_empty() {
            text.push_str(&format!("Reviews:\n\t{}\n", reviews.join("\n\t")));
        }
        text
    };
    let save = |c: &Client, text: &str| c.run_stdin(&["user", "-i"], text);
    assert!(
        save(
            &bob,
            &form("bob", &["//depot/src/...", "-//depot/src/gen/..."])
        )
        .status
        .success()
    );
    assert!(
        save(&carol, &form("carol", &["//depot/doc/..."]))
            .status
            .success()
    );
    assert!(save(&ws, &form("alice", &[])).status.success());
    let shown = bob.json(&["user", "-o", "bob"]);
    assert_eq!(str_field(&shown[0], "Reviews1"), "-//depot/src/gen/...");
    // A Reviews line that is no depot path is refused, naming the field; nothing is saved.
    let out = save(&bob, &form("bob", &["+//depot/x/..."]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Reviews"), "{err}");
    assert_eq!(
        str_field(&bob.json(&["user", "-o", "bob"])[0], "Reviews0"),
        "//depot/src/..."
    );

    for (file, text) in [
        ("src/a.c", "a\n"),
        ("doc/readme", "r\n"),
        ("src/gen/x.c", "x\n"),
    ] {
        write(&ws.cwd, file, text);
        ws.ok(&["add", file]);
        ws.ok(&["submit", "-d", file]);
    }
    let users = |args: &[&str]| -> Vec<String> {
        ws.json(args).iter().map(|r| str_field(r, "user")).collect()
    };
    assert_eq!(users(&["reviews", "-c", "1"]), ["bob"]);
    assert_eq!(users(&["reviews", "-c", "2"]), ["carol"]);
    assert!(users(&["reviews", "-c", "3"]).is_empty());
    assert_eq!(users(&["reviews", "//depot/..."]), ["bob", "carol"]);
    assert_eq!(
        users(&["reviews", "//depot/src/gen/..."]),
        Vec::<String>::new()
    );
    assert_eq!(users(&["reviews"]), ["bob", "carol"]);
    assert_eq!(
        ws.ok(&["reviews", "-c", "1"]),
        "bob <bob@example.com> (bob R.)\n"
    );
    let err = ws.fail(&["reviews", "-c", "99"]);
    assert!(err.contains("change 99 does not exist"), "{err}");

    let changes = |args: &[&str]| -> Vec<String> {
        ws.json(args)
            .iter()
            .map(|r| str_field(r, "change"))
            .collect()
    };
    assert_eq!(changes(&["review", "-t", "review"]), ["1", "2", "3"]);
    assert_eq!(
        ws.ok(&["review", "-c", "3"]),
        "Change 3 alice <alice@example.com> (alice R.)\n"
    );
    ws.ok(&["counter", "review", "1"]);
    assert_eq!(changes(&["review", "-t", "review"]), ["2", "3"]);
    ws.ok(&["review", "-c", "3", "-t", "review"]);
    assert_eq!(value(&ws, &["counter", "review"]), "3");
    assert!(changes(&["review", "-t", "review"]).is_empty());
    ws.ok(&["counter", "review", "soon"]);
    let err = ws.fail(&["review", "-t", "review"]);
    assert!(err.contains("not a change number"), "{err}");

    // `review` needs review access; `reviews` only list.
    protect(&ws, &["write user * * //...", "super user alice * //..."]);
    let err = bob.fail(&["review"]);
    assert!(err.contains("needs review access"), "{err}");
    assert_eq!(
        bob.json(&["reviews", "-c", "2"])
            .iter()
            .map(|r| str_field(r, "user"))
            .collect::<Vec<_>>(),
        ["carol"]
    );
}
