//! P4 clients' content commands through P4Python: `sync` (revisions, `-n -k -p -f`, `#none`,
//! tagged and untagged), `flush`, `print` (`-q -o`, shelved `@=N`), files on disk with the
//! right bytes and modes, the have list checked through the native CLI, the client's clobber
//! refusal and a declined write that is not recorded, a several-MB binary file, errors.

use crate::access::protect;
use crate::common::{Client, bytes, str_field, workspace_on, write};
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A native workspace `w` of alice's that submitted `a.txt` (twice), `bin/b.bin` (binary)
/// and `run.sh` (`text+x`) in changes 1 and 2.
fn depot(s: &P4Server) -> Client {
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "one\n");
    write(&w.cwd, "bin/b.bin", bytes(7, 3000));
    write(&w.cwd, "run.sh", "#!/bin/sh\necho hi\n");
    w.ok(&["add", "a.txt", "run.sh"]);
    w.ok(&["add", "-t", "binary", "bin/b.bin"]);
    w.ok(&["reopen", "-t", "text+x", "run.sh"]);
    w.ok(&["submit", "-d", "first"]);
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "one\ntwo\n");
    w.ok(&["submit", "-d", "second"]);
    w
}

/// The P4 client `alice_ws` rooted at `<home>/p4ws` with `options`, saved through P4Python.
fn p4_client(s: &P4Server, options: &str) -> (Value, PathBuf) {
    let root = s.home.path().join("p4ws");
    let step = json!({"method": "save_client", "args": [{
        "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
        "Options": options, "View": ["//depot/... //alice_ws/..."]
    }]});
    (step, root)
}

const DEFAULT: &str = "noallwrite noclobber nocompress unlocked nomodtime normdir";

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .expect("file exists")
        .permissions()
        .mode()
        & 0o777
}

/// alice_ws's have list through the native CLI: `depotFile#rev`, sorted.
fn have(s: &P4Server) -> Vec<String> {
    let c = s.server.client("alice", "alice_ws", s.home.path());
    let mut out: Vec<String> = c
        .json(&["have"])
        .iter()
        .map(|r| format!("{}#{}", str_field(r, "depotFile"), r["haveRev"]))
        .collect();
    out.sort();
    out
}

#[test]
fn sync_writes_files_with_their_bytes_and_modes_and_records_the_have_list() {
    let s = P4Server::start();
    depot(&s);
    let (save, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[
        save,
        json!({"cmd": ["sync", "//depot/...@1"]}),
        json!({"cmd": ["sync"], "tagged": false}),
        json!({"cmd": ["sync"], "tagged": false}),
        json!({"cmd": ["sync", "-n", "//depot/...#none"], "tagged": false}),
    ]);
    ok(&r[0]);
    let first = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(first.len(), 3, "{first:?}");
    let a = first
        .iter()
        .find(|f| f["depotFile"] == "//depot/a.txt")
        .expect("a.txt synced");
    assert_eq!(a["rev"], "1");
    assert_eq!(a["action"], "added");
    assert_eq!(a["change"], "1");
    assert_eq!(a["fileSize"], "4");
    assert_eq!(a["clientFile"], root.join("a.txt").display().to_string());
    assert_eq!(first[0]["totalFileCount"], "3", "{first:?}");
    assert_eq!(first[0]["totalFileSize"], (4 + 3000 + 18).to_string());
    // Then to head: one update, as the line scripts read.
    let lines = ok(&r[2]).clone();
    assert_eq!(
        lines,
        json!([format!(
            "//depot/a.txt#2 - updating {}",
            root.join("a.txt").display()
        )])
    );
    // Nothing left to do is a warning, not an error.
    assert_eq!(ok(&r[3]), &json!([]));
    assert_eq!(r[3]["warnings"], json!(["File(s) up-to-date."]));
    // A preview of removing everything says so and removes nothing.
    let preview = ok(&r[4]).as_array().expect("lines").clone();
    assert_eq!(preview.len(), 3);
    assert!(
        preview.contains(&json!(format!(
            "//depot/run.sh#0 - deleted as {}",
            root.join("run.sh").display()
        ))),
        "{preview:?}"
    );

    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(
        std::fs::read(root.join("bin/b.bin")).unwrap(),
        bytes(7, 3000)
    );
    assert_eq!(mode(&root.join("a.txt")), 0o444);
    assert_eq!(mode(&root.join("bin/b.bin")), 0o444);
    assert_eq!(mode(&root.join("run.sh")), 0o555);
    assert_eq!(
        have(&s),
        ["//depot/a.txt#2", "//depot/bin/b.bin#1", "//depot/run.sh#1"]
    );

    // `#none` takes the files away (and out of the have list); `-k` and `flush` record
    // without writing; `-p` writes without recording.
    let r = s.drive(&[
        json!({"cmd": ["sync", "//depot/...#none"], "tagged": false}),
        json!({"cmd": ["sync", "-k", "//depot/a.txt"]}),
        json!({"cmd": ["flush", "//depot/run.sh#1"], "tagged": false}),
        json!({"cmd": ["sync", "-p", "//depot/bin/..."], "tagged": false}),
    ]);
    assert_eq!(ok(&r[0]).as_array().expect("lines").len(), 3);
    assert!(!root.join("a.txt").exists() && !root.join("run.sh").exists());
    assert_eq!(ok(&r[1])[0]["action"], "added");
    assert_eq!(
        ok(&r[2]),
        &json!([format!(
            "//depot/run.sh#1 - added as {}",
            root.join("run.sh").display()
        )])
    );
    ok(&r[3]);
    assert!(!root.join("a.txt").exists(), "-k wrote no file");
    assert_eq!(
        std::fs::read(root.join("bin/b.bin")).unwrap(),
        bytes(7, 3000)
    );
    assert_eq!(have(&s), ["//depot/a.txt#2", "//depot/run.sh#1"]);
}

