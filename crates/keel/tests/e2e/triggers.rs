//! End-to-end: the triggers table (`keel triggers -o/-i`) and each trigger type run by the
//! real server: change-submit refusing a submit (the change stays pending with its files
//! open), change-content reading the change with `keel print //...@=N`, change-commit failing
//! without undoing the submit, a trigger killed at its time limit, form-out rewriting a form,
//! form-save refusing one, and the table coming back from a checkpoint and its journal.

use crate::backup::{copy_dir, journals_from, restore_args};
use crate::common::{Client, Fixture, KEEL, Server, field, str_field, write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Writes an executable `#!/bin/sh` script into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Replaces the triggers table with `lines` through `keel triggers -i`.
fn set_triggers(client: &Client, lines: &[String]) {
    let form = format!(
        "Triggers:\n{}\n",
        lines.iter().map(|l| format!("\t{l}\n")).collect::<String>()
    );
    let out = client.run_with_stdin(&["triggers", "-i"], &form);
    assert!(
        out.status.success(),
        "triggers -i failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Triggers saved."
    );
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// (change, status) of every change, newest first.
fn changes(client: &Client) -> Vec<(String, String)> {
    client
        .json(&["changes"])
        .iter()
        .map(|c| (str_field(c, "change"), str_field(c, "status")))
        .collect()
}

/// (depotFile, change) of the workspace's opened files.
fn opened(client: &Client) -> Vec<(String, String)> {
    client
        .json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "change")))
        .collect()
}

#[test]
fn table_round_trips_and_bad_lines_are_refused_naming_them() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let empty = a.ok(&["triggers", "-o"]);
    assert!(empty.trim_end().ends_with("Triggers:"), "{empty}");
    let lines = vec![
        r#"check change-submit //depot/... "/bin/check %change% %user%""#.to_string(),
        r#"check change-submit -//depot/tmp/... "/bin/check %change% %user%""#.to_string(),
        r#"stamp form-out client "/bin/stamp %formfile%""#.to_string(),
    ];
    set_triggers(&a, &lines);
    let shown = a.ok(&["triggers", "-o"]);
    for line in &lines {
        assert!(shown.contains(&format!("\t{line}\n")), "{line} in\n{shown}");
    }
    // `-o` prints a form `-i` takes back unchanged.
    let again = a.run_with_stdin(&["triggers", "-i"], &shown);
    assert!(again.status.success(), "{}", stderr_of(&again));
    let records = a.json(&["triggers", "-o"]);
    assert_eq!(records.len(), 3);
    assert_eq!(str_field(&records[1], "path"), "-//depot/tmp/...");
    assert_eq!(str_field(&records[2], "type"), "form-out");
    assert_eq!(str_field(&records[2], "command"), "/bin/stamp %formfile%");

    // A line that does not parse refuses the whole table, naming the line and the problem.
    let bad = "Triggers:\n\tok change-commit //depot/... /bin/true\n\tcheck change-sumbit //depot/... /bin/x\n";
    let out = a.run_with_stdin(&["triggers", "-i"], bad);
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("triggers line 2 'check change-sumbit //depot/... /bin/x': unknown trigger type 'change-sumbit'"),
        "{err}"
    );
    let out = a.run_with_stdin(
        &["triggers", "-i"],
        "Triggers:\n\tx change-submit //depot/... \"run %chnage%\"\n",
    );
    assert!(
        stderr_of(&out).contains("unknown variable %chnage%"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(
        a.json(&["triggers", "-o"]).len(),
        3,
        "the table is unchanged"
    );
}

#[test]
fn change_submit_refusal_shows_output_commits_nothing_and_leaves_the_change_pending() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let args_file = fx.dir.path().join("args");
    let check = script(
        fx.dir.path(),
        "check.sh",
        &format!(
            "echo \"$@\" > {}\necho \"policy: $2 may not submit\"\necho 'to stderr' >&2\nexit 1",
            args_file.display()
        ),
    );
    set_triggers(
        &a,
        &[format!(
            "check change-submit //depot/src/... \"{} %change% %user% %client% %serverport%\"",
            check.display()
        )],
    );
    write(&a.cwd, "src/a.txt", "one\n");
    write(&a.cwd, "doc/readme", "doc\n");
    a.ok(&["add", "src/a.txt", "doc/readme"]);
    let out = a.run(&["submit", "-d", "first"]);
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("change-submit trigger 'check' failed on change 1 (exit status 1)"),
        "{err}"
    );
    assert!(err.contains("policy: alice may not submit"), "{err}");
    assert!(err.contains("to stderr"), "{err}");
    assert!(err.contains("keel submit -c 1"), "{err}");
    // %args% arrive as whole argv words.
    let args = std::fs::read_to_string(&args_file).expect("the trigger ran");
    assert_eq!(args.trim(), format!("1 alice ws {}", fx.server.addr));
    // Nothing committed: the default changelist became pending change 1, files still open.
    assert_eq!(changes(&a), [("1".to_string(), "pending".to_string())]);
    assert_eq!(
        opened(&a),
        [
            ("//depot/doc/readme".to_string(), "1".to_string()),
            ("//depot/src/a.txt".to_string(), "1".to_string())
        ]
    );
    assert!(!a.run(&["files", "//depot/..."]).status.success());

    // A change whose files the trigger's path does not select is not checked.
    let b = fx.workspace("bob", "bws");
    write(&b.cwd, "doc/other", "x\n");
    b.ok(&["add", "doc/other"]);
    b.ok(&["submit", "-d", "docs only"]);

    // A command that does not exist fails the submit with that message.
    set_triggers(
        &a,
        &["check change-submit //depot/... /nonexistent/check".to_string()],
    );
    let err = a.fail(&["submit", "-c", "1"]);
    assert!(
        err.contains("cannot run '/nonexistent/check': No such file or directory"),
        "{err}"
    );
    // With the table emptied the pending change submits.
    set_triggers(&a, &[]);
    let out = a.ok(&["submit", "-c", "1"]);
    assert!(out.contains("submitted."), "{out}");
    assert!(opened(&a).is_empty());
}

