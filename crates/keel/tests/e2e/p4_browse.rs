//! P4 clients' read commands through P4Python over content the native CLI submitted on the
//! same server: `changes`, `describe`, `files`, `dirs`, `fstat`, `filelog`, `have`, `where`,
//! `diff2`, tagged and untagged, with missing files as warnings and refusals by protections.

use crate::access::protect;
use crate::common::{Client, workspace_on, write};
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::{Value, json};

/// alice's workspace `alice_ws` (root `<home>/alice_ws`, view `//depot/...`) with three
/// changes: 1 adds `main/a.txt` and `main/bin.dat`, 2 edits `main/a.txt`, 3 branches
/// `main/...` to `rel/...`.
fn history(s: &P4Server) -> Client {
    let ws = workspace_on(&s.server, s.home.path(), "alice", "alice_ws");
    write(&ws.cwd, "main/a.txt", "one\n");
    write(&ws.cwd, "main/bin.dat", [0u8, 1, 2, 255]);
    ws.ok(&["add", "main/a.txt", "main/bin.dat"]);
    ws.ok(&["submit", "-d", "first change\nwith a second line"]);
    ws.ok(&["edit", "main/a.txt"]);
    write(&ws.cwd, "main/a.txt", "one\ntwo\n");
    ws.ok(&["submit", "-d", "second"]);
    ws.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    ws.ok(&["submit", "-d", "branch rel"]);
    ws
}

fn records(v: &Value) -> Vec<Value> {
    v.as_array().expect("a list").clone()
}

#[test]
fn changes_and_describe_tagged_and_untagged() {
    let s = P4Server::start();
    history(&s);
    let r = s.drive(&[
        json!({"cmd": ["changes"]}),
        json!({"cmd": ["changes"], "tagged": false}),
        json!({"cmd": ["changes", "-m", "1", "-l"]}),
        json!({"cmd": ["changes", "//depot/main/a.txt"]}),
        json!({"cmd": ["changes", "//depot/...@2,@3"]}),
        json!({"cmd": ["changes", "--me", "-s", "submitted", "//depot/main/...#head"]}),
        json!({"cmd": ["changes", "-u", "bob"]}),
        json!({"cmd": ["changes", "-s", "bogus"]}),
        json!({"cmd": ["describe", "-s", "1"]}),
        json!({"cmd": ["describe", "2"], "tagged": false}),
        json!({"cmd": ["describe", "-s", "99"]}),
        json!({"cmd": ["changes", "//depot/nothing/..."]}),
    ]);
    let all = records(ok(&r[0]));
    let numbers: Vec<&str> = all.iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert_eq!(numbers, ["3", "2", "1"]);
    assert_eq!(all[2]["user"], "alice");
    assert_eq!(all[2]["client"], "alice_ws");
    assert_eq!(all[2]["status"], "submitted");
    assert_eq!(all[2]["changeType"], "public");
    assert!(all[2]["time"].as_str().unwrap().parse::<i64>().is_ok());
    let lines = records(ok(&r[1]));
    let first = lines[2].as_str().unwrap();
    assert!(
        first.starts_with("Change 1 on ")
            && first.ends_with(" by alice@alice_ws 'first change with a second line'"),
        "{first}"
    );
    let long = records(ok(&r[2]));
    assert_eq!(long.len(), 1);
    assert_eq!(long[0]["desc"], "branch rel\n");
    let of_a: Vec<Value> = records(ok(&r[3]))
        .iter()
        .map(|c| c["change"].clone())
        .collect();
    assert_eq!(of_a, [json!("2"), json!("1")]);
    let ranged: Vec<Value> = records(ok(&r[4]))
        .iter()
        .map(|c| c["change"].clone())
        .collect();
    assert_eq!(ranged, [json!("3"), json!("2")]);
    assert_eq!(records(ok(&r[5])).len(), 2);
    assert_eq!(ok(&r[6]), &json!([]));
    assert!(raised(&r[7]).contains("-s bogus"), "{:?}", r[7]);
    let d = &records(ok(&r[8]))[0];
    assert_eq!(d["change"], "1");
    assert_eq!(d["desc"], "first change\nwith a second line\n");
    assert!(d["time"].is_string(), "git-p4 needs time: {d}");
    assert_eq!(
        d["depotFile"],
        json!(["//depot/main/a.txt", "//depot/main/bin.dat"])
    );
    assert_eq!(d["action"], json!(["add", "add"]));
    assert_eq!(d["type"][1], "binary");
    assert_eq!(d["rev"], json!(["1", "1"]));
    assert_eq!(d["fileSize"], json!(["4", "4"]));
    assert_eq!(d["digest"][0], md5_hex(b"one\n"));
    let text = records(ok(&r[9]))[0].as_str().unwrap().to_string();
    assert!(text.starts_with("Change 2 by alice@alice_ws on "), "{text}");
    assert!(text.contains("\tsecond\n"), "{text}");
    assert!(text.contains("... //depot/main/a.txt#2 edit"), "{text}");
    assert!(
        text.contains("Differences ...") && text.contains("+two"),
        "{text}"
    );
    assert_eq!(raised(&r[10]).trim_end(), "Change 99 unknown.");
    assert_eq!(ok(&r[11]), &json!([]));
    assert_eq!(
        r[11]["warnings"],
        json!([]),
        "changes of no file is an empty list"
    );
}

