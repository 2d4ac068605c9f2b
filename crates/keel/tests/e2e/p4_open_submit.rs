//! P4 clients' daily loop through P4Python: `add` (the client detecting types), `edit`,
//! `delete`, `opened`, `reopen`, `move`, `submit` (content sent by the client and checked),
//! `change` forms and `shelve`, tagged and untagged, with the refusals a client shows.

use crate::p4_harness::{P4Server, ok, save_workspace};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A server and the workspace `alice_ws` rooted at `home/ws`, saved through P4Python.
fn with_workspace() -> (P4Server, PathBuf) {
    let s = P4Server::start();
    let root = s.home.path().join("ws");
    std::fs::create_dir_all(&root).expect("root");
    let r = s.drive(&[save_workspace(&root)]);
    assert_eq!(ok(&r[0]), &json!(["Client alice_ws saved."]));
    (s, root)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("file").permissions().mode() & 0o777
}

fn errors(r: &Value) -> String {
    format!("{} {}", r["errors"], r["exception"])
}

#[test]
fn add_detects_types_and_opened_lists_what_is_open() {
    let (s, root) = with_workspace();
    std::fs::write(root.join("a.txt"), "hello\n").expect("a");
    std::fs::write(root.join("b.bin"), [0u8, 1, 2, 255, 0, 7]).expect("b");
    std::fs::write(root.join("run.sh"), "#!/bin/sh\necho hi\n").expect("sh");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let cwd = root.display().to_string();
    let r = s.drive(&[
        json!({"cwd": cwd, "cmd": ["add", "a.txt", "b.bin", "run.sh"]}),
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["opened"], "tagged": false}),
        json!({"cmd": ["add", root.join("a.txt").display().to_string()], "tagged": false}),
        json!({"cmd": ["add", root.join("x@y").display().to_string()]}),
        json!({"cmd": ["add", "//depot/missing.txt"], "tagged": false}),
        json!({"cmd": ["reopen", "-t", "binary", root.join("a.txt").display().to_string()], "tagged": false}),
        json!({"cmd": ["opened", "-a"]}),
    ]);
    let added = ok(&r[0]).as_array().expect("records").clone();
    assert_eq!(added.len(), 3, "{added:?}");
    let by = |p: &str| {
        added
            .iter()
            .find(|a| a["depotFile"] == p)
            .unwrap_or_else(|| panic!("{p} in {added:?}"))
            .clone()
    };
    assert_eq!(by("//depot/a.txt")["type"], "text");
    assert_eq!(by("//depot/a.txt")["action"], "add");
    assert_eq!(by("//depot/a.txt")["workRev"], "1");
    assert_eq!(
        by("//depot/a.txt")["clientFile"],
        root.join("a.txt").display().to_string()
    );
    assert_eq!(by("//depot/b.bin")["type"], "binary");
    assert_eq!(by("//depot/run.sh")["type"], "text+x");
    let opened = ok(&r[1]).as_array().expect("opened").clone();
    assert_eq!(opened.len(), 3);
    let first = &opened[0];
    for key in [
        "depotFile",
        "clientFile",
        "rev",
        "haveRev",
        "action",
        "change",
        "type",
        "user",
        "client",
    ] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    assert_eq!(first["clientFile"], "//alice_ws/a.txt");
    assert_eq!(first["change"], "default");
    assert_eq!(first["user"], "alice");
    let lines = ok(&r[2]).as_array().expect("lines").clone();
    assert!(
        lines.contains(&json!("//depot/a.txt#1 - add default change (text)")),
        "{lines:?}"
    );
    // Adding again: already opened, said as P4 servers say it.
    assert_eq!(
        ok(&r[3]),
        &json!(["//depot/a.txt#1 - currently opened for add"])
    );
    // Wildcard characters need -f.
    assert!(errors(&r[4]).contains("wildcards"), "{}", r[4]);
    // A missing file: the client says so itself, and it is opened as text.
    let missing = root.join("missing.txt").display().to_string();
    assert_eq!(
        ok(&r[5]),
        &json!([
            format!("{missing} - missing, assuming text."),
            "//depot/missing.txt#1 - opened for add"
        ])
    );
    assert_eq!(
        ok(&r[6]),
        &json!(["//depot/a.txt#1 - reopened; type binary"])
    );
    assert_eq!(ok(&r[7]).as_array().expect("all").len(), 4);
}

