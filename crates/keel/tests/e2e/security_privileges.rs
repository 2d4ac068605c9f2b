//! End-to-end: issue 28's rows 2, 7, 9 and 10, each made as the attacker made it, on a
//! server at security 3, and refused with the error a user sees and nothing changed: a user
//! who makes themselves a `service` user (and so would read any content by digest); a label
//! synced or untagged by a user who may not see some of its files; an `add`, `filelog -i` or
//! `integrated` that names or dates a protected file; a `.keel` file added, or synced
//! through a view, and an `add` that follows a symlink out of the workspace.

use crate::auth::As;
use crate::common::{Fixture, str_field, write};
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use std::path::Path;

const ADMIN_PW: &str = "Adm1n-Secur1ty-pw";

/// A security-3 server's super user `admin` (logged in) and the protections table `lines`
/// (`super user admin * //...` is added).
fn level_3(fx: &Fixture, lines: &[&str]) -> As {
    let admin = As::new(fx.server.client("admin", "", fx.dir.path()), fx.dir.path());
    admin.passwd_and_login(ADMIN_PW);
    let mut table = lines.to_vec();
    table.push("super user admin * //...");
    let form = format!("Protections:\n\t{}\n", table.join("\n\t"));
    admin.ok(&["protect", "-i"], &form);
    admin.ok(&["configure", "set", "security=3"], "");
    admin
}

/// `name`, given a password by `admin` and logged in; with workspace `ws` (view
/// `//depot/... //ws/...`, root `<temp>/ws`) when `ws` is not empty.
fn user(fx: &Fixture, admin: &As, name: &str, ws: &str) -> As {
    let pw = format!("{name}-Pass-w0rd");
    let spec = format!("User: {name}\nEmail: {name}@example.com\n");
    admin.ok(&["user", "-f", "-i"], &spec);
    admin.ok(&["passwd", name], &format!("{pw}\n{pw}\n"));
    let cwd = if ws.is_empty() {
        fx.dir.path().to_path_buf()
    } else {
        fx.dir.path().join(ws)
    };
    std::fs::create_dir_all(&cwd).expect("workspace root");
    let who = As::new(fx.server.client(name, ws, &cwd), fx.dir.path());
    who.ok(&["login"], &format!("{pw}\n"));
    if !ws.is_empty() {
        let root = cwd.to_str().expect("utf-8 root");
        let view = format!("//depot/... //{ws}/...");
        who.ok(
            &["workspace", "create", ws, "--root", root, "--view", &view],
            "",
        );
    }
    who
}

/// `--json` records of `args` as `who`.
fn json(who: &As, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    who.ok(&all, "")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `who`'s ticket on its server, from its tickets file (`SERVER=USER:TICKET` lines).
fn ticket(who: &As) -> String {
    let text = std::fs::read_to_string(&who.tickets).expect("tickets file");
    text.lines()
        .find_map(|l| {
            let (server, rest) = l.split_once('=')?;
            let (user, ticket) = rest.rsplit_once(':')?;
            (server == who.client.addr && user == who.client.user).then(|| ticket.to_string())
        })
        .expect("a ticket for the user")
}

/// `Content` of `digest` as `who` with their ticket: the bytes received, or the refusal.
fn fetch(who: &As, digest: &str) -> Result<usize, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ticket = ticket(who);
    rt.block_on(async {
        let mut client = KeelClient::connect(format!("http://{}", who.client.addr))
            .await
            .expect("connects");
        let mut request = tonic::Request::new(pb::ContentRequest {
            caller: Some(pb::Caller {
                user: who.client.user.clone(),
                workspace: String::new(),
                host: "test".into(),
                force: false,
            }),
            digest: digest.to_string(),
            depot_file: String::new(),
            rev: 0,
        });
        request
            .metadata_mut()
            .insert("keel-ticket", ticket.parse().expect("ascii ticket"));
        let status = |s: tonic::Status| format!("{:?}: {}", s.code(), s.message());
        let mut stream = client.content(request).await.map_err(status)?.into_inner();
        let mut bytes = 0;
        while let Some(m) = stream.message().await.map_err(status)? {
            if let Some(pb::content_message::Body::Chunk(c)) = m.body {
                bytes += c.len();
            }
        }
        Ok(bytes)
    })
}

/// The user's Type as `user -o` shows it.
fn user_type(who: &As, name: &str) -> String {
    str_field(&json(who, &["user", "-o", name])[0], "Type")
}

