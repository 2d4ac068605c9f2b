//! End-to-end: the commands scripts call beside counters: `interchanges` (the changes not yet
//! integrated, under FROM TO or a branch spec), `cstat` (have/need/partial per change) and
//! `sizes` (from metadata), with their refusals and the protections, and the local `tickets`
//! and `set`.

use crate::access::protect;
use crate::common::{Client, Fixture, str_field, write};

fn edit(c: &Client, rel: &str, content: &str, desc: &str) {
    c.ok(&["edit", rel]);
    write(&c.cwd, rel, content);
    c.ok(&["submit", "-d", desc]);
}

fn change_numbers(c: &Client, args: &[&str]) -> Vec<String> {
    c.json(args)
        .iter()
        .map(|r| str_field(r, "change"))
        .collect()
}

#[test]
fn interchanges_lists_what_integrate_would_still_bring() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "a1\n");
    write(&a.cwd, "main/b.txt", "b1\n");
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "main line"]); // 1
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch rel"]); // 2
    let both = ["//depot/main/...", "//depot/rel/..."];
    let mut args = vec!["interchanges"];
    args.extend(both);
    assert!(change_numbers(&a, &args).is_empty(), "all integrated");

    edit(&a, "main/a.txt", "a2\n", "fix a\nwith a second line"); // 3
    write(&a.cwd, "main/c.txt", "c1\n");
    a.ok(&["add", "main/c.txt"]);
    a.ok(&["submit", "-d", "add c"]); // 4
    edit(&a, "rel/b.txt", "b-rel\n", "rel only"); // 5
    assert_eq!(change_numbers(&a, &args), ["3", "4"]);
    let text = a.ok(&args);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("Change 3 on "), "{text}");
    assert!(lines[0].ends_with(" by alice@a 'fix a'"), "{text}");
    let long = a.ok(&["interchanges", "-l", both[0], both[1]]);
    assert!(long.contains("\n\tfix a\n\twith a second line\n"), "{long}");
    let with_files = a.json(&["interchanges", "-f", both[0], both[1]]);
    assert_eq!(
        with_files[0]["files"],
        serde_json::json!(["//depot/main/a.txt#2"])
    );
    assert_eq!(
        with_files[1]["files"],
        serde_json::json!(["//depot/main/c.txt#1"])
    );

    // Integrating one file leaves only the other change.
    a.ok(&["integrate", "//depot/main/a.txt", "//depot/rel/a.txt"]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "merge a"]); // 6
    assert_eq!(change_numbers(&a, &args), ["4"]);

    // The same through a branch spec; -r asks the other way (rel's own change 5, and the
    // merge 6 that main never took back).
    a.ok(&[
        "branch",
        "create",
        "rel",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
    assert_eq!(change_numbers(&a, &["interchanges", "-b", "rel"]), ["4"]);
    assert_eq!(
        change_numbers(&a, &["interchanges", "-b", "rel", "//depot/rel/a.txt"]),
        Vec::<String>::new()
    );
    let back = change_numbers(&a, &["interchanges", "-b", "rel", "-r"]);
    assert!(back.contains(&"5".to_string()), "{back:?}");
    assert!(!back.contains(&"4".to_string()), "{back:?}");

    // Refusals name what is wrong.
    let err = a.fail(&["interchanges", "//depot/main/..."]);
    assert!(err.contains("FROM TO"), "{err}");
    let err = a.fail(&["interchanges", "-b", "nosuch"]);
    assert!(err.contains("nosuch"), "{err}");

    // A user who may not list the source sees no change of it.
    protect(
        &a,
        &[
            "write user * * //...",
            "list user bob * -//depot/main/c.txt",
            "super user alice * //...",
        ],
    );
    let bob = fx.server.client("bob", "", fx.dir.path());
    assert!(change_numbers(&bob, &args).is_empty());
    assert_eq!(change_numbers(&a, &args), ["4"]);
}

/// `cstat` says, for each change touching the files, whether the workspace has it synced.
#[test]
fn cstat_reports_have_need_and_partial_from_the_have_list() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "a.txt", "a1\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "a"]); // 1
    write(&a.cwd, "b.txt", "b1\n");
    a.ok(&["add", "b.txt"]);
    a.ok(&["submit", "-d", "b"]); // 2
    let b = fx.workspace("bob", "b");
    b.ok(&["sync", "//depot/...@1"]);
    let states = |c: &Client, args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["cstat"];
        all.extend_from_slice(args);
        c.json(&all)
            .iter()
            .map(|r| (str_field(r, "change"), str_field(r, "status")))
            .collect()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(x, y)| (x.to_string(), y.to_string()))
            .collect()
    };
    assert_eq!(states(&b, &[]), pairs(&[("1", "have"), ("2", "need")]));

    a.ok(&["edit", "a.txt", "b.txt"]);
    write(&a.cwd, "a.txt", "a2\n");
    write(&a.cwd, "b.txt", "b2\n");
    a.ok(&["submit", "-d", "both"]); // 3
    b.ok(&["sync", "//depot/a.txt"]);
    assert_eq!(
        states(&b, &[]),
        pairs(&[("1", "have"), ("2", "need"), ("3", "partial")])
    );
    assert_eq!(
        states(&b, &["//depot/a.txt"]),
        pairs(&[("1", "have"), ("3", "have")])
    );
    a.ok(&["delete", "b.txt"]);
    a.ok(&["submit", "-d", "drop b"]); // 4
    b.ok(&["sync"]);
    assert_eq!(
        states(&b, &[]),
        pairs(&[("1", "have"), ("2", "have"), ("3", "have"), ("4", "have")])
    );
    assert_eq!(
        b.ok(&["cstat", "//depot/a.txt"]),
        "... change 1\n... status have\n\n... change 3\n... status have\n\n"
    );
    // Without a workspace there is no have list to read.
    let nobody = fx.server.client("carol", "", fx.dir.path());
    let err = nobody.fail(&["cstat", "//depot/..."]);
    assert!(err.contains("workspace"), "{err}");
}

