//! Journal, online checkpoint and restore, through the real binary: a checkpoint taken while
//! submits and a sync run, a kill -9, a restore into a new root, and the two servers compared
//! answer by answer; a torn journal record; bad input; a full disk during a checkpoint; a crash
//! between the journal's fsync and the COMMIT.

use crate::common::*;
use std::path::{Path, PathBuf};

/// Every answer the comparison covers, as `--json` text.
fn answers(c: &Client, shelf: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut ask = |args: &[&str]| {
        out.push(format!("{args:?}"));
        out.extend(c.json(args).iter().map(|v| v.to_string()));
    };
    ask(&["changes"]);
    ask(&["changes", "-s", "pending"]);
    ask(&["files", "//depot/..."]);
    ask(&["fstat", "//depot/..."]);
    ask(&["filelog", "-i", "//depot/..."]);
    ask(&["integrated", "//depot/..."]);
    ask(&["labels"]);
    ask(&["files", "//depot/...@rel-1"]);
    ask(&["branches"]);
    ask(&["workspace", "list"]);
    ask(&["opened", "-a"]);
    ask(&["have"]);
    ask(&["describe", "-S", shelf]);
    let changes = c.json(&["changes", "-s", "submitted"]);
    for change in changes {
        let n = field(&change, "change").to_string();
        let n = n.trim_matches('"').to_string();
        ask(&["describe", &n]);
    }
    out
}