#[test]
fn change_content_reads_the_change_with_print_at_equals_and_can_refuse() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let printed = fx.dir.path().join("printed");
    let check = script(
        fx.dir.path(),
        "content.sh",
        &format!(
            "{keel} print -q //depot/...@=$1 > {out} || exit 2\n\
             if grep -q forbidden {out}; then echo \"change $1 holds a forbidden word\"; exit 1; fi",
            keel = KEEL,
            out = printed.display()
        ),
    );
    set_triggers(
        &a,
        &[format!(
            "scan change-content //depot/... \"{} %change%\"",
            check.display()
        )],
    );
    write(&a.cwd, "a.txt", "hello from the change\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "clean"]);
    assert_eq!(
        std::fs::read_to_string(&printed).expect("the trigger printed"),
        "hello from the change\n"
    );
    a.ok(&["edit", "a.txt"]);
    write(&a.cwd, "a.txt", "a forbidden word\n");
    let err = a.fail(&["submit", "-d", "dirty"]);
    assert!(
        err.contains("change-content trigger 'scan' failed on change 2 (exit status 1)"),
        "{err}"
    );
    assert!(err.contains("change 2 holds a forbidden word"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&printed).expect("printed"),
        "a forbidden word\n",
        "the trigger read the content being submitted"
    );
    // Nothing committed: head is still #1, change 2 pending with the file open in it.
    let files = a.json(&["files", "//depot/..."]);
    assert_eq!(str_field(&files[0], "rev"), "1");
    assert_eq!(changes(&a)[0], ("2".to_string(), "pending".to_string()));
    assert_eq!(opened(&a), [("//depot/a.txt".to_string(), "2".to_string())]);
    // Once the submit is over, `@=2` is no longer readable (nothing is shelved there).
    assert!(!a.run(&["print", "//depot/...@=2"]).status.success());
}

