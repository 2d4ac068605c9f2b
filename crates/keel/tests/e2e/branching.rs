//! End-to-end: branching and merging with integration history, resolve, and scheduled resolves.

use crate::common::{Client, Fixture, content_files, read, str_field, write};

/// A fixture with `//depot/main/...` holding `files` and a workspace `a` over the whole depot.
fn main_line(files: &[(&str, &str)]) -> (Fixture, Client) {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    for (name, content) in files {
        write(&a.cwd, &format!("main/{name}"), content);
    }
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "main line"]);
    (fx, a)
}

fn edit(c: &Client, rel: &str, content: &str, desc: &str) {
    c.ok(&["edit", rel]);
    write(&c.cwd, rel, content);
    c.ok(&["submit", "-d", desc]);
}

#[test]
fn branch_is_a_lazy_copy_with_history() {
    let (fx, a) = main_line(&[("a.txt", "alpha\n"), ("b/c.txt", "gamma\n")]);
    let blobs = content_files(&fx.server.root);
    let out = a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    assert!(
        out.contains("//depot/rel/a.txt - branch from //depot/main/a.txt#1,#1"),
        "{out}"
    );
    assert_eq!(
        read(&a.cwd, "rel/b/c.txt"),
        b"gamma\n",
        "branched content in the workspace"
    );
    let opened: Vec<String> = a
        .json(&["opened"])
        .iter()
        .map(|o| str_field(o, "action"))
        .collect();
    assert_eq!(opened, ["branch", "branch"]);
    a.ok(&["submit", "-d", "branch rel"]);
    assert_eq!(
        content_files(&fx.server.root),
        blobs,
        "a branch writes no content"
    );
    let fstat = a.json(&["fstat", "//depot/rel/a.txt"]);
    assert_eq!(str_field(&fstat[0], "headAction"), "branch");
    let integ = a.json(&["integrated", "//depot/rel/a.txt"]);
    assert_eq!(str_field(&integ[0], "how"), "branch from");
    assert_eq!(str_field(&integ[0], "fromFile"), "//depot/main/a.txt");
    let back = a.json(&["integrated", "//depot/main/a.txt"]);
    assert_eq!(str_field(&back[0], "how"), "branch into");
    let err = a.fail(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    assert!(err.contains("already integrated"), "{err}");
}

/// (name, base, main edit, rel edit, resolve mode, expected rel content or None when refused)
type MergeCase = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

#[test]
fn merge_scenarios() {
    // (name, base, main edit, rel edit, mode, expected rel content or None when -am refuses)
    let cases: &[MergeCase] = &[
        (
            "edits on both sides without conflict",
            "1\n2\n3\n4\n5\n",
            "one\n2\n3\n4\n5\n",
            "1\n2\n3\n4\nfive\n",
            "m",
            Some("one\n2\n3\n4\nfive\n"),
        ),
        (
            "only the source changed",
            "x\ny\n",
            "x\nY\n",
            "x\ny\n",
            "m",
            Some("x\nY\n"),
        ),
        (
            "only the target changed",
            "x\ny\n",
            "x\ny\n",
            "X\ny\n",
            "m",
            Some("X\ny\n"),
        ),
        (
            "conflict refused by -am",
            "x\n",
            "from main\n",
            "from rel\n",
            "m",
            None,
        ),
        (
            "conflict taken as theirs",
            "x\n",
            "from main\n",
            "from rel\n",
            "t",
            Some("from main\n"),
        ),
        (
            "conflict kept as yours",
            "x\n",
            "from main\n",
            "from rel\n",
            "y",
            Some("from rel\n"),
        ),
        (
            "safe refuses when both changed",
            "x\ny\n",
            "X\ny\n",
            "x\nY\n",
            "s",
            None,
        ),
    ];
    for (name, base, main_edit, rel_edit, mode, expected) in cases {
        let (_fx, a) = main_line(&[("f.txt", base)]);
        a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
        a.ok(&["submit", "-d", "branch"]);
        if main_edit != base {
            edit(&a, "main/f.txt", main_edit, "main edit");
        }
        if rel_edit != base {
            edit(&a, "rel/f.txt", rel_edit, "rel edit");
        }
        if main_edit == base {
            let err = a.fail(&["merge", "//depot/main/...", "//depot/rel/..."]);
            assert!(err.contains("already integrated"), "{name}: {err}");
            continue;
        }
        a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
        let flag = format!("-a{mode}");
        match expected {
            Some(want) => {
                a.ok(&["resolve", &flag]);
                assert_eq!(
                    String::from_utf8_lossy(&read(&a.cwd, "rel/f.txt")),
                    *want,
                    "{name}"
                );
                a.ok(&["submit", "-d", name]);
                let printed = a.ok(&["print", "-q", "//depot/rel/f.txt"]);
                assert_eq!(printed, *want, "{name}: submitted content");
            }
            None => {
                let err = a.fail(&["resolve", &flag]);
                assert!(err.contains("skipped"), "{name}: {err}");
                let err = a.fail(&["submit", "-d", "unresolved"]);
                assert!(err.contains("resolve"), "{name}: {err}");
                a.ok(&["resolve", "-af"]);
                let merged = String::from_utf8_lossy(&read(&a.cwd, "rel/f.txt")).into_owned();
                assert!(
                    merged.contains(">>>> ORIGINAL") && merged.contains("<<<<"),
                    "{name}: {merged}"
                );
            }
        }
    }
}

#[test]
fn repeated_integrations_pick_the_right_base_and_integrate_back() {
    let base = "a\nb\nc\nd\ne\nf\ng\n";
    let (_fx, a) = main_line(&[("f.txt", base)]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    edit(&a, "rel/f.txt", "a\nb\nc\nd\ne\nf\nG-rel\n", "rel work");
    edit(&a, "main/f.txt", "A-main\nb\nc\nd\ne\nf\ng\n", "main 1");
    a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "merge 1"]);
    // The second merge must use main#2 as its base, or line one would conflict.
    edit(
        &a,
        "main/f.txt",
        "A-main\nb\nC-main\nd\ne\nf\ng\n",
        "main 2",
    );
    let opened = a.json(&["merge", "//depot/main/...", "//depot/rel/..."]);
    assert_eq!(str_field(&opened[0], "baseFile"), "//depot/main/f.txt");
    assert_eq!(str_field(&opened[0], "baseRev"), "2");
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "merge 2"]);
    assert_eq!(
        String::from_utf8_lossy(&read(&a.cwd, "rel/f.txt")),
        "A-main\nb\nC-main\nd\ne\nf\nG-rel\n"
    );
    // Integrating back: main takes rel's own change cleanly.
    a.ok(&["merge", "//depot/rel/...", "//depot/main/..."]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "back to main"]);
    assert_eq!(
        String::from_utf8_lossy(&read(&a.cwd, "main/f.txt")),
        "A-main\nb\nC-main\nd\ne\nf\nG-rel\n"
    );
    let how: Vec<String> = a
        .json(&["integrated", "//depot/main/f.txt"])
        .iter()
        .map(|r| str_field(r, "how"))
        .collect();
    // rel held everything main had, so accepting the merge took rel's file whole: a copy.
    assert!(
        how.contains(&"copy from".to_string()) && how.contains(&"branch into".to_string()),
        "{how:?}"
    );
}

