//! End-to-end: workspaces and pending changes belong to their owner (issue 28, row 1). A
//! hostile user, carol, tries what took over alice's and bob's workspaces: rewriting the spec,
//! using it with `-w` to revert, delete shelves, delete or submit a change, deleting bob's
//! workspace. Each is refused with the workspace's owner named, nothing changes, and no output
//! names a file carol may not list; a super user may with `-f` / `--override-owner`, never in a
//! `locked` workspace. The client refuses to write files into a Root moved elsewhere unless
//! asked with `--root-moved-ok`.

use crate::common::{Client, Fixture, str_field, write};
use std::process::Output;

fn protect(admin: &Client, lines: &[&str]) {
    let form = format!("Protections:\n\t{}\n", lines.join("\n\t"));
    let out = admin.run_stdin(&["protect", "-i"], &form);
    assert!(out.status.success(), "protect -i: {}", text(&out));
}

/// Both streams of a command's output.
fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command that must be refused; returns everything it printed.
fn refused(c: &Client, args: &[&str]) -> String {
    let out = c.run(args);
    assert!(!out.status.success(), "keel {args:?} was not refused");
    text(&out)
}

fn spec_field(c: &Client, name: &str, field: &str) -> String {
    let spec = c.json(&["workspace", "show", name]);
    str_field(&spec[0], field)
}

/// The world of the attack: alice's workspace with two files opened and shelved in change 3
/// (one under `//depot/secret/`, which carol may not list), bob's workspace synced, carol's
/// own workspace, and a protections table where only `admin` is a super user.
struct World {
    fx: Fixture,
    admin: Client,
    alice: Client,
    bob: Client,
    /// carol, naming alice's workspace (`-w alice-ws`), run from her own directory.
    carol_as_alice: Client,
}

fn world() -> World {
    let fx = Fixture::new();
    let admin = fx.server.client("admin", "", fx.dir.path());
    let alice = fx.workspace("alice", "alice-ws");
    write(&alice.cwd, "a.txt", "alice's\n");
    write(&alice.cwd, "secret/s.txt", "secret\n");
    alice.ok(&["add", "a.txt", "secret/s.txt"]);
    alice.ok(&["submit", "-d", "first"]);
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    alice.ok(&["edit", "a.txt", "secret/s.txt"]);
    write(&alice.cwd, "a.txt", "alice's, edited\n");
    let out = alice.ok(&["shelve"]);
    assert!(out.contains("Change 2 created."), "{out}");
    protect(
        &admin,
        &[
            "write user * * //...",
            "list user carol * -//depot/secret/...",
            "super user admin * //...",
        ],
    );
    let carol_dir = fx.dir.path().join("carol-home");
    std::fs::create_dir_all(&carol_dir).expect("carol's directory");
    let carol_as_alice = fx.server.client("carol", "alice-ws", &carol_dir);
    World {
        fx,
        admin,
        alice,
        bob,
        carol_as_alice,
    }
}

/// What must not change under an attack: alice's spec, opened files and shelf, bob's have list.
fn snapshot(w: &World) -> (String, String, usize, String, usize) {
    let root = spec_field(&w.alice, "alice-ws", "Root");
    let options = spec_field(&w.alice, "alice-ws", "Options");
    let opened = w.alice.json(&["opened"]).len();
    let shelf = w.alice.ok(&["describe", "-S", "-s", "2"]);
    let have = w.bob.json(&["have"]).len();
    (root, options, opened, shelf, have)
}