fn md5_hex(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    hex::encode_upper(Md5::digest(data))
}

#[test]
fn files_dirs_fstat_have_and_where() {
    let s = P4Server::start();
    let ws = history(&s);
    let root = ws.cwd.display().to_string();
    let sub = format!("{root}/main");
    let r = s.drive(&[
        json!({"cmd": ["files", "//depot/..."]}),
        json!({"cmd": ["files", "-a", "//depot/main/a.txt"], "tagged": false}),
        json!({"cmd": ["files", "-m", "1", "//depot/..."]}),
        json!({"cmd": ["files", "//depot/x", "//depot/main/a.txt"]}),
        json!({"cmd": ["dirs", "//depot/*"]}),
        json!({"cmd": ["dirs", "//depot/*"], "tagged": false}),
        json!({"cmd": ["fstat", "-Ol", "//depot/main/a.txt"]}),
        json!({"cmd": ["fstat", "-T", "depotFile,headRev", "//depot/main/..."]}),
        json!({"cmd": ["fstat", "-e", "3", "//depot/..."]}),
        json!({"cmd": ["fstat", "-Ro", "//depot/..."]}),
        json!({"cmd": ["have"]}),
        json!({"cmd": ["have", "//depot/rel/..."], "tagged": false}),
        json!({"cmd": ["where", "//depot/main/a.txt"]}),
        json!({"cmd": ["where", "//depot/main/a.txt"], "tagged": false}),
        json!({"cmd": ["fstat", "-Op", "//alice_ws/main/a.txt"]}),
        json!({"cmd": ["files", "-x"]}),
    ]);
    let files = records(ok(&r[0]));
    let names: Vec<&str> = files
        .iter()
        .map(|f| f["depotFile"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "//depot/main/a.txt",
            "//depot/main/bin.dat",
            "//depot/rel/a.txt",
            "//depot/rel/bin.dat"
        ]
    );
    assert_eq!(files[0]["rev"], "2");
    assert_eq!(files[0]["change"], "2");
    assert_eq!(files[0]["action"], "edit");
    assert_eq!(files[0]["type"], "text");
    assert_eq!(files[2]["action"], "branch");
    let lines = records(ok(&r[1]));
    assert_eq!(
        lines,
        [
            json!("//depot/main/a.txt#2 - edit change 2 (text)"),
            json!("//depot/main/a.txt#1 - add change 1 (text)")
        ]
    );
    assert_eq!(records(ok(&r[2])).len(), 1);
    let mixed = records(ok(&r[3]));
    assert_eq!(mixed.len(), 1, "the found file is still listed: {mixed:?}");
    assert_eq!(r[3]["warnings"], json!(["//depot/x - no such file(s)."]));
    let dirs: Vec<Value> = records(ok(&r[4]))
        .iter()
        .map(|d| d["dir"].clone())
        .collect();
    assert_eq!(dirs, [json!("//depot/main"), json!("//depot/rel")]);
    assert_eq!(ok(&r[5]), &json!(["//depot/main", "//depot/rel"]));
    let st = &records(ok(&r[6]))[0];
    assert_eq!(st["depotFile"], "//depot/main/a.txt");
    assert_eq!(st["clientFile"], format!("{root}/main/a.txt"));
    assert_eq!(st["headRev"], "2");
    assert_eq!(st["headChange"], "2");
    assert_eq!(st["headAction"], "edit");
    assert_eq!(st["headType"], "text");
    assert_eq!(st["haveRev"], "2");
    assert_eq!(st["isMapped"], "");
    assert_eq!(st["fileSize"], "8");
    assert_eq!(st["digest"], md5_hex(b"one\ntwo\n"));
    let narrow = records(ok(&r[7]));
    assert_eq!(narrow.len(), 2);
    assert_eq!(
        narrow[0],
        json!({"depotFile": "//depot/main/a.txt", "headRev": "2"})
    );
    let in3: Vec<Value> = records(ok(&r[8]))
        .iter()
        .map(|f| f["depotFile"].clone())
        .collect();
    assert_eq!(
        in3,
        [json!("//depot/rel/a.txt"), json!("//depot/rel/bin.dat")]
    );
    assert_eq!(ok(&r[9]), &json!([]));
    assert_eq!(
        r[9]["warnings"],
        json!(["//depot/... - file(s) not opened on this client."])
    );
    let have = records(ok(&r[10]));
    assert_eq!(have.len(), 4);
    assert_eq!(have[0]["depotFile"], "//depot/main/a.txt");
    assert_eq!(have[0]["clientFile"], "//alice_ws/main/a.txt");
    assert_eq!(have[0]["path"], format!("{root}/main/a.txt"));
    assert_eq!(have[0]["haveRev"], "2");
    assert_eq!(
        ok(&r[11]),
        &json!([
            format!("//depot/rel/a.txt#1 - {root}/rel/a.txt"),
            format!("//depot/rel/bin.dat#1 - {root}/rel/bin.dat")
        ])
    );
    assert_eq!(
        records(ok(&r[12]))[0],
        json!({"depotFile": "//depot/main/a.txt", "clientFile": "//alice_ws/main/a.txt", "path": format!("{sub}/a.txt")})
    );
    assert_eq!(
        ok(&r[13]),
        &json!([format!(
            "//depot/main/a.txt //alice_ws/main/a.txt {sub}/a.txt"
        )])
    );
    assert_eq!(records(ok(&r[14]))[0]["path"], format!("{sub}/a.txt"));
    assert!(
        raised(&r[15]).contains("Invalid option: -x."),
        "{:?}",
        r[15]
    );
}