#[test]
fn deletes_renames_and_copies_propagate() {
    let (_fx, a) = main_line(&[
        ("gone.txt", "bye\n"),
        ("old.txt", "moving\n"),
        ("same.txt", "s\n"),
    ]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    a.ok(&["delete", "main/gone.txt"]);
    a.ok(&["edit", "main/old.txt"]);
    a.ok(&["move", "main/old.txt", "main/new.txt"]);
    a.ok(&["submit", "-d", "delete and rename"]);
    let integ = a.json(&["integrated", "//depot/main/new.txt"]);
    assert_eq!(str_field(&integ[0], "how"), "moved from");
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    let mut actions: Vec<(String, String)> = a
        .json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "action")))
        .collect();
    actions.sort();
    assert_eq!(
        actions,
        [
            ("//depot/rel/gone.txt".to_string(), "delete".to_string()),
            ("//depot/rel/new.txt".to_string(), "branch".to_string()),
            ("//depot/rel/old.txt".to_string(), "delete".to_string()),
        ]
    );
    a.ok(&["submit", "-d", "propagate"]);
    assert!(!a.cwd.join("rel/gone.txt").exists());
    assert_eq!(read(&a.cwd, "rel/new.txt"), b"moving\n");

    // copy: the target becomes exactly the source, without a resolve.
    edit(&a, "rel/same.txt", "rel version\n", "rel edit");
    edit(&a, "main/same.txt", "main version\n", "main edit");
    a.ok(&["copy", "//depot/main/same.txt", "//depot/rel/same.txt"]);
    a.ok(&["submit", "-d", "copy"]);
    assert_eq!(
        a.ok(&["print", "-q", "//depot/rel/same.txt"]),
        "main version\n"
    );
    let integ = a.json(&["integrated", "//depot/rel/same.txt"]);
    assert!(
        integ.iter().any(|r| str_field(r, "how") == "copy from"),
        "{integ:?}"
    );
}