/// Row 2: `keel user -i` with `Type: service` made any user a service user, who may fetch
/// any content by digest. Only a super user sets a Type now; the bypass follows only a type
/// a super user set.
#[test]
fn a_user_cannot_make_themselves_a_service_user() {
    let fx = Fixture::new();
    let admin = level_3(
        &fx,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
        ],
    );
    let alice = user(&fx, &admin, "alice", "alice-ws");
    write(&alice.client.cwd, "secret/s", "the secret\n");
    alice.ok(&["add", "secret/s"], "");
    alice.ok(&["submit", "-d", "secret"], "");
    let digest = str_field(&json(&alice, &["fstat", "//depot/secret/s"])[0], "digest");
    let bob = user(&fx, &admin, "bob", "");
    let refused = |r: Result<usize, String>| {
        let err = r.expect_err("content refused");
        assert!(
            err.contains("PermissionDenied") && err.contains("You don't have permission"),
            "{err}"
        );
    };
    refused(fetch(&bob, &digest));

    // The attack: bob saves his own spec as a service (or operator) user.
    for kind in ["service", "operator"] {
        let spec = format!("User: bob\nEmail: bob@example.com\nFullName: Bob\nType: {kind}\n");
        let err = bob.fail(&["user", "-i"], &spec);
        assert!(
            err.contains(&format!(
                "user bob: only a super user may set Type (asked for {kind}, it stays standard); \
                 nothing was saved"
            )),
            "{err}"
        );
    }
    // Nothing saved: not the type, not the other fields of the refused form.
    assert_eq!(user_type(&admin, "bob"), "standard");
    let spec = json(&admin, &["user", "-o", "bob"]);
    assert_eq!(spec[0].get("FullName"), None, "{spec:?}");
    refused(fetch(&bob, &digest));
    // `-f` is no way round it: it needs a super user.
    let err = bob.fail(
        &["user", "-f", "-i"],
        "User: bob\nEmail: b@example.com\nType: service\n",
    );
    assert!(err.contains("only a super user may set Type"), "{err}");
    // Nor is making a new user of that type.
    let err = bob.fail(
        &["user", "-f", "-i"],
        "User: mallory\nEmail: m@example.com\nType: service\n",
    );
    assert!(err.contains("needs a super user"), "{err}");

    // A super user sets it: then it counts, and bob keeps it when he edits other fields;
    // he may give it up, not take it back.
    admin.ok(
        &["user", "-f", "-i"],
        "User: bob\nEmail: bob@example.com\nType: service\n",
    );
    assert_eq!(user_type(&admin, "bob"), "service");
    assert!(fetch(&bob, &digest).is_ok_and(|n| n > 0));
    bob.ok(
        &["user", "-i"],
        "User: bob\nEmail: bob@new.example.com\nType: service\n",
    );
    assert!(fetch(&bob, &digest).is_ok_and(|n| n > 0));
    let err = bob.fail(
        &["user", "-i"],
        "User: bob\nEmail: bob@example.com\nType: operator\n",
    );
    assert!(
        err.contains("(asked for operator, it stays service)"),
        "{err}"
    );
    bob.ok(
        &["user", "-i"],
        "User: bob\nEmail: bob@example.com\nType: standard\n",
    );
    let err = bob.fail(
        &["user", "-i"],
        "User: bob\nEmail: bob@example.com\nType: service\n",
    );
    assert!(err.contains("only a super user may set Type"), "{err}");
    refused(fetch(&bob, &digest));
}

/// `(depotFile, rev)` of the records.
fn revs(records: &[serde_json::Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "rev")))
        .collect()
}

