//! End-to-end: the rest of the everyday commands, their flags and their `--json` output.

use crate::common::{Fixture, str_field, write};
use std::os::unix::fs::PermissionsExt;

#[test]
fn types_symlinks_and_executables_round_trip() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "a.txt", "a\n");
    write(&a.cwd, "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(a.cwd.join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    std::os::unix::fs::symlink("a.txt", a.cwd.join("link")).expect("symlink");
    write(&a.cwd, "always.cfg", "w\n");
    a.ok(&["add", "a.txt", "run.sh", "link"]);
    a.ok(&["add", "-t", "+w", "always.cfg"]);
    let mut types: Vec<(String, String)> = a
        .json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "type")))
        .collect();
    types.sort();
    assert_eq!(
        types,
        [
            ("//depot/a.txt".into(), "text".into()),
            ("//depot/always.cfg".into(), "text+w".into()),
            ("//depot/link".into(), "symlink".into()),
            ("//depot/run.sh".into(), "text+x".into()),
        ] as [(String, String); 4]
    );
    a.ok(&["submit", "-d", "types"]);
    b.ok(&["sync"]);
    assert_eq!(
        std::fs::read_link(b.cwd.join("link"))
            .expect("link")
            .to_str(),
        Some("a.txt")
    );
    let mode = std::fs::metadata(b.cwd.join("run.sh"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "executable: {mode:o}");
    assert_eq!(mode & 0o222, 0, "read-only: {mode:o}");
    let cfg = std::fs::metadata(b.cwd.join("always.cfg"))
        .expect("stat")
        .permissions();
    assert!(!cfg.readonly(), "+w files are always writable");
}

#[test]
fn reopen_changes_type_and_change() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "x.dat", "data\n");
    a.ok(&["add", "x.dat"]);
    a.ok(&["reopen", "-t", "binary+l", "x.dat"]);
    let opened = a.json(&["opened"]);
    assert_eq!(str_field(&opened[0], "type"), "binary+l");
    a.ok(&["submit", "-d", "typed"]);
    let fstat = a.json(&["fstat", "//depot/x.dat"]);
    assert_eq!(str_field(&fstat[0], "headType"), "binary+l");
    let err = a.fail(&["reopen", "-c", "77", "x.dat"]);
    assert!(err.contains("x.dat") || err.contains("77"), "{err}");
    write(&a.cwd, "y.dat", "data\n");
    let err = a.fail(&["add", "-t", "+Q", "y.dat"]);
    assert!(err.contains("+Q") && err.contains("'Q'"), "{err}");
    let err = a.fail(&["reopen", "-t", "blob", "x.dat"]);
    assert!(err.contains("blob"), "{err}");
}

#[test]
fn print_diff2_describe_and_changes_filters() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["edit", "a.txt"]);
    write(&a.cwd, "a.txt", "a\nb\n");
    a.ok(&["submit", "-d", "second"]);
    b.ok(&["sync"]);
    b.ok(&["edit", "a.txt"]);
    write(&b.cwd, "a.txt", "a\nb\nc\n");
    b.ok(&["submit", "-d", "bob's"]);

    let out = fx.dir.path().join("printed.txt");
    a.ok(&[
        "print",
        "-o",
        out.to_str().expect("utf-8"),
        "//depot/a.txt#1",
    ]);
    assert_eq!(std::fs::read(&out).expect("printed"), b"a\n");
    let d = a.json(&["diff2", "//depot/a.txt#1", "//depot/a.txt#2"]);
    assert!(str_field(&d[0], "diff").contains("+b"), "{d:?}");

    let described = a.json(&["describe", "-s", "3"]);
    assert_eq!(str_field(&described[0], "user"), "bob");
    assert_eq!(str_field(&described[1], "depotFile"), "//depot/a.txt");
    assert_eq!(str_field(&described[1], "rev"), "3");

    assert_eq!(a.json(&["changes", "-m", "1"]).len(), 1);
    assert_eq!(a.json(&["changes", "-u", "bob"]).len(), 1);
    assert_eq!(a.json(&["changes", "//depot/a.txt"]).len(), 3);
    assert_eq!(a.json(&["changes", "//depot/a.txt@2"]).len(), 2);
    // The status filter travels as an enum; a word the CLI does not know is refused by name.
    assert_eq!(a.json(&["changes", "-s", "submitted"]).len(), 3);
    assert!(a.json(&["changes", "-s", "pending"]).is_empty());
    let err = a.fail(&["changes", "-s", "shelved"]);
    assert!(err.contains("shelved"), "{err}");
    let files = a.json(&["files", "//depot/a.txt@1"]);
    assert_eq!(str_field(&files[0], "rev"), "1");
    let log = a.json(&["filelog", "//depot/a.txt"]);
    let descs: Vec<String> = log.iter().map(|r| str_field(r, "desc")).collect();
    assert_eq!(descs, ["bob's", "second", "first"]);
}

