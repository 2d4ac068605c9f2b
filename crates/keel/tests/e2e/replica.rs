//! Read-only replicas through the real binaries: a replica follows the primary's journal and
//! answers reads identically, syncs a workspace without touching the primary, refuses writes
//! naming the primary or forwards them; readers polling during a submit stream never see a
//! change partially; a replica killed with -9 catches up; a stopped primary leaves the replica
//! serving with growing lag until it returns.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Files each change of the submit stream adds.
pub(crate) const FILES_PER_CHANGE: usize = 3;

/// Waits (bounded) until `done` holds, failing with `what` and the last state seen.
pub(crate) fn wait_for(
    what: &str,
    timeout: Duration,
    mut done: impl FnMut() -> Result<(), String>,
) {
    let deadline = Instant::now() + timeout;
    loop {
        match done() {
            Ok(()) => return,
            Err(last) if Instant::now() > deadline => {
                panic!("{what}: not within {timeout:?}: {last}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

pub(crate) fn info(c: &Client) -> serde_json::Value {
    c.json(&["info"])
        .into_iter()
        .next()
        .expect("one info record")
}

/// Waits until the replica shows the primary's newest change.
pub(crate) fn wait_caught_up(primary: &Client, replica: &Client) {
    let newest = |c: &Client| {
        c.json(&["changes", "-m", "1"])
            .first()
            .map(|v| str_field(v, "change"))
    };
    let want = newest(primary);
    wait_for("replica catches up", Duration::from_secs(30), || {
        let seen = newest(replica);
        if seen == want {
            Ok(())
        } else {
            Err(format!("replica at {seen:?}, primary at {want:?}"))
        }
    });
}

/// The read answers compared between primary and replica, as `--json` text. Have lists are
/// each server's own (a replica keeps those of the workspaces syncing from it), so `haveRev`
/// is left out.
pub(crate) fn answers(c: &Client) -> Vec<String> {
    let mut out = Vec::new();
    let shown = |mut v: serde_json::Value| {
        if let Some(map) = v.as_object_mut() {
            map.remove("haveRev");
        }
        v.to_string()
    };
    for args in [
        &["changes"][..],
        &["files", "//depot/..."],
        &["fstat", "//depot/..."],
        &["filelog", "//depot/..."],
        &["dirs", "//depot/*"],
        &["labels"],
        &["workspace", "list"],
    ] {
        out.push(format!("{args:?}"));
        out.extend(c.json(args).into_iter().map(shown));
    }
    for change in c.json(&["changes"]) {
        let n = str_field(&change, "change");
        out.extend(c.json(&["describe", &n]).into_iter().map(shown));
    }
    out
}

/// Submits change `i` of the stream: FILES_PER_CHANGE new files under `//depot/s/i/`.
pub(crate) fn submit_one(c: &Client, i: usize) {
    for f in 0..FILES_PER_CHANGE {
        write(
            &c.cwd,
            &format!("s/{i}/f{f}.txt"),
            format!("change {i} file {f}\n"),
        );
    }
    c.ok(&["add", &format!("s/{i}/...")]);
    c.ok(&["submit", "-d", &format!("stream {i}")]);
}

/// Every change visible in one `files` answer has all its files, and the content of one of
/// them prints as submitted. Returns how many changes it saw; `None` when the replica did not
/// answer (it is being restarted).
pub(crate) fn try_check_no_partial_change(replica: &Client) -> Option<usize> {
    let out = replica.run(&["--json", "files", "//depot/s/..."]);
    if !out.status.success() {
        return None;
    }
    let files: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let mut per_dir: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &files {
        let path = str_field(f, "depotFile");
        let dir = path.rsplit_once('/').expect("a directory").0.to_string();
        *per_dir.entry(dir).or_default() += 1;
    }
    for (dir, n) in &per_dir {
        assert_eq!(*n, FILES_PER_CHANGE, "{dir} is visible with {n} files");
    }
    if let Some(dir) = per_dir.keys().last() {
        let i = dir.rsplit('/').next().expect("change index");
        let out = replica.run(&["print", "-q", &format!("{dir}/f0.txt")]);
        if !out.status.success() {
            return None;
        }
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed,
            format!("change {i} file 0\n"),
            "content of {dir}/f0.txt"
        );
    }
    Some(per_dir.len())
}

pub(crate) fn check_no_partial_change(replica: &Client) -> usize {
    try_check_no_partial_change(replica).expect("the replica answers")
}

pub(crate) fn replica_client(replica: &Server, ws: &Client) -> Client {
    replica.client(&ws.user, &ws.workspace, &ws.cwd)
}

#[test]
fn replica_follows_serves_reads_syncs_locally_and_refuses_writes() {
    let f = Fixture::new();
    let a = f.workspace("alice", "ws");
    write(&a.cwd, "src/a.txt", "alpha\n");
    write(&a.cwd, "src/b.bin", bytes(7, 300_000));
    a.ok(&["add", "src/..."]);
    a.ok(&["submit", "-d", "first"]);
    let build_root = f.dir.path().join("build");
    std::fs::create_dir_all(&build_root).expect("build root");
    let b = f.server.client("builder", "build", &build_root);
    b.ok(&[
        "workspace",
        "create",
        "build",
        "--root",
        build_root.to_str().expect("utf-8"),
        "--view",
        "//depot/... //build/...",
    ]);

    let replica = Server::start_replica(&f.dir.path().join("replica"), &f.server.addr, &[])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    write(&a.cwd, "src/a.txt", "alpha 2\n");
    a.ok(&["edit", "src/a.txt"]);
    write(&a.cwd, "src/a.txt", "alpha 2\n");
    a.ok(&["submit", "-d", "second"]);
    wait_caught_up(&a, &ra);
    assert_eq!(answers(&a), answers(&ra));
    assert_eq!(ra.ok(&["print", "-q", "//depot/src/a.txt"]), "alpha 2\n");

    // A build workspace syncs from the replica: its have list lives there, not on the primary.
    let rb = replica_client(&replica, &b);
    rb.ok(&["sync", "-q"]);
    assert_eq!(read(&build_root, "src/b.bin"), bytes(7, 300_000));
    assert_eq!(rb.json(&["have"]).len(), 2);
    assert!(
        b.json(&["have"]).is_empty(),
        "the primary recorded no have list"
    );

    let i = info(&ra);
    assert_eq!(str_field(&i, "replicaOf"), f.server.addr);
    assert_eq!(field(&i, "replicaConnected"), true);
    assert_eq!(field(&i, "replicaLagRecords"), 0);
    assert!(
        field(&i, "replicaAppliedPosition")
            .as_u64()
            .expect("a number")
            > 0
    );
    assert!(
        info(&a).get("replicaOf").is_none(),
        "a primary shows no replica fields"
    );

    // Writes are refused with the primary named, and nothing changes.
    write(&a.cwd, "src/c.txt", "gamma\n");
    let refused = ra.fail(&["add", "src/c.txt"]);
    assert!(
        refused.contains("read-only replica") && refused.contains(&f.server.addr),
        "{refused}"
    );
    assert!(a.json(&["opened"]).is_empty());
}

#[test]
fn a_submit_through_a_forwarding_replica_lands_on_the_primary() {
    let f = Fixture::new();
    let a = f.workspace("alice", "ws");
    let replica = Server::start_replica(
        &f.dir.path().join("replica"),
        &f.server.addr,
        &["--forward-writes"],
    )
    .expect("replica starts");
    let ra = replica_client(&replica, &a);
    // The replica answers workspace lookups itself: it must have applied the workspace the
    // primary created before it started.
    wait_caught_up(&a, &ra);
    write(&a.cwd, "fwd.txt", "forwarded\n");
    ra.ok(&["add", "fwd.txt"]);
    // The opened files are read from the primary: the add shows at once (submit relies on it).
    let opened = ra.json(&["opened"]);
    assert_eq!(opened.len(), 1, "{opened:?}");
    ra.ok(&["submit", "-d", "through the replica"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/fwd.txt"]), "forwarded\n");
    wait_caught_up(&a, &ra);
    assert_eq!(ra.ok(&["print", "-q", "//depot/fwd.txt"]), "forwarded\n");
    assert_eq!(field(&info(&ra), "replicaForwardWrites"), true);
}

/// Readers poll the replica while the primary takes a stream of submits; the replica is
/// killed with -9 part way and restarted; it catches up and answers as the primary does.
fn follow_a_submit_stream(submits: usize) {
    let f = Fixture::new();
    let a = f.workspace("alice", "ws");
    let replica_root = f.dir.path().join("replica");
    let mut replica =
        Server::start_replica(&replica_root, &f.server.addr, &[]).expect("replica starts");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        let addr = std::sync::Arc::new(std::sync::Mutex::new(replica.addr.clone()));
        let handle_addr = addr.clone();
        let client = replica_client(&replica, &a);
        let handle = std::thread::spawn(move || {
            let (mut polls, mut seen) = (0usize, 0usize);
            // Bounded: the stream ends within the test's time, and so many polls at most.
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && polls < 100_000 {
                let mut c = client.clone();
                c.addr = handle_addr.lock().expect("address").clone();
                if let Some(n) = try_check_no_partial_change(&c) {
                    seen = seen.max(n);
                }
                polls += 1;
            }
            (polls, seen)
        });
        (handle, addr)
    };
    for i in 0..submits {
        submit_one(&a, i);
        if i == submits / 2 {
            replica.kill9();
            replica.restart();
            *reader.1.lock().expect("address") = replica.addr.clone();
        }
    }
    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (polls, seen) = reader.0.join().expect("reader thread");
    assert!(
        polls > 0 && seen > 0,
        "the reader saw changes ({polls} polls)"
    );
    assert_eq!(check_no_partial_change(&ra), submits);
    assert_eq!(answers(&a), answers(&ra));
    assert_eq!(content_files(&replica_root), content_files(&f.server.root));
}

#[test]
fn readers_never_see_a_partial_change_and_a_killed_replica_catches_up() {
    follow_a_submit_stream(20);
}

#[test]
fn replica_follows_a_thousand_submits() {
    if skip_slow("replica_follows_a_thousand_submits") {
        return;
    }
    follow_a_submit_stream(1000);
}

#[test]
fn a_stopped_primary_leaves_the_replica_serving_with_growing_lag() {
    let mut f = Fixture::new();
    let a = f.workspace("alice", "ws");
    submit_one(&a, 0);
    let replica = Server::start_replica(&f.dir.path().join("replica"), &f.server.addr, &[])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);

    f.server.kill9();
    let mut first = None;
    wait_for(
        "replica notices the primary is gone",
        Duration::from_secs(30),
        || {
            let i = info(&ra);
            let lag = field(&i, "replicaLagMillis").as_u64().unwrap_or(0);
            match (field(&i, "replicaConnected") == false, first) {
                (true, None) => {
                    first = Some(lag);
                    Err("first reading".into())
                }
                (true, Some(before)) if lag > before => Ok(()),
                _ => Err(i.to_string()),
            }
        },
    );
    assert!(!str_field(&info(&ra), "replicaLastError").is_empty());
    assert_eq!(check_no_partial_change(&ra), 1, "reads go on");

    f.server.restart_same_address();
    submit_one(&a, 1);
    wait_caught_up(&a, &ra);
    assert_eq!(field(&info(&ra), "replicaConnected"), true);
    assert_eq!(answers(&a), answers(&ra));
}

#[test]
fn a_replica_of_a_non_keel_address_says_why_and_serves() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("address").to_string();
    // Answers every connection with something that is not HTTP/2, then closes it.
    std::thread::spawn(move || {
        for mut conn in listener.incoming().take(1000).flatten() {
            use std::io::Write;
            let _ = conn.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n");
        }
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let replica =
        Server::start_replica(&dir.path().join("replica"), &addr, &[]).expect("replica starts");
    let c = replica.client("alice", "", Path::new("/"));
    wait_for(
        "the replica reports the bad primary",
        Duration::from_secs(30),
        || {
            let i = info(&c);
            let why = replica_last_error(&i);
            if !why.is_empty() && field(&i, "replicaConnected") == false {
                Ok(())
            } else {
                Err(i.to_string())
            }
        },
    );
    assert!(c.json(&["changes"]).is_empty());
}