/// Checkpoint file and journals to restore from, read off the root.
pub(crate) fn journals_from(root: &Path, number: u64) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(root.join("journal"))
        .expect("journal dir")
        .filter_map(|e| {
            let p = e.expect("entry").path();
            let n: u64 = p
                .file_name()?
                .to_str()?
                .strip_prefix("journal.")?
                .parse()
                .ok()?;
            (n >= number).then_some((n, p))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

pub(crate) fn restore_args(ckpt: &str, journals: &[PathBuf], root: &Path) -> Vec<String> {
    let mut args = vec![
        "admin".to_string(),
        "restore".into(),
        "--checkpoint".into(),
        ckpt.into(),
    ];
    for j in journals {
        args.push("--journal".into());
        args.push(j.display().to_string());
    }
    args.push("--root".into());
    args.push(root.display().to_string());
    args
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

#[test]
fn checkpoint_while_submitting_then_kill9_and_restore_answers_identically() {
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let ar = a.cwd.clone();
    for i in 0..6 {
        write(&ar, &format!("main/f{i}.txt"), format!("one {i}\n"));
    }
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["edit", "main/f1.txt"]);
    write(&ar, "main/f1.txt", "two\n");
    a.ok(&["submit", "-d", "second"]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    a.ok(&["tag", "-l", "rel-1", "//depot/rel/..."]);
    a.ok(&[
        "branch",
        "create",
        "mainrel",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
    a.ok(&["edit", "main/f2.txt"]);
    write(&ar, "main/f2.txt", "shelved\n");
    a.ok(&["shelve", "--description", "on the shelf"]);
    let shelf = a.json(&["changes", "-s", "pending"]);
    let shelf = field(&shelf[0], "change")
        .to_string()
        .trim_matches('"')
        .to_string();
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    let c = fx.workspace("carol", "c");
    write(&c.cwd, "c/log.txt", "0\n");
    c.ok(&["add", "c/log.txt"]);
    c.ok(&["submit", "-d", "c0"]);

    // A bounded loop of submits from c and a sync from b run while the checkpoint is taken.
    let busy_c = c.clone();
    let submits = std::thread::spawn(move || {
        for i in 1..=8 {
            busy_c.ok(&["edit", "c/log.txt"]);
            write(&busy_c.cwd, "c/log.txt", format!("{i}\n"));
            busy_c.ok(&["submit", "-d", &format!("c{i}")]);
        }
    });
    let busy_b = b.clone();
    let syncs = std::thread::spawn(move || {
        for _ in 0..3 {
            busy_b.ok(&["sync"]);
        }
    });
    let ckpt = a.json(&["admin", "checkpoint"]);
    submits.join().expect("submits ran");
    syncs.join().expect("syncs ran");
    let ckpt = &ckpt[0];
    let path = str_field(ckpt, "checkpoint");
    let number = field(ckpt, "number").as_u64().expect("number");
    assert!(
        field(ckpt, "records").as_u64().expect("records") > 20,
        "{ckpt}"
    );
    assert!(str_field(ckpt, "journalClosed").ends_with(&format!("journal.{}", number - 1)));
    b.ok(&["sync"]);
    fx.server.kill9();

    let restored_dir = tempfile::tempdir().expect("dir");
    let new_root = restored_dir.path().join("root");
    let journals = journals_from(&fx.server.root, number);
    let args = restore_args(&path, &journals, &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = a.json(&args);
    assert!(
        field(&report[0], "replayed").as_u64().expect("replayed") >= 8,
        "{report:?}"
    );
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));

    fx.server.restart();
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let on = |server: &Server, c: &Client| server.client(&c.user, &c.workspace, &c.cwd);
    for client in [&a, &b, &c] {
        let original = answers(&on(&fx.server, client), &shelf);
        let copy = answers(&on(&restored, client), &shelf);
        assert_eq!(original, copy, "{} answers differently", client.workspace);
    }
    // Every change submitted before the kill is there.
    let changes = on(&restored, &c).json(&["changes", "-s", "submitted"]);
    assert_eq!(changes.len(), 3 + 1 + 8, "{changes:?}");
    // The restored server takes new submits and journals them.
    let rc = on(&restored, &c);
    rc.ok(&["edit", "c/log.txt"]);
    write(&rc.cwd, "c/log.txt", "after\n");
    rc.ok(&["submit", "-d", "after restore"]);
}

#[test]
fn a_torn_last_journal_record_is_skipped_with_a_message() {
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let number = field(&ckpt[0], "number").as_u64().expect("number");
    write(&a.cwd, "one.txt", "1\n");
    a.ok(&["add", "one.txt"]);
    a.ok(&["submit", "-d", "kept"]);
    // The last write makes one main-database record (no have list): the one torn below.
    a.ok(&["label", "create", "torn-label"]);
    fx.server.kill9();
    let journal = journals_from(&fx.server.root, number)
        .pop()
        .expect("journal");
    let copy = fx.dir.path().join("journal.torn");
    std::fs::copy(&journal, &copy).expect("copy");
    let len = std::fs::metadata(&copy).expect("len").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&copy)
        .expect("open")
        .set_len(len - 5)
        .expect("truncate");
    let new_root = fx.dir.path().join("restored");
    let args = restore_args(&path, std::slice::from_ref(&copy), &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = a.run(&args);
    assert!(out.status.success(), "{out:?}");
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("Skipped a torn last record in"), "{note}");
    assert!(note.contains("journal.torn"), "{note}");
    assert!(note.contains("cut short"), "{note}");
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let r = restored.client("alice", "a", &a.cwd);
    let descriptions: Vec<String> = r
        .json(&["changes"])
        .iter()
        .map(|c| str_field(c, "desc"))
        .collect();
    assert_eq!(descriptions.len(), 1, "{descriptions:?}");
    assert!(descriptions[0].starts_with("kept"), "{descriptions:?}");
    let files: Vec<String> = r
        .json(&["files", "//depot/..."])
        .iter()
        .map(|f| str_field(f, "depotFile"))
        .collect();
    assert_eq!(files, ["//depot/one.txt"]);
    assert!(
        r.json(&["labels"]).is_empty(),
        "the torn record was not applied"
    );
}

#[test]
fn restore_refuses_bad_input_naming_the_file() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let d = fx.dir.path();

    let missing = d.join("no-such-checkpoint");
    let args = restore_args(missing.to_str().expect("utf-8"), &[], &d.join("r1"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = a.fail(&args);
    assert!(err.contains("no-such-checkpoint"), "{err}");

    let corrupt = d.join("corrupt");
    let mut bytes = std::fs::read(&path).expect("checkpoint");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&corrupt, &bytes).expect("write");
    let args = restore_args(corrupt.to_str().expect("utf-8"), &[], &d.join("r2"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = a.fail(&args);
    assert!(err.contains("corrupt") && err.contains("digest"), "{err}");
    assert!(!d.join("r2").exists());

    let busy = d.join("busy");
    write(&busy, "x", "x");
    let args = restore_args(&path, &[], &busy);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = a.fail(&args);
    assert!(err.contains("not empty") && err.contains("busy"), "{err}");
}

#[test]
fn a_crash_between_journal_and_commit_is_cut_off_and_restore_agrees() {
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "base.txt", "base\n");
    a.ok(&["add", "base.txt"]);
    a.ok(&["submit", "-d", "base"]);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    let number = field(&ckpt[0], "number").as_u64().expect("number");
    write(&a.cwd, "lost.txt", "lost\n");
    a.ok(&["add", "lost.txt"]);
    let journal = journals_from(&fx.server.root, number)
        .pop()
        .expect("journal");
    let before = std::fs::metadata(&journal).expect("journal").len();
    // The submit's journal record reaches the disk; the server dies before its COMMIT.
    fx.server
        .restart_with(&[("KEEL_FAILPOINTS", "journal.before-commit=abort")]);
    let a = fx.server.client("alice", "a", &a.cwd);
    let _ = a.run(&["submit", "-d", "never committed"]);
    assert!(
        fx.server
            .wait_exit(std::time::Duration::from_secs(30))
            .is_some()
    );
    assert!(std::fs::metadata(&journal).expect("journal").len() > before);
    fx.server.restart();
    let a = fx.server.client("alice", "a", &a.cwd);
    // The restarted server cut the record off: the change is still pending, the file opened.
    assert_eq!(std::fs::metadata(&journal).expect("journal").len(), before);
    assert_eq!(a.json(&["changes", "-s", "submitted"]).len(), 1);
    assert_eq!(a.json(&["opened"]).len(), 1);
    a.ok(&["submit", "-d", "committed this time"]);
    fx.server.kill9();

    let new_root = fx.dir.path().join("restored");
    let journals = journals_from(&fx.server.root, number);
    let args = restore_args(&path, &journals, &new_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    a.ok(&args);
    copy_dir(&fx.server.root.join("content"), &new_root.join("content"));
    fx.server.restart();
    let a = fx.server.client("alice", "a", &a.cwd);
    let restored = Server::start_at(&new_root).expect("restored server starts");
    let r = restored.client("alice", "a", &a.cwd);
    for args in [
        &["changes"][..],
        &["files", "//depot/..."],
        &["opened", "-a"],
    ] {
        assert_eq!(a.json(args), r.json(args), "{args:?}");
    }
}