#[test]
fn opened_across_workspaces_and_workspace_delete() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);
    b.ok(&["sync"]);
    a.ok(&["edit", "a.txt"]);
    b.ok(&["edit", "a.txt"]);
    assert_eq!(a.json(&["opened", "-a"]).len(), 2);
    let bobs = a.json(&["opened", "-a", "-u", "bob"]);
    assert_eq!(bobs.len(), 1);
    assert_eq!(str_field(&bobs[0], "client"), "b");
    let err = b.fail(&["workspace", "delete", "b"]);
    assert!(err.contains("opened"), "{err}");
    b.ok(&["revert", "a.txt"]);
    b.ok(&["workspace", "delete", "b"]);
    let names: Vec<String> = a
        .json(&["workspace", "list"])
        .iter()
        .map(|w| str_field(w, "name"))
        .collect();
    assert_eq!(names, ["a"]);
}

/// Runs `keel workspace edit NAME` with an "editor" that applies a sed script to the form.
fn edit_with_sed(
    fx: &Fixture,
    a: &crate::common::Client,
    name: &str,
    sed: &str,
) -> std::process::Output {
    let editor = fx.dir.path().join(format!("editor-{}.sh", sed.len()));
    std::fs::write(&editor, format!("#!/bin/sh\nsed -i '{sed}' \"$1\"\n")).expect("editor");
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::process::Command::new(crate::common::KEEL)
        .args(["workspace", "edit", name])
        .current_dir(&a.cwd)
        .env("KEEL_SERVER", &a.addr)
        .env("KEEL_USER", "alice")
        .env("EDITOR", &editor)
        .output()
        .expect("run edit")
}

#[test]
fn workspace_edit_uses_the_editor_and_validates() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    // An "editor" that turns on allwrite and rmdir.
    let out = edit_with_sed(&fx, &a, "a", "s/noallwrite/allwrite/; s/normdir/rmdir/");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = a.ok(&["workspace", "show", "a"]);
    assert!(
        shown.contains("allwrite") && !shown.contains("noallwrite"),
        "{shown}"
    );

    // allwrite: synced files are writable; rmdir: emptied directories go away.
    write(&a.cwd, "deep/dir/f.txt", "f\n");
    a.ok(&["add", "deep/dir/f.txt"]);
    a.ok(&["submit", "-d", "deep"]);
    assert!(
        !std::fs::metadata(a.cwd.join("deep/dir/f.txt"))
            .expect("stat")
            .permissions()
            .readonly()
    );
    a.ok(&["sync", "//depot/...#none"]);
    assert!(
        !a.cwd.join("deep").exists(),
        "rmdir removed the emptied directories"
    );

    // A broken edit is refused and changes nothing.
    let out = edit_with_sed(&fx, &a, "a", "s/allwrite/sometimeswrite/");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sometimeswrite"));
    assert!(a.ok(&["workspace", "show", "a"]).contains("allwrite"));
}

#[test]
fn keel_config_file_is_found_by_walking_up() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    std::fs::write(
        a.cwd.join(".keel"),
        format!("KEEL_SERVER={}\nKEEL_WORKSPACE=a\n", a.addr),
    )
    .expect("config");
    std::fs::create_dir_all(a.cwd.join("sub/dir")).expect("mkdir");
    let out = std::process::Command::new(crate::common::KEEL)
        .args(["--json", "info"])
        .current_dir(a.cwd.join("sub/dir"))
        .env_remove("KEEL_SERVER")
        .env_remove("KEEL_WORKSPACE")
        .env("KEEL_USER", "alice")
        .output()
        .expect("run info");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(str_field(&info, "clientName"), "a");
    // Flags beat the environment and the file.
    let err = a.fail(&["-w", "nosuch", "opened"]);
    assert!(err.contains("nosuch"), "{err}");
}

