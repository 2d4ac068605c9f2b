//! End-to-end: the typemap (`keel typemap -o/-i`) saved by a super user and applied by `add`
//! and `reconcile` to files added without `-t` (the last matching line wins, `-` excludes,
//! modifiers alone apply over the detected type, `-t` overrides); a bad line is refused naming
//! it and a user without super is refused, each leaving the map as it was; the map comes back
//! from a checkpoint and its journal.

use crate::backup::{copy_dir, journals_from, restore_args};
use crate::common::{Client, Fixture, Server, field, str_field, write};
use std::collections::HashMap;

fn form(lines: &[&str]) -> String {
    let body: String = lines.iter().map(|l| format!("\t{l}\n")).collect();
    format!("TypeMap:\n{body}")
}

fn set_typemap(c: &Client, lines: &[&str]) {
    let out = c.run_with_stdin(&["typemap", "-i"], &form(lines));
    assert!(
        out.status.success(),
        "typemap -i: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Typemap saved."
    );
}

fn typemap_lines(c: &Client) -> Vec<(String, String)> {
    c.json(&["typemap", "-o"])
        .iter()
        .map(|l| (str_field(l, "type"), str_field(l, "pattern")))
        .collect()
}

fn opened_types(c: &Client) -> HashMap<String, String> {
    c.json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "type")))
        .collect()
}

const MAP: &[&str] = &[
    "binary+l //depot/....png",
    "ktext //depot/src/....c",
    "+w //depot/gen/...",
    "text -//depot/src/vendor/...",
    "binary+S3 \"//depot/big files/...\"",
];

#[test]
fn add_and_reconcile_take_their_types_from_the_typemap() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    assert!(typemap_lines(&a).is_empty(), "no typemap at first");
    set_typemap(&a, MAP);
    let lines = typemap_lines(&a);
    assert_eq!(
        lines,
        vec![
            ("binary+l".to_string(), "//depot/....png".to_string()),
            ("text+k".into(), "//depot/src/....c".into()),
            ("+w".into(), "//depot/gen/...".into()),
            ("text".into(), "-//depot/src/vendor/...".into()),
            ("binary+S3".into(), "//depot/big files/...".into()),
        ],
        "legacy names are stored normalised"
    );
    let shown = a.ok(&["typemap", "-o"]);
    assert!(
        shown.contains("TypeMap:\n\tbinary+l //depot/....png\n"),
        "{shown}"
    );
    assert!(
        shown.contains("\tbinary+S3 \"//depot/big files/...\""),
        "{shown}"
    );

    for (rel, content) in [
        ("art/logo.png", "not really a png\n"),
        ("src/main.c", "int main() { return 0; } /* $Id$ */\n"),
        ("src/vendor/lib.c", "int lib;\n"),
        ("gen/out.txt", "generated\n"),
        ("big files/blob.dat", "big\n"),
        ("readme.txt", "hello\n"),
        ("src/forced.c", "int forced;\n"),
    ] {
        write(&a.cwd, rel, content);
    }
    a.ok(&["add", "-t", "binary", "src/forced.c"]);
    a.ok(&["add", "art/logo.png", "src/main.c", "src/vendor/lib.c"]);
    // reconcile's adds take the map too.
    a.ok(&["reconcile"]);
    let types = opened_types(&a);
    let want = [
        ("//depot/art/logo.png", "binary+l"),
        ("//depot/src/main.c", "text+k"),
        // Excluded from the `....c` line: detected as the scan found it.
        ("//depot/src/vendor/lib.c", "text"),
        // Modifiers alone: over the detected type.
        ("//depot/gen/out.txt", "text+w"),
        ("//depot/big files/blob.dat", "binary+S3"),
        ("//depot/readme.txt", "text"),
        // -t wins over the map.
        ("//depot/src/forced.c", "binary"),
    ];
    for (file, t) in want {
        assert_eq!(
            types.get(file).map(String::as_str),
            Some(t),
            "{file}: {types:?}"
        );
    }
    assert_eq!(types.len(), want.len(), "{types:?}");
}

#[test]
fn bad_lines_and_users_without_super_are_refused_and_change_nothing() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    set_typemap(&a, &["binary+l //depot/....png"]);
    let before = typemap_lines(&a);

    let refusals: &[(&[&str], &str)] = &[
        (
            &["text //depot/a/...", "blob //depot/....bin"],
            "typemap line 2 (\"blob //depot/....bin\"): invalid file type \"blob\": unknown base type",
        ),
        (
            &["text+q //depot/..."],
            "typemap line 1 (\"text+q //depot/...\"): invalid file type \"text+q\": unknown modifier 'q'",
        ),
        (
            &["binary //depot/...", "text depot/no-slashes"],
            "typemap line 2 (\"text depot/no-slashes\")",
        ),
        (
            &["text"],
            "typemap line 1 (\"text\"): expected a type and a depot pattern",
        ),
        (
            &["binary+S0 //depot/..."],
            "+S keeps 1 to 512 revisions, not 0",
        ),
    ];
    for (lines, want) in refusals {
        let out = a.run_with_stdin(&["typemap", "-i"], &form(lines));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{lines:?} was accepted");
        assert!(err.contains(want), "{lines:?}: {err}");
        assert_eq!(typemap_lines(&a), before, "{lines:?} changed the map");
    }

    // Once a protections table exists, only a super user may change the map.
    let table = "Protections:\n\twrite user bob * //...\n\tsuper user alice * //...\n";
    let out = a.run_with_stdin(&["protect", "-i"], table);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bob = fx.workspace("bob", "bobws");
    assert_eq!(
        typemap_lines(&bob),
        before,
        "anyone with list may read the map"
    );
    let out = bob.run_with_stdin(&["typemap", "-i"], &form(&["text //depot/..."]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "bob changed the typemap");
    assert!(err.contains("permission"), "{err}");
    assert_eq!(typemap_lines(&a), before);
    // The map applies to bob's adds all the same.
    write(&bob.cwd, "pic.png", "x\n");
    bob.ok(&["add", "pic.png"]);
    assert_eq!(
        opened_types(&bob)
            .get("//depot/pic.png")
            .map(String::as_str),
        Some("binary+l")
    );
}

#[test]
fn the_typemap_comes_back_from_a_checkpoint_and_its_journal() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    set_typemap(&a, &["binary //depot/....bin"]);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let number = field(&ckpt[0], "number").as_u64().expect("number");
    // Written after the checkpoint: only the journal has it.
    set_typemap(&a, &["binary+l //depot/....bin", "ktext //depot/....c"]);
    let want = typemap_lines(&a);
    let journals = journals_from(&fx.server.root, number);
    let new_root = fx.dir.path().join("restored");
    let args = restore_args(&path, &journals, &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    a.ok(&args);
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let r = restored.client("alice", "ws", &a.cwd);
    assert_eq!(typemap_lines(&r), want);
}
