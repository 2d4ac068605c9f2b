//! `SqliteHaveStore::read_list`: the whole list in pages from one read transaction, so a write
//! made while the pages are read shows in neither the pages nor the state returned, and the
//! writer never waits for the reader.

use keel_core::DepotPath;
use keel_store::{HaveRow, SqliteHaveStore, StoreError};

fn row(path: &str, rev: u32) -> HaveRow {
    HaveRow {
        path: DepotPath::parse(path).expect("depot path"),
        rev,
        client: format!("//ws/{}", path.trim_start_matches("//depot/")),
    }
}

#[test]
fn a_read_is_of_one_moment_while_the_list_is_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let have = SqliteHaveStore::open(dir.path()).expect("have store");
    let rows: Vec<HaveRow> = (0..25)
        .map(|i| row(&format!("//depot/f{i:02}"), 1))
        .collect();
    have.apply("ws", &rows).expect("apply");
    let before = have.state("ws").expect("state");

    let mut pages = Vec::new();
    let state = have
        .read_list("ws", 10, |page| {
            if pages.is_empty() {
                // Written between the first page and the next: the read must not see it.
                have.apply("ws", &[row("//depot/f20", 2), row("//depot/zz", 1)])
                    .expect("a write while the list is read");
            }
            pages.push(page);
            Ok::<(), StoreError>(())
        })
        .expect("read_list");

    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![10, 10, 5]
    );
    assert_eq!(pages.concat(), rows, "the list as it was, in path order");
    assert_eq!(state, before, "the state of the entries read");
    let after = have.state("ws").expect("state");
    assert_eq!(after.writes, before.writes + 1, "the write went through");

    // A later read sees it.
    let mut again = Vec::new();
    have.read_list("ws", 100, |page| {
        again.extend(page);
        Ok::<(), StoreError>(())
    })
    .expect("read_list");
    assert_eq!(again.len(), 26);
    assert!(again.contains(&row("//depot/f20", 2)));
}

#[test]
fn an_empty_or_missing_list_reads_as_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let have = SqliteHaveStore::open(dir.path()).expect("have store");
    let mut called = false;
    let state = have
        .read_list("never-written", 10, |_| {
            called = true;
            Ok::<(), StoreError>(())
        })
        .expect("read_list");
    assert!(!called);
    assert_eq!(state.writes, 0);
}