#[test]
fn modtime_sets_synced_files_to_their_recorded_modification_time() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "stamped.txt", "when?\n");
    a.ok(&["add", "stamped.txt"]);
    a.ok(&["submit", "-d", "stamp"]);
    let root = fx.dir.path().join("m");
    std::fs::create_dir_all(&root).expect("root");
    let m = fx.server.client("bob", "m", &root);
    m.ok(&[
        "workspace",
        "create",
        "m",
        "--root",
        root.to_str().expect("utf-8"),
        "--options",
        "noallwrite noclobber normdir modtime",
    ]);
    // Let the wall clock move on, so "now" and the submit time differ.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    m.ok(&["sync"]);
    let stat = &m.json(&["fstat", "//depot/stamped.txt"])[0];
    let head_time: u64 = str_field(stat, "headTime").parse().expect("headTime");
    let recorded: u64 = str_field(stat, "headModTime").parse().expect("headModTime");
    let written = std::fs::metadata(a.cwd.join("stamped.txt"))
        .expect("stat")
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    assert_eq!(recorded, written, "submit records the file's own time");
    let modified = std::fs::metadata(root.join("stamped.txt"))
        .expect("stat")
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    assert_eq!(
        modified, recorded,
        "modtime: mtime is the time recorded at submit"
    );
    // Without modtime the file carries the time it was written (after the sleep above).
    let b = fx.workspace("carol", "b");
    b.ok(&["sync"]);
    let written = std::fs::metadata(b.cwd.join("stamped.txt"))
        .expect("stat")
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    assert!(
        written > head_time,
        "no modtime: written {written}, submitted {head_time}"
    );
}

/// Free-text values (descriptions) may start with `-` or `--`, as p4 accepts them.
#[test]
fn descriptions_may_start_with_a_dash() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    let subject = "--no-ignore implies --no-ignore-parent";
    a.ok(&["submit", "-d", subject]);
    let described = a.json(&["describe", "-s", "1"]);
    assert_eq!(str_field(&described[0], "desc").trim_end(), subject);
    assert!(a.ok(&["describe", "-s", "1"]).contains(subject));

    let created = a.json(&["change", "-d", "-x is a flag"]);
    let change = str_field(&created[0], "change");
    let described = a.json(&["describe", "-s", &change]);
    assert_eq!(str_field(&described[0], "desc").trim_end(), "-x is a flag");

    a.ok(&["edit", "a.txt"]);
    let shelved = a.json(&["shelve", "--description", "--shelved"]);
    let change = str_field(&shelved[0], "change");
    let described = a.json(&["describe", "-s", &change]);
    assert_eq!(str_field(&described[0], "desc").trim_end(), "--shelved");

    a.ok(&["label", "create", "rel", "-d", "-x label"]);
    let label = a.json(&["label", "show", "rel"]);
    assert_eq!(str_field(&label[0], "Description").trim_end(), "-x label");

    let view = "//depot/main/... //depot/rel/...";
    a.ok(&["branch", "create", "br", "--view", view, "-d", "--branch"]);
    let branch = a.json(&["branch", "show", "br"]);
    assert_eq!(str_field(&branch[0], "Description").trim_end(), "--branch");

    a.ok(&["depot", "create", "other", "-d", "-x depot"]);
    let root = a.cwd.to_str().expect("utf-8 root").to_string();
    a.ok(&[
        "workspace",
        "create",
        "a2",
        "--root",
        &root,
        "--view",
        "//depot/... //a2/...",
        "--description",
        "--workspace",
    ]);
    let ws = a.json(&["workspace", "show", "a2"]);
    assert_eq!(str_field(&ws[0], "Description").trim_end(), "--workspace");
}