#[test]
fn filelog_and_diff2_show_history_and_differences() {
    let s = P4Server::start();
    history(&s);
    let r = s.drive(&[
        json!({"cmd": ["filelog", "//depot/main/a.txt"]}),
        json!({"cmd": ["filelog", "//depot/rel/a.txt"], "tagged": false}),
        json!({"cmd": ["filelog", "-m", "1", "//depot/main/a.txt"]}),
        json!({"cmd": ["filelog", "-i", "//depot/rel/a.txt"]}),
        json!({"cmd": ["diff2", "//depot/main/a.txt#1", "//depot/main/a.txt#2"], "tagged": false}),
        json!({"cmd": ["diff2", "//depot/main/a.txt#1", "//depot/rel/a.txt"]}),
        json!({"cmd": ["diff2", "-q", "//depot/main/a.txt", "//depot/rel/a.txt"]}),
        json!({"cmd": ["diff2", "//depot/main/a.txt", "//depot/none"]}),
        json!({"cmd": ["filelog", "//depot/none"]}),
        json!({"cmd": ["integrated", "//depot/rel/a.txt"], "tagged": false}),
        json!({"cmd": ["integrated", "//depot/main/a.txt"]}),
        json!({"cmd": ["integrated", "//depot/main/bin.dat", "//depot/none"], "tagged": false}),
    ]);
    let log = &records(ok(&r[0]))[0];
    assert_eq!(log["depotFile"], "//depot/main/a.txt");
    assert_eq!(log["rev"], json!(["2", "1"]));
    assert_eq!(log["change"], json!(["2", "1"]));
    assert_eq!(log["action"], json!(["edit", "add"]));
    assert_eq!(log["user"], json!(["alice", "alice"]));
    assert_eq!(log["client"], json!(["alice_ws", "alice_ws"]));
    assert_eq!(log["desc"][0], "second");
    // P4Python's own suite reads this record: the source side of a branch.
    assert_eq!(log["how"][0], json!(["branch into"]), "{log}");
    assert_eq!(log["file"][0], json!(["//depot/rel/a.txt"]));
    let text = ok(&r[1])[0].as_str().unwrap().to_string();
    assert!(
        text.starts_with("//depot/rel/a.txt\n... #1 change 3 branch on "),
        "{text}"
    );
    assert!(
        text.ends_with("\n... ... branch from //depot/main/a.txt#1,#2"),
        "{text}"
    );
    assert_eq!(records(ok(&r[2]))[0]["rev"], json!(["2"]));
    let followed: Vec<Value> = records(ok(&r[3]))
        .iter()
        .map(|f| f["depotFile"].clone())
        .collect();
    assert_eq!(
        followed,
        [json!("//depot/rel/a.txt"), json!("//depot/main/a.txt")]
    );
    let diff = records(ok(&r[4]));
    assert_eq!(
        diff[0],
        "==== //depot/main/a.txt#1 (text) - //depot/main/a.txt#2 (text) ==== content"
    );
    assert!(diff[1].as_str().unwrap().contains("+two"), "{diff:?}");
    let tagged = &records(ok(&r[5]))[0];
    assert_eq!(tagged["status"], "content");
    assert_eq!(tagged["depotFile2"], "//depot/rel/a.txt");
    assert_eq!(tagged["rev2"], "1");
    assert_eq!(
        ok(&r[6]),
        &json!([]),
        "identical files are left out with -q"
    );
    assert_eq!(r[7]["warnings"], json!(["//depot/none - no such file(s)."]));
    assert_eq!(r[8]["warnings"], json!(["//depot/none - no such file(s)."]));
    assert_eq!(
        ok(&r[9]),
        &json!(["//depot/rel/a.txt#1 - branch from //depot/main/a.txt#1,#2"])
    );
    let into = &records(ok(&r[10]))[0];
    assert_eq!(into["how"], "branch into");
    assert_eq!(into["fromFile"], "//depot/rel/a.txt");
    assert_eq!(into["change"], "3");
    assert_eq!(records(ok(&r[11])).len(), 1);
    assert_eq!(
        r[11]["warnings"],
        json!(["//depot/none - no file(s) integrated."])
    );
}

