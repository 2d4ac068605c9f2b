//! The interactive resolve through P4Python (`run_resolve(resolver=...)`): the server sends
//! each merge to the client, the resolver sees the names and the merged result, and what it
//! answers (`am`, `ae`, `at`, `ay`, `s`) is what the workspace file and the resolve record
//! become; checked on disk, with `resolve -n` and by submitting through the native CLI.

use crate::common::{str_field, workspace_on, write};
use crate::p4_harness::{P4Server, ok};
use serde_json::json;

#[test]
fn a_resolver_answers_each_merge_and_its_answer_is_recorded() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    let names = ["a", "b", "c", "d", "e"];
    for n in names {
        write(&w.cwd, &format!("{n}.txt"), "1\n2\n3\n4\n5\n");
    }
    w.ok(&["add", "a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]);
    w.ok(&["submit", "-d", "first"]);
    let root = s.home.path().join("p4ws");
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
    // The branch changes each file's last line; the trunk changes the first line of each
    // (a clean merge) and, in b.txt, the last line too (a conflict).
    native.ok(&["edit", "br/..."]);
    for n in names {
        std::fs::write(root.join(format!("br/{n}.txt")), "1\n2\n3\n4\nfive\n").unwrap();
    }
    native.ok(&["submit", "-d", "branch edit"]);
    w.ok(&["edit", "a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]);
    for n in names {
        write(&w.cwd, &format!("{n}.txt"), "one\n2\n3\n4\n5\n");
    }
    write(&w.cwd, "b.txt", "one\n2\n3\n4\nFIVE\n");
    w.ok(&["submit", "-d", "trunk edit"]);
    let file = |n: &str| root.join(format!("br/{n}.txt"));
    let step = |n: &str, answer: &str| {
        json!({"cmd": ["resolve", format!("//depot/br/{n}.txt")], "resolver": answer,
               "tagged": false})
    };
    let r = s.drive(&[
        json!({"cmd": ["merge", "//depot/...", "//depot/br/..."], "tagged": false}),
        step("a", "am"),
        step("b", "ae"),
        step("c", "at"),
        step("d", "ay"),
        step("e", "s"),
        json!({"cmd": ["resolve", "-n"], "tagged": false}),
    ]);
    ok(&r[0]);

    // am: the clean merge of both sides, shown to the resolver and kept.
    let merged = "one\n2\n3\n4\nfive\n";
    let seen = &r[1]["merges"][0];
    assert_eq!(seen["result"], merged, "{:?}", r[1]);
    assert_eq!(seen["base_name"], "//depot/a.txt#1");
    assert_eq!(seen["their_name"], "//depot/a.txt#2");
    assert_eq!(seen["merge_hint"], "am");
    assert!(
        ok(&r[1]).to_string().contains(&format!(
            "{} - merge from //depot/a.txt",
            file("a").display()
        )),
        "{:?}",
        r[1]
    );
    assert_eq!(std::fs::read_to_string(file("a")).unwrap(), merged);

    // ae on a conflict: the resolver saw the markers, and its edit is what stays.
    let seen = &r[2]["merges"][0];
    assert_eq!(
        seen["result"],
        "one\n2\n3\n4\n>>>> ORIGINAL //depot/b.txt#1\n5\n==== THEIRS //depot/b.txt#2\nFIVE\n\
         ==== YOURS //alice_ws/br/b.txt\nfive\n<<<<\n",
        "{:?}",
        r[2]
    );
    assert_eq!(seen["merge_hint"], "e");
    assert!(
        ok(&r[2]).to_string().contains("edit from //depot/b.txt"),
        "{:?}",
        r[2]
    );
    assert_eq!(
        std::fs::read_to_string(file("b")).unwrap(),
        "edited by the resolver\n"
    );

    // at and ay: theirs written, yours kept.
    assert!(
        ok(&r[3]).to_string().contains("copy from //depot/c.txt"),
        "{:?}",
        r[3]
    );
    assert_eq!(
        std::fs::read_to_string(file("c")).unwrap(),
        "one\n2\n3\n4\n5\n"
    );
    assert!(
        ok(&r[4]).to_string().contains("ignored //depot/d.txt"),
        "{:?}",
        r[4]
    );
    assert_eq!(
        std::fs::read_to_string(file("d")).unwrap(),
        "1\n2\n3\n4\nfive\n"
    );

    // s: skipped, the file untouched and still waiting for its resolve.
    assert!(
        ok(&r[5]).to_string().contains("resolve skipped"),
        "{:?}",
        r[5]
    );
    assert_eq!(
        std::fs::read_to_string(file("e")).unwrap(),
        "1\n2\n3\n4\nfive\n"
    );
    assert_eq!(
        ok(&r[6]),
        &json!([format!("{} - merging //depot/e.txt#2", file("e").display())])
    );

    // What was resolved submits with the resolver's results.
    native.ok(&["revert", "br/e.txt"]);
    native.ok(&["submit", "-d", "merged"]);
    for (n, want) in [
        ("a", merged),
        ("b", "edited by the resolver\n"),
        ("c", "one\n2\n3\n4\n5\n"),
        ("d", "1\n2\n3\n4\nfive\n"),
    ] {
        let head = native.json(&["print", &format!("//depot/br/{n}.txt")]);
        assert_eq!(str_field(&head[0], "content"), want, "{n}.txt");
    }
}

/// The spec commands without `-o`/`-i` send the form to the client's editor (`P4EDITOR`, here
/// a script that edits the form file) and save what comes back; an unchanged form of an
/// existing spec saves nothing, and a change form left with its placeholder is refused.
#[test]
fn spec_commands_without_o_or_i_round_trip_through_the_editor() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    let editor = s.home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/<enter description here>/typed in the editor/; \
         s/^\\tCreated by .*/\\ttyped in the editor/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let edit = editor.display().to_string();
    let r = s.drive(&[
        json!({"cmd": ["label", "rel1"], "editor": edit, "tagged": false}),
        json!({"cmd": ["label", "-o", "rel1"]}),
        json!({"cmd": ["label", "rel1"], "editor": "true", "tagged": false}),
        json!({"client": "ws", "cmd": ["change"], "editor": "true", "tagged": false}),
        json!({"client": "ws", "cmd": ["change"], "editor": edit, "tagged": false}),
        json!({"client": "ws", "cmd": ["change", "-o", "1"]}),
        json!({"client": "ws", "cmd": ["job"], "editor": edit, "tagged": false}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Label rel1 saved."]));
    assert_eq!(ok(&r[1])[0]["Description"], "typed in the editor\n");
    assert_eq!(ok(&r[2]), &json!(["Label rel1 not changed."]));
    assert!(
        r[3]["exception"]
            .as_str()
            .is_some_and(|e| e.contains("<enter description here>")),
        "{:?}",
        r[3]
    );
    assert_eq!(ok(&r[4]), &json!(["Change 1 created."]));
    let change = &ok(&r[5])[0];
    assert_eq!(change["Description"], "typed in the editor\n");
    assert_eq!(change["Files"], json!(["//depot/a.txt"]));
    assert_eq!(ok(&r[6]), &json!(["Job job000001 saved."]));
    let jobs = a.json(&["jobs"]);
    let jobs = json!(jobs).to_string();
    assert!(jobs.contains("typed in the editor"), "{jobs}");
}

/// A binary file is a two-way choice: the server sends theirs whole with the base's MD5, the
/// client suggests `at` when the workspace file is the base (and nothing when both changed),
/// and what the resolver accepts is what stays. A text file integrated with no merge base (a
/// baseless merge) is offered to the resolver too, not skipped.
#[test]
fn binary_and_baseless_files_are_resolved_by_the_resolver() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "bin.dat", "binary one\n");
    write(&w.cwd, "keep.dat", "binary one\n");
    w.ok(&["add", "-t", "binary", "bin.dat", "keep.dat"]);
    write(&w.cwd, "src.txt", "line1\n");
    write(&w.cwd, "target.txt", "line1\n");
    w.ok(&["add", "src.txt", "target.txt"]);
    w.ok(&["submit", "-d", "first"]);
    w.ok(&["edit", "src.txt"]);
    write(&w.cwd, "src.txt", "line1\nline2\n");
    w.ok(&["submit", "-d", "second line"]);
    let root = s.home.path().join("p4ws");
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["integrate", "//depot/*.dat", "//depot/br/*.dat"]}),
    ]);
    ok(&r[1]);
    let native = s.server.client("alice", "alice_ws", &root);
    native.ok(&["submit", "-d", "branch"]);
    // keep.dat changes on both sides; bin.dat only on the trunk.
    native.ok(&["edit", "br/keep.dat"]);
    std::fs::write(root.join("br/keep.dat"), "binary mine\n").unwrap();
    native.ok(&["submit", "-d", "branch edit"]);
    w.ok(&["edit", "bin.dat", "keep.dat"]);
    write(&w.cwd, "bin.dat", "binary theirs\n");
    write(&w.cwd, "keep.dat", "binary theirs\n");
    w.ok(&["submit", "-d", "trunk edit"]);

    let step = |file: &str, answer: &str| json!({"cmd": ["resolve", file], "resolver": answer, "tagged": false});
    let r = s.drive(&[
        json!({"cmd": ["merge", "//depot/*.dat", "//depot/br/*.dat"], "tagged": false}),
        step("//depot/br/bin.dat", "at"),
        step("//depot/br/keep.dat", "ay"),
        json!({"cmd": ["sync", "//depot/target.txt"], "tagged": false}),
        json!({"cmd": ["integ", "//depot/src.txt#2", "//depot/target.txt"], "tagged": false}),
        step("//depot/target.txt", "at"),
        json!({"cmd": ["resolve", "-n"], "tagged": false}),
    ]);
    ok(&r[0]);
    let bin = &r[1]["merges"][0];
    assert_eq!(bin["merge_hint"], "at", "{:?}", r[1]);
    assert_eq!(bin["theirs"], "binary theirs\n", "{:?}", r[1]);
    assert_eq!(bin["has_base_path"], false, "{:?}", r[1]);
    assert!(
        ok(&r[1]).to_string().contains("copy from //depot/bin.dat"),
        "{:?}",
        r[1]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("br/bin.dat")).unwrap(),
        "binary theirs\n"
    );
    let keep = &r[2]["merges"][0];
    // Both changed: the client counts one conflict and suggests skipping.
    assert_eq!(keep["merge_hint"], "s", "{:?}", r[2]);
    assert!(
        ok(&r[2])
            .to_string()
            .contains("0 yours + 0 theirs + 0 both + 1 conflicting"),
        "{:?}",
        r[2]
    );
    assert!(
        ok(&r[2]).to_string().contains("ignored //depot/keep.dat"),
        "{:?}",
        r[2]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("br/keep.dat")).unwrap(),
        "binary mine\n"
    );
    ok(&r[4]);
    assert_eq!(
        r[5]["merges"].as_array().map(Vec::len),
        Some(1),
        "{:?}",
        r[5]
    );
    assert!(
        ok(&r[5]).to_string().contains("copy from //depot/src.txt"),
        "{:?}",
        r[5]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("target.txt")).unwrap(),
        "line1\nline2\n"
    );
    assert_eq!(ok(&r[6]), &json!([]), "nothing left to resolve");

    native.ok(&["submit", "-d", "resolved"]);
    for (file, want) in [
        ("br/bin.dat", "binary theirs\n"),
        ("br/keep.dat", "binary mine\n"),
        ("target.txt", "line1\nline2\n"),
    ] {
        let head = native.json(&["print", &format!("//depot/{file}")]);
        assert_eq!(str_field(&head[0], "content"), want, "{file}");
    }
}
