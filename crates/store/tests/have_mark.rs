//! A have list's sync mark (`HaveMark`): set only while the write counter is as expected,
//! cleared by every `apply`, kept by `apply_keeping_mark`, with and without a journal.

use keel_core::DepotPath;
use keel_store::{HaveMark, HaveRow, SqliteHaveStore, StoreConfig, open_root};

fn row(path: &str, rev: u32) -> HaveRow {
    HaveRow {
        path: DepotPath::parse(path).expect("depot path"),
        rev,
        client: path.trim_start_matches("//depot/").into(),
    }
}

fn mark(change: u64) -> HaveMark {
    HaveMark {
        change,
        removed: 0,
        view: "//depot/... //ws/...".into(),
    }
}

fn check(have: &SqliteHaveStore) {
    let fresh = have.state("ws").expect("state");
    assert_eq!((fresh.writes, fresh.mark.clone()), (0, None));
    // A have list never written takes a mark made against zero writes.
    assert!(have.set_mark("ws", &mark(1), 0).expect("marked"));
    assert_eq!(have.state("ws").expect("state").mark, Some(mark(1)));

    have.apply("ws", &[row("//depot/a", 1)]).expect("apply");
    let after = have.state("ws").expect("state");
    assert_eq!(
        (after.writes, after.mark),
        (1, None),
        "apply clears the mark"
    );

    assert!(
        !have.set_mark("ws", &mark(2), 0).expect("refused"),
        "stale counter"
    );
    assert_eq!(have.state("ws").expect("state").mark, None);
    assert!(have.set_mark("ws", &mark(2), 1).expect("marked"));

    have.apply_keeping_mark("ws", &[row("//depot/b", 3)])
        .expect("apply keeping");
    let kept = have.state("ws").expect("state");
    assert_eq!(
        (kept.writes, kept.mark),
        (1, Some(mark(2))),
        "kept, not counted"
    );
    assert_eq!(
        have.get("ws", &DepotPath::parse("//depot/b").unwrap())
            .unwrap(),
        3
    );

    // Deleting the workspace's have list forgets its mark with it.
    have.drop_workspace("ws").expect("dropped");
    assert_eq!(have.state("ws").expect("state").mark, None);
}

#[test]
fn marks_without_a_journal() {
    let dir = tempfile::tempdir().expect("temp dir");
    check(&SqliteHaveStore::open(dir.path()).expect("have store"));
}

#[test]
fn marks_with_a_journal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stores = open_root(dir.path(), &StoreConfig::default()).expect("root");
    assert!(stores.journal.is_some());
    check(&stores.have);
}
