//! P4 clients' branching commands through P4Python: `integrate` (branching a file, its content
//! written to the workspace), `copy` onto an existing target (content written), `merge`
//! (opened for integrate, left to resolve), previews and errors, checked on disk and through
//! the native CLI.

use crate::common::{str_field, workspace_on, write};
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn integrate_copy_and_merge_open_targets_and_write_branched_content() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "one\n");
    w.ok(&["add", "a.txt"]);
    w.ok(&["submit", "-d", "first"]);
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "one\ntwo\n");
    w.ok(&["submit", "-d", "second"]);
    let root = s.home.path().join("p4ws");
    let br = root.join("br/a.txt");
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["integrate", "-n", "//depot/a.txt", "//depot/br/a.txt"], "tagged": false}),
        json!({"cmd": ["integrate", "//depot/a.txt", "//depot/br/a.txt"]}),
        json!({"cmd": ["integrate", "//depot/a.txt"]}),
    ]);
    ok(&r[0]);
    assert_eq!(
        ok(&r[1]),
        &json!(["//depot/br/a.txt#1 - branch/sync from //depot/a.txt#1,#2"])
    );
    let rec = &ok(&r[2])[0];
    assert_eq!(rec["depotFile"], "//depot/br/a.txt");
    assert_eq!(rec["action"], "branch");
    assert_eq!(rec["fromFile"], "//depot/a.txt");
    assert_eq!(rec["endFromRev"], "2");
    assert_eq!(std::fs::read(&br).unwrap(), b"one\ntwo\n");
    assert_eq!(
        std::fs::metadata(&br).unwrap().permissions().mode() & 0o200,
        0o200,
        "an opened file is writable"
    );
    assert!(raised(&r[3]).contains("Usage: integrate"), "{:?}", r[3]);

    let native = s.server.client("alice", "alice_ws", &root);
    let opened = native.json(&["opened"]);
    assert_eq!(opened.len(), 1);
    assert_eq!(str_field(&opened[0], "action"), "branch");
    native.ok(&["submit", "-d", "branch"]);

    // copy onto the existing target: its content is written.
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "three\n");
    w.ok(&["submit", "-d", "third"]);
    let r = s.drive(&[
        json!({"cmd": ["sync"]}),
        json!({"cmd": ["copy", "//depot/a.txt", "//depot/br/a.txt"], "tagged": false}),
    ]);
    ok(&r[0]);
    assert_eq!(
        ok(&r[1]),
        &json!(["//depot/br/a.txt#1 - sync/integrate from //depot/a.txt#3"])
    );
    assert_eq!(std::fs::read(&br).unwrap(), b"three\n");
    native.ok(&["submit", "-d", "copy"]);

    // merge: opened for integrate, the workspace file left for the resolve.
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "four\n");
    w.ok(&["submit", "-d", "fourth"]);
    let r = s.drive(&[
        json!({"cmd": ["merge", "//depot/a.txt", "//depot/br/a.txt"], "tagged": false}),
        json!({"cmd": ["merge", "-b", "nosuchbranch"]}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!(["//depot/br/a.txt#2 - integrate from //depot/a.txt#4"])
    );
    assert_eq!(std::fs::read(&br).unwrap(), b"three\n");
    let opened = native.json(&["opened"]);
    assert_eq!(str_field(&opened[0], "action"), "integrate");
    assert!(raised(&r[1]).contains("nosuchbranch"), "{:?}", r[1]);

    // resolve: the workspace file is the base (a.txt#3), so a safe resolve takes theirs and
    // writes it; then nothing is left to resolve.
    let r = s.drive(&[
        json!({"cmd": ["resolve"], "tagged": false}),
        json!({"cmd": ["resolve", "-n"], "tagged": false}),
        json!({"cmd": ["resolve", "-as"], "tagged": false}),
        json!({"cmd": ["resolve", "-at"], "tagged": false}),
    ]);
    // Without a resolver, P4Python's interactive resolve skips the file: it stays pending.
    assert_eq!(
        ok(&r[0]),
        &json!([
            format!("{} - merging //depot/a.txt#4", br.display()),
            format!("{} - resolve skipped.", br.display())
        ])
    );
    assert_eq!(
        ok(&r[1]),
        &json!([format!("{} - merging //depot/a.txt#4", br.display())])
    );
    assert_eq!(
        ok(&r[2]),
        &json!([
            format!("{} - merging //depot/a.txt#4", br.display()),
            format!("{} - copy from //depot/a.txt", br.display())
        ])
    );
    assert_eq!(std::fs::read(&br).unwrap(), b"four\n");
    assert_eq!(ok(&r[3]), &json!([]));
    assert_eq!(r[3]["warnings"], json!(["No file(s) to resolve."]));
    native.ok(&["submit", "-d", "merged"]);
    let head = native.json(&["print", "//depot/br/a.txt"]);
    assert_eq!(str_field(&head[0], "content"), "four\n");
}

#[test]
fn a_file_changed_on_both_sides_is_left_to_merge_and_ay_keeps_yours() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "base\n");
    w.ok(&["add", "a.txt"]);
    w.ok(&["submit", "-d", "first"]);
    let root = s.home.path().join("p4ws");
    let br = root.join("br/a.txt");
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["integrate", "//depot/a.txt", "//depot/br/a.txt"]}),
    ]);
    ok(&r[1]);
    let native = s.server.client("alice", "alice_ws", &root);
    native.ok(&["submit", "-d", "branch"]);
    // Both sides change: the branch in alice_ws, the trunk in w.
    native.ok(&["edit", "br/a.txt"]);
    std::fs::write(&br, "mine\n").unwrap();
    native.ok(&["submit", "-d", "branch edit"]);
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "theirs\n");
    w.ok(&["submit", "-d", "trunk edit"]);
    let r = s.drive(&[
        json!({"cmd": ["merge", "//depot/a.txt", "//depot/br/a.txt"], "tagged": false}),
        json!({"cmd": ["resolve", "-as"], "tagged": false}),
        json!({"cmd": ["resolve", "-ay"], "tagged": false}),
    ]);
    ok(&r[0]);
    assert_eq!(
        r[1]["warnings"],
        json!([format!(
            "{} - resolve skipped (changed on both sides, which -as does not merge: use -am or \
             -af).",
            br.display()
        )])
    );
    assert_eq!(
        ok(&r[2]),
        &json!([
            format!("{} - merging //depot/a.txt#2", br.display()),
            format!("{} - ignored //depot/a.txt", br.display())
        ])
    );
    assert_eq!(std::fs::read(&br).unwrap(), b"mine\n");
    native.ok(&["submit", "-d", "kept mine"]);
    let head = native.json(&["print", "//depot/br/a.txt"]);
    assert_eq!(str_field(&head[0], "content"), "mine\n");
}