#[test]
fn change_commit_failure_is_reported_and_the_change_stays_submitted() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let seen = fx.dir.path().join("seen");
    let notify = script(
        fx.dir.path(),
        "notify.sh",
        &format!(
            "echo \"$1\" > {}\necho 'mail server unreachable'\nexit 3",
            seen.display()
        ),
    );
    set_triggers(
        &a,
        &[format!(
            "notify change-commit //depot/... \"{} %change%\"",
            notify.display()
        )],
    );
    write(&a.cwd, "a.txt", "one\n");
    a.ok(&["add", "a.txt"]);
    let out = a.run(&["--json", "submit", "-d", "first"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("change-commit trigger 'notify' failed on change 1 (exit status 3); the change is submitted"),
        "{err}"
    );
    assert!(err.contains("mail server unreachable"), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("a record")).expect("json");
    assert_eq!(field(&last, "submittedChange"), 1);
    let failures = field(&last, "triggerFailures")
        .as_array()
        .expect("failures");
    assert_eq!(str_field(&failures[0], "name"), "notify");
    assert_eq!(str_field(&failures[0], "reason"), "exit status 3");
    assert_eq!(std::fs::read_to_string(&seen).expect("ran").trim(), "1");
    assert_eq!(changes(&a), [("1".to_string(), "submitted".to_string())]);
    assert!(opened(&a).is_empty());
}

#[test]
fn a_trigger_past_its_time_limit_is_killed_with_its_process_group() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().join("server");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(
        root.join("keel.toml"),
        "[service]\ntrigger_timeout_ms = 1000\n",
    )
    .expect("config");
    let server = Server::start_at(&root).expect("server starts");
    let ws_root = dir.path().join("ws");
    std::fs::create_dir_all(&ws_root).expect("ws root");
    let a = server.client("alice", "ws", &ws_root);
    a.ok(&[
        "workspace",
        "create",
        "ws",
        "--root",
        ws_root.to_str().expect("utf-8"),
        "--view",
        "//depot/... //ws/...",
    ]);
    let pid_file = dir.path().join("child.pid");
    let slow = script(
        dir.path(),
        "slow.sh",
        &format!(
            "sleep 60 &\necho $! > {}\necho 'checking slowly'\nwait",
            pid_file.display()
        ),
    );
    set_triggers(
        &a,
        &[format!("slow change-submit //depot/... {}", slow.display())],
    );
    write(&ws_root, "a.txt", "one\n");
    a.ok(&["add", "a.txt"]);
    let err = a.fail(&["submit", "-d", "slow"]);
    assert!(
        err.contains("change-submit trigger 'slow' failed on change 1 (killed after its time limit of 1000 ms)"),
        "{err}"
    );
    assert!(err.contains("checking slowly"), "{err}");
    assert_eq!(changes(&a), [("1".to_string(), "pending".to_string())]);
    // The background `sleep` it started was killed with it (its process disappears).
    let pid = std::fs::read_to_string(&pid_file).expect("pid written");
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(&proc_dir) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&proc_dir), "{} still runs", proc_dir.display());
}