#[test]
fn submit_sends_content_then_change_forms_and_shelves() {
    let (s, root) = with_workspace();
    let (a, b) = (root.join("a.txt"), root.join("b.bin"));
    std::fs::write(&a, "one\n").expect("a");
    // 100 kB that is not text: more than one of the client's chunks.
    let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&b, &big).expect("b");
    let (ap, bp) = (a.display().to_string(), b.display().to_string());
    let r = s.drive(&[
        json!({"cmd": ["add", &ap, &bp]}),
        json!({"cmd": ["submit", "-d", "first"]}),
        json!({"cmd": ["edit", &ap], "tagged": false}),
    ]);
    assert_eq!(ok(&r[0]).as_array().expect("added").len(), 2);
    let submitted = ok(&r[1]).as_array().expect("submit").clone();
    assert_eq!(
        submitted.last().expect("last")["submittedChange"],
        "1",
        "{submitted:?}"
    );
    assert!(
        submitted
            .iter()
            .any(|f| f["depotFile"] == "//depot/b.bin" && f["rev"] == "1" && f["action"] == "add"),
        "{submitted:?}"
    );
    assert_eq!(ok(&r[2]), &json!(["//depot/a.txt#1 - opened for edit"]));
    // Edit made the file writable.
    assert_eq!(mode(&a) & 0o200, 0o200);
    std::fs::write(&a, "one\ntwo\n").expect("a2");
    let r = s.drive(&[
        json!({"cmd": ["submit", "-d", "second"], "tagged": false}),
        json!({"cmd": ["print", "-q", "//depot/b.bin"]}),
        json!({"cmd": ["delete", &bp], "tagged": false}),
        json!({"method": "fetch_change"}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([
            "Change 2 created with 1 open file(s).",
            "Submitting change 2.",
            "Locking 1 files ...",
            "edit //depot/a.txt#2",
            "Change 2 submitted."
        ])
    );
    // After submit the client's file is read-only again.
    assert_eq!(mode(&a) & 0o222, 0, "{:o}", mode(&a));
    assert_eq!(ok(&r[2]), &json!(["//depot/b.bin#1 - opened for delete"]));
    assert!(!b.exists(), "delete removed the client's file");
    let form = ok(&r[3]).clone();
    assert_eq!(form["spec_class"], "Spec", "{form}");
    assert_eq!(form["Change"], "new");
    assert_eq!(form["Files"], json!(["//depot/b.bin"]));
    let r = s.drive(&[
        json!({"method": "save_change", "args": [{
            "Change": "new", "Description": "drop b\n", "Files": ["//depot/b.bin"]
        }]}),
        json!({"cmd": ["change", "-o", "3"], "tagged": false}),
        json!({"cmd": ["edit", &ap]}),
        json!({"cmd": ["reopen", "-c", "3", &ap], "tagged": false}),
        json!({"cmd": ["shelve", "-c", "3"], "tagged": false}),
        json!({"cmd": ["shelve", "-d", "-c", "3"], "tagged": false}),
        json!({"method": "save_change", "args": [{
            "Change": "3", "Description": "drop b, edit a\n",
            "Files": ["//depot/b.bin", "//depot/a.txt"]
        }]}),
        json!({"cmd": ["submit", "-c", "3"]}),
        json!({"cmd": ["opened"], "tagged": false}),
        json!({"cmd": ["submit", "-d", "nothing"], "tagged": false}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Change 3 created."]));
    let text = ok(&r[1])[0].as_str().expect("form").to_string();
    assert!(
        text.contains("Change:\t3\n") && text.contains("Status:\tpending\n"),
        "{text}"
    );
    assert_eq!(ok(&r[3]), &json!(["//depot/a.txt#2 - reopened; change 3"]));
    assert_eq!(
        ok(&r[4]),
        &json!([
            "Shelving files for change 3.",
            "edit //depot/a.txt#2",
            "delete //depot/b.bin#1",
            "Change 3 files shelved."
        ])
    );
    assert_eq!(
        ok(&r[5]).as_array().expect("lines").last(),
        Some(&json!("Shelved change 3 deleted."))
    );
    assert_eq!(ok(&r[6]), &json!(["Change 3 updated."]));
    let done = ok(&r[7]).as_array().expect("submit").clone();
    assert_eq!(done.last().expect("last")["submittedChange"], "3");
    assert!(
        r[8]["warnings"].to_string().contains("not opened"),
        "{}",
        r[8]
    );
    assert!(
        r[9]["errors"].to_string().contains("No files to submit"),
        "{}",
        r[9]
    );
}

#[test]
fn a_client_killed_mid_upload_leaves_the_change_pending_and_nothing_submitted() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let (s, root) = with_workspace();
    let (a, pipe) = (root.join("a.txt"), root.join("slow.bin"));
    std::fs::write(&a, "a\n").expect("a");
    std::fs::write(&pipe, "placeholder\n").expect("slow");
    let (ap, pp) = (a.display().to_string(), pipe.display().to_string());
    let r = s.drive(&[json!({"cmd": ["add", &ap, &pp]})]);
    assert_eq!(ok(&r[0]).as_array().expect("added").len(), 2);
    // The second file becomes a pipe: the client's read of it blocks after what the test
    // writes, so the client is killed mid-upload, deterministically.
    std::fs::remove_file(&pipe).expect("rm");
    let made = Command::new("mkfifo").arg(&pipe).status().expect("mkfifo");
    assert!(made.success());
    let mut child = Command::new(crate::p4_harness::p4python())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/p4/drive.py"))
        .current_dir(s.home.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", s.home.path())
        .env("P4PORT", &s.port)
        .env("P4TICKETS", s.home.path().join("tickets"))
        .env("P4ENVIRO", s.home.path().join("enviro"))
        .env("P4CONFIG", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start P4Python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            json!([{"cmd": ["submit", "-d", "interrupted"]}])
                .to_string()
                .as_bytes(),
        )
        .expect("steps");
    // Opening the pipe for writing waits for the client to open it for reading; a write of
    // more than the pipe holds returns once the client has read (and sent) most of it.
    let mut writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&pipe)
        .expect("open the pipe");
    writer.write_all(&vec![b'x'; 1 << 20]).expect("fed");
    child.kill().expect("kill the client");
    child.wait().expect("reaped");
    drop(writer);
    std::fs::remove_file(&pipe).expect("rm pipe");
    std::fs::write(&pipe, "now whole\n").expect("slow again");
    let r = s.drive(&[
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["submit", "-c", "1"], "tagged": false}),
    ]);
    // The change the submit made stays pending with both files; nothing was submitted.
    let opened = ok(&r[0]).as_array().expect("opened").clone();
    assert_eq!(opened.len(), 2, "{opened:?}");
    assert!(opened.iter().all(|f| f["change"] == "1"), "{opened:?}");
    assert_eq!(
        ok(&r[1]),
        &json!([
            "Submitting change 1.",
            "Locking 2 files ...",
            "add //depot/a.txt#1",
            "add //depot/slow.bin#1",
            "Change 1 submitted."
        ])
    );
}

#[test]
fn protections_refuse_opening_and_submitting_and_change_nothing() {
    let s = P4Server::start();
    let admin = s.server.client("alice", "", s.home.path());
    let form = "Protections:\n\tsuper user alice * //...\n\topen user bob * //...\n";
    let out = admin.run_stdin(&["protect", "-i"], form);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = s.home.path().join("bobws");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("f.txt"), "f\n").expect("f");
    let f = root.join("f.txt").display().to_string();
    let r = s.drive(&[
        json!({"user": "bob", "client": "bob_ws", "method": "save_client", "args": [{
            "Client": "bob_ws", "Owner": "bob", "Root": root.display().to_string(),
            "View": ["//depot/... //bob_ws/..."]
        }]}),
        json!({"user": "bob", "client": "bob_ws", "cmd": ["add", &f]}),
        json!({"user": "bob", "client": "bob_ws", "cmd": ["submit", "-d", "no"]}),
        json!({"user": "bob", "client": "bob_ws", "cmd": ["opened"]}),
        json!({"user": "carol", "client": "bob_ws", "cmd": ["edit", &f]}),
    ]);
    ok(&r[0]);
    assert_eq!(ok(&r[1]).as_array().expect("added").len(), 1);
    assert!(
        errors(&r[2]).to_lowercase().contains("permission")
            || errors(&r[2]).to_lowercase().contains("protect"),
        "{}",
        r[2]
    );
    // Refused at the gate: the file is still opened in the default changelist.
    let opened = ok(&r[3]).as_array().expect("opened").clone();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["change"], "default");
    assert!(r[4].get("exception").is_some(), "{}", r[4]);
}

