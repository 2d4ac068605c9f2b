//! End-to-end: ignore files (`.p4ignore` syntax) honoured by `add`, `status` and `reconcile`,
//! `keel ignores`, the name taken from `P4IGNORE`/`KEEL_IGNORE`/the `.keel` file, broken
//! patterns refused with their file and line, and a replay of this repository's own history
//! with its `.gitignore` translated, reconciling exactly the files git tracks.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::{Client, Fixture, field, skip_slow, str_field, write};

/// The workspace paths (below the root) of the depot files in `records`.
fn rels(records: &[serde_json::Value]) -> BTreeSet<String> {
    records
        .iter()
        .map(|r| {
            str_field(r, "depotFile")
                .strip_prefix("//depot/")
                .unwrap_or_else(|| panic!("not under //depot/: {r}"))
                .to_string()
        })
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A workspace with ignore files at the root and in `sub`, and files each rule covers or not.
fn ignoring_workspace(fx: &Fixture) -> Client {
    let ws = fx.workspace("alice", "ws");
    write(
        &ws.cwd,
        ".p4ignore",
        "# build output\n*.o\nbuild/\n!keep.o\n",
    );
    write(&ws.cwd, "sub/.p4ignore", "*.tmp\n");
    for rel in [
        "src/a.c",
        "src/a.o",
        "keep.o",
        "build/out.bin",
        "build/deep/x.c",
        "sub/t.tmp",
        "sub/s.c",
        "other.tmp",
    ] {
        write(&ws.cwd, rel, format!("{rel}\n"));
    }
    ws
}

const NOT_IGNORED: &[&str] = &[
    ".p4ignore",
    "keep.o",
    "other.tmp",
    "src/a.c",
    "sub/.p4ignore",
    "sub/s.c",
];

#[test]
fn status_and_reconcile_leave_new_ignored_files_alone_but_not_tracked_ones() {
    let fx = Fixture::new();
    let ws = ignoring_workspace(&fx);
    assert_eq!(rels(&ws.json(&["status"])), set(NOT_IGNORED));
    // -I: every new file.
    let all = rels(&ws.json(&["status", "-I"]));
    assert_eq!(all.len(), 10, "{all:?}");
    assert!(all.contains("build/deep/x.c") && all.contains("src/a.o"));
    assert_eq!(rels(&ws.json(&["reconcile"])), set(NOT_IGNORED));
    assert_eq!(rels(&ws.json(&["opened"])), set(NOT_IGNORED));
    ws.ok(&["submit", "-d", "sources"]);

    // A file added on purpose under an ignored directory stays the workspace's: its edit and
    // its deletion are found although the walk does not read the directory.
    ws.ok(&["add", "-I", "build/out.bin", "src/a.o"]);
    ws.ok(&["submit", "-d", "two ignored files, added with -I"]);
    let out = ws.cwd.join("build/out.bin");
    let mut perms = std::fs::metadata(&out).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&out, perms).unwrap();
    std::fs::write(&out, "changed\n").unwrap();
    std::fs::remove_file(ws.cwd.join("src/a.o")).unwrap();
    let found = ws.json(&["status"]);
    let actions: BTreeSet<(String, String)> = found
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "action")))
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("//depot/build/out.bin", "edit"),
        ("//depot/src/a.o", "delete"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(actions, expected);
}

#[test]
fn add_refuses_a_named_ignored_file_unless_told_and_walks_past_ignored_ones() {
    let fx = Fixture::new();
    let ws = ignoring_workspace(&fx);
    let err = ws.fail(&["add", "src/a.c", "src/a.o"]);
    assert!(
        err.contains("src/a.o - ignored file can't be added"),
        "{err}"
    );
    assert!(!err.contains("a.c -"), "{err}");
    // Refused whole: nothing opened, not even the file that is not ignored.
    assert!(ws.json(&["opened"]).is_empty());
    // Under an ignored directory too.
    let err = ws.fail(&["add", "build/deep/x.c"]);
    assert!(err.contains("ignored file can't be added"), "{err}");
    ws.ok(&["add", "-I", "src/a.o"]);
    assert_eq!(rels(&ws.json(&["opened"])), set(&["src/a.o"]));
    // A directory argument skips what the rules cover.
    ws.ok(&["add", "..."]);
    let mut expected = set(NOT_IGNORED);
    expected.insert("src/a.o".into());
    assert_eq!(rels(&ws.json(&["opened"])), expected);
    let sub = Client {
        cwd: ws.cwd.join("sub"),
        ..ws.clone()
    };
    ws.ok(&["revert", "//depot/..."]);
    sub.ok(&["add", "."]);
    assert_eq!(
        rels(&ws.json(&["opened"])),
        set(&["sub/.p4ignore", "sub/s.c"])
    );
}