/// Row 7: bob, who may not see `//depot/secret/...`, listed and emptied alice's label with
/// `labelsync` (even `-n`) and `tag -d`. Entries of files he may not list are neither shown
/// nor changed; only alice (or a super user with -f) changes or deletes her label.
#[test]
fn labels_keep_and_hide_the_entries_of_files_the_caller_may_not_list() {
    let fx = Fixture::new();
    let admin = level_3(
        &fx,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
        ],
    );
    let alice = user(&fx, &admin, "alice", "alice-ws");
    for f in ["pub/a", "secret/s1", "secret/s2"] {
        write(&alice.client.cwd, f, "one\n");
    }
    alice.ok(&["add", "pub/a", "secret/s1", "secret/s2"], "");
    alice.ok(&["submit", "-d", "one"], "");
    alice.ok(&["tag", "-l", "rel", "//depot/..."], "");
    alice.ok(&["edit", "//depot/..."], "");
    for f in ["pub/a", "secret/s1", "secret/s2"] {
        write(&alice.client.cwd, f, "two\n");
    }
    alice.ok(&["submit", "-d", "two"], "");
    let holds = |who: &As| revs(&json(who, &["files", "//depot/...@rel"]));
    let all_at_1 = holds(&alice);
    assert_eq!(all_at_1.len(), 3, "{all_at_1:?}");

    let bob = user(&fx, &admin, "bob", "bob-ws");
    // Previews name only what bob may see, in text and JSON.
    for args in [
        &["labelsync", "-n", "-l", "rel"][..],
        &["tag", "-n", "-l", "rel", "//depot/..."][..],
        &["tag", "-d", "-n", "-l", "rel", "//depot/..."][..],
    ] {
        let text = bob.ok(args, "");
        assert!(text.contains("//depot/pub/a"), "{args:?}: {text}");
        assert!(!text.contains("secret"), "{args:?}: {text}");
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let records = bob.ok(&with_json, "");
        assert!(!records.contains("secret"), "{args:?}: {records}");
    }
    assert_eq!(holds(&alice), all_at_1);
    // Untagging the secret files: as if there were none.
    let err = bob.fail(&["tag", "-d", "-l", "rel", "//depot/secret/..."], "");
    assert!(
        err.contains("//depot/secret/... - no such file(s)"),
        "{err}"
    );
    let nothing = bob.fail(&["tag", "-d", "-l", "rel", "//depot/nothing/..."], "");
    assert_eq!(
        err.replace("secret", "X"),
        nothing.replace("nothing", "X"),
        "the refusals differ"
    );
    // The attack itself: untag everything, then labelsync part of the depot.
    let untagged = bob.ok(&["tag", "-d", "-l", "rel", "//depot/..."], "");
    assert!(!untagged.contains("secret"), "{untagged}");
    let synced = bob.ok(&["labelsync", "-l", "rel", "//depot/..."], "");
    assert!(!synced.contains("secret"), "{synced}");
    // alice's entries for the files bob may not see are as she left them; bob's own view of
    // the label shows only what he may list.
    let after = holds(&alice);
    assert!(
        after.contains(&("//depot/secret/s1".into(), "1".into())),
        "{after:?}"
    );
    assert!(
        after.contains(&("//depot/secret/s2".into(), "1".into())),
        "{after:?}"
    );
    assert!(
        after.contains(&("//depot/pub/a".into(), "2".into())),
        "{after:?}"
    );
    assert_eq!(
        holds(&bob),
        [("//depot/pub/a".to_string(), "2".to_string())]
    );

    // The spec is alice's: bob may neither delete it nor force it.
    let err = bob.fail(&["label", "delete", "rel"], "");
    assert!(
        err.contains(
            "label 'rel' belongs to alice; only its owner (or a super user with -f) can \
             change or delete it"
        ),
        "{err}"
    );
    let err = bob.fail(&["label", "delete", "-f", "rel"], "");
    assert!(err.contains("label 'rel': -f needs super access"), "{err}");
    assert_eq!(holds(&alice), after);
    // A locked label: not even its owner changes its files or deletes it; a super user
    // deletes it with -f.
    alice.ok(&["label", "create", "frozen", "--locked"], "");
    alice.ok(&["label", "create", "frozen2"], "");
    let err = alice.fail(&["label", "delete", "frozen"], "");
    assert!(err.contains("label 'frozen' is locked"), "{err}");
    let err = bob.fail(&["tag", "-l", "frozen", "//depot/pub/a"], "");
    assert!(err.contains("label 'frozen' is locked"), "{err}");
    admin.ok(&["label", "delete", "-f", "frozen"], "");
    alice.ok(&["label", "delete", "frozen2"], "");
    let left: Vec<String> = json(&alice, &["labels"])
        .iter()
        .map(|l| str_field(l, "label"))
        .collect();
    assert_eq!(left, ["rel"]);
}