/// `dirs` hides directories whose every file is deleted (at the revision asked) unless `-D`.
#[test]
fn dirs_hides_deleted_directories_unless_dash_big_d() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    for file in ["a/x", "b/y", "c/z1", "c/z2"] {
        write(&a.cwd, file, "x\n");
    }
    a.ok(&["add", "a/x", "b/y", "c/z1", "c/z2"]);
    a.ok(&["submit", "-d", "one"]);
    a.ok(&["delete", "b/y", "c/z1"]);
    a.ok(&["submit", "-d", "two"]);
    write(&a.cwd, "d/w", "x\n");
    a.ok(&["add", "d/w"]);
    a.ok(&["submit", "-d", "three"]);

    let dirs = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["dirs"];
        all.extend_from_slice(args);
        a.json(&all).iter().map(|r| str_field(r, "dir")).collect()
    };
    let d =
        |names: &[&str]| -> Vec<String> { names.iter().map(|n| format!("//depot/{n}")).collect() };
    assert_eq!(dirs(&["//depot/*"]), d(&["a", "c", "d"]));
    assert_eq!(dirs(&["-D", "//depot/*"]), d(&["a", "b", "c", "d"]));
    assert_eq!(dirs(&["//depot/*@1"]), d(&["a", "b", "c"]));
    assert_eq!(dirs(&["//depot/*@2"]), d(&["a", "c"]));
    assert_eq!(dirs(&["-D", "//depot/*@2"]), d(&["a", "b", "c"]));
    assert_eq!(
        a.ok(&["dirs", "//depot/*"]),
        "//depot/a\n//depot/c\n//depot/d\n"
    );

    // A directory whose only subdirectory is deleted lists nothing without -D.
    write(&a.cwd, "e/f/g", "x\n");
    a.ok(&["add", "e/f/g"]);
    a.ok(&["submit", "-d", "four"]);
    a.ok(&["delete", "e/f/g"]);
    a.ok(&["submit", "-d", "five"]);
    let err = a.fail(&["dirs", "//depot/e/*"]);
    assert!(err.contains("//depot/e/* - no such file(s)"), "{err}");
    assert_eq!(dirs(&["-D", "//depot/e/*"]), d(&["e/f"]));
}

/// Every command that takes a revision spec answers `#have` from the workspace's have list,
/// not the head: after `sync @1` in a two-change depot, each sees revision 1 / change 1.
#[test]
fn have_revision_is_honoured_by_every_command() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    write(&ws.cwd, "a.txt", "one\n");
    write(&ws.cwd, "sub/b.txt", "one\n");
    ws.ok(&["add", "a.txt", "sub/b.txt"]);
    ws.ok(&["submit", "-d", "one"]);
    ws.ok(&["edit", "a.txt"]);
    write(&ws.cwd, "a.txt", "two\n");
    ws.ok(&["delete", "sub/b.txt"]);
    ws.ok(&["submit", "-d", "two"]);
    ws.ok(&["sync", "@1"]);
    ws.ok(&["label", "create", "tagged"]);
    ws.ok(&["label", "create", "synced"]);

    // (command line, fields joined by '#' per JSON record, the expected records)
    let both = ["//depot/a.txt#1", "//depot/sub/b.txt#1"];
    let table: &[(&[&str], &[&str], &[&str])] = &[
        (&["files", "//ws/...#have"], &["depotFile", "rev"], &both),
        (&["changes", "//ws/...#have"], &["change"], &["1"]),
        (
            &["changes", "-m", "1", "//ws/...#have"],
            &["change"],
            &["1"],
        ),
        (&["changes", "//ws/a.txt#have"], &["change"], &["1"]),
        (
            &["fstat", "//ws/a.txt#have"],
            &["depotFile", "headRev"],
            &["//depot/a.txt#1"],
        ),
        (
            &["filelog", "//ws/a.txt#have"],
            &["depotFile", "rev"],
            &["//depot/a.txt#1"],
        ),
        (
            &["print", "//ws/a.txt#have"],
            &["depotFile", "rev", "content"],
            &["//depot/a.txt#1#one\n"],
        ),
        (
            &["diff2", "//ws/a.txt#have", "//depot/a.txt#1"],
            &["rev", "rev2", "status"],
            &["1#1#identical"],
        ),
        (&["dirs", "//depot/*#have"], &["dir"], &["//depot/sub"]),
        (&["sync", "-n", "//ws/...#have"], &["depotFile"], &[]),
        (
            &["integrate", "-n", "//depot/...#have", "//depot/rel/..."],
            &["fromFile", "endFromRev"],
            &both,
        ),
        (
            &["tag", "-l", "tagged", "//ws/...#have"],
            &["depotFile", "rev"],
            &both,
        ),
        (
            &["labelsync", "-l", "synced", "//ws/...#have"],
            &["depotFile", "rev"],
            &both,
        ),
        (
            &["files", "//depot/...@tagged"],
            &["depotFile", "rev"],
            &both,
        ),
        (
            &["files", "//depot/...@synced"],
            &["depotFile", "rev"],
            &both,
        ),
    ];
    for (args, fields, want) in table {
        let got: Vec<String> = ws
            .json(args)
            .iter()
            .map(|r| {
                let parts: Vec<String> = fields.iter().map(|f| str_field(r, f)).collect();
                parts.join("#")
            })
            .collect();
        assert_eq!(got, *want, "keel {args:?}");
    }
    // At head the same depot has no subdirectory left and change 2 is the newest.
    ws.fail(&["dirs", "//depot/*"]);
    assert_eq!(
        str_field(&ws.json(&["changes", "-m", "1", "//ws/..."])[0], "change"),
        "2"
    );
}