#[test]
fn diff_compares_on_the_client() {
    let (s, root) = with_workspace();
    let (a, b) = (root.join("a.txt"), root.join("b.txt"));
    std::fs::write(&a, "one\n").expect("a");
    std::fs::write(&b, "bee\n").expect("b");
    let (ap, bp) = (a.display().to_string(), b.display().to_string());
    let r = s.drive(&[
        json!({"cmd": ["add", &ap, &bp]}),
        json!({"cmd": ["submit", "-d", "first"]}),
        json!({"cmd": ["edit", &ap]}),
    ]);
    ok(&r[2]);
    std::fs::write(&a, "one\ntwo\n").expect("a2");
    // b is not opened: made writable and changed behind the server's back.
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::write(&b, "changed\n").expect("b2");
    let r = s.drive(&[
        json!({"cmd": ["diff", "-du"], "tagged": false}),
        json!({"cmd": ["diff", "-sa"], "tagged": false}),
        json!({"cmd": ["diff", "-se"], "tagged": false}),
        json!({"cmd": ["diff", "-se"]}),
        json!({"cmd": ["diff", "-sx"], "tagged": false}),
    ]);
    let text = ok(&r[0]).to_string();
    assert!(
        text.contains(&format!("==== //depot/a.txt#1 - {ap} ====")),
        "{text}"
    );
    assert!(text.contains("+two"), "{text}");
    assert!(!text.contains("b.txt"), "only opened files: {text}");
    assert_eq!(ok(&r[1]), &json!([ap]));
    assert_eq!(ok(&r[2]), &json!([bp]));
    assert_eq!(ok(&r[3])[0]["depotFile"], "//depot/b.txt");
    assert!(errors(&r[4]).contains("-sx"), "{}", r[4]);
}

