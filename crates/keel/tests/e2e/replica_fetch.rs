//! An on-demand replica (`--content on-demand`) of a security-3 primary, fetching as its
//! service user: over TLS it fetches exactly the content a sync needs, once; and when the
//! primary does not send a blob (the service user lost its rights or its ticket, the primary
//! lost the content) the client of the replica is told the file and revision, the primary's
//! address and the primary's reason, never that the replica itself cannot be reached.

use crate::auth::As as Who;
use crate::common::{Client, Server, blob_at, bytes, content_files, remove_blobs_of, write};
use std::path::Path;
use std::time::{Duration, Instant};

const ADMIN_PW: &str = "Adm1n-Pa55-fetch";
const SVC_PW: &str = "Serv1ce-pass-fetch";

/// A security-3 primary's admin (logged in, with workspace `ws` rooted at `<dir>/ws`) and the
/// service user `svc` (logged in on the primary, its own tickets file).
fn level_3_primary(server: &Server, dir: &Path) -> (Who, Who) {
    let root = dir.join("ws");
    std::fs::create_dir_all(&root).expect("workspace root");
    let admin = Who::new(server.client("admin", "ws", &root), dir);
    if server.addr.starts_with("ssl:") {
        admin.ok(&["trust", "-y"], "");
    }
    admin.ok(&["passwd"], &format!("{ADMIN_PW}\n{ADMIN_PW}\n"));
    admin.ok(&["login"], &format!("{ADMIN_PW}\n"));
    admin.ok(&["configure", "set", "security=3"], "");
    admin.ok(
        &["user", "-f", "-i"],
        "User: svc\nEmail: svc@example.com\nType: service\n",
    );
    admin.ok(&["passwd", "svc"], &format!("{SVC_PW}\n{SVC_PW}\n"));
    let svc = Who::new(server.client("svc", "", dir), dir);
    svc.ok(&["login"], &format!("{SVC_PW}\n"));
    let root_text = root.to_str().expect("utf-8");
    admin.ok(
        &[
            "workspace",
            "create",
            "ws",
            "--root",
            root_text,
            "--view",
            "//depot/... //ws/...",
        ],
        "",
    );
    (admin, svc)
}

/// Starts an on-demand replica of `primary` on `root` following as `svc`, forwarding writes
/// (so a login through it reaches the primary), listening as the primary does (TLS or not).
fn on_demand_replica(primary: &Server, root: &Path, svc: &Who) -> Server {
    let tickets = svc.tickets.to_str().expect("utf-8");
    let trust = primary.trust.to_str().expect("utf-8");
    let listen = if primary.addr.starts_with("ssl:") {
        "ssl:127.0.0.1:0"
    } else {
        "127.0.0.1:0"
    };
    Server::start_listening(
        root,
        listen,
        &[("KEEL_TICKETS", tickets), ("KEEL_TRUST", trust)],
        &[
            "--replica-of",
            &primary.addr,
            "--service-user",
            "svc",
            "--forward-writes",
            "--content",
            "on-demand",
        ],
    )
    .expect("replica starts")
}