#[test]
fn sync_schedules_a_resolve_for_an_edited_file() {
    let (fx, a) = main_line(&[("f.txt", "1\n2\n3\n")]);
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    b.ok(&["edit", "main/f.txt"]);
    write(&b.cwd, "main/f.txt", "1\n2\nthree\n");
    edit(&a, "main/f.txt", "one\n2\n3\n", "alice edits");
    let err = b.fail(&["submit", "-d", "bob"]);
    assert!(err.contains("sync"), "{err}");
    let out = b.ok(&["sync"]);
    assert!(out.contains("resolve"), "{out}");
    assert_eq!(
        read(&b.cwd, "main/f.txt"),
        b"1\n2\nthree\n",
        "the opened file is untouched"
    );
    let err = b.fail(&["submit", "-d", "bob"]);
    assert!(err.contains("resolve"), "{err}");
    b.ok(&["resolve", "-am"]);
    assert_eq!(read(&b.cwd, "main/f.txt"), b"one\n2\nthree\n");
    b.ok(&["submit", "-d", "bob merged"]);
    assert_eq!(
        b.ok(&["print", "-q", "//depot/main/f.txt"]),
        "one\n2\nthree\n"
    );
}

#[test]
fn binary_files_are_accepted_whole() {
    let (_fx, a) = main_line(&[("img.bin", "\u{0}base")]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    edit(&a, "main/img.bin", "\u{0}main", "main");
    edit(&a, "rel/img.bin", "\u{0}rel", "rel");
    a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
    let err = a.fail(&["resolve", "-am"]);
    assert!(err.contains("skipped"), "{err}");
    a.ok(&["resolve", "-at"]);
    assert_eq!(read(&a.cwd, "rel/img.bin"), b"\x00main");
    a.ok(&["submit", "-d", "take main"]);
}

#[test]
fn bad_integrations_change_nothing() {
    let (fx, a) = main_line(&[("f.txt", "x\n")]);
    let err = a.fail(&["integrate", "//depot/nowhere/...", "//depot/rel/..."]);
    assert!(err.contains("//depot/nowhere/..."), "{err}");
    let err = a.fail(&["integrate", "//depot/main/...", "//depot/rel/*"]);
    assert!(err.contains("//depot/rel/*"), "{err}");
    // A workspace that cannot see the target.
    let n = fx.workspace_with_view("carol", "narrow", &["//depot/main/... //narrow/main/..."]);
    let err = n.fail(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    assert!(
        err.contains("//depot/rel/f.txt") && err.contains("view"),
        "{err}"
    );
    assert!(n.json(&["opened"]).is_empty());
    let err = a.fail(&["resolve", "-am"]);
    assert!(err.contains("no file(s) to resolve"), "{err}");
    assert!(a.json(&["opened"]).is_empty(), "nothing was opened");
}

#[test]
fn branch_specs_drive_integrate_and_filelog_follows_history() {
    let (_fx, a) = main_line(&[("f.txt", "1\n")]);
    edit(&a, "main/f.txt", "2\n", "main 2");
    a.ok(&[
        "branch",
        "create",
        "rel",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
    a.ok(&["integrate", "-b", "rel"]);
    a.ok(&["submit", "-d", "branch via spec"]);
    assert_eq!(a.json(&["filelog", "//depot/rel/f.txt"]).len(), 1);
    let followed = a.json(&["filelog", "-i", "//depot/rel/f.txt"]);
    let revs: Vec<(String, String)> = followed
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "rev")))
        .collect();
    assert_eq!(
        revs,
        [
            ("//depot/rel/f.txt".to_string(), "1".to_string()),
            ("//depot/main/f.txt".to_string(), "2".to_string()),
            ("//depot/main/f.txt".to_string(), "1".to_string()),
        ]
    );
    assert_eq!(
        str_field(&followed[0], "how"),
        "branch from //depot/main/f.txt#1,#2"
    );
    // -r integrates from the spec's right side back to its left.
    edit(&a, "rel/f.txt", "3\n", "rel work");
    a.ok(&["integrate", "-b", "rel", "-r"]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "back to main"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/main/f.txt"]), "3\n");
    let err = a.fail(&["integrate", "-b", "nosuch"]);
    assert!(err.contains("nosuch"), "{err}");
}

#[test]
fn resolve_asks_on_a_terminal() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let (_fx, a) = main_line(&[("f.txt", "x\n")]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    edit(&a, "main/f.txt", "main\n", "main");
    edit(&a, "rel/f.txt", "rel\n", "rel");
    a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
    let err = a.fail(&["resolve"]);
    assert!(
        err.contains("terminal"),
        "without a terminal resolve needs a mode: {err}"
    );
    // `script` runs resolve on a pseudo-terminal; the answer "at" accepts theirs.
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!("{} resolve", crate::common::KEEL),
            "/dev/null",
        ])
        .current_dir(&a.cwd)
        .env("KEEL_SERVER", &a.addr)
        .env("KEEL_USER", "alice")
        .env("KEEL_WORKSPACE", "a")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"at\n")
        .expect("answer");
    let out = child.wait_with_output().expect("resolve finishes");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("Accept theirs (at)"),
        "the prompt is shown: {shown}"
    );
    assert_eq!(read(&a.cwd, "rel/f.txt"), b"main\n");
    assert_eq!(a.json(&["resolved"]).len(), 1);
}