#[test]
fn previews_move_and_keep_flags() {
    let (s, root) = with_workspace();
    let (a, b, n) = (root.join("a.txt"), root.join("b.txt"), root.join("new.txt"));
    std::fs::write(&a, "a\n").expect("a");
    std::fs::write(&b, "b\n").expect("b");
    std::fs::write(&n, "n\n").expect("n");
    let p = |x: &Path| x.display().to_string();
    let moved = root.join("moved.txt");
    let r = s.drive(&[
        json!({"cmd": ["add", "-n", p(&a)], "tagged": false}),
        json!({"cmd": ["opened"], "tagged": false}),
        json!({"cmd": ["add", p(&a), p(&b)]}),
        json!({"cmd": ["submit", "-d", "two files"]}),
        json!({"cmd": ["edit", "-n", p(&a)], "tagged": false}),
        json!({"cmd": ["delete", "-k", p(&b)], "tagged": false}),
        json!({"cmd": ["edit", p(&a)]}),
        json!({"cmd": ["move", p(&a), p(&moved)], "tagged": false}),
        json!({"cmd": ["move", "-n", p(&moved), p(&n)], "tagged": false}),
        json!({"cmd": ["opened"], "tagged": false}),
        json!({"cmd": ["edit", "//depot/nowhere.txt"], "tagged": false}),
        json!({"cmd": ["add", "-c", "99", p(&n)], "tagged": false}),
        json!({"cmd": ["move", "-n", p(&b), p(&n)], "tagged": false}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["//depot/a.txt#1 - opened for add"]));
    // The preview opened nothing.
    assert!(
        r[1]["warnings"].to_string().contains("not opened"),
        "{}",
        r[1]
    );
    assert_eq!(ok(&r[4]), &json!(["//depot/a.txt#1 - opened for edit"]));
    // delete -k left the client's (read-only) file in place.
    assert_eq!(mode(&b) & 0o222, 0);
    assert_eq!(ok(&r[5]), &json!(["//depot/b.txt#1 - opened for delete"]));
    assert!(b.exists());
    assert_eq!(
        ok(&r[7]),
        &json!(["//depot/moved.txt#1 - moved from //depot/a.txt"])
    );
    assert!(moved.exists() && !a.exists(), "the client renamed its file");
    assert_eq!(mode(&moved) & 0o200, 0o200, "still writable: opened");
    // move -n reports the move it would make and makes none (r[9] shows it still opened as
    // before, and the client's files stay where they are).
    assert_eq!(
        ok(&r[8]),
        &json!(["//depot/new.txt#1 - moved from //depot/a.txt"])
    );
    assert!(moved.exists(), "the preview renamed nothing");
    assert_eq!(std::fs::read_to_string(&n).expect("new.txt"), "n\n");
    let lines = ok(&r[9]).as_array().expect("opened").clone();
    assert!(
        lines.contains(&json!(
            "//depot/a.txt#1 - move/delete default change (text)"
        )) && lines.contains(&json!(
            "//depot/moved.txt#1 - move/add default change (text)"
        )),
        "{lines:?}"
    );
    assert!(errors(&r[10]).contains("no such file"), "{}", r[10]);
    assert!(errors(&r[11]).contains("99"), "{}", r[11]);
    // A preview refuses what the move would: b.txt is opened for delete, not edit.
    assert!(errors(&r[12]).contains("b.txt"), "{}", r[12]);
}

#[test]
fn submit_and_shelve_take_change_forms() {
    let (s, root) = with_workspace();
    let (a, b) = (root.join("a.txt"), root.join("b.txt"));
    std::fs::write(&a, "a\n").expect("a");
    std::fs::write(&b, "b\n").expect("b");
    let p = |x: &Path| x.display().to_string();
    let r = s.drive(&[
        json!({"cmd": ["add", p(&a), p(&b)]}),
        // P4Python's run_submit(spec) sends the form with -i: only the listed file goes.
        json!({"method": "run_submit", "args": [{
            "Change": "new", "Description": "only a\n", "Files": ["//depot/a.txt"]
        }]}),
        json!({"cmd": ["shelve", "-i"], "input": {
            "Change": "new", "Description": "park b\n", "Files": ["//depot/b.txt"]
        }, "tagged": false}),
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["submit", "-i"], "input": {"Change": "new", "Description": ""}}),
        json!({"cmd": ["change", "-d", "2"], "tagged": false}),
    ]);
    let done = ok(&r[1]).as_array().expect("submit").clone();
    assert_eq!(
        done.last().expect("last")["submittedChange"],
        "1",
        "{done:?}"
    );
    assert!(
        done.iter()
            .all(|f| f.get("depotFile").is_none_or(|d| d == "//depot/a.txt")),
        "{done:?}"
    );
    assert_eq!(
        ok(&r[2]),
        &json!([
            "Change 2 created.",
            "Shelving files for change 2.",
            "add //depot/b.txt#1",
            "Change 2 files shelved."
        ])
    );
    let opened = ok(&r[3]).as_array().expect("opened").clone();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["depotFile"], "//depot/b.txt");
    assert_eq!(opened[0]["change"], "2");
    assert!(errors(&r[4]).contains("Description"), "{}", r[4]);
    // A change with files (and a shelf) cannot be deleted; it stays.
    assert!(r[5].get("exception").is_some(), "{}", r[5]);
}

