//! An I/O error under a reader's memory mapping of the database file (here: the file cut short
//! under it, which Linux reports as SIGBUS) fails that read with an error; the process lives on
//! and later readers read with `pread`. Its own test binary: the fault count is per process.

use keel_core::{ChangeNumber, DepotPath, Digest, FileAction, FileType};
use keel_store::{
    ChangeRow, ChangeStatus, MetaStore, PathRange, RevisionRow, SqliteStore, StoreConfig,
    StoreError, mapped_read_faults, write,
};

fn revision(i: u32) -> RevisionRow {
    RevisionRow {
        path: DepotPath::parse(&format!("//depot/dir{}/file{i}.txt", i % 50)).expect("depot path"),
        rev: 1,
        change: ChangeNumber(0),
        action: FileAction::Add,
        file_type: FileType::parse("text").expect("text type"),
        digest: Some(Digest([(i % 251) as u8; 32])),
        size: u64::from(i),
        md5: String::new(),
        time: 0,
        mod_time: 0,
    }
}

fn submit_many(store: &dyn MetaStore, count: u32) {
    write(store, move |txn| {
        let n = txn.allocate_change()?;
        txn.put_change(&ChangeRow {
            change: n,
            status: ChangeStatus::Submitted,
            user: "u".into(),
            workspace: "w".into(),
            description: "many files".into(),
            time: 0,
        })?;
        for i in 0..count {
            let mut r = revision(i);
            r.change = n;
            txn.insert_revision(&r)?;
        }
        Ok::<_, StoreError>(())
    })
    .expect("submit");
}

#[test]
fn a_fault_under_a_mapped_read_fails_that_read_and_later_readers_use_pread() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("meta.db");
    let config = StoreConfig::default();
    assert!(
        config.reader_mmap_bytes > 0,
        "readers map the file by default"
    );
    {
        let store = SqliteStore::open(&path, &config).expect("open");
        submit_many(&store, 5000);
    }
    // Reopened, everything is in the database file itself (closing moved the WAL into it), so
    // readers read every page through their mapping.
    let store = SqliteStore::open(&path, &config).expect("reopen");
    let all = PathRange::prefix("//depot/");
    let before = mapped_read_faults();
    let snap = store.snapshot().expect("snapshot");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_len(4096))
        .expect("database file cut to one page");
    let read = snap.head_revisions(&all, None, None, 10_000);
    assert!(read.is_err(), "a read of missing pages must fail: {read:?}");
    let after_first = mapped_read_faults();
    assert!(
        after_first > before,
        "the read faulted under the mapping ({before} -> {after_first})"
    );
    drop(snap);
    // Readers opened from now on use pread: the same read fails again, as an error, and
    // without another fault.
    let again = store
        .snapshot()
        .and_then(|snap| snap.head_revisions(&all, None, None, 10_000));
    assert!(again.is_err(), "{again:?}");
    assert_eq!(mapped_read_faults(), after_first);
}
