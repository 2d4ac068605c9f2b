//! End-to-end: `keel verify` re-reads stored content on the server. One blob damaged on disk and
//! another deleted are reported as BAD and MISSING for exactly the revisions that refer to them
//! (a lazy copy too), everything else is OK, and the exit status says whether anything was wrong.

use std::path::Path;
use std::process::Output;

use crate::common::{Client, Fixture, blob_at, bytes, remove_blobs, str_field, write};

/// History under `//depot/main` and a branch of it, with one shelf:
/// - change 1 adds `a.txt` (text, stored zstd), `b.bin` (random, stored raw) and `c.txt`;
/// - change 2 edits `a.txt`; change 3 branches `main` to `rel` (lazy copies: `rel/a.txt#1` is
///   `a.txt#2`'s content, `rel/b.bin#1` is `b.bin#1`'s); change 4 deletes `main/c.txt` (a
///   revision without content);
/// - change 5 (pending) has `s.txt` shelved.
fn history(fx: &Fixture) -> Client {
    let ws = fx.workspace("alice", "a");
    write(&ws.cwd, "main/a.txt", "first version\n".repeat(500));
    write(&ws.cwd, "main/b.bin", bytes(3, 50_000));
    write(&ws.cwd, "main/c.txt", "see\n");
    ws.ok(&["add", "main/a.txt", "main/b.bin", "main/c.txt"]);
    ws.ok(&["submit", "-d", "three files"]);
    ws.ok(&["edit", "main/a.txt"]);
    write(&ws.cwd, "main/a.txt", "second version\n".repeat(500));
    ws.ok(&["submit", "-d", "a again"]);
    ws.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    ws.ok(&["submit", "-d", "branch"]);
    ws.ok(&["delete", "main/c.txt"]);
    ws.ok(&["submit", "-d", "no c"]);
    let out = ws.ok(&["change", "-d", "shelf"]);
    assert!(out.contains("Change 5 created"), "{out}");
    write(&ws.cwd, "main/s.txt", "shelved only\n");
    ws.ok(&["add", "-c", "5", "main/s.txt"]);
    ws.ok(&["shelve", "-c", "5"]);
    ws
}

/// Every revision with content, as verify names them, in its order.
const REVISIONS: [&str; 7] = [
    "//depot/main/a.txt#2",
    "//depot/main/a.txt#1",
    "//depot/main/b.bin#1",
    "//depot/main/c.txt#1",
    "//depot/rel/a.txt#1",
    "//depot/rel/b.bin#1",
    "//depot/rel/c.txt#1",
];

const SHELVED: &str = "//depot/main/s.txt@=5";

/// `(name, status)` of every file record of a `--json` verify, and its summary record.
fn records(lines: &[serde_json::Value]) -> (Vec<(String, String)>, &serde_json::Value) {
    let (summary, files): (Vec<_>, Vec<_>) =
        lines.iter().partition(|r| r.get("verified").is_some());
    assert_eq!(summary.len(), 1, "one summary in {lines:?}");
    let named = files
        .iter()
        .map(|r| {
            let path = str_field(r, "depotFile");
            let name = match r.get("shelvedChange") {
                Some(change) => format!("{path}@={change}"),
                None => format!("{path}#{}", str_field(r, "rev")),
            };
            (name, str_field(r, "status"))
        })
        .collect();
    (named, summary[0])
}

/// Runs `keel --json ARGS`, whatever its exit status; (status code, stdout lines as JSON).
fn json_run(ws: &Client, args: &[&str]) -> (i32, Vec<serde_json::Value>) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = ws.run(&all);
    let lines = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (out.status.code().expect("exit code"), lines)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The digest verify reports for `name`.
fn digest_of(ws: &Client, name: &str) -> String {
    let (_, lines) = json_run(ws, &["verify", "-s"]);
    let (files, _) = records(&lines);
    let at = files
        .iter()
        .position(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} not verified"));
    let file_records: Vec<_> = lines
        .iter()
        .filter(|r| r.get("verified").is_none())
        .collect();
    str_field(file_records[at], "digest")
}