/// Row 9: `add` of a protected file answered `can't add existing file (head #2)`; `filelog -i`
/// and `integrated` named protected sources. Now the refusal is the same as for a file that
/// does not exist, and records naming a file the caller may not list are left out.
#[test]
fn add_filelog_and_integrated_tell_nothing_of_protected_files() {
    let fx = Fixture::new();
    let admin = level_3(
        &fx,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
        ],
    );
    let alice = user(&fx, &admin, "alice", "alice-ws");
    write(&alice.client.cwd, "secret/s", "one\n");
    alice.ok(&["add", "secret/s"], "");
    alice.ok(&["submit", "-d", "one"], "");
    alice.ok(&["edit", "secret/s"], "");
    write(&alice.client.cwd, "secret/s", "two\n");
    alice.ok(&["submit", "-d", "two"], "");
    alice.ok(&["integrate", "//depot/secret/s", "//depot/pub/copy"], "");
    alice.ok(&["submit", "-d", "published"], "");

    let bob = user(&fx, &admin, "bob", "bob-ws");
    write(&bob.client.cwd, "secret/s", "mine\n");
    write(&bob.client.cwd, "secret/new", "mine\n");
    let existing = bob.fail(&["add", "secret/s"], "");
    let missing = bob.fail(&["add", "secret/new"], "");
    for err in [&existing, &missing] {
        assert!(err.contains("You don't have permission"), "{err}");
        assert!(
            !err.contains("existing") && !err.contains("head") && !err.contains("#2"),
            "{err}"
        );
    }
    assert_eq!(
        existing.replace("secret/s", "X"),
        missing.replace("secret/new", "X"),
        "the refusals differ"
    );
    assert!(json(&bob, &["opened"]).is_empty());

    // bob may read the copy, not its source.
    let log = bob.ok(&["filelog", "-i", "//depot/pub/copy"], "");
    assert!(log.contains("//depot/pub/copy"), "{log}");
    assert!(!log.contains("secret"), "{log}");
    let log = bob.ok(&["--json", "filelog", "-i", "//depot/pub/copy"], "");
    assert!(!log.contains("secret"), "{log}");
    let err = bob.fail(&["integrated", "//depot/pub/copy"], "");
    assert!(!err.contains("secret"), "{err}");
    // alice sees both.
    let log = alice.ok(&["filelog", "-i", "//depot/pub/copy"], "");
    assert!(log.contains("//depot/secret/s"), "{log}");
    let integ = alice.ok(&["integrated", "//depot/pub/copy"], "");
    assert!(integ.contains("//depot/secret/s"), "{integ}");
}

