//! End-to-end: protections and groups meeting users and tickets. Who is super comes from the
//! protections table (settings, other users' passwords and specs, the triggers table); a
//! group's Timeout decides how long its users' tickets last; a replica follows its primary as
//! a service user, which needs super there.

use crate::common::{Client, Fixture, Server, str_field};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// Saves a protections table as `client` (`protect -i`), expecting success.
fn protect(client: &Client, lines: &[&str]) {
    let form = format!("Protections:\n\t{}\n", lines.join("\n\t"));
    let out = client.run_stdin(&["protect", "-i"], &form);
    assert!(out.status.success(), "protect -i: {}", stderr(&out));
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `client` with its own tickets file and `stdin`.
fn with_tickets(client: &Client, tickets: &Path, args: &[&str], stdin: &str) -> Output {
    let tickets = tickets.to_str().expect("utf-8 path");
    client.run_with(args, &[("KEEL_TICKETS", tickets)], stdin)
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: Output, what: &str) -> String {
    assert!(!out.status.success(), "{what} was not refused");
    stderr(&out)
}

/// `name` gets `password` (set by the super user `admin`) and logs in; returns its tickets file.
fn password_and_login(fx: &Fixture, admin: &Client, name: &str, password: &str) -> PathBuf {
    let user = fx.server.client(name, "", fx.dir.path());
    let spec = format!("User: {name}\nEmail: {name}@example.com\n");
    ok(admin.run_stdin(&["user", "-f", "-i"], &spec), "user -f -i");
    let pw = format!("{password}\n{password}\n");
    ok(admin.run_with(&["passwd", name], &[], &pw), "passwd");
    let tickets = fx.dir.path().join(format!("tickets-{name}"));
    ok(
        with_tickets(&user, &tickets, &["login"], &format!("{password}\n")),
        "login",
    );
    tickets
}

#[test]
fn super_only_commands_follow_the_protections_table() {
    let fx = Fixture::new();
    let alice = fx.server.client("alice", "", fx.dir.path());
    let bob = fx.server.client("bob", "", fx.dir.path());
    // No table yet: everyone is a super user.
    ok(
        bob.run(&["configure", "set", "security=0"]),
        "bob configures",
    );
    ok(
        bob.run_stdin(&["user", "-f", "-i"], "User: carol\nEmail: c@example.com\n"),
        "bob creates carol",
    );
    // The guide's first table (docs/guide/access-control.md): what `protect -o` offers, saved as it is.
    let offered = ok(alice.run(&["protect", "-o"]), "protect -o");
    ok(alice.run_stdin(&["protect", "-i"], &offered), "protect -i");
    let table = ok(alice.run(&["protect", "-o"]), "protect -o");
    assert!(table.contains("super user alice * //..."), "{table}");

    let err = refused(bob.run(&["configure", "set", "security=0"]), "configure");
    assert!(err.contains("You don't have permission"), "{err}");
    assert!(err.contains("super"), "{err}");
    let err = refused(
        bob.run_stdin(&["passwd", "carol"], "Carol-pass-1\nCarol-pass-1\n"),
        "passwd carol",
    );
    assert!(err.contains("needs a super user"), "{err}");
    let err = refused(
        bob.run_stdin(&["user", "-f", "-i"], "User: dave\nEmail: d@example.com\n"),
        "user -f dave",
    );
    assert!(err.contains("needs a super user"), "{err}");
    let err = refused(bob.run(&["triggers", "-o"]), "triggers -o");
    assert!(err.contains("needs super access"), "{err}");
    let err = refused(
        bob.run_stdin(&["triggers", "-i"], "Triggers:\n"),
        "triggers -i",
    );
    assert!(err.contains("needs super access"), "{err}");
    // bob's own spec and password remain his to change.
    ok(
        bob.run_stdin(&["passwd"], "B0b-password\nB0b-password\n"),
        "bob's own password",
    );

    // The super user of the table may do all of it.
    ok(
        alice.run(&["configure", "set", "security=0"]),
        "alice configures",
    );
    ok(
        alice.run_stdin(&["user", "-f", "-i"], "User: dave\nEmail: d@example.com\n"),
        "alice creates dave",
    );
    ok(
        alice.run_stdin(&["passwd", "carol"], "Carol-pass-1\nCarol-pass-1\n"),
        "alice sets carol's password",
    );
    ok(
        alice.run_stdin(&["triggers", "-i"], "Triggers:\n"),
        "triggers -i",
    );
}

#[test]
fn a_groups_timeout_decides_how_long_its_users_tickets_last() {
    let fx = Fixture::new();
    let admin = fx.server.client("admin", "", fx.dir.path());
    let expires_in = |tickets: &Path, name: &str| -> serde_json::Value {
        let user = fx.server.client(name, "", fx.dir.path());
        let out = ok(
            with_tickets(&user, tickets, &["--json", "login", "-s"], ""),
            "login -s",
        );
        serde_json::from_str(out.trim()).expect("one JSON line")
    };
    // No group sets a Timeout: the 12-hour default.
    let erin = password_and_login(&fx, &admin, "erin", "Erin-pass-1");
    let left = expires_in(&erin, "erin")["expiresIn"]
        .as_u64()
        .expect("expiresIn");
    assert!(left > 11 * 3600 && left <= 12 * 3600, "{left}");

    // One group of an hour; the most permissive of the user's groups applies.
    let group = |name: &str, timeout: &str| {
        let form = format!("Group:\t{name}\nTimeout:\t{timeout}\nUsers:\n\tdora\n");
        ok(admin.run_stdin(&["group", "-i", name], &form), "group -i");
    };
    group("hour", "3600");
    group("minutes", "600");
    let dora = password_and_login(&fx, &admin, "dora", "Dora-pass-1");
    let left = expires_in(&dora, "dora")["expiresIn"]
        .as_u64()
        .expect("expiresIn");
    assert!(left > 3000 && left <= 3600, "{left}");

    // `unlimited` wins over every number: the ticket does not expire.
    group("forever", "unlimited");
    let dora = password_and_login(&fx, &admin, "dora", "Dora-pass-2");
    let status = expires_in(&dora, "dora");
    assert_eq!(str_field(&status, "expires"), "unlimited", "{status}");
    let user = fx.server.client("dora", "", fx.dir.path());
    let text = ok(with_tickets(&user, &dora, &["login", "-s"], ""), "login -s");
    assert!(text.contains("ticket does not expire"), "{text}");
}

/// Waits (bounded) until `done`; `what` names it in the failure.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A replica follows its primary as a service user (`--service-user`), which needs `super`
/// on the primary once a table exists (it reads the journal); the replica then applies the
/// table through the journal and enforces it itself.
#[test]
fn a_replicas_service_user_needs_super_and_the_replica_enforces_the_table() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "alice-ws");
    crate::common::write(&alice.cwd, "pub/a", "a\n");
    crate::common::write(&alice.cwd, "secret/s", "s\n");
    alice.ok(&["add", "pub/a", "secret/s"]);
    alice.ok(&["submit", "-d", "two files"]);
    ok(
        alice.run_stdin(
            &["user", "-f", "-i"],
            "User: svc\nEmail: svc@example.com\nType: service\n",
        ),
        "service user",
    );
    let tickets = password_and_login(&fx, &alice, "svc", "Serv1ce-pass");
    // Without super, the primary refuses the service user's journal stream.
    protect(
        &alice,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
            "super user alice * //...",
            "read user svc * //...",
        ],
    );
    let env = [("KEEL_TICKETS", tickets.to_str().expect("utf-8"))];
    let replica = Server::start_full(
        &fx.dir.path().join("replica"),
        &env,
        &["--replica-of", &fx.server.addr, "--service-user", "svc"],
    )
    .expect("replica starts");
    let alice_there = replica.client("alice", "", &alice.cwd);
    wait_for("the primary refuses the service user", || {
        let info = alice_there.json(&["info"]);
        crate::common::replica_last_error(&info[0]).contains("Journal needs super access")
    });

    // With super it follows, and the table it applied holds on the replica.
    protect(
        &alice,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
            "super user alice * //...",
            "super user svc * //...",
        ],
    );
    wait_for("the replica applies the table", || {
        let table = alice_there.json(&["protect", "-o"]);
        table[0]["exists"] == true && table[0]["Protections3"] == "super user svc * //..."
    });
    let bob = replica.client("bob", "", &alice.cwd);
    let files: Vec<String> = bob
        .json(&["files", "//depot/..."])
        .iter()
        .map(|r| str_field(r, "depotFile"))
        .collect();
    assert_eq!(files, ["//depot/pub/a"]);
    assert_eq!(alice_there.json(&["files", "//depot/..."]).len(), 2);
}