/// `sizes` reads sizes from metadata: per revision, every revision (-a), totals (-s), blocks.
#[test]
fn sizes_per_revision_all_revisions_and_totals() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "d/one.txt", "x".repeat(100));
    write(&a.cwd, "d/two.bin", vec![7u8; 5000]);
    a.ok(&["add", "d/..."]);
    a.ok(&["submit", "-d", "two files"]);
    edit(&a, "d/one.txt", &"y".repeat(300), "grow one");
    write(&a.cwd, "gone.txt", "z");
    a.ok(&["add", "gone.txt"]);
    a.ok(&["submit", "-d", "gone"]);
    a.ok(&["delete", "gone.txt"]);
    a.ok(&["submit", "-d", "delete gone"]);

    assert_eq!(
        a.ok(&["sizes", "//depot/d/..."]),
        "//depot/d/one.txt#2 300 bytes\n//depot/d/two.bin#1 5000 bytes\n"
    );
    let all = a.json(&["sizes", "-a", "//depot/d/one.txt"]);
    let revs: Vec<(String, String)> = all
        .iter()
        .map(|r| (str_field(r, "rev"), str_field(r, "fileSize")))
        .collect();
    assert_eq!(
        revs,
        [
            ("1".to_string(), "100".to_string()),
            ("2".to_string(), "300".to_string())
        ]
    );
    // Deleted revisions have no content: the deleted file adds nothing.
    assert_eq!(
        a.ok(&["sizes", "-s", "-b", "1024", "//depot/..."]),
        "//depot/... 2 files 5300 bytes 6 blocks\n"
    );
    assert_eq!(
        a.ok(&["sizes", "-s", "-a", "//depot/..."]),
        "//depot/... 4 files 5401 bytes\n"
    );
    assert_eq!(
        a.ok(&["sizes", "-H", "//depot/d/two.bin"]),
        "//depot/d/two.bin#1 4.9K\n"
    );
    let err = a.fail(&["sizes", "-b", "0", "//depot/..."]);
    assert!(err.contains("block size"), "{err}");
    // Files a user may not list are not counted.
    protect(
        &a,
        &[
            "write user * * //...",
            "list user bob * -//depot/d/two.bin",
            "super user alice * //...",
        ],
    );
    let bob = fx.server.client("bob", "", fx.dir.path());
    assert_eq!(
        bob.ok(&["sizes", "-s", "//depot/..."]),
        "//depot/... 1 files 300 bytes\n"
    );
}

/// `tickets` lists the tickets file `login` wrote, without talking to a server.
#[test]
fn tickets_lists_the_tickets_file() {
    let fx = Fixture::new();
    let bob = fx.server.client("bob", "", fx.dir.path());
    let file = fx.dir.path().join("tickets");
    let env = [("KEEL_TICKETS", file.to_str().expect("utf-8 path"))];
    let run = |args: &[&str], stdin: &str| {
        let out = bob.run_with(args, &env, stdin);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(run(&["tickets"], ""), "", "no file yet: no tickets");
    run(&["passwd"], "Bob-Pass-w0rd\nBob-Pass-w0rd\n");
    run(&["login"], "Bob-Pass-w0rd\n");
    let listed = run(&["tickets"], "");
    let prefix = format!("{} (bob) ", fx.server.addr);
    assert!(listed.starts_with(&prefix), "{listed}");
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let json = run(&["--json", "tickets"], "");
    let record: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    assert_eq!(str_field(&record, "user"), "bob");
    assert_eq!(
        listed.trim_end(),
        format!("{prefix}{}", str_field(&record, "ticket"))
    );
    // The server going away does not matter: the file is read locally.
    drop(fx.server);
    assert_eq!(run(&["tickets"], ""), listed);
}

/// `set` says where each client setting came from: a flag, the environment or a `.keel` file.
#[test]
fn set_lists_settings_and_their_sources() {
    let fx = Fixture::new();
    let dir = fx.dir.path().join("proj");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(".keel"), "KEEL_WORKSPACE=from-file\n").expect(".keel");
    let c = fx.server.client("alice", "", &dir);
    let records = c.json(&["set"]);
    let find = |name: &str| {
        records
            .iter()
            .find(|r| str_field(r, "name") == name)
            .map(|r| (str_field(r, "value"), str_field(r, "source")))
    };
    assert_eq!(
        find("KEEL_SERVER"),
        Some((fx.server.addr.clone(), "env".into()))
    );
    let file = format!("config {}", dir.join(".keel").display());
    assert_eq!(find("KEEL_WORKSPACE"), Some(("from-file".into(), file)));
    let text = c.ok(&["--user", "bob", "set"]);
    assert!(text.contains("KEEL_USER=bob (flag)\n"), "{text}");
}