/// A P4 message as the wire carries it: a 5-byte header, then `name\0 len value\0` variables.
pub(crate) fn frame(vars: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in vars {
        body.extend_from_slice(name.as_bytes());
        body.push(0);
        body.extend_from_slice(&(value.len() as u32).to_le_bytes());
        body.extend_from_slice(value);
        body.push(0);
    }
    let len = (body.len() as u32).to_le_bytes();
    let mut out = vec![len[0] ^ len[1] ^ len[2] ^ len[3]];
    out.extend_from_slice(&len);
    out.extend_from_slice(&body);
    out
}

/// Reads one message's variables.
pub(crate) fn read_message(stream: &mut std::net::TcpStream) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut header = [0u8; 5];
    stream.read_exact(&mut header).expect("header");
    let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).expect("body");
    let mut vars = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let end = at + body[at..].iter().position(|b| *b == 0).expect("name");
        let name = String::from_utf8_lossy(&body[at..end]).into_owned();
        let n = u32::from_le_bytes(body[end + 1..end + 5].try_into().expect("len")) as usize;
        vars.push((name, body[end + 5..end + 5 + n].to_vec()));
        at = end + 5 + n + 1;
    }
    vars
}

#[test]
fn content_that_does_not_match_its_digest_submits_nothing() {
    use std::io::Write;
    let (s, root) = with_workspace();
    let a = root.join("a.txt");
    std::fs::write(&a, "real content\n").expect("a");
    let r = s.drive(&[json!({"cmd": ["add", a.display().to_string()]})]);
    ok(&r[0]);
    // A client of the test's own, which sends content and claims another digest.
    let mut stream = std::net::TcpStream::connect(&s.port).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    let cwd = root.display().to_string();
    stream
        .write_all(&frame(&[("client", b"100"), ("func", b"protocol")]))
        .expect("protocol");
    stream
        .write_all(&frame(&[
            ("", b"-d"),
            ("", b"lying client"),
            ("prog", b"raw-test"),
            ("client", b"alice_ws"),
            ("user", b"alice"),
            ("host", b"p4host"),
            ("cwd", cwd.as_bytes()),
            ("func", b"user-submit"),
        ]))
        .expect("submit");
    let mut lines = Vec::new();
    for _ in 0..100 {
        let vars = read_message(&mut stream);
        let get = |n: &str| {
            vars.iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let func = String::from_utf8_lossy(&get("func")).into_owned();
        let text = |n: &str| String::from_utf8_lossy(&get(n)).into_owned();
        let echo = |extra: &[(&str, &[u8])], call: &str| {
            let mut all: Vec<(&str, &[u8])> = vars
                .iter()
                .filter(|(k, _)| k != "func")
                .map(|(k, v)| (k.as_str(), v.as_slice()))
                .collect();
            all.extend_from_slice(extra);
            all.push(("func", call.as_bytes()));
            frame(&all)
        };
        match func.as_str() {
            "client-SendFile" => {
                let content = b"real content\n";
                let mut out = echo(&[("fileSize", b"13")], &text("open"));
                out.extend(frame(&[
                    ("handle", &get("handle")),
                    ("data", content),
                    ("func", text("write").as_bytes()),
                ]));
                // The MD5 of something else.
                out.extend(echo(
                    &[
                        ("fileSize", b"13"),
                        ("digest", b"0123456789ABCDEF0123456789ABCDEF"),
                    ],
                    &text("confirm"),
                ));
                stream.write_all(&out).expect("send");
            }
            "client-Ack" => stream.write_all(&echo(&[], &text("confirm"))).expect("ack"),
            "client-Message" => lines.push(text("fmt0")),
            "release" => break,
            _ => {}
        }
    }
    let all = lines.join("\n");
    assert!(
        all.contains("is not what the client sent") && all.contains("Submit failed"),
        "{all}"
    );
    drop(stream);
    // The change stays pending with its file; the real client then submits it whole.
    let r = s.drive(&[
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["submit", "-c", "1"]}),
    ]);
    let opened = ok(&r[0]).as_array().expect("opened").clone();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["change"], "1");
    let done = ok(&r[1]).as_array().expect("submit").clone();
    assert_eq!(done.last().expect("last")["submittedChange"], "1");
}