/// Flips the last stored byte of the blob `digest` in place.
fn damage_blob(root: &Path, digest: &str) {
    let at = blob_at(root, digest);
    let mut bytes = std::fs::read(&at.path).expect("read blob");
    let last = (at.offset + at.len - 1) as usize;
    bytes[last] ^= 0xff;
    std::fs::write(&at.path, bytes).expect("damage blob");
}

#[test]
fn a_healthy_server_verifies_everything_ok() {
    let fx = Fixture::new();
    let ws = history(&fx);
    let out = ws.run(&["verify", "-s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Not a terminal: no progress bar, nothing on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), REVISIONS.len() + 2, "{text}");
    for (line, name) in lines.iter().zip(REVISIONS.iter().chain([&SHELVED])) {
        assert!(line.starts_with(&format!("{name} - ")), "{line} for {name}");
        assert!(line.ends_with(" OK"), "{line}");
    }
    assert!(
        lines[0].starts_with("//depot/main/a.txt#2 - edit change 2 (text) "),
        "{text}"
    );
    assert!(lines[4].contains(" - branch change 3 (text) "), "{text}");
    assert!(lines[7].contains(" - add change 5 (text) "), "{text}");
    let summary = lines[8];
    assert!(
        summary.starts_with(
            "Verified 7 revision(s) and 1 shelved file(s) by BLAKE3: 8 OK, 0 BAD, 0 MISSING;"
        ),
        "{summary}"
    );
    // The lazy copies share content: five distinct contents read for eight files.
    assert!(summary.ends_with("from 5 content(s)."), "{summary}");

    // With -q, only the summary.
    let quiet = ws.ok(&["verify", "-q"]);
    assert_eq!(quiet.lines().count(), 1, "{quiet}");
    assert!(
        quiet.starts_with("Verified 7 revision(s) by BLAKE3: 7 OK"),
        "{quiet}"
    );
}

#[test]
fn a_damaged_and_a_deleted_blob_are_reported_for_exactly_their_revisions() {
    let mut fx = Fixture::new();
    let ws = history(&fx);
    // a.txt#1 is only that revision's content; b.bin#1's is shared with its lazy copy.
    let damaged = digest_of(&ws, "//depot/main/a.txt#1");
    assert_eq!(
        blob_at(&fx.server.root, &damaged).encoding,
        keel_blob::Encoding::Zstd
    );
    damage_blob(&fx.server.root, &damaged);
    let deleted = digest_of(&ws, "//depot/main/b.bin#1");
    remove_blobs(&mut fx, &[deleted]);

    let want_bad = ["//depot/main/a.txt#1"];
    let want_missing = ["//depot/main/b.bin#1", "//depot/rel/b.bin#1"];

    // Text: every revision, problems marked as p4 does; exit status 1 and a note on stderr.
    let out = ws.run(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    for name in REVISIONS {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} - ")))
            .unwrap_or_else(|| panic!("{name} missing from\n{text}"));
        let want = if want_bad.contains(&name) {
            "BAD!"
        } else if want_missing.contains(&name) {
            "MISSING!"
        } else {
            "OK"
        };
        assert!(
            line.ends_with(&format!(" {want}")) || line.contains(&format!(" {want} (")),
            "{name}: expected {want}: {line}"
        );
    }
    assert!(text.contains("4 OK, 1 BAD, 2 MISSING"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("verify found 1 BAD and 2 MISSING file(s)"),
        "{stderr}"
    );

    // -q: only the problems (and the summary).
    let out = ws.run(&["verify", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let problems: Vec<&str> = text.lines().filter(|l| l.starts_with("//")).collect();
    assert_eq!(problems.len(), 3, "{text}");
    assert!(problems[0].starts_with("//depot/main/a.txt#1 - add change 1 (text) "));
    assert!(problems[0].contains(" BAD! ("), "{text}");
    assert!(problems[1].starts_with("//depot/main/b.bin#1 - add change 1 (binary) "));
    assert!(problems[1].ends_with(" MISSING!"), "{text}");
    assert!(problems[2].starts_with("//depot/rel/b.bin#1 - branch change 3 (binary) "));

    // --json: one object per revision, then the summary.
    let (code, lines) = json_run(&ws, &["verify"]);
    assert_eq!(code, 1);
    let (files, summary) = records(&lines);
    let expected: Vec<(String, String)> = REVISIONS
        .iter()
        .map(|name| {
            let status = if want_bad.contains(name) {
                "BAD!"
            } else if want_missing.contains(name) {
                "MISSING!"
            } else {
                "OK"
            };
            (name.to_string(), status.to_string())
        })
        .collect();
    assert_eq!(files, expected);
    assert_eq!(str_field(summary, "bad"), "1");
    assert_eq!(str_field(summary, "missing"), "2");
    assert_eq!(str_field(summary, "ok"), "4");
    assert_eq!(str_field(summary, "digestType"), "BLAKE3");
    let bad = lines
        .iter()
        .find(|r| r.get("status").is_some_and(|s| s == "BAD!"))
        .expect("the BAD record");
    assert!(bad.get("damage").is_some(), "{bad}");

    // --json -q: only the problem records and the summary.
    let (code, lines) = json_run(&ws, &["verify", "-q"]);
    assert_eq!(code, 1);
    let (files, _) = records(&lines);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "//depot/main/a.txt#1",
            "//depot/main/b.bin#1",
            "//depot/rel/b.bin#1"
        ]
    );

    // Arguments that leave the damage out find nothing wrong, in every syntax.
    for args in [
        vec!["verify", "//depot/main/c.txt"],
        vec!["verify", "//depot/rel/a.txt"],
        vec!["verify", "//depot/main/c.txt", "//depot/rel/a.txt"],
        vec!["verify", "main/c.txt"],
        vec!["verify", "//a/rel/a.txt"],
        vec!["verify", "-s", "//depot/main/s.txt"],
    ] {
        let out = ws.run(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout(&out).contains(" 0 BAD, 0 MISSING;"), "{args:?}");
    }
    // `#2` selects revisions up to 2: the damaged #1 too.
    let out = ws.run(&["verify", "-q", "//depot/main/a.txt#2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("//depot/main/a.txt#1 - "));
}

#[test]
fn shelved_content_is_verified_with_s() {
    let mut fx = Fixture::new();
    let ws = history(&fx);
    let shelved = digest_of(&ws, SHELVED);
    remove_blobs(&mut fx, &[shelved]);
    // Without -s the shelf is not looked at.
    let out = ws.run(&["verify"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let out = ws.run(&["verify", "-s", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let problems: Vec<&str> = text.lines().filter(|l| l.starts_with("//")).collect();
    assert_eq!(problems.len(), 1, "{text}");
    assert!(
        problems[0].starts_with(&format!("{SHELVED} - add change 5 (text) ")),
        "{text}"
    );
    assert!(problems[0].ends_with(" MISSING!"), "{text}");
}

#[test]
fn bad_arguments_are_refused_by_name() {
    let fx = Fixture::new();
    let ws = history(&fx);
    let cases: [(&[&str], &str); 4] = [
        (
            &["verify", "//depot/nothing/..."],
            "//depot/nothing/... - no such file(s)",
        ),
        (
            &["verify", "//nowhere/x.txt"],
            "//nowhere/x.txt - 'nowhere' is neither a depot nor a workspace",
        ),
        (&["verify", "//depot/main/a.txt#bad"], "#bad"),
        // A shelved-only file without -s.
        (
            &["verify", "//depot/main/s.txt"],
            "//depot/main/s.txt - no such file(s)",
        ),
    ];
    for (args, want) in cases {
        let err = ws.fail(args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // A later argument that matches nothing fails the verify after the others were checked.
    let out = ws.run(&["verify", "//depot/main/c.txt", "//depot/nothing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("//depot/main/c.txt#1 - "),
        "{}",
        stdout(&out)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("//depot/nothing - no such file(s)"));
}