/// Whether the process is there and not a zombie.
fn alive(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

#[test]
fn form_out_rewrites_the_form_shown_and_form_save_refuses() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let args_file = fx.dir.path().join("form-args");
    let stamp = script(
        fx.dir.path(),
        "stamp.sh",
        &format!(
            "echo \"$2 $3 $4\" > {}\nsed -i 's/^Host:.*$/Host:\\tbuild-farm/' \"$1\"",
            args_file.display()
        ),
    );
    let needs_id = script(
        fx.dir.path(),
        "needs-id.sh",
        "grep -q 'JIRA-[0-9]' \"$1\" || { echo \"label $2: the description needs a JIRA- id\"; exit 1; }",
    );
    set_triggers(
        &a,
        &[
            format!(
                "stamp form-out workspace \"{} %formfile% %formtype% %formname% %user%\"",
                stamp.display()
            ),
            format!(
                "needs-id form-save label \"{} %formfile% %formname%\"",
                needs_id.display()
            ),
        ],
    );
    let shown = a.ok(&["workspace", "show", "ws"]);
    assert!(shown.contains("Host:\tbuild-farm"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(&args_file).expect("ran").trim(),
        "workspace ws alice"
    );
    let json = a.json(&["workspace", "show", "ws"]);
    assert_eq!(str_field(&json[0], "Host"), "build-farm");
    // Only what is shown changed: the stored spec (listed without form-out) has no host.
    let listed = a.json(&["workspace", "list"]);
    assert!(listed[0].get("Host").is_none(), "{:?}", listed[0]);
    // Other commands read the workspace without running form-out.
    std::fs::remove_file(&args_file).expect("remove");
    write(&a.cwd, "a.txt", "x\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["opened"]);
    assert!(
        !args_file.exists(),
        "form-out ran for a command that shows no form"
    );

    let err = a.fail(&["label", "create", "rel", "-d", "no id here"]);
    assert!(
        err.contains("form-save trigger 'needs-id' failed on label rel (exit status 1)"),
        "{err}"
    );
    assert!(
        err.contains("label rel: the description needs a JIRA- id"),
        "{err}"
    );
    assert!(a.json(&["labels"]).is_empty(), "nothing saved");
    a.ok(&["label", "create", "rel", "-d", "JIRA-7 release"]);
    assert_eq!(a.json(&["labels"]).len(), 1);
    // Other form types are not selected by the label trigger.
    a.ok(&[
        "branch",
        "create",
        "rel-branch",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
}

#[test]
fn the_table_comes_back_from_a_checkpoint_and_its_journal() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    set_triggers(&a, &["one change-commit //depot/... /bin/true".to_string()]);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let number = field(&ckpt[0], "number").as_u64().expect("number");
    // Written after the checkpoint: only the journal has it.
    let after = vec![
        "one change-commit //depot/... /bin/true".to_string(),
        "two form-save branch \"/bin/true %formname%\"".to_string(),
    ];
    set_triggers(&a, &after);
    let journals = journals_from(&fx.server.root, number);
    let new_root = fx.dir.path().join("restored");
    let args = restore_args(&path, &journals, &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    a.ok(&args);
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let r = restored.client("alice", "ws", &a.cwd);
    let table: Vec<String> = r
        .json(&["triggers", "-o"])
        .iter()
        .map(|l| {
            format!(
                "{} {} {} {}",
                str_field(l, "name"),
                str_field(l, "type"),
                str_field(l, "path"),
                str_field(l, "command")
            )
        })
        .collect();
    assert_eq!(
        table,
        [
            "one change-commit //depot/... /bin/true",
            "two form-save branch /bin/true %formname%"
        ]
    );
}

#[test]
fn a_running_trigger_does_not_hold_up_other_submits() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let b = fx.workspace("bob", "bws");
    let started = fx.dir.path().join("started");
    let go = fx.dir.path().join("go");
    // Waits (at most 20 s) until the test says go: the test first submits from bob meanwhile.
    let wait = script(
        fx.dir.path(),
        "wait.sh",
        &format!(
            "touch {started}\ni=0\nwhile [ ! -f {go} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n[ -f {go} ]",
            started = started.display(),
            go = go.display()
        ),
    );
    set_triggers(
        &a,
        &[format!(
            "hold change-content //depot/alice/... {}",
            wait.display()
        )],
    );
    write(&a.cwd, "alice/a.txt", "a\n");
    a.ok(&["add", "alice/a.txt"]);
    let mut alice = a.spawn(&["submit", "-d", "held by its trigger"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(started.exists(), "the trigger started");
    // Alice's trigger is running: bob's submit goes through the writer all the same.
    write(&b.cwd, "bob/b.txt", "b\n");
    b.ok(&["add", "bob/b.txt"]);
    let out = b.ok(&["submit", "-d", "not held"]);
    assert!(out.contains("submitted."), "{out}");
    std::fs::write(&go, "").expect("go");
    let status = alice.wait().expect("alice's submit ends");
    assert!(
        status.success(),
        "alice's submit went through once its trigger passed"
    );
    let files: Vec<String> = a
        .json(&["files", "//depot/..."])
        .iter()
        .map(|f| str_field(f, "depotFile"))
        .collect();
    assert_eq!(files, ["//depot/alice/a.txt", "//depot/bob/b.txt"]);
}

#[test]
fn editing_the_table_keeps_refused_edits() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let edit_with = |body: &str| {
        let editor = script(fx.dir.path(), "editor.sh", body);
        std::process::Command::new(KEEL)
            .args(["triggers"])
            .current_dir(&a.cwd)
            .env_remove("KEEL_WORKSPACE")
            .env("KEEL_SERVER", &a.addr)
            .env("KEEL_USER", &a.user)
            .env("EDITOR", &editor)
            .output()
            .expect("keel runs")
    };
    let out =
        edit_with("printf 'Triggers:\\n\\tgood change-commit //depot/... /bin/true\\n' > \"$1\"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Triggers saved."
    );
    let out = edit_with("printf 'Triggers:\\n\\tbad change-sumbit //depot/... /bin/x\\n' > \"$1\"");
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("unknown trigger type 'change-sumbit'"),
        "{err}"
    );
    let kept = err
        .split("your edits are in ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no kept file named in {err}"));
    let text = std::fs::read_to_string(kept).expect("the edits were kept");
    std::fs::remove_file(kept).expect("remove");
    assert!(text.contains("bad change-sumbit"), "{text}");
    let table = a.json(&["triggers", "-o"]);
    assert_eq!(table.len(), 1);
    assert_eq!(str_field(&table[0], "name"), "good");
}

/// A submit refused for protections changes nothing, with change triggers in the table or
/// without: the default changelist is not made a numbered change first.
#[test]
fn a_submit_refused_for_protections_leaves_the_default_change_as_it_was() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "ws");
    write(&alice.cwd, "pub/a", "a\n");
    alice.ok(&["add", "pub/a"]);
    alice.ok(&["submit", "-d", "first"]);
    let table = "Protections:\n\topen user dave * //...\n\twrite user dave * //depot/own/...\n\tsuper user alice * //...\n";
    let out = alice.run_with_stdin(&["protect", "-i"], table);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let dave = fx.workspace("dave", "dave-ws");
    dave.ok(&["sync"]);
    dave.ok(&["edit", "pub/a"]);
    let pass = script(fx.dir.path(), "pass.sh", "exit 0");
    let with = [format!("pass change-submit //depot/... {}", pass.display())];
    for lines in [&[][..], &with[..]] {
        set_triggers(&alice, lines);
        let pending = alice.json(&["changes", "-s", "pending"]);
        let before = opened(&dave);
        assert_eq!(before, [("//depot/pub/a".to_string(), "0".to_string())]);
        let err = dave.fail(&["submit", "-d", "not allowed"]);
        assert!(
            err.contains(
                "//depot/pub/a - You don't have permission for this operation (needs write access)"
            ),
            "{err}"
        );
        assert!(pending.is_empty(), "{pending:?}");
        assert_eq!(alice.json(&["changes", "-s", "pending"]), pending);
        assert_eq!(opened(&dave), before);
    }
    // With the trigger still in the table, a file dave may write submits (numbered by then).
    write(&dave.cwd, "own/b", "b\n");
    dave.ok(&["revert", "pub/a"]);
    dave.ok(&["add", "own/b"]);
    let out = dave.ok(&["submit", "-d", "allowed"]);
    assert!(out.contains("submitted."), "{out}");
    assert!(opened(&dave).is_empty());
}