#[test]
fn obliterating_a_branch_source_keeps_the_branch_readable() {
    let (fx, a) = main_line(&[
        ("keep.txt", "shared by the branch\n"),
        ("solo.txt", "main only\n"),
    ]);
    a.ok(&["integrate", "//depot/main/keep.txt", "//depot/rel/keep.txt"]);
    a.ok(&["submit", "-d", "branch one file"]);
    let before = content_files(&fx.server.root);
    let report = a.ok(&["obliterate", "//depot/main/..."]);
    assert!(report.contains("report mode"), "{report}");
    assert_eq!(
        content_files(&fx.server.root),
        before,
        "report mode deletes nothing"
    );
    a.ok(&["obliterate", "-y", "//depot/main/..."]);
    assert_eq!(
        content_files(&fx.server.root),
        before - 1,
        "only main's unshared content goes"
    );
    assert!(
        a.fail(&["files", "//depot/main/..."])
            .contains("no such file")
    );
    assert_eq!(
        a.ok(&["print", "-q", "//depot/rel/keep.txt"]),
        "shared by the branch\n"
    );
    let err = a.fail(&["integrated", "//depot/rel/keep.txt"]);
    assert!(
        err.contains("no integrations"),
        "records of obliterated files go too: {err}"
    );
}

/// Through the CLI a branch longer than a screenful answers with one summary line: a virtual
/// branch writes nothing into the workspace and its submit lists no file, unless `-v` or
/// `--json` asks for every one (`-q` prints nothing at all).
#[test]
fn long_branches_answer_with_a_summary_unless_the_list_is_asked_for() {
    let names: Vec<String> = (0..120).map(|i| format!("f{i:03}.c")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "int x;\n")).collect();
    let (_fx, a) = main_line(&files);
    assert_eq!(
        a.ok(&["integrate", "-v", "//depot/main/...", "//depot/rel/..."]),
        "120 files opened for branch.\n"
    );
    assert_eq!(
        a.ok(&["submit", "-d", "rel"]),
        "Submitting change 2.\n120 files submitted.\nChange 2 submitted.\n"
    );
    assert!(
        !a.cwd.join("rel").exists(),
        "a virtual branch writes nothing"
    );
    let head = a.json(&["fstat", "//depot/rel/f007.c"]);
    assert_eq!(str_field(&head[0], "headAction"), "branch");
    assert_eq!(a.ok(&["print", "-q", "//depot/rel/f007.c"]), "int x;\n");

    a.ok(&[
        "-q",
        "integrate",
        "-v",
        "//depot/main/...",
        "//depot/rel2/...",
    ]);
    let listed = a.ok(&["-v", "submit", "-d", "rel2"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 122, "{listed}");
    assert_eq!(lines[0], "Submitting change 3.");
    assert_eq!(lines[1], "branch //depot/rel2/f000.c#1");
    assert_eq!(lines[121], "Change 3 submitted.");

    a.ok(&[
        "-q",
        "integrate",
        "-v",
        "//depot/main/...",
        "//depot/rel3/...",
    ]);
    let records = a.json(&["submit", "-d", "rel3"]);
    let submitted: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r.get("depotFile").is_some())
        .collect();
    assert_eq!(submitted.len(), 120);
    assert_eq!(str_field(submitted[0], "depotFile"), "//depot/rel3/f000.c");
    assert_eq!(str_field(submitted[0], "action"), "branch");
    let last = records.last().expect("the change's record");
    assert_eq!(last.get("submittedChange"), Some(&serde_json::json!(4)));

    a.ok(&[
        "-q",
        "integrate",
        "-v",
        "//depot/main/...",
        "//depot/rel4/...",
    ]);
    assert_eq!(a.ok(&["-q", "submit", "-d", "rel4"]), "");
    let described = a.json(&["describe", "-s", "5"]);
    assert_eq!(
        described
            .iter()
            .filter(|r| r.get("depotFile").is_some())
            .count(),
        120
    );
}