#[test]
fn a_broken_pattern_is_refused_naming_the_file_and_line_and_opens_nothing() {
    let fx = Fixture::new();
    let ws = ignoring_workspace(&fx);
    write(&ws.cwd, "sub/.p4ignore", "*.tmp\n# fine so far\nlog[\n");
    for args in [
        &["status"][..],
        &["reconcile"],
        &["add", "sub/s.c"],
        &["clean", "-n"],
    ] {
        let err = ws.fail(args);
        let file = ws.cwd.join("sub/.p4ignore");
        assert!(err.contains(&file.display().to_string()), "{args:?}: {err}");
        assert!(err.contains("line 3"), "{args:?}: {err}");
        assert!(err.contains("log["), "{args:?}: {err}");
    }
    assert!(ws.json(&["opened"]).is_empty());
    // -I reads no ignore file, so it is not stopped by a broken one.
    ws.ok(&["status", "-I"]);
}

#[test]
fn ignores_lists_the_rules_in_effect_and_says_why_a_path_is_ignored() {
    let fx = Fixture::new();
    let ws = ignoring_workspace(&fx);
    let root = ws.cwd.display().to_string();
    let listed = ws.ok(&["ignores"]);
    assert!(listed.contains(&format!("{root}/.../*.o")), "{listed}");
    assert!(listed.contains(&format!("!{root}/.../keep.o")), "{listed}");
    // In `sub`, its own file's rules join the root's.
    let rules: Vec<String> = ws
        .json(&["ignores", "-v", "sub"])
        .iter()
        .map(|r| format!("{}:{}", str_field(r, "rule"), field(r, "line")))
        .collect();
    assert_eq!(rules, ["*.o:2", "build/:3", "!keep.o:4", "*.tmp:1"]);

    let checked = ws.json(&[
        "ignores",
        "-i",
        "src/a.o",
        "keep.o",
        "src/a.c",
        "build/deep/x.c",
    ]);
    let ignored: Vec<bool> = checked
        .iter()
        .map(|r| field(r, "ignored").as_bool().unwrap())
        .collect();
    assert_eq!(ignored, [true, false, false, true]);
    assert_eq!(str_field(&checked[1], "rule"), "!keep.o");
    assert_eq!(str_field(&checked[3], "rule"), "build/");
    let why = ws.ok(&["ignores", "-v", "-i", "src/a.o"]);
    assert!(why.contains("ignored by rule '*.o'"), "{why}");
    assert!(why.contains(".p4ignore:2"), "{why}");
    // Without -v, only the ignored paths are named.
    let plain = ws.ok(&["ignores", "-i", "src/a.o", "src/a.c"]);
    assert!(plain.contains("a.o") && !plain.contains("a.c"), "{plain}");
}

#[test]
fn the_ignore_file_name_comes_from_p4ignore_then_keel_ignore_then_the_keel_file() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    write(&ws.cwd, ".p4ignore", "*.a\n");
    write(&ws.cwd, ".myignore", "*.b\n");
    write(&ws.cwd, ".other", "*.c\n");
    for rel in ["x.a", "x.b", "x.c"] {
        write(&ws.cwd, rel, "x\n");
    }
    let status = |env: &[(&str, &str)]| -> BTreeSet<String> {
        let out = ws.run_with(&["--json", "status"], env, "");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|r| str_field(&r, "depotFile").replace("//depot/", ""))
            .filter(|f| f.starts_with("x."))
            .collect()
    };
    assert_eq!(status(&[]), set(&["x.b", "x.c"]));
    assert_eq!(
        status(&[("KEEL_IGNORE", ".myignore")]),
        set(&["x.a", "x.c"])
    );
    assert_eq!(
        status(&[("P4IGNORE", ".other"), ("KEEL_IGNORE", ".myignore")]),
        set(&["x.a", "x.b"])
    );
    // Several names, and an absolute path that applies to the whole workspace.
    let global = fx.dir.path().join("global-ignore");
    std::fs::write(&global, "x.a\n").unwrap();
    let list = format!(".other;{}", global.display());
    assert_eq!(status(&[("P4IGNORE", &list)]), set(&["x.b"]));
    // The `.keel` file's setting, when neither variable is set.
    write(&ws.cwd, ".keel", "KEEL_IGNORE=.myignore\n");
    assert_eq!(status(&[]), set(&["x.a", "x.c"]));
}

