//! Have lists opened from many threads at once: every caller of a new list shares the list, and
//! a list deleted while others write to it is never left open on deleted files (the next write
//! lands in the file a fresh open of the directory reads).

use std::sync::{Arc, Barrier};

use keel_core::DepotPath;
use keel_store::{HaveRow, SqliteHaveStore};

fn row(path: &str, rev: u32) -> HaveRow {
    HaveRow {
        path: DepotPath::parse(path).expect("depot path"),
        rev,
        client: path.trim_start_matches("//depot/").into(),
    }
}

fn path(p: &str) -> DepotPath {
    DepotPath::parse(p).expect("depot path")
}

#[test]
fn threads_opening_one_new_list_all_write_to_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let have = Arc::new(SqliteHaveStore::open(dir.path()).expect("open"));
    let threads = 8;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (have, start) = (have.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                have.apply_keeping_mark("ws", &[row(&format!("//depot/f{i}"), 1)])
                    .expect("apply");
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("thread");
    }
    let reopened = SqliteHaveStore::open(dir.path()).expect("reopen");
    for i in 0..threads {
        assert_eq!(
            reopened
                .get("ws", &path(&format!("//depot/f{i}")))
                .expect("get"),
            1,
            "f{i}"
        );
    }
}

#[test]
fn a_list_dropped_while_written_is_reopened_on_its_new_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let have = Arc::new(SqliteHaveStore::open(dir.path()).expect("open"));
    for round in 0..30u32 {
        let start = Arc::new(Barrier::new(2));
        let writer = {
            let (have, start) = (have.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..5 {
                    // A write racing the deletion may fail: the list is deleted under it.
                    let _ = have.apply("ws", &[row("//depot/a", round * 10 + i)]);
                }
            })
        };
        start.wait();
        have.drop_workspace("ws").expect("drop");
        writer.join().expect("writer");
        // Whatever the order was, the next write goes to the file a fresh open reads.
        have.apply("ws", &[row("//depot/last", round + 1)])
            .expect("apply last");
        let reopened = SqliteHaveStore::open(dir.path()).expect("reopen");
        assert_eq!(
            reopened.get("ws", &path("//depot/last")).expect("get"),
            round + 1,
            "round {round}"
        );
    }
}