#[test]
fn a_writable_file_is_not_clobbered_and_a_declined_write_is_not_recorded() {
    let s = P4Server::start();
    let w = depot(&s);
    let (save, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[save, json!({"cmd": ["sync", "//depot/...@1"]})]);
    ok(&r[1]);
    // The user made a.txt writable and changed it; a new file's place holds a writable file.
    let a = root.join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&a, "mine\n").unwrap();
    write(&w.cwd, "new.txt", "new\n");
    w.ok(&["add", "new.txt"]);
    w.ok(&["submit", "-d", "third"]);
    std::fs::write(root.join("new.txt"), "also mine\n").unwrap();
    let r = s.drive(&[json!({"cmd": ["sync"], "tagged": false})]);
    // The client refuses both (an error, so P4Python raises) and declines them.
    let e = raised(&r[0]);
    assert!(e.contains("Can't clobber writable file"), "{e}");
    assert_eq!(
        r[0]["errors"],
        json!([
            format!("Can't clobber writable file {}", a.display()),
            format!(
                "Can't clobber writable file {}",
                root.join("new.txt").display()
            )
        ])
    );
    // The user's files are as they left them, and the have list does not claim the revisions.
    assert_eq!(std::fs::read(&a).unwrap(), b"mine\n");
    assert_eq!(std::fs::read(root.join("new.txt")).unwrap(), b"also mine\n");
    assert_eq!(
        have(&s),
        ["//depot/a.txt#1", "//depot/bin/b.bin#1", "//depot/run.sh#1"]
    );
    // With `clobber` the same sync replaces them and records them.
    let (save, _) = p4_client(
        &s,
        "noallwrite clobber nocompress unlocked nomodtime normdir",
    );
    let r = s.drive(&[save, json!({"cmd": ["sync"], "tagged": false})]);
    assert_eq!(ok(&r[1]).as_array().expect("lines").len(), 2, "{:?}", r[1]);
    assert_eq!(std::fs::read(&a).unwrap(), b"one\ntwo\n");
    assert_eq!(mode(&a), 0o444);
    assert_eq!(
        have(&s),
        [
            "//depot/a.txt#2",
            "//depot/bin/b.bin#1",
            "//depot/new.txt#1",
            "//depot/run.sh#1"
        ]
    );
}

#[test]
fn allwrite_and_modtime_workspaces_get_writable_files_with_the_recorded_time() {
    let s = P4Server::start();
    depot(&s);
    let (save, root) = p4_client(&s, "allwrite noclobber nocompress unlocked modtime normdir");
    let r = s.drive(&[save, json!({"cmd": ["sync", "//depot/a.txt"]})]);
    let rec = &ok(&r[1])[0];
    assert_eq!(rec["rev"], "2");
    let a = root.join("a.txt");
    assert_eq!(mode(&a), 0o644);
    let fstat = s
        .server
        .client("alice", "alice_ws", s.home.path())
        .json(&["fstat", "//depot/a.txt"]);
    // The time the file had when the native client submitted it.
    let time: i64 = str_field(&fstat[0], "headModTime")
        .parse()
        .expect("headModTime");
    let mtime = std::fs::metadata(&a)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert_eq!(mtime, time, "{fstat:?}");
}