fn wait_for(what: &str, mut done: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match done() {
            Ok(()) => return,
            Err(last) if Instant::now() > deadline => panic!("{what}: not within 30 s: {last}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Waits until the replica (as `who`) lists `path`.
fn wait_listed(who: &Who, path: &str) {
    wait_for("the replica has the file", || {
        let out = who.run(&["files", path], "");
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    });
}

/// Stored content bytes the server `who` talks to has sent since it started.
fn digest_of(who: &Who, path: &str) -> String {
    let out = who.ok(&["--json", "fstat", path], "");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("fstat JSON");
    v["digest"].as_str().expect("digest").to_string()
}

#[test]
fn an_on_demand_replica_of_a_tls_primary_fetches_exactly_what_a_sync_needs() {
    let primary = Server::start_tls();
    let dir = tempfile::tempdir().expect("temp dir");
    let (admin, svc) = level_3_primary(&primary, dir.path());
    let root = dir.path().join("ws");
    write(&root, "a/one.txt", "over TLS\n");
    write(&root, "a/two.bin", bytes(11, 250_000));
    write(&root, "b/not-synced.txt", "never asked for\n");
    admin.ok(&["add", "a/...", "b/..."], "");
    admin.ok(&["submit", "-d", "first"], "");

    let replica_root = dir.path().join("replica");
    let replica = on_demand_replica(&primary, &replica_root, &svc);
    assert!(replica.addr.starts_with("ssl:"), "{}", replica.addr);
    let via = admin.on(&replica.addr);
    via.ok(&["trust", "-y"], "");
    via.ok(&["login"], &format!("{ADMIN_PW}\n"));
    wait_listed(&via, "//depot/b/not-synced.txt");
    assert_eq!(content_files(&replica_root), 0, "metadata only so far");

    // A build workspace that maps only a/ syncs through the replica.
    let build_root = dir.path().join("build");
    std::fs::create_dir_all(&build_root).expect("build root");
    let build = Who {
        client: Client {
            workspace: "build".into(),
            cwd: build_root.clone(),
            ..via.client.clone()
        },
        tickets: via.tickets.clone(),
    };
    build.ok(
        &[
            "workspace",
            "create",
            "build",
            "--root",
            build_root.to_str().expect("utf-8"),
            "--view",
            "//depot/a/... //build/...",
        ],
        "",
    );
    let needed: u64 = ["//depot/a/one.txt", "//depot/a/two.bin"]
        .iter()
        .map(|p| blob_at(&primary.root, &digest_of(&admin, p)).len)
        .sum();
    let before = admin.content_bytes_sent();
    build.ok(&["sync", "-q"], "");
    assert_eq!(
        std::fs::read(build_root.join("one.txt")).expect("synced"),
        b"over TLS\n"
    );
    assert_eq!(
        std::fs::read(build_root.join("two.bin")).expect("synced"),
        bytes(11, 250_000)
    );
    assert_eq!(
        admin.content_bytes_sent() - before,
        needed,
        "exactly the needed content"
    );
    assert_eq!(content_files(&replica_root), 2);

    // Synced again from scratch, the tree comes from what the replica holds.
    build.ok(&["sync", "-q", "-f"], "");
    assert_eq!(
        std::fs::read(build_root.join("two.bin")).expect("synced"),
        bytes(11, 250_000)
    );
    assert_eq!(
        admin.content_bytes_sent() - before,
        needed,
        "the second sync fetched nothing"
    );
}

/// A refused fetch's message: the file and revision, the primary's address, its reason, and
/// nothing saying the replica cannot be reached.
fn assert_names(refused: &str, file: &str, primary: &str, reason: &str) {
    assert!(refused.contains(file), "{file}: {refused}");
    assert!(refused.contains(primary), "{primary}: {refused}");
    assert!(refused.contains(reason), "{reason}: {refused}");
    assert!(!refused.contains("cannot connect"), "{refused}");
}

#[test]
fn a_refused_on_demand_fetch_names_the_file_the_primary_and_its_reason() {
    let primary = Server::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let (admin, svc) = level_3_primary(&primary, dir.path());
    let root = dir.path().join("ws");
    for name in ["rights", "ticket", "lost", "fine"] {
        write(&root, &format!("{name}.txt"), format!("{name}\n"));
    }
    admin.ok(
        &["add", "rights.txt", "ticket.txt", "lost.txt", "fine.txt"],
        "",
    );
    admin.ok(&["submit", "-d", "first"], "");
    let replica = on_demand_replica(&primary, &dir.path().join("replica"), &svc);
    let via = admin.on(&replica.addr);
    via.ok(&["login"], &format!("{ADMIN_PW}\n"));
    wait_listed(&via, "//depot/fine.txt");
    assert_eq!(via.ok(&["print", "-q", "//depot/fine.txt"], ""), "fine\n");

    // The service user loses its rights on the primary: the fetch is refused, and says so.
    let table = |lines: &[&str]| format!("Protections:\n\t{}\n", lines.join("\n\t"));
    admin.ok(&["protect", "-i"], &table(&["super user admin * //..."]));
    let refused = via.fail(&["print", "-q", "//depot/rights.txt"], "");
    assert_names(
        &refused,
        "//depot/rights.txt#1",
        &primary.addr,
        "refused the replica's user",
    );
    admin.ok(
        &["protect", "-i"],
        &table(&["super user admin * //...", "super user svc * //..."]),
    );
    assert_eq!(
        via.ok(&["print", "-q", "//depot/rights.txt"], ""),
        "rights\n"
    );

    // The service user's tickets are ended on the primary: the fetch names the login refused.
    svc.ok(&["logout", "-a"], "");
    let refused = via.fail(&["print", "-q", "//depot/ticket.txt"], "");
    assert_names(
        &refused,
        "//depot/ticket.txt#1",
        &primary.addr,
        "refused the replica's login",
    );
    assert!(refused.contains("svc"), "{refused}");
    svc.ok(&["login"], &format!("{SVC_PW}\n"));
    // The replica read the ticket at start; it is restarted with the new one.
    drop(replica);
    let replica = on_demand_replica(&primary, &dir.path().join("replica"), &svc);
    let via = admin.on(&replica.addr);
    via.ok(&["login"], &format!("{ADMIN_PW}\n"));
    assert_eq!(
        via.ok(&["print", "-q", "//depot/ticket.txt"], ""),
        "ticket\n"
    );

    // The primary no longer holds the content (lost there; an obliterate the replica has not
    // applied yet looks the same): the sync says which revision and why.
    let lost = digest_of(&admin, "//depot/lost.txt");
    let mut primary = primary;
    remove_blobs_of(&mut primary, &[lost]);
    let refused = via.fail(&["print", "-q", "//depot/lost.txt"], "");
    assert_names(
        &refused,
        "//depot/lost.txt#1",
        &primary.addr,
        "does not hold that content",
    );

    // The primary is down: the replica still answers, naming the primary it cannot reach.
    primary.kill9();
    let refused = via.fail(&["print", "-q", "//depot/lost.txt"], "");
    assert_names(
        &refused,
        "//depot/lost.txt#1",
        &primary.addr,
        "cannot be reached",
    );
    assert_eq!(via.ok(&["print", "-q", "//depot/fine.txt"], ""), "fine\n");
}