#[test]
fn the_typemap_and_t_apply_to_files_p4_clients_add() {
    let (s, root) = with_workspace();
    let admin = s.server.client("alice", "", s.home.path());
    let out = admin.run_stdin(&["typemap", "-i"], "TypeMap:\n\tbinary+l //depot/....dat\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = |n: &str| {
        let f = root.join(n);
        std::fs::write(&f, "plain text\n").expect("file");
        f.display().to_string()
    };
    let (dat, txt, forced) = (p("a.dat"), p("b.txt"), p("c.txt"));
    let r = s.drive(&[
        json!({"cmd": ["add", &dat, &txt]}),
        json!({"cmd": ["add", "-t", "+x", &forced]}),
        json!({"cmd": ["add", "-t", "nonsense", &forced]}),
    ]);
    let added = ok(&r[0]).as_array().expect("added").clone();
    assert_eq!(added[0]["type"], "binary+l", "{added:?}");
    assert_eq!(added[1]["type"], "text", "{added:?}");
    assert_eq!(ok(&r[1])[0]["type"], "text+x");
    assert!(errors(&r[2]).contains("nonsense"), "{}", r[2]);
}

#[test]
fn submit_of_named_files_and_opened_filters() {
    let (s, root) = with_workspace();
    let p = |n: &str| {
        let f = root.join(n);
        std::fs::write(&f, format!("{n}\n")).expect("file");
        f.display().to_string()
    };
    let (a, b, c) = (p("a.txt"), p("b.txt"), p("c.txt"));
    let r = s.drive(&[
        json!({"cmd": ["add", &a, &b, &c]}),
        json!({"cmd": ["submit", "-d", "only b", &b], "tagged": false}),
        json!({"cmd": ["opened", "-m", "1"]}),
        json!({"cmd": ["opened", "-u", "bob"]}),
        json!({"cmd": ["opened", "-C", "alice_ws", "-a"]}),
        json!({"cmd": ["opened", "-C", "other_ws"]}),
        json!({"cmd": ["opened", "-c", "default", &c], "tagged": false}),
    ]);
    assert_eq!(
        ok(&r[1]),
        &json!([
            "Change 1 created with 1 open file(s).",
            "Submitting change 1.",
            "Locking 1 files ...",
            "add //depot/b.txt#1",
            "Change 1 submitted."
        ])
    );
    assert_eq!(ok(&r[2]).as_array().expect("m").len(), 1);
    assert!(
        r[3]["warnings"].to_string().contains("not opened"),
        "{}",
        r[3]
    );
    assert_eq!(ok(&r[4]).as_array().expect("C").len(), 2);
    assert!(
        r[5]["warnings"].to_string().contains("not opened"),
        "{}",
        r[5]
    );
    assert_eq!(
        ok(&r[6]),
        &json!(["//depot/c.txt#1 - add default change (text)"])
    );
}