#[test]
fn another_users_workspace_and_changes_are_refused_and_left_as_they_were() {
    let w = world();
    let before = snapshot(&w);
    assert_eq!(before.2, 2, "alice has two files opened");
    assert_eq!(before.4, 2, "bob has two files");
    let carol = &w.carol_as_alice;
    let evil = w.fx.dir.path().join("carol-chose-this");
    let evil_root = evil.to_str().expect("utf-8");

    // Rewriting alice's spec: Root, Options, Owner.
    let err = refused(
        carol,
        &[
            "workspace",
            "create",
            "alice-ws",
            "--root",
            evil_root,
            "--options",
            "clobber",
            "--owner",
            "alice",
        ],
    );
    assert!(
        err.contains("workspace 'alice-ws' belongs to alice: only its owner may"),
        "{err}"
    );
    let err = refused(carol, &["workspace", "delete", "alice-ws"]);
    assert!(err.contains("belongs to alice"), "{err}");
    // -f is a super user's: carol's is ignored.
    let err = refused(carol, &["workspace", "delete", "-f", "alice-ws"]);
    assert!(err.contains("belongs to alice"), "{err}");
    // A new workspace given to someone else.
    let err = refused(
        carol,
        &[
            "workspace",
            "create",
            "gift-ws",
            "--root",
            evil_root,
            "--owner",
            "alice",
        ],
    );
    assert!(
        err.contains("Owner 'alice' is not you (carol); only a super user may"),
        "{err}"
    );

    // Using alice's workspace: every command is refused by the server, even with the client's
    // root check waived; none names the file carol may not list.
    let attacks: [&[&str]; 9] = [
        &["--root-moved-ok", "revert", "//alice-ws/..."],
        &["--root-moved-ok", "sync"],
        &["--override-owner", "opened"],
        &["shelve", "-d", "-c", "2"],
        &["shelve", "-d", "-f", "-c", "2"],
        &["change", "-D", "2"],
        &["--root-moved-ok", "submit", "-c", "2"],
        &["--root-moved-ok", "edit", "//depot/a.txt"],
        &["have"],
    ];
    for args in attacks {
        let err = refused(carol, args);
        assert!(
            err.contains("workspace 'alice-ws' belongs to alice"),
            "keel {args:?}: {err}"
        );
        assert!(!err.contains("s.txt"), "keel {args:?} named it: {err}");
    }
    // Bob's workspace.
    let carol = w.fx.server.client("carol", "", w.fx.dir.path());
    let err = refused(&carol, &["workspace", "delete", "bob-ws"]);
    assert!(err.contains("workspace 'bob-ws' belongs to bob"), "{err}");

    assert_eq!(snapshot(&w), before, "an attack changed something");
    assert!(!evil.exists(), "nothing was written where carol chose");
    assert_eq!(
        w.alice.json(&["changes", "-s", "pending"])[0]["user"],
        "alice"
    );

    // The super user may, with -f / --override-owner.
    let admin_as_alice = w.fx.server.client("admin", "alice-ws", w.fx.dir.path());
    let err = refused(&admin_as_alice, &["opened"]);
    assert!(err.contains("belongs to alice"), "{err}");
    assert_eq!(
        admin_as_alice.json(&["--override-owner", "opened"]).len(),
        2
    );
    let err = refused(&w.admin, &["workspace", "delete", "bob-ws"]);
    assert!(err.contains("belongs to bob"), "{err}");
    w.admin.ok(&["workspace", "delete", "-f", "bob-ws"]);
    let gone = refused(&w.admin, &["workspace", "show", "bob-ws"]);
    assert!(gone.contains("does not exist"), "{gone}");
}

#[test]
fn a_locked_workspace_is_used_by_its_owner_only() {
    let w = world();
    let root = w.alice.cwd.to_str().expect("utf-8").to_string();
    w.alice.ok(&[
        "workspace",
        "create",
        "alice-ws",
        "--root",
        &root,
        "--options",
        "locked",
    ]);
    assert!(spec_field(&w.alice, "alice-ws", "Options").ends_with(" locked"));
    assert_eq!(w.alice.json(&["opened"]).len(), 2, "the owner uses it");
    let admin_as_alice = w.fx.server.client("admin", "alice-ws", w.fx.dir.path());
    let err = refused(&admin_as_alice, &["--override-owner", "opened"]);
    assert!(
        err.contains("workspace 'alice-ws' is locked: only its owner alice may use it"),
        "{err}"
    );
    let err = refused(&w.carol_as_alice, &["workspace", "delete", "alice-ws"]);
    assert!(
        err.contains("workspace 'alice-ws' is locked; only its owner alice can change it"),
        "{err}"
    );
    // The super user's way in is visible: unlock the spec with -f, then override.
    w.admin.ok(&[
        "workspace",
        "create",
        "alice-ws",
        "-f",
        "--owner",
        "alice",
        "--root",
        &root,
        "--options",
        "unlocked",
    ]);
    assert_eq!(
        admin_as_alice.json(&["--override-owner", "opened"]).len(),
        2
    );
}

#[test]
fn a_root_moved_behind_the_owners_back_is_not_written_without_root_moved_ok() {
    let w = world();
    let moved = w.fx.dir.path().join("moved-root");
    let moved_root = moved.to_str().expect("utf-8");
    // A super user moves alice's root (carol could not: refused above).
    w.admin.ok(&[
        "workspace",
        "create",
        "alice-ws",
        "-f",
        "--owner",
        "alice",
        "--root",
        moved_root,
    ]);
    let err = refused(&w.alice, &["sync", "-f"]);
    assert!(err.contains("workspace alice-ws has Root"), "{err}");
    assert!(err.contains(moved_root), "{err}");
    assert!(err.contains(w.alice.cwd.to_str().expect("utf-8")), "{err}");
    assert!(err.contains("--root-moved-ok"), "{err}");
    for args in [
        &["revert", "a.txt"][..],
        &["unshelve", "-s", "2"],
        &["resolve", "-am"],
    ] {
        let err = refused(&w.alice, args);
        assert!(
            err.contains("refusing to write files there"),
            "{args:?}: {err}"
        );
    }
    // `workspace create` made the new root (empty); nothing refused wrote into it.
    let written = std::fs::read_dir(&moved).map_or(0, |d| d.count());
    assert_eq!(written, 0, "nothing written in the moved root");
    assert_eq!(w.alice.json(&["opened"]).len(), 2, "revert changed nothing");
    // Asked for: the sync writes into the new root.
    write(&w.bob.cwd, "b.txt", "bob's\n");
    w.bob.ok(&["add", "b.txt"]);
    w.bob.ok(&["submit", "-d", "bob's file"]);
    w.alice.ok(&["--root-moved-ok", "sync", "//depot/b.txt"]);
    assert!(moved.join("b.txt").is_file());
}

