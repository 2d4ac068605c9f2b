//! End-to-end: a workspace that syncs again and again while another one submits edits, adds
//! and deletes — with partial syncs, its own submits, a view change and an obliterate in
//! between — always ends up with exactly the depot's head, whichever way the server planned
//! the sync (the have list's mark lets it look only at files changed since the last sync).

use crate::common::{Client, Fixture, bytes, write};
use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `root` (relative path → content).
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).expect("below root");
                let content = std::fs::read(&path).expect("read file");
                out.insert(rel.display().to_string(), content);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// `b` syncs and must hold what `a` (which submitted everything, so is at head) holds.
fn in_step(a: &Client, b: &Client, step: &str) {
    b.ok(&["sync", "-q"]);
    assert_eq!(tree(&b.cwd), tree(&a.cwd), "after {step}");
    assert!(
        b.json(&["sync", "-n"]).is_empty(),
        "nothing left after {step}"
    );
}

fn edit(c: &Client, files: &[&str], seed: u64) {
    let mut args = vec!["edit"];
    args.extend_from_slice(files);
    c.ok(&args);
    for (i, f) in files.iter().enumerate() {
        write(&c.cwd, f, bytes(seed + i as u64, 300 + i * 7));
    }
    c.ok(&["submit", "-d", "edits"]);
}

#[test]
fn repeated_syncs_follow_every_change() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    for i in 0..40 {
        write(
            &a.cwd,
            &format!("d{}/f{i}.txt", i % 4),
            bytes(i, 200 + i as usize),
        );
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "forty files"]);
    in_step(&a, &b, "the first sync");
    in_step(&a, &b, "a sync with nothing to do");

    edit(&a, &["d0/f0.txt", "d1/f1.txt", "d2/f2.txt"], 100);
    write(&a.cwd, "d9/new.txt", "new\n");
    a.ok(&["add", "d9/new.txt"]);
    a.ok(&["delete", "d3/f3.txt"]);
    a.ok(&["submit", "-d", "add and delete"]);
    in_step(&a, &b, "edits, an add and a delete");

    // A partial sync back in time, then a whole sync.
    b.ok(&["sync", "-q", "//depot/d0/f0.txt#1", "//depot/d1/...#none"]);
    edit(&a, &["d2/f6.txt"], 200);
    in_step(&a, &b, "a partial sync to older revisions");

    // Bob's own submit, then Alice edits the same and other files.
    edit(&b, &["d0/f4.txt"], 300);
    a.ok(&["sync", "-q"]);
    edit(&a, &["d0/f4.txt", "d0/f8.txt"], 400);
    in_step(&a, &b, "bob's own submit and later edits");

    // Bob's view narrows, then widens again.
    let root = b.cwd.to_str().expect("utf-8 root").to_string();
    b.ok(&[
        "workspace",
        "create",
        "b",
        "--root",
        &root,
        "--view",
        "//depot/d0/... //b/d0/...",
    ]);
    b.ok(&["sync", "-q"]);
    let narrow: Vec<String> = tree(&b.cwd).into_keys().collect();
    assert!(narrow.iter().all(|p| p.starts_with("d0/")), "{narrow:?}");
    b.ok(&[
        "workspace",
        "create",
        "b",
        "--root",
        &root,
        "--view",
        "//depot/... //b/...",
    ]);
    in_step(&a, &b, "a view change");

    // An obliterated file leaves both workspaces at their next sync.
    a.ok(&["obliterate", "-y", "//depot/d2/f10.txt"]);
    a.ok(&["sync", "-q"]);
    in_step(&a, &b, "an obliterate");
}