#[test]
fn protections_hide_files_from_the_read_commands() {
    let s = P4Server::start();
    let ws = history(&s);
    // bob may list only //depot/main/...; alice stays super.
    protect(
        &ws,
        &[
            "super user alice * //...",
            "write user bob * //depot/main/...",
        ],
    );
    let r = s.drive(&[
        json!({"cmd": ["files", "//depot/..."], "user": "bob", "client": ""}),
        json!({"cmd": ["files", "//depot/rel/a.txt"]}),
        json!({"cmd": ["changes"]}),
        json!({"cmd": ["diff2", "//depot/rel/a.txt", "//depot/main/a.txt"]}),
        json!({"cmd": ["fstat", "//depot/rel/..."], "user": "carol"}),
    ]);
    let names: Vec<Value> = records(ok(&r[0]))
        .iter()
        .map(|f| f["depotFile"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("//depot/main/a.txt"), json!("//depot/main/bin.dat")]
    );
    assert_eq!(
        r[1]["warnings"],
        json!(["//depot/rel/a.txt - no such file(s)."])
    );
    let seen: Vec<Value> = records(ok(&r[2]))
        .iter()
        .map(|c| c["change"].clone())
        .collect();
    assert_eq!(seen, [json!("3"), json!("2"), json!("1")]);
    assert_eq!(
        r[3]["warnings"],
        json!(["//depot/rel/a.txt - no such file(s)."])
    );
    let refused = raised(&r[4]);
    assert!(refused.contains("Fstat needs list access"), "{refused}");
}

#[test]
fn resolved_lists_the_opened_files_whose_integration_is_resolved() {
    let s = P4Server::start();
    let ws = history(&s);
    ws.ok(&["edit", "main/a.txt"]);
    write(&ws.cwd, "main/a.txt", "one\ntwo\nthree\n");
    ws.ok(&["submit", "-d", "third"]);
    ws.ok(&["integrate", "//depot/main/a.txt", "//depot/rel/a.txt"]);
    let before = s.drive(&[json!({"cmd": ["resolved"]})]);
    ws.ok(&["resolve", "-am"]);
    let root = ws.cwd.display().to_string();
    let r = s.drive(&[
        json!({"cmd": ["resolved"]}),
        json!({"cmd": ["resolved", "//depot/rel/..."], "tagged": false}),
    ]);
    assert_eq!(ok(&before[0]), &json!([]), "nothing resolved yet");
    let rec = &records(ok(&r[0]))[0];
    assert_eq!(rec["toFile"], "//depot/rel/a.txt");
    assert_eq!(rec["fromFile"], "//depot/main/a.txt");
    assert_eq!(rec["endFromRev"], "3");
    assert_eq!(
        ok(&r[1]),
        &json!([format!(
            "{root}/rel/a.txt - resolved from //depot/main/a.txt#3"
        )])
    );
}

#[test]
fn changes_s_shelved_lists_pending_changes_with_a_shelf() {
    let s = P4Server::start();
    let ws = history(&s);
    ws.ok(&["edit", "main/a.txt"]);
    write(&ws.cwd, "main/a.txt", "shelved\n");
    ws.ok(&["shelve", "--description", "on the shelf", "main/a.txt"]);
    ws.ok(&["revert", "main/a.txt"]);
    ws.ok(&["change", "-d", "empty pending"]);
    let r = s.drive(&[
        json!({"cmd": ["changes", "-s", "shelved"]}),
        json!({"cmd": ["changes", "-s", "pending"]}),
        json!({"cmd": ["describe", "-S", "-s", "4"]}),
    ]);
    let shelved: Vec<Value> = records(ok(&r[0]))
        .iter()
        .map(|c| c["change"].clone())
        .collect();
    assert_eq!(shelved, [json!("4")]);
    assert_eq!(records(ok(&r[1])).len(), 2);
    let d = &records(ok(&r[2]))[0];
    assert_eq!(d["depotFile"], json!(["//depot/main/a.txt"]));
    assert_eq!(d["shelved"], "");
}