/// Runs git in `repo` and returns its standard output; panics naming the command on failure.
fn git(repo: &Path, args: &[&str], env: &[(&str, &Path)]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .output()
        .unwrap_or_else(|e| panic!("cannot run git {args:?}: {e} (git must be installed)"));
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The files of commit `commit`, as git tracks them.
fn tracked(repo: &Path, commit: &str) -> BTreeSet<String> {
    git(repo, &["ls-tree", "-r", "-z", "--name-only", commit], &[])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Lays commit `commit` of `repo` out in `root` (removing the files of `before` it lacks),
/// through an index of the test's own so the checkout's index is left alone, and translates
/// every `.gitignore` into a `.p4ignore` beside it (which also ignores itself).
fn lay_out(repo: &Path, root: &Path, index: &Path, commit: &str, before: &BTreeSet<String>) {
    let now = tracked(repo, commit);
    for gone in before.difference(&now) {
        let _ = std::fs::remove_file(root.join(gone));
    }
    let env = [("GIT_INDEX_FILE", index)];
    let tree = format!("--work-tree={}", root.display());
    git(repo, &[&tree, "read-tree", commit], &env);
    git(repo, &[&tree, "checkout-index", "-a", "-f"], &env);
    for file in &now {
        if file == ".gitignore" || file.ends_with("/.gitignore") {
            let rules = std::fs::read_to_string(root.join(file)).unwrap();
            let p4ignore = root.join(file).with_file_name(".p4ignore");
            std::fs::write(p4ignore, format!(".p4ignore\n{rules}")).unwrap();
        }
    }
}

/// Build output and data the repository's `.gitignore` covers, as a developer's checkout has.
fn add_junk(root: &Path) {
    for rel in [
        "target/debug/keel",
        "target/debug/deps/libkeel.rlib",
        "target/debug/.fingerprint/keel/output",
        "fuzz/target/x86_64/release/fuzz_view",
        "fuzz/corpus/view/0001",
        "fuzz/artifacts/crash-1",
        ".keel-data/metadata.db",
    ] {
        write(root, rel, format!("junk {rel}\n"));
    }
}

/// The done-when of ignore files: replaying the history of a real public repository (the one
/// these tests run in) with its `.gitignore` translated to `.p4ignore`, `reconcile` opens
/// exactly what each commit changed, and the depot then holds exactly the files git tracks,
/// build output beside them notwithstanding. The last 3 commits always; 20 in the slow run.
#[test]
fn replaying_this_repository_reconciles_exactly_the_files_git_tracks() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inside = Command::new("git")
        .arg("-C")
        .arg(here)
        .args(["rev-parse", "--show-toplevel"])
        .output();
    let repo = match inside {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => panic!(
            "this replay needs the Keel sources to be a git checkout (git rev-parse in {}: {})",
            here.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!("this replay needs git installed: {e}"),
    };
    let repo = Path::new(&repo);
    let depth = if skip_slow("replay of the last 20 commits") {
        3
    } else {
        20
    };
    let max = format!("--max-count={depth}");
    let mut commits: Vec<String> = git(repo, &["rev-list", "--first-parent", &max, "HEAD"], &[])
        .lines()
        .map(str::to_string)
        .collect();
    commits.reverse();
    assert!(!commits.is_empty(), "no commits in {}", repo.display());

    let fx = Fixture::new();
    let ws = fx.workspace("alice", "replay");
    let index = fx.dir.path().join("replay-index");
    let mut before = BTreeSet::new();
    for (step, commit) in commits.iter().enumerate() {
        lay_out(repo, &ws.cwd, &index, commit, &before);
        add_junk(&ws.cwd);
        let now = tracked(repo, commit);
        let p4ignores: BTreeSet<String> = now
            .iter()
            .filter(|f| f.ends_with(".gitignore"))
            .map(|f| f.replace(".gitignore", ".p4ignore"))
            .collect();
        let changed: BTreeSet<String> = if step == 0 {
            now.clone()
        } else {
            git(
                repo,
                &[
                    "diff",
                    "--name-only",
                    "-z",
                    "--no-renames",
                    &commits[step - 1],
                    commit,
                ],
                &[],
            )
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
        };
        // The translated `.p4ignore` files ignore themselves: never opened.
        let opened = rels(&ws.json(&["reconcile"]));
        assert!(opened.is_disjoint(&p4ignores), "{opened:?}");
        assert_eq!(
            opened, changed,
            "reconcile at commit {commit} (step {step})"
        );
        if !opened.is_empty() {
            ws.ok(&["submit", "-d", &format!("replay of {commit}")]);
        }
        let in_depot = rels(
            &ws.json(&["files", "//depot/..."])
                .into_iter()
                .filter(|r| !str_field(r, "action").contains("delete"))
                .collect::<Vec<_>>(),
        );
        assert_eq!(in_depot, now, "the depot after commit {commit}");
        before = now;
    }
}