/// Whether `path` exists (a dangling symlink counts).
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Row 10: a `.keel` file submitted to the depot redirected the next client that synced it
/// to another server. The server refuses to add, move or integrate into a reserved name,
/// and the client refuses to write one whatever the server sends (here, a view that maps a
/// depot file onto `.keel`).
#[test]
fn reserved_file_names_are_never_added_nor_written_by_a_sync() {
    let fx = Fixture::new();
    let admin = level_3(&fx, &["write user * * //..."]);
    let alice = user(&fx, &admin, "alice", "alice-ws");
    let redirect = "KEEL_SERVER=127.0.0.1:9\n";
    write(&alice.client.cwd, ".keel", redirect);
    write(&alice.client.cwd, "sub/.keel", redirect);
    write(&alice.client.cwd, "sub/.keel-state", "x");
    write(&alice.client.cwd, "cfg/evil", redirect);
    write(&alice.client.cwd, "cfg/ok", "fine\n");
    write(&alice.client.cwd, "cfg/other", "other\n");
    for (arg, name) in [
        ("//alice-ws/.keel", ".keel"),
        ("sub/.keel", ".keel"),
        ("sub/.keel-state", ".keel-state"),
    ] {
        let err = alice.fail(&["add", arg], "");
        assert!(
            err.contains(&format!(
                "'{name}' is a file name Keel reserves for its client's own files; such a file \
                 cannot be added to the depot"
            )),
            "{arg}: {err}"
        );
    }
    assert!(json(&alice, &["opened"]).is_empty());
    // A directory add skips them, as it skips the workspace's own files.
    let added = alice.ok(&["add", "..."], "");
    assert!(!added.contains(".keel"), "{added}");
    assert!(
        added.contains("cfg/evil") && added.contains("cfg/ok"),
        "{added}"
    );
    alice.ok(&["submit", "-d", "files"], "");
    // Nor does a move or an integrate make one.
    alice.ok(&["edit", "cfg/evil"], "");
    let err = alice.fail(&["move", "cfg/evil", "cfg/.keel"], "");
    assert!(
        err.contains("'.keel' is a file name Keel reserves"),
        "{err}"
    );
    alice.ok(&["revert", "cfg/evil"], "");
    let err = alice.fail(
        &["integrate", "//depot/cfg/evil", "//depot/x/.keel-have"],
        "",
    );
    assert!(
        err.contains("'.keel-have' is a file name Keel reserves"),
        "{err}"
    );
    assert!(json(&alice, &["opened"]).is_empty());
    let depot: Vec<String> = json(&alice, &["files", "//depot/..."])
        .iter()
        .map(|f| str_field(f, "depotFile"))
        .collect();
    assert_eq!(
        depot,
        ["//depot/cfg/evil", "//depot/cfg/ok", "//depot/cfg/other"]
    );

    // A view mapping depot files onto reserved names: the client refuses to write them.
    let root = fx.dir.path().join("mapped");
    std::fs::create_dir_all(&root).expect("root");
    let mut client = alice.client.clone();
    client.workspace = "mapped".into();
    client.cwd = root.clone();
    let mapped = As {
        client,
        tickets: alice.tickets.clone(),
    };
    let root_text = root.to_str().expect("utf-8");
    mapped.ok(
        &[
            "workspace",
            "create",
            "mapped",
            "--root",
            root_text,
            "--view",
            "//depot/cfg/ok //mapped/ok",
            "--view",
            "//depot/cfg/evil //mapped/.keel",
            "--view",
            "//depot/cfg/other //mapped/d/.keel-have",
        ],
        "",
    );
    let out = mapped.run(&["sync"], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "sync reported success: {err}");
    assert!(
        err.contains("refusing to write \".keel\": '.keel' is a file name Keel reserves"),
        "{err}"
    );
    assert!(err.contains("refusing to write \"d/.keel-have\""), "{err}");
    assert!(!exists(&root.join(".keel")) && !exists(&root.join("d/.keel-have")));
    assert_eq!(
        std::fs::read_to_string(root.join("ok")).expect("synced"),
        "fine\n"
    );
    // Only the file written is had; the client still talks to the real server.
    let had: Vec<String> = json(&mapped, &["have"])
        .iter()
        .map(|f| str_field(f, "depotFile"))
        .collect();
    assert_eq!(had, ["//depot/cfg/ok"]);
    mapped.ok(&["info"], "");
}

/// Row 10: `keel add LINK-TO-DIR` followed the link and opened 1,052 files of `/etc`. A
/// symlink is added as itself; a path through one that leads out of the workspace is refused.
#[test]
fn add_never_follows_a_symlink_out_of_the_workspace() {
    let fx = Fixture::new();
    let admin = level_3(&fx, &["write user * * //..."]);
    let alice = user(&fx, &admin, "alice", "alice-ws");
    let outside = fx.dir.path().join("outside");
    for f in ["passwd", "shadow", "sub/hosts"] {
        write(&outside, f, "private\n");
    }
    let root = alice.client.cwd.clone();
    std::os::unix::fs::symlink(&outside, root.join("etc-link")).expect("symlink");
    std::os::unix::fs::symlink("/etc", root.join("real-etc")).expect("symlink");
    write(&root, "a.txt", "a\n");

    let opened = |who: &As| -> Vec<(String, String)> {
        json(who, &["opened"])
            .iter()
            .map(|r| (str_field(r, "depotFile"), str_field(r, "type")))
            .collect()
    };
    for arg in [
        "etc-link/...",
        "etc-link/passwd",
        "etc-link/sub",
        "real-etc/...",
    ] {
        let err = alice.fail(&["add", arg], "");
        assert!(
            err.contains("leads through a symlink to")
                && err.contains("outside the workspace root"),
            "{arg}: {err}"
        );
        assert!(opened(&alice).is_empty(), "{arg}");
    }
    // The link itself is a file of type symlink, never walked: by name or in a directory add.
    alice.ok(&["add", "etc-link"], "");
    assert_eq!(
        opened(&alice),
        [("//depot/etc-link".to_string(), "symlink".to_string())]
    );
    alice.ok(&["add", "..."], "");
    let files: Vec<String> = opened(&alice).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        files,
        ["//depot/a.txt", "//depot/etc-link", "//depot/real-etc"]
    );
    alice.ok(&["submit", "-d", "links"], "");
    assert_eq!(
        std::fs::read_link(root.join("etc-link")).expect("still a link"),
        outside
    );
}