fn utf16le_bom(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

#[test]
fn utf16_files_are_utf16_in_p4_workspaces_and_utf8_in_the_depot() {
    let (s, root) = with_workspace();
    const TEXT: &str = "h\u{e9}llo\nw\u{f6}rld \u{2603}\n";
    std::fs::write(root.join("u.txt"), utf16le_bom(TEXT)).expect("u");
    std::fs::write(root.join("detected.txt"), utf16le_bom(TEXT)).expect("detected");
    let cwd = root.display().to_string();
    let r = s.drive(&[
        json!({"cwd": cwd, "cmd": ["add", "-t", "utf16", "u.txt"]}),
        json!({"cwd": cwd, "cmd": ["add", "detected.txt"]}),
        json!({"cmd": ["submit", "-d", "utf16 from a P4 client"]}),
    ]);
    assert_eq!(ok(&r[0])[0]["type"], "utf16", "{}", errors(&r[0]));
    // The client detects UTF-16 by its byte order mark.
    assert_eq!(ok(&r[1])[0]["type"], "utf16", "{}", errors(&r[1]));
    ok(&r[2]);

    // The depot holds the UTF-8 text (its MD5 is the UTF-8's); Keel's own client writes
    // the UTF-16 the P4 client started from.
    let (native, native_root) = s.native_workspace();
    native.ok(&["sync"]);
    assert_eq!(
        native.ok(&["print", "-q", "//depot/u.txt"]),
        TEXT,
        "stored form"
    );
    for name in ["u.txt", "detected.txt"] {
        assert_eq!(
            std::fs::read(native_root.join(name)).expect("synced"),
            utf16le_bom(TEXT),
            "{name}"
        );
    }

    // Edited natively and submitted, the P4 client's sync writes UTF-16 again.
    let edited = format!("{TEXT}third line\n");
    native.ok(&["edit", "u.txt"]);
    std::fs::write(native_root.join("u.txt"), utf16le_bom(&edited)).expect("edit");
    native.ok(&["submit", "-d", "edited natively"]);
    let r = s.drive(&[
        json!({"cmd": ["sync"]}),
        json!({"cmd": ["fstat", "//depot/u.txt"]}),
        json!({"cmd": ["verify", "-q", "//depot/u.txt"]}),
    ]);
    ok(&r[0]);
    assert_eq!(
        std::fs::read(root.join("u.txt")).expect("p4 synced"),
        utf16le_bom(&edited)
    );
    assert_eq!(ok(&r[1])[0]["headType"], "utf16");
    assert_eq!(r[2]["errors"], json!([]), "{}", r[2]);
}