#[test]
fn print_shows_headers_and_content_and_writes_files_with_o() {
    let s = P4Server::start();
    depot(&s);
    let (save, root) = p4_client(&s, DEFAULT);
    let out = s.home.path().join("printed.bin");
    let r = s.drive(&[
        save,
        json!({"cmd": ["print", "//depot/a.txt"]}),
        json!({"cmd": ["print", "//depot/a.txt#1"], "tagged": false}),
        json!({"cmd": ["print", "-q", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["print", "-o", out.display().to_string(), "//depot/bin/b.bin"]}),
        json!({"cmd": ["print", "//depot/nothing.txt"]}),
        json!({"cmd": ["print", "-a", "//depot/a.txt"]}),
    ]);
    let tagged = ok(&r[1]).as_array().expect("output").clone();
    assert_eq!(tagged[0]["depotFile"], "//depot/a.txt");
    assert_eq!(tagged[0]["rev"], "2");
    assert_eq!(tagged[0]["change"], "2");
    assert_eq!(tagged[0]["action"], "edit");
    assert_eq!(tagged[0]["type"], "text");
    let content: String = tagged[1..].iter().filter_map(Value::as_str).collect();
    assert_eq!(content, "one\ntwo\n");
    let untagged = ok(&r[2]).as_array().expect("output").clone();
    assert_eq!(untagged[0], "//depot/a.txt#1 - add change 1 (text)");
    let content: String = untagged[1..].iter().filter_map(Value::as_str).collect();
    assert_eq!(content, "one\n");
    let quiet: String = ok(&r[3])
        .as_array()
        .expect("output")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(quiet, "one\ntwo\n");
    ok(&r[4]);
    assert_eq!(std::fs::read(&out).unwrap(), bytes(7, 3000));
    assert!(
        raised(&r[5]).contains("//depot/nothing.txt - no such file(s)"),
        "{:?}",
        r[5]
    );
    // -a: every revision, newest first, each header before its content.
    let all = ok(&r[6]).as_array().expect("print -a").clone();
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(
        (all[0]["rev"].as_str(), all[2]["rev"].as_str()),
        (Some("2"), Some("1"))
    );
    assert_eq!(
        (all[1].as_str(), all[3].as_str()),
        (Some("one\ntwo\n"), Some("one\n"))
    );
    // print wrote nothing into the workspace.
    assert!(!root.join("a.txt").exists());
}

#[test]
fn a_large_binary_file_syncs_whole_and_bad_revisions_are_errors() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    let big = bytes(11, 6 << 20);
    write(&w.cwd, "big.bin", &big);
    w.ok(&["add", "-t", "binary", "big.bin"]);
    w.ok(&["submit", "-d", "big"]);
    let (save, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[
        save,
        json!({"cmd": ["sync"], "tagged": false}),
        json!({"cmd": ["sync", "//depot/big.bin@nosuchlabel"]}),
        json!({"cmd": ["sync", "//depot/big.bin#x"]}),
        json!({"cmd": ["sync", "-k", "-p"]}),
        json!({"cmd": ["sync", "/elsewhere/f"]}),
    ]);
    ok(&r[1]);
    assert!(
        std::fs::read(root.join("big.bin")).unwrap() == big,
        "the big file's bytes"
    );
    assert_eq!(have(&s), ["//depot/big.bin#1"]);
    assert!(raised(&r[2]).contains("nosuchlabel"), "{:?}", r[2]);
    assert!(raised(&r[3]).contains("#x"), "{:?}", r[3]);
    assert!(raised(&r[4]).contains("-k and -p"), "{:?}", r[4]);
    assert!(
        raised(&r[5]).contains("not under client's root"),
        "{:?}",
        r[5]
    );
}

#[test]
fn files_the_protections_table_hides_are_not_synced_or_printed() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "pub/a", "a\n");
    write(&w.cwd, "secret/s", "s\n");
    w.ok(&["add", "pub/a", "secret/s"]);
    w.ok(&["submit", "-d", "two"]);
    protect(
        &w,
        &[
            "super user alice * //...",
            "read user bob * //depot/pub/...",
        ],
    );
    let root = s.home.path().join("bobws");
    let r = s.drive(&[
        json!({"user": "bob", "client": "bob_ws", "method": "save_client", "args": [{
            "Client": "bob_ws", "Owner": "bob", "Root": root.display().to_string(),
            "View": ["//depot/... //bob_ws/..."]
        }]}),
        json!({"user": "bob", "client": "bob_ws", "cmd": ["sync"], "tagged": false}),
        json!({"user": "bob", "client": "bob_ws", "cmd": ["print", "//depot/secret/s"]}),
    ]);
    ok(&r[0]);
    assert_eq!(
        ok(&r[1]),
        &json!([format!(
            "//depot/pub/a#1 - added as {}",
            root.join("pub/a").display()
        )])
    );
    assert!(!root.join("secret/s").exists());
    let e = raised(&r[2]);
    assert!(e.contains("//depot/secret/s"), "{e}");
}