/// A working copy copied with its `.keel` file names the original workspace: commands that
/// default to the current directory refuse there instead of acting on the original's root.
#[test]
fn copied_working_copy_is_refused_outside_the_root() {
    let fx = Fixture::new();
    let w1 = fx.workspace("alice", "w1");
    std::fs::write(w1.cwd.join(".keel"), "KEEL_WORKSPACE=w1\n").expect("config");
    write(&w1.cwd, "a.txt", "one\n");
    w1.ok(&["add", "a.txt"]);
    w1.ok(&["submit", "-d", "one"]);

    let w2_dir = fx.dir.path().join("w2");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&w1.cwd)
        .arg(&w2_dir)
        .status()
        .expect("run cp");
    assert!(copied.success());
    let local = w2_dir.join("a.txt");
    let mut perms = std::fs::metadata(&local)
        .expect("copied file")
        .permissions();
    perms.set_mode(0o644);
    std::fs::set_permissions(&local, perms).expect("chmod");
    write(&w2_dir, "a.txt", "two\n");
    write(&w2_dir, "new.txt", "new\n");
    // The workspace comes from the copied .keel only, as for a user.
    let w2 = crate::common::Client {
        workspace: String::new(),
        cwd: w2_dir.canonicalize().expect("w2 path"),
        ..w1.clone()
    };
    let root = w1.cwd.display().to_string();
    let refusal =
        |path: &str| format!("Path {path} is not under client's root {root} (workspace w1).");
    let here = w2.cwd.display().to_string();
    for command in [&["status"][..], &["reconcile", "-n"], &["where"]] {
        let err = w2.fail(command);
        assert!(err.contains(&refusal(&here)), "keel {command:?}: {err}");
    }
    // Commands that write workspace files refuse before anything else: the root is elsewhere.
    let elsewhere = format!("workspace w1 has Root {root}, which is neither {here} nor");
    for command in [&["reconcile"][..], &["edit", "a.txt"]] {
        let err = w2.fail(command);
        assert!(err.contains(&elsewhere), "keel {command:?}: {err}");
    }
    let err = w2.fail(&["--root-moved-ok", "edit", "a.txt"]);
    assert!(err.contains(&refusal(&format!("{here}/a.txt"))), "{err}");
    assert!(w1.json(&["opened"]).is_empty(), "nothing was opened in w1");

    // Commands that do not default to the working directory, and depot syntax, still work.
    assert_eq!(str_field(&w2.json(&["info"])[0], "clientName"), "w1");
    assert_eq!(w2.json(&["changes"]).len(), 1);
    assert_eq!(w2.json(&["describe", "-s", "1"]).len(), 2);
    assert_eq!(w2.json(&["files", "//depot/..."]).len(), 1);

    // Inside the root, status defaults to the current directory (`...` below it).
    write(&w1.cwd, "top.txt", "top\n");
    write(&w1.cwd, "sub/new.txt", "new\n");
    let in_sub = crate::common::Client {
        cwd: w1.cwd.join("sub"),
        ..w1.clone()
    };
    let found: Vec<String> = in_sub
        .json(&["status"])
        .iter()
        .map(|r| str_field(r, "depotFile"))
        .collect();
    assert_eq!(found, ["//depot/sub/new.txt"]);
    assert_eq!(w1.json(&["status"]).len(), 2);
}