#[test]
fn revert_and_shelve_delete_skip_and_never_name_files_the_caller_may_not_list() {
    let fx = Fixture::new();
    let admin = fx.server.client("admin", "", fx.dir.path());
    let carol = fx.workspace("carol", "carol-ws");
    write(&carol.cwd, "open.txt", "1\n");
    write(&carol.cwd, "secret/hidden.txt", "1\n");
    carol.ok(&["add", "open.txt", "secret/hidden.txt"]);
    carol.ok(&["submit", "-d", "two files"]);
    carol.ok(&["edit", "open.txt", "secret/hidden.txt"]);
    carol.ok(&["shelve"]);
    // carol then loses sight of //depot/secret/.
    protect(
        &admin,
        &[
            "write user * * //...",
            "list user carol * -//depot/secret/...",
            "super user admin * //...",
        ],
    );
    let out = carol.run(&["shelve", "-d", "-c", "2"]);
    assert!(out.status.success(), "{}", text(&out));
    let printed = text(&out);
    assert!(printed.contains("//depot/open.txt"), "{printed}");
    assert!(!printed.contains("hidden"), "{printed}");
    let out = carol.run(&["revert", "//carol-ws/..."]);
    assert!(out.status.success(), "{}", text(&out));
    let printed = text(&out);
    assert!(printed.contains("open.txt"), "{printed}");
    assert!(!printed.contains("hidden"), "{printed}");
    // Only the file she may see was touched: the hidden one stays shelved and opened.
    let shelf = admin.ok(&["describe", "-S", "-s", "2"]);
    assert!(shelf.contains("//depot/secret/hidden.txt"), "{shelf}");
    assert!(!shelf.contains("//depot/open.txt"), "{shelf}");
    let opened = admin.json(&["opened", "-a"]);
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(
        str_field(&opened[0], "depotFile"),
        "//depot/secret/hidden.txt"
    );
    // Naming only the hidden file is "not opened", not its name echoed from the server.
    let err = refused(&carol, &["revert", "//depot/secret/..."]);
    assert!(err.contains("not opened"), "{err}");
}

#[test]
fn at_security_3_a_logged_in_user_is_still_refused_another_users_workspace() {
    let w = world();
    let dir = w.fx.dir.path().to_path_buf();
    let tickets = |name: &str| dir.join(format!("tickets-{name}"));
    let run = |c: &Client, name: &str, args: &[&str], stdin: &str| {
        let file = tickets(name);
        c.run_with(
            args,
            &[("KEEL_TICKETS", file.to_str().expect("utf-8"))],
            stdin,
        )
    };
    let must = |out: Output, what: &str| {
        assert!(out.status.success(), "{what}: {}", text(&out));
        text(&out)
    };
    let password = |name: &str| format!("{name}-Passw0rd");
    must(
        run(
            &w.admin,
            "admin",
            &["user", "-f", "-i"],
            "User: carol\nEmail: carol@example.com\n",
        ),
        "carol's spec",
    );
    // The admin's own password last: from then on the admin needs a ticket too.
    for name in ["alice", "carol", "admin"] {
        let pw = format!("{0}\n{0}\n", password(name));
        must(run(&w.admin, "admin", &["passwd", name], &pw), "passwd");
    }
    for (c, name) in [
        (&w.admin, "admin"),
        (&w.alice, "alice"),
        (&w.carol_as_alice, "carol"),
    ] {
        must(
            run(c, name, &["login"], &format!("{}\n", password(name))),
            "login",
        );
    }
    must(
        run(&w.admin, "admin", &["configure", "set", "security=3"], ""),
        "security=3",
    );
    let alice_opened = must(run(&w.alice, "alice", &["opened"], ""), "alice's opened");
    for args in [
        &["--root-moved-ok", "revert", "//alice-ws/..."][..],
        &["shelve", "-d", "-c", "2"],
        &["workspace", "delete", "alice-ws"],
    ] {
        let out = run(&w.carol_as_alice, "carol", args, "");
        assert!(!out.status.success(), "keel {args:?} was not refused");
        let err = text(&out);
        assert!(err.contains("belongs to alice"), "keel {args:?}: {err}");
        assert!(!err.contains("s.txt"), "keel {args:?}: {err}");
    }
    assert_eq!(
        must(run(&w.alice, "alice", &["opened"], ""), "alice's opened"),
        alice_opened
    );
}
