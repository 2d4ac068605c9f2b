//! End-to-end: groups and their limits, and the protections table, through the real CLI.
//! Files a user may not list do not exist for them; refusals name the file and the level and
//! change nothing; group limits stop a command before it changes anything.

use crate::common::{Client, Fixture, str_field, write};

/// Saves a protections table as `client` (`protect -i`), expecting success.
pub(crate) fn protect(client: &Client, lines: &[&str]) {
    let form = format!("Protections:\n\t{}\n", lines.join("\n\t"));
    let out = client.run_stdin(&["protect", "-i"], &form);
    assert!(
        out.status.success(),
        "protect -i failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Saves a group from form text as `client` (`group -i NAME`); returns the output.
fn group(client: &Client, name: &str, fields: &str) -> std::process::Output {
    client.run_stdin(&["group", "-i", name], &format!("Group:\t{name}\n{fields}"))
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// alice submits `//depot/pub/a`, `//depot/pub/b` and `//depot/secret/s`.
fn tree(fx: &Fixture) -> Client {
    let ws = fx.workspace("alice", "alice-ws");
    write(&ws.cwd, "pub/a", "a\n");
    write(&ws.cwd, "pub/b", "b\n");
    write(&ws.cwd, "secret/s", "s\n");
    ws.ok(&["add", "pub/a", "pub/b", "secret/s"]);
    ws.ok(&["submit", "-d", "three files"]);
    ws
}

fn depot_files(client: &Client, arg: &str) -> Vec<String> {
    client
        .json(&["files", arg])
        .iter()
        .map(|r| str_field(r, "depotFile"))
        .collect()
}

#[test]
fn files_a_user_may_not_list_do_not_exist_for_them() {
    let fx = Fixture::new();
    let alice = tree(&fx);
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    assert!(bob.cwd.join("secret/s").exists());
    protect(
        &alice,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
            "super user alice * //...",
        ],
    );
    assert_eq!(
        depot_files(&bob, "//depot/..."),
        ["//depot/pub/a", "//depot/pub/b"]
    );
    assert_eq!(depot_files(&alice, "//depot/...").len(), 3);
    for args in [
        vec!["fstat", "//depot/secret/s"],
        vec!["print", "//depot/secret/s"],
        vec!["filelog", "//depot/secret/s"],
    ] {
        let err = bob.fail(&args);
        assert!(err.contains("no such file"), "{args:?}: {err}");
    }
    let dirs: Vec<String> = bob
        .json(&["dirs", "//depot/*"])
        .iter()
        .map(|r| str_field(r, "dir"))
        .collect();
    assert_eq!(dirs, ["//depot/pub"]);
    let described = bob.ok(&["describe", "-s", "1"]);
    assert!(described.contains("//depot/pub/a"), "{described}");
    assert!(!described.contains("secret"), "{described}");
    // A sync takes away the file bob may no longer see, and keeps the rest (the mark the first
    // sync left on the have list is not used once a table exists: no change made it stale).
    bob.ok(&["sync"]);
    assert!(!bob.cwd.join("secret/s").exists());
    assert!(bob.cwd.join("pub/a").exists());
}

#[test]
fn refusals_name_the_file_and_level_and_change_nothing() {
    let fx = Fixture::new();
    let alice = tree(&fx);
    protect(
        &alice,
        &[
            "read user carol * //...",
            "open user carol * //depot/secret/...",
            "read user ruth * //...",
            "open user dave * //...",
            "write user dave * //depot/secret/...",
            "write user erin * //...",
            "super user alice * //...",
        ],
    );
    let carol = fx.workspace("carol", "carol-ws");
    carol.ok(&["sync"]);
    let err = carol.fail(&["edit", "pub/a"]);
    assert!(
        err.contains(
            "//depot/pub/a - You don't have permission for this operation (needs open access)"
        ),
        "{err}"
    );
    assert!(carol.json(&["opened"]).is_empty());
    // With no open access anywhere the command is refused before any file is looked at.
    let ruth = fx.workspace("ruth", "ruth-ws");
    let err = ruth.fail(&["edit", "//depot/pub/a"]);
    assert!(
        err.contains("You don't have permission for this operation: Open needs open access"),
        "{err}"
    );

    // dave may open but not submit: the submit is refused and the change stays as it was.
    let dave = fx.workspace("dave", "dave-ws");
    dave.ok(&["sync"]);
    dave.ok(&["edit", "pub/a"]);
    write(&dave.cwd, "pub/a", "dave's\n");
    let err = dave.fail(&["submit", "-d", "not allowed"]);
    assert!(
        err.contains(
            "//depot/pub/a - You don't have permission for this operation (needs write access)"
        ),
        "{err}"
    );
    assert_eq!(dave.json(&["opened"]).len(), 1);
    assert_eq!(alice.json(&["changes", "-s", "submitted"]).len(), 1);

    // Obliterate needs admin; protect needs super.
    let erin = fx.workspace("erin", "erin-ws");
    let err = erin.fail(&["obliterate", "-y", "//depot/pub/a"]);
    assert!(err.contains("needs admin access"), "{err}");
    let err = erin.fail(&["protect", "-o"]);
    assert!(err.contains("needs super access"), "{err}");
    assert_eq!(depot_files(&alice, "//depot/...").len(), 3);
}

#[test]
fn the_table_is_checked_when_saved_and_hosts_match_the_client_address() {
    let fx = Fixture::new();
    let alice = tree(&fx);
    // Before any table everyone is a super user, and -o offers a first table.
    let offered = alice.ok(&["protect", "-o"]);
    assert!(offered.contains("super user alice * //..."), "{offered}");
    protect(
        &alice,
        &[
            "read user frank 127.0.0.0/8 //...",
            "read user gina 10.0.0.0/8 //...",
            "super user alice * //...",
        ],
    );
    // A bad line is refused naming it; the table stays.
    let out = alice.run_stdin(
        &["protect", "-i"],
        "Protections:\n\tsuper user alice * //...\n\twrte user x * //...\n",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("protections line 2"),
        "{}",
        stderr(&out)
    );
    // A table that would leave its author without super is refused.
    let out = alice.run_stdin(&["protect", "-i"], "Protections:\n\twrite user * * //...\n");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("without super access"),
        "{}",
        stderr(&out)
    );
    let table = alice.json(&["protect", "-o"]);
    assert_eq!(
        str_field(&table[0], "Protections0"),
        "read user frank 127.0.0.0/8 //..."
    );

    let frank = fx.server.client("frank", "", &alice.cwd);
    let gina = fx.server.client("gina", "", &alice.cwd);
    assert_eq!(depot_files(&frank, "//depot/...").len(), 3);
    let err = gina.fail(&["files", "//depot/..."]);
    assert!(err.contains("You don't have permission"), "{err}");

    // protects: the caller's own lines; -a and -u are for super users.
    let mine = frank.json(&["protects"]);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(str_field(&mine[0], "perm"), "read");
    assert!(
        frank
            .fail(&["protects", "-a"])
            .contains("needs super access")
    );
    let all = alice.json(&["protects", "-a"]);
    assert_eq!(all.len(), 3);
    let of_gina = alice.json(&["protects", "-u", "gina", "-h", "10.1.2.3"]);
    assert_eq!(of_gina.len(), 1, "{of_gina:?}");
}

#[test]
fn group_limits_stop_commands_and_the_most_permissive_applies() {
    let fx = Fixture::new();
    let alice = tree(&fx);
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    let out = group(&alice, "small", "MaxResults:\t2\nUsers:\n\tbob\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let err = bob.fail(&["files", "//depot/..."]);
    assert!(
        err.contains("Request too large (over 2); see 'keel help maxresults'."),
        "{err}"
    );
    assert_eq!(depot_files(&bob, "//depot/pub/a").len(), 1);
    assert_eq!(depot_files(&alice, "//depot/...").len(), 3);

    // A second group with no limit: the most permissive applies.
    let out = group(&alice, "big", "MaxResults:\tunlimited\nUsers:\n\tbob\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(depot_files(&bob, "//depot/...").len(), 3);
    alice.ok(&["group", "-d", "big"]);

    // MaxScanRows counts rows read, MaxOpenFiles files one command opens.
    let out = group(&alice, "small", "MaxScanRows:\t1\nUsers:\n\tbob\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let err = bob.fail(&["files", "//depot/pub/..."]);
    assert!(err.contains("Too many rows scanned (over 1)"), "{err}");
    let out = group(&alice, "small", "MaxOpenFiles:\t1\nUsers:\n\tbob\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let err = bob.fail(&["edit", "//depot/..."]);
    assert!(err.contains("Opening too many files (over 1)"), "{err}");
    assert!(bob.json(&["opened"]).is_empty());

    // groups [USER], group -o, --json.
    let listed: Vec<String> = bob
        .json(&["groups", "bob"])
        .iter()
        .map(|g| str_field(g, "group"))
        .collect();
    assert_eq!(listed, ["small"]);
    let shown = alice.json(&["group", "-o", "small"]);
    assert_eq!(str_field(&shown[0], "MaxOpenFiles"), "1");
    assert_eq!(str_field(&shown[0], "Users0"), "bob");
    // Only its owners or a super user may change a group.
    protect(
        &alice,
        &["write user * * //...", "super user alice * //..."],
    );
    let out = group(&bob, "small", "Users:\n\tbob\n");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("needs super access"),
        "{}",
        stderr(&out)
    );
    let err = alice.fail(&["group", "-d", "nosuch"]);
    assert!(err.contains("group 'nosuch' does not exist"), "{err}");
}