#[test]
fn am_merges_a_file_changed_on_both_sides_and_af_forces_a_conflict_with_markers() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "1\n2\n3\n4\n5\n");
    write(&w.cwd, "b.txt", "one\n");
    w.ok(&["add", "a.txt", "b.txt"]);
    w.ok(&["submit", "-d", "first"]);
    let root = s.home.path().join("p4ws");
    let (a, b) = (root.join("br/a.txt"), root.join("br/b.txt"));
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["integrate", "//depot/...", "//depot/br/..."]}),
    ]);
    ok(&r[1]);
    let native = s.server.client("alice", "alice_ws", &root);
    native.ok(&["submit", "-d", "branch"]);
    // The branch changes a.txt's last line and b.txt's only line; the trunk a.txt's first
    // line (no overlap: a clean merge) and b.txt's line otherwise (a conflict).
    native.ok(&["edit", "br/a.txt", "br/b.txt"]);
    std::fs::write(&a, "1\n2\n3\n4\nfive\n").unwrap();
    std::fs::write(&b, "mine\n").unwrap();
    native.ok(&["submit", "-d", "branch edit"]);
    w.ok(&["edit", "a.txt", "b.txt"]);
    write(&w.cwd, "a.txt", "one\n2\n3\n4\n5\n");
    write(&w.cwd, "b.txt", "theirs\n");
    w.ok(&["submit", "-d", "trunk edit"]);
    let r = s.drive(&[
        json!({"cmd": ["merge", "//depot/...", "//depot/br/..."], "tagged": false}),
        json!({"cmd": ["resolve", "-am"], "tagged": false}),
    ]);
    ok(&r[0]);
    let said = ok(&r[1]).as_array().expect("lines").clone();
    for line in [
        format!("{} - merging //depot/a.txt#2", a.display()),
        format!("{} - merging //depot/b.txt#2", b.display()),
        "Diff chunks: 1 yours + 1 theirs + 0 both + 0 conflicting".to_string(),
        "Diff chunks: 0 yours + 0 theirs + 0 both + 1 conflicting".to_string(),
        format!("{} - merge from //depot/a.txt", a.display()),
    ] {
        assert!(said.contains(&json!(line)), "{line} not in {said:?}");
    }
    assert_eq!(
        r[1]["warnings"],
        json!([format!(
            "{} - resolve skipped (conflicts: edit the file and use -ay, or use -af).",
            b.display()
        )])
    );
    // Both sides' changes are in a.txt; b.txt is untouched and still waits for a resolve.
    assert_eq!(std::fs::read(&a).unwrap(), b"one\n2\n3\n4\nfive\n");
    assert_eq!(std::fs::read(&b).unwrap(), b"mine\n");
    let r = s.drive(&[
        json!({"cmd": ["resolve", "-n"], "tagged": false}),
        json!({"cmd": ["resolve", "-af"], "tagged": false}),
        json!({"cmd": ["resolve", "-n"], "tagged": false}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([format!("{} - merging //depot/b.txt#2", b.display())])
    );
    assert_eq!(
        ok(&r[1]),
        &json!([
            format!("{} - merging //depot/b.txt#2", b.display()),
            "Diff chunks: 0 yours + 0 theirs + 0 both + 1 conflicting",
            format!("{} - merge from //depot/b.txt", b.display()),
        ])
    );
    let marked = ">>>> ORIGINAL\none\n==== THEIRS\ntheirs\n==== YOURS\nmine\n<<<<\n";
    assert_eq!(std::fs::read_to_string(&b).unwrap(), marked);
    assert_eq!(r[2]["warnings"], json!(["No file(s) to resolve."]));
    native.ok(&["submit", "-d", "merged"]);
    let head = native.json(&["print", "//depot/br/a.txt"]);
    assert_eq!(str_field(&head[0], "content"), "one\n2\n3\n4\nfive\n");
    let head = native.json(&["print", "//depot/br/b.txt"]);
    assert_eq!(str_field(&head[0], "content"), marked);
}

/// `populate` branches files straight into the depot as one submitted change, with no
/// workspace: a preview lists them, `-m` limits them, `-o` lists what was branched, and a
/// target that already exists refuses the whole populate.
#[test]
fn populate_branches_files_into_the_depot_without_a_workspace() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    for n in ["a", "b", "c"] {
        write(&root, &format!("main/{n}.txt"), format!("{n}\n"));
    }
    a.ok(&["add", "main/a.txt", "main/b.txt", "main/c.txt"]);
    a.ok(&["submit", "-d", "main"]);
    let step = |args: &[&str], tagged: bool| json!({"cmd": args, "tagged": tagged});
    let r = s.drive(&[
        step(
            &["populate", "-n", "//depot/main/...", "//depot/rel/..."],
            false,
        ),
        step(
            &[
                "populate",
                "-m",
                "2",
                "-o",
                "-d",
                "first two",
                "//depot/main/...",
                "//depot/rel/...",
            ],
            true,
        ),
        step(&["populate", "//depot/main/...", "//depot/rel/..."], false),
        step(
            &["populate", "//depot/main/c.txt", "//depot/rel/c.txt"],
            false,
        ),
        step(
            &[
                "populate",
                "-m",
                "none",
                "//depot/main/...",
                "//depot/x/...",
            ],
            false,
        ),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([
            "//depot/rel/a.txt#1 - branch from //depot/main/a.txt#1",
            "//depot/rel/b.txt#1 - branch from //depot/main/b.txt#1",
            "//depot/rel/c.txt#1 - branch from //depot/main/c.txt#1",
            "3 files would be branched."
        ])
    );
    let records = ok(&r[1]).as_array().expect("records");
    assert_eq!(records.len(), 3, "{records:?}");
    assert_eq!(records[0]["depotFile"], "//depot/rel/a.txt");
    assert_eq!(records[0]["fromFile"], "//depot/main/a.txt");
    assert_eq!(records[0]["action"], "branch");
    assert_eq!(records[1]["depotFile"], "//depot/rel/b.txt");
    assert_eq!(records[2]["files"], "2");
    let change = records[2]["change"].as_str().expect("change").to_string();
    // rel/a.txt exists now: the whole populate is refused, nothing more is branched.
    assert!(raised(&r[2]).contains("//depot/rel/a.txt"), "{:?}", r[2]);
    assert_eq!(
        ok(&r[3]),
        &json!([format!(
            "1 files branched (change {}).",
            change.parse::<u64>().unwrap() + 1
        )])
    );
    assert!(raised(&r[4]).contains("-m none"), "{:?}", r[4]);

    let files = a.json(&["files", "//depot/rel/..."]);
    let names: Vec<String> = files.iter().map(|f| str_field(f, "depotFile")).collect();
    assert_eq!(
        names,
        [
            "//depot/rel/a.txt",
            "//depot/rel/b.txt",
            "//depot/rel/c.txt"
        ]
    );
    let described = a.json(&["describe", "-s", &change]);
    assert_eq!(str_field(&described[0], "desc"), "first two\n");
    let head = a.json(&["print", "//depot/rel/b.txt"]);
    assert_eq!(str_field(&head[0], "content"), "b\n");
}