#[test]
fn revert_restores_have_revisions_and_a_keeps_only_unchanged_files() {
    let s = P4Server::start();
    depot(&s);
    let (save, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[save, json!({"cmd": ["sync"]})]);
    ok(&r[1]);
    // alice opens files in alice_ws with the native CLI: a.txt edited and changed, b.bin
    // opened for edit and left as it was, run.sh deleted, n.txt added.
    let native = s.server.client("alice", "alice_ws", &root);
    native.ok(&["edit", "a.txt", "bin/b.bin"]);
    std::fs::write(root.join("a.txt"), "changed\n").unwrap();
    native.ok(&["delete", "run.sh"]);
    write(&root, "n.txt", "new\n");
    native.ok(&["add", "n.txt"]);
    assert!(!root.join("run.sh").exists());
    let r = s.drive(&[
        json!({"cmd": ["revert", "-n", "//..."], "tagged": false}),
        json!({"cmd": ["revert", "-a"]}),
        json!({"cmd": ["revert", root.join("a.txt").display().to_string(), root.join("n.txt").display().to_string()], "tagged": false}),
        json!({"cmd": ["revert", "-k", "//depot/run.sh"], "tagged": false}),
        json!({"cmd": ["revert", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["revert"]}),
    ]);
    let mut preview: Vec<String> = ok(&r[0])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().unwrap_or_default().to_string())
        .collect();
    preview.sort();
    assert_eq!(
        preview,
        [
            "//depot/a.txt#2 - was edit, reverted",
            "//depot/bin/b.bin#1 - was edit, reverted",
            "//depot/n.txt#none - was add, abandoned",
            "//depot/run.sh#1 - was delete, reverted",
        ]
    );
    // -a: only the unchanged edit.
    let unchanged = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(unchanged.len(), 1, "{unchanged:?}");
    assert_eq!(unchanged[0]["depotFile"], "//depot/bin/b.bin");
    assert_eq!(unchanged[0]["oldAction"], "edit");
    assert_eq!(mode(&root.join("bin/b.bin")), 0o444);
    // Local arguments; the edit is put back read-only, the added file stays.
    assert_eq!(
        ok(&r[2]),
        &json!([
            "//depot/a.txt#2 - was edit, reverted",
            "//depot/n.txt#none - was add, abandoned"
        ])
    );
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(mode(&root.join("a.txt")), 0o444);
    assert_eq!(std::fs::read(root.join("n.txt")).unwrap(), b"new\n");
    // -k: the delete is given up and the workspace is left alone.
    assert_eq!(
        ok(&r[3]),
        &json!(["//depot/run.sh#1 - was delete, reverted"])
    );
    assert!(!root.join("run.sh").exists());
    // Nothing opened any more: a warning, and a bare revert is a usage error.
    assert_eq!(ok(&r[4]), &json!([]));
    assert_eq!(
        r[4]["warnings"],
        json!(["//depot/a.txt - file(s) not opened on this client."])
    );
    assert!(
        raised(&r[5]).contains("Missing file argument"),
        "{:?}",
        r[5]
    );
    assert_eq!(native.json(&["opened"]), Vec::<Value>::new());
}