/// A branch written into the workspace: a branched file changed there before the submit is
/// uploaded (its history says `edit from`), the others stay lazy copies, and every submitted
/// file is read-only afterwards, whether the submit listed its files or summarized them.
#[test]
fn a_written_branch_uploads_only_its_changed_files_and_leaves_them_read_only() {
    let names: Vec<String> = (0..120).map(|i| format!("f{i:03}.c")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "int x;\n")).collect();
    let (_fx, a) = main_line(&files);
    for (target, pattern, expected) in [
        ("few", "f00*", "Change 2 submitted."),
        ("many", "...", "120 files submitted."),
    ] {
        a.ok(&[
            "integrate",
            &format!("//depot/main/{pattern}"),
            &format!("//depot/{target}/{pattern}"),
        ]);
        let changed = a.cwd.join(target).join("f001.c");
        std::fs::write(&changed, "int y;\n").expect("change a branched file");
        let out = a.ok(&["submit", "-d", target]);
        assert!(out.contains(expected), "{out}");
        // An uploaded branch is recorded as `edit from`, a lazy copy as `branch from`.
        let changed = format!("//depot/{target}/f001.c");
        assert_eq!(a.ok(&["print", "-q", &changed]), "int y;\n");
        let history = a.json(&["integrated", &changed]);
        assert_eq!(str_field(&history[0], "how"), "edit from");
        let same = format!("//depot/{target}/f002.c");
        assert_eq!(a.ok(&["print", "-q", &same]), "int x;\n");
        let history = a.json(&["integrated", &same]);
        assert_eq!(str_field(&history[0], "how"), "branch from");
        for entry in std::fs::read_dir(a.cwd.join(target)).expect("branch written") {
            let path = entry.expect("entry").path();
            let mode = std::fs::metadata(&path).expect("stat").permissions();
            assert!(mode.readonly(), "{} is read-only", path.display());
        }
    }
}

/// `Opened` with `content_only` (what a submit plans from) lists one pending change's
/// content-carrying files, and is refused for any other selection.
#[test]
fn opened_content_only_lists_the_files_a_submit_may_upload() {
    use keel_proto::v1 as pb;
    let (fx, a) = main_line(&[("a.c", "a\n"), ("b.c", "b\n"), ("c.c", "c\n")]);
    a.ok(&["delete", "main/a.c"]);
    a.ok(&["edit", "main/b.c"]);
    a.ok(&["integrate", "-v", "//depot/main/c.c", "//depot/rel/c.c"]);
    let opened = |request: pb::OpenedRequest| -> Result<Vec<String>, tonic::Status> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut client =
                pb::keel_client::KeelClient::connect(format!("http://{}", fx.server.addr))
                    .await
                    .expect("connects");
            let mut stream = client.opened(request).await?.into_inner();
            let mut files = Vec::new();
            while let Some(record) = stream.message().await? {
                files.push(record.depot_file);
            }
            Ok(files)
        })
    };
    let request = pb::OpenedRequest {
        caller: Some(pb::Caller {
            user: "alice".into(),
            workspace: "a".into(),
            host: "test".into(),
            force: false,
        }),
        filter_change: true,
        content_only: true,
        ..Default::default()
    };
    assert_eq!(
        opened(request.clone()).expect("opened"),
        ["//depot/main/b.c", "//depot/rel/c.c"]
    );
    let all = opened(pb::OpenedRequest {
        content_only: false,
        ..request.clone()
    });
    assert_eq!(all.expect("opened").len(), 3);
    let refused = opened(pb::OpenedRequest {
        files: vec!["//depot/main/...".into()],
        ..request
    })
    .expect_err("content_only with files");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("content_only"), "{refused:?}");
}