#[test]
fn unshelve_writes_shelved_content_and_a_declined_file_is_not_left_opened() {
    let s = P4Server::start();
    let w = depot(&s);
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "shelved\n");
    write(&w.cwd, "s.txt", "shelved new\n");
    w.ok(&["add", "s.txt"]);
    let shelved = w.ok(&["shelve", "--description", "wip"]);
    assert!(shelved.contains('3'), "the shelf is change 3: {shelved}");
    let (save, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[save, json!({"cmd": ["sync"]})]);
    ok(&r[1]);
    std::fs::write(root.join("s.txt"), "mine\n").unwrap();
    let r = s.drive(&[
        json!({"cmd": ["print", "-q", "//depot/a.txt@=3"], "tagged": false}),
        json!({"cmd": ["unshelve", "-s", "3"], "tagged": false}),
    ]);
    let printed: String = ok(&r[0])
        .as_array()
        .expect("output")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(printed, "shelved\n");
    // s.txt's place holds a writable file the client will not replace without -f.
    assert_eq!(
        r[1]["errors"],
        json!([format!(
            "Can't clobber writable file {}",
            root.join("s.txt").display()
        )])
    );
    let mut lines: Vec<String> = r[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["severity"] == 1)
        .map(|m| str_field(m, "text"))
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "//depot/a.txt#2 - unshelved, opened for edit",
            "//depot/s.txt#0 - unshelved, opened for add"
        ]
    );
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"shelved\n");
    assert_eq!(mode(&root.join("a.txt")), 0o644);
    assert_eq!(std::fs::read(root.join("s.txt")).unwrap(), b"mine\n");
    let native = s.server.client("alice", "alice_ws", &root);
    let opened = |c: &Client| {
        let mut o: Vec<String> = c
            .json(&["opened"])
            .iter()
            .map(|r| str_field(r, "depotFile"))
            .collect();
        o.sort();
        o
    };
    assert_eq!(opened(&native), ["//depot/a.txt"]);
    // With -f the file is replaced and opened.
    let r = s.drive(&[
        json!({"cmd": ["unshelve", "-s", "3", "-f", "//depot/s.txt"]}),
        json!({"cmd": ["unshelve", "-s", "99"]}),
        json!({"cmd": ["unshelve"]}),
    ]);
    let rec = &ok(&r[0])[0];
    assert_eq!(rec["depotFile"], "//depot/s.txt");
    assert_eq!(rec["action"], "add");
    assert_eq!(std::fs::read(root.join("s.txt")).unwrap(), b"shelved new\n");
    assert_eq!(opened(&native), ["//depot/a.txt", "//depot/s.txt"]);
    assert!(raised(&r[1]).contains("99"), "{:?}", r[1]);
    assert!(raised(&r[2]).contains("Missing -s"), "{:?}", r[2]);
}

#[test]
fn sync_takes_local_paths_and_leaves_opened_files_to_resolve() {
    let s = P4Server::start();
    let w = depot(&s);
    let (save, root) = p4_client(&s, DEFAULT);
    let a = root.join("a.txt");
    let r = s.drive(&[
        save,
        json!({"cmd": ["sync", "-q", format!("{}#1", a.display())]}),
    ]);
    assert_eq!(ok(&r[1]), &json!([]), "-q prints nothing");
    assert_eq!(std::fs::read(&a).unwrap(), b"one\n");
    // alice opens a.txt#1 in alice_ws; the head moves on to #3 meanwhile.
    let native = s.server.client("alice", "alice_ws", &root);
    native.ok(&["edit", "a.txt"]);
    std::fs::write(&a, "my edit\n").unwrap();
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "three\n");
    w.ok(&["submit", "-d", "third"]);
    let r = s.drive(&[json!({"cmd": ["sync", a.display().to_string()], "tagged": false})]);
    assert_eq!(
        ok(&r[0]),
        &json!([format!(
            "//depot/a.txt#3 - is opened and not being changed; must resolve before submitting: {}",
            a.display()
        )])
    );
    // The user's edit is untouched; the have list moved to the head the resolve is against.
    assert_eq!(std::fs::read(&a).unwrap(), b"my edit\n");
    assert_eq!(have(&s), ["//depot/a.txt#3"]);
}

/// A sync of more files than one have-list batch (1,000) records every file the client wrote,
/// batch by batch while the transfer goes on, with each file's bytes on disk; the next sync
/// finds nothing to do.
#[test]
fn a_sync_larger_than_a_have_batch_records_every_file() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    let n = 1_234;
    for i in 0..n {
        write(
            &w.cwd,
            &format!("d{}/f{i}.txt", i % 7),
            format!("file {i}\n"),
        );
    }
    w.ok(&["add", "..."]);
    w.ok(&["submit", "-d", "many"]);
    let (client, root) = p4_client(&s, DEFAULT);
    let r = s.drive(&[
        client,
        json!({"cmd": ["sync", "-q"]}),
        json!({"cmd": ["sync"], "tagged": false}),
    ]);
    ok(&r[1]);
    let listed = have(&s);
    assert_eq!(listed.len(), n, "every file recorded");
    for i in [0, 999, 1_000, n - 1] {
        let path = root.join(format!("d{}/f{i}.txt", i % 7));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("file {i}\n")
        );
        assert!(listed.contains(&format!("//depot/d{}/f{i}.txt#1", i % 7)));
    }
    assert!(
        r[2]["warnings"].to_string().contains("up-to-date"),
        "{:?}",
        r[2]
    );
}
