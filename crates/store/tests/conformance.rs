//! The metadata store contract, checked against the SQLite backend.

use keel_core::{ChangeNumber, DepotPath, Digest, FileAction, FileType};
use keel_store::{
    ChangeFilter, ChangeRow, ChangeStatus, LazyContent, MetaStore, OpenedRow, PathRange,
    PendingInteg, RevisionRow, SqliteStore, StoreConfig, StoreError, write,
};
use std::sync::Arc;

fn open() -> (tempfile::TempDir, Arc<SqliteStore>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("meta.db"), &StoreConfig::default())
        .expect("open store");
    (dir, Arc::new(store))
}

fn dp(path: &str) -> DepotPath {
    DepotPath::parse(path).expect("depot path")
}

fn rev(path: &str, rev: u32, change: u64, action: FileAction) -> RevisionRow {
    RevisionRow {
        path: dp(path),
        rev,
        change: ChangeNumber(change),
        action,
        file_type: FileType::parse("text").expect("text type"),
        digest: (!action.is_delete()).then_some(Digest([rev as u8; 32])),
        size: 10,
        md5: String::new(),
        time: 0,
        mod_time: 0,
    }
}

/// A file of workspace `w` opened for branch with lazy `digest` content (`owned` as the caller
/// claims it; the store decides what is stored).
fn lazy_copy(path: &str, digest: Digest, owned: bool) -> OpenedRow {
    OpenedRow {
        workspace: "w".into(),
        path: dp(path),
        user: "u".into(),
        change: ChangeNumber(0),
        action: FileAction::Branch,
        file_type: FileType::parse("text").expect("text type"),
        base_rev: 0,
        move_file: None,
        lazy: Some(LazyContent {
            digest,
            size: 10,
            md5: String::new(),
            mod_time: 0,
            owned,
        }),
        integ: None,
        locked: false,
    }
}

fn submit(store: &dyn MetaStore, revs: Vec<RevisionRow>) -> ChangeNumber {
    write(store, move |txn| {
        let n = txn.allocate_change()?;
        txn.put_change(&ChangeRow {
            change: n,
            status: ChangeStatus::Submitted,
            user: "u".into(),
            workspace: "w".into(),
            description: "d".into(),
            time: 0,
        })?;
        for mut r in revs {
            r.change = n;
            txn.insert_revision(&r)?;
        }
        Ok::<_, StoreError>(n)
    })
    .expect("submit")
}

#[test]
fn fresh_store_has_the_default_depot() {
    let (_dir, store) = open();
    let depots = store
        .snapshot()
        .expect("snapshot")
        .list_depots()
        .expect("depots");
    assert_eq!(
        depots.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["depot"]
    );
}

#[test]
fn snapshot_does_not_see_later_commits_and_does_not_block_them() {
    let (_dir, store) = open();
    submit(
        store.as_ref(),
        vec![rev("//depot/a", 1, 0, FileAction::Add)],
    );
    let snap = store.snapshot().expect("snapshot");
    // A write completes while the snapshot is open...
    submit(
        store.as_ref(),
        vec![rev("//depot/b", 1, 0, FileAction::Add)],
    );
    // ...and the snapshot still sees the old state.
    let seen = snap
        .head_revisions(&PathRange::prefix("//depot/"), None, None, 100)
        .expect("heads");
    assert_eq!(seen.len(), 1);
    drop(snap);
    let fresh = store.snapshot().expect("snapshot");
    assert_eq!(
        fresh
            .head_revisions(&PathRange::prefix("//depot/"), None, None, 100)
            .expect("heads")
            .len(),
        2
    );
}

#[test]
fn failed_job_rolls_back_alone() {
    let (_dir, store) = open();
    let result: Result<(), StoreError> = write(store.as_ref(), |txn| {
        txn.insert_revision(&rev("//depot/x", 1, 1, FileAction::Add))?;
        Err(StoreError::Corrupt("refused on purpose".into()))
    });
    assert!(result.is_err());
    let snap = store.snapshot().expect("snapshot");
    assert!(
        snap.revision(&dp("//depot/x"), 1)
            .expect("lookup")
            .is_none()
    );
}

#[test]
fn concurrent_writers_are_grouped_and_all_durable() {
    let (_dir, store) = open();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    submit(
                        store.as_ref(),
                        vec![rev(&format!("//depot/t{t}/f{i}"), 1, 0, FileAction::Add)],
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    let snap = store.snapshot().expect("snapshot");
    let changes = snap
        .list_changes(&ChangeFilter::default(), None, 1000)
        .expect("changes");
    assert_eq!(changes.len(), 200);
    let mut numbers: Vec<u64> = changes.iter().map(|c| c.change.0).collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 200, "change numbers are unique");
}

/// A page bounded by bytes ends after the row that reaches the bound (at least one row), and
/// the next page goes on from there: no change is skipped or repeated.
#[test]
fn change_pages_bounded_by_description_bytes_lose_nothing() {
    let (_dir, store) = open();
    for i in 0..5u64 {
        write(store.as_ref(), move |txn| {
            let n = txn.allocate_change()?;
            txn.put_change(&ChangeRow {
                change: n,
                status: ChangeStatus::Pending,
                user: "u".into(),
                workspace: "w".into(),
                description: "x".repeat(if i == 2 { 5000 } else { 600 }),
                time: 0,
            })
        })
        .expect("change");
    }
    let snap = store.snapshot().expect("snapshot");
    let filter = ChangeFilter::default();
    let mut seen = Vec::new();
    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let rows = snap
            .list_changes_bounded(&filter, before, 100, 1000)
            .expect("page");
        if rows.is_empty() {
            break;
        }
        pages.push(rows.len());
        before = rows.last().map(|r| r.change);
        seen.extend(rows.iter().map(|r| r.change.0));
    }
    // 600 + 600 reach 1000; the 5000-byte row comes alone; then the last two.
    assert_eq!(pages, [2, 1, 2]);
    assert_eq!(seen, [5, 4, 3, 2, 1]);
    let whole = snap.list_changes(&filter, None, 100).expect("unbounded");
    assert_eq!(whole.len(), 5);
}

#[test]
fn head_revisions_honour_change_bound_and_paging() {
    let (_dir, store) = open();
    let c1 = submit(
        store.as_ref(),
        (0..5)
            .map(|i| rev(&format!("//depot/p/{i}"), 1, 0, FileAction::Add))
            .collect(),
    );
    submit(
        store.as_ref(),
        vec![rev("//depot/p/2", 2, 0, FileAction::Edit)],
    );
    let snap = store.snapshot().expect("snapshot");
    let range = PathRange::prefix("//depot/p/");
    let page1 = snap.head_revisions(&range, None, None, 3).expect("page 1");
    let page2 = snap
        .head_revisions(&range, Some(page1[2].path.as_str()), None, 3)
        .expect("page 2");
    let all: Vec<(String, u32)> = page1
        .iter()
        .chain(&page2)
        .map(|r| (r.path.to_string(), r.rev))
        .collect();
    assert_eq!(all.len(), 5);
    assert_eq!(all[2], ("//depot/p/2".to_string(), 2));
    let at_c1 = snap
        .head_revisions(&range, None, Some(c1), 10)
        .expect("at c1");
    assert!(at_c1.iter().all(|r| r.rev == 1));
    assert_eq!(
        snap.head_revision(&dp("//depot/p/2"))
            .expect("head")
            .map(|r| r.rev),
        Some(2)
    );
    assert_eq!(
        snap.head_revision(&dp("//depot/p/none")).expect("head"),
        None
    );
}

/// A page of lookups in one call: the revisions that exist, in the order asked, quotes and
/// other JSON-special characters in paths included.
#[test]
fn revisions_at_answers_a_page_of_lookups_in_order() {
    let (_dir, store) = open();
    submit(
        store.as_ref(),
        vec![
            rev("//depot/q/a", 1, 0, FileAction::Add),
            rev("//depot/q/b \"quoted\"\\x", 1, 0, FileAction::Add),
            rev("//depot/q/c", 1, 0, FileAction::Add),
        ],
    );
    submit(
        store.as_ref(),
        vec![rev("//depot/q/c", 2, 0, FileAction::Edit)],
    );
    let snap = store.snapshot().expect("snapshot");
    let wanted = [
        ("//depot/q/a", 1),
        ("//depot/q/a", 2),
        ("//depot/q/b \"quoted\"\\x", 1),
        ("//depot/q/c", 1),
        ("//depot/q/none", 1),
        ("//depot/q/c", 2),
    ];
    let found: Vec<(String, u32)> = snap
        .revisions_at(&wanted)
        .expect("lookups")
        .iter()
        .map(|r| (r.path.to_string(), r.rev))
        .collect();
    assert_eq!(
        found,
        [
            ("//depot/q/a".to_string(), 1),
            ("//depot/q/b \"quoted\"\\x".to_string(), 1),
            ("//depot/q/c".to_string(), 1),
            ("//depot/q/c".to_string(), 2),
        ]
    );
    for (path, rev) in wanted {
        let one = snap.revision(&dp(path), rev).expect("one lookup");
        assert_eq!(one.is_some(), found.contains(&(path.to_string(), rev)));
    }
    assert!(snap.revisions_at(&[]).expect("no lookups").is_empty());
}

#[test]
fn reopening_keeps_everything() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("meta.db");
    {
        let store = SqliteStore::open(&path, &StoreConfig::default()).expect("open");
        submit(&store, vec![rev("//depot/kept", 1, 0, FileAction::Add)]);
    }
    let store = SqliteStore::open(&path, &StoreConfig::default()).expect("reopen");
    let snap = store.snapshot().expect("snapshot");
    assert!(
        snap.revision(&dp("//depot/kept"), 1)
            .expect("lookup")
            .is_some()
    );
    assert_eq!(
        snap.get_change(ChangeNumber(1))
            .expect("change")
            .map(|c| c.status),
        Some(ChangeStatus::Submitted)
    );
}

#[test]
fn content_stays_in_use_while_any_revision_refers_to_it() {
    let (_dir, store) = open();
    let digest = Digest([7; 32]);
    let with = |path: &str| RevisionRow {
        digest: Some(digest),
        ..rev(path, 1, 0, FileAction::Add)
    };
    // The first revision owns the content; the two copies refer to it lazily.
    submit(
        store.as_ref(),
        vec![with("//depot/a/f"), with("//depot/b/f")],
    );
    submit(store.as_ref(), vec![with("//depot/c/f")]);
    // A workspace has a lazy copy of it open too (say, a branch not yet submitted).
    write(store.as_ref(), move |txn| {
        txn.put_opened(&lazy_copy("//depot/d/f", digest, false))
    })
    .expect("open lazy copy");
    let in_use = |store: &SqliteStore| {
        let snap = store.snapshot().expect("snapshot");
        (
            snap.digest_in_use(&digest).expect("in use"),
            snap.digest_owned(&digest).expect("owned"),
        )
    };
    assert_eq!(in_use(&store), (true, true));
    let open_owned = |store: &SqliteStore| {
        let snap = store.snapshot().expect("snapshot");
        let rows = snap.opened_file(&dp("//depot/d/f")).expect("opened");
        rows[0].lazy.as_ref().map(|l| l.owned)
    };
    assert_eq!(
        open_owned(&store),
        Some(true),
        "the store decides ownership, not the caller"
    );
    let removed = |store: &SqliteStore| {
        let snap = store.snapshot().expect("snapshot");
        snap.revisions_removed().expect("counter")
    };
    assert_eq!(removed(&store), 0);
    // Deleting the owner hands the content to a surviving copy.
    let adopted = write(store.as_ref(), move |txn| {
        txn.delete_revision(&dp("//depot/a/f"), 1)?;
        txn.adopt_lazy_copies(&[digest, digest])
    })
    .expect("delete owner");
    assert_eq!(adopted, 1, "exactly one copy becomes the owner");
    assert_eq!(in_use(&store), (true, true));
    // The new owner goes too: the last copy takes over.
    for path in ["//depot/b/f", "//depot/c/f"] {
        let owner = {
            let snap = store.snapshot().expect("snapshot");
            snap.digest_owned(&digest).expect("owned")
                && snap.revision(&dp(path), 1).expect("revision").is_some()
        };
        assert!(owner);
        write(store.as_ref(), move |txn| {
            txn.delete_revision(&dp(path), 1)?;
            txn.adopt_lazy_copies(&[digest])
        })
        .expect("delete copy");
    }
    assert_eq!(
        in_use(&store),
        (true, false),
        "no revision refers to it any more, but the open record does"
    );
    assert_eq!(open_owned(&store), Some(false), "adopting cleared the mark");
    assert_eq!(removed(&store), 3, "every deleted revision is counted");
    write(store.as_ref(), move |txn| {
        txn.delete_opened("w", &dp("//depot/d/f"))
    })
    .expect("revert");
    assert_eq!(
        in_use(&store),
        (false, false),
        "nothing refers to it any more"
    );
    // Nothing left to adopt: a no-op.
    let adopted =
        write(store.as_ref(), move |txn| txn.adopt_lazy_copies(&[digest])).expect("adopt nothing");
    assert_eq!(adopted, 0);
}

#[test]
fn an_open_record_known_to_be_owned_skips_the_lookup_but_reads_back_the_same() {
    let (_dir, store) = open();
    let digest = Digest([9; 32]);
    submit(
        store.as_ref(),
        vec![RevisionRow {
            digest: Some(digest),
            ..rev("//depot/src/f", 1, 0, FileAction::Add)
        }],
    );
    let (looked_up, known) = (
        lazy_copy("//depot/b1/f", digest, true),
        lazy_copy("//depot/b2/f", digest, true),
    );
    write(store.as_ref(), move |txn| {
        txn.put_opened(&looked_up)?;
        txn.put_opened_owned(&known)
    })
    .expect("open copies");
    let snap = store.snapshot().expect("snapshot");
    let b1 = snap.opened_file(&dp("//depot/b1/f")).expect("b1");
    let b2 = snap.opened_file(&dp("//depot/b2/f")).expect("b2");
    assert_eq!(b1[0].lazy, b2[0].lazy);
    assert_eq!(b2[0].lazy.as_ref().map(|l| l.owned), Some(true));
    // Owned copies are left out of the lazy-digest index, so only the revision keeps the
    // content in use; without it nothing would.
    assert!(snap.digest_in_use(&digest).expect("in use"));
    drop(snap);
    // A revision known to copy owned content is stored as a lazy copy: it does not own it.
    let copy = RevisionRow {
        digest: Some(digest),
        ..rev("//depot/b3/f", 1, 0, FileAction::Branch)
    };
    write(store.as_ref(), move |txn| {
        txn.insert_revision_owned(&copy)?;
        txn.delete_revision(&dp("//depot/src/f"), 1)
    })
    .expect("copy, then delete the owner without adopting");
    let snap = store.snapshot().expect("snapshot");
    assert!(
        snap.revision(&dp("//depot/b3/f"), 1)
            .expect("copy")
            .is_some()
    );
    assert!(!snap.digest_owned(&digest).expect("owned"));
}

#[test]
fn open_records_read_back_their_typed_paths() {
    let (_dir, store) = open();
    let integ = |base: Option<(DepotPath, u32)>| PendingInteg {
        from_path: dp("//depot/main/f"),
        from_start: 1,
        from_end: 3,
        base,
        resolved: false,
        how: None,
    };
    let rows = vec![
        OpenedRow {
            integ: Some(integ(Some((dp("//depot/base/f"), 2)))),
            ..lazy_copy("//depot/rel/f", Digest([1; 32]), false)
        },
        OpenedRow {
            integ: Some(integ(None)),
            ..lazy_copy("//depot/rel/g", Digest([2; 32]), false)
        },
        OpenedRow {
            action: FileAction::MoveAdd,
            move_file: Some(dp("//depot/rel/old")),
            lazy: None,
            ..lazy_copy("//depot/rel/new", Digest([3; 32]), false)
        },
    ];
    let written = rows.clone();
    write(store.as_ref(), move |txn| {
        for row in &written {
            txn.put_opened(row)?;
        }
        Ok::<_, StoreError>(())
    })
    .expect("open files");
    let snap = store.snapshot().expect("snapshot");
    for row in rows {
        let got = snap.opened_file(&row.path).expect("opened");
        assert_eq!(
            got,
            [row],
            "no merge base reads back as none, not as an empty path"
        );
    }
}

#[test]
fn a_lock_reads_back_and_a_file_locked_elsewhere_is_unsubmittable() {
    let (_dir, store) = open();
    let mine = OpenedRow {
        action: FileAction::Add,
        lazy: None,
        ..lazy_copy("//depot/l/f", Digest([4; 32]), false)
    };
    let theirs = OpenedRow {
        workspace: "other".into(),
        locked: true,
        ..mine.clone()
    };
    let (a, b) = (mine.clone(), theirs.clone());
    write(store.as_ref(), move |txn| {
        txn.put_opened(&a)?;
        txn.put_opened(&b)
    })
    .expect("open files");
    let snap = store.snapshot().expect("snapshot");
    assert_eq!(
        snap.opened_file(&mine.path).expect("opened"),
        [theirs.clone(), mine.clone()]
    );
    assert_eq!(
        snap.first_unsubmittable("w", ChangeNumber(0))
            .expect("check"),
        Some(mine.path.clone()),
        "locked by another workspace"
    );
    assert_eq!(
        snap.first_unsubmittable("other", ChangeNumber(0))
            .expect("check"),
        None,
        "its own lock does not stop the holder"
    );
    drop(snap);
    let unlocked = OpenedRow {
        locked: false,
        ..theirs
    };
    write(store.as_ref(), move |txn| txn.put_opened(&unlocked)).expect("unlock");
    let snap = store.snapshot().expect("snapshot");
    assert_eq!(
        snap.first_unsubmittable("w", ChangeNumber(0))
            .expect("check"),
        None
    );
}

#[test]
fn committed_pages_reach_the_database_file_without_a_checkpoint_in_the_commit() {
    let (dir, store) = open();
    let db = dir.path().join("meta.db");
    let size = || std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    let before = size();
    // About 1.5 MB of pages: far more than the fresh file holds, yet below SQLite's own
    // automatic checkpoint (1,000 pages), which would otherwise run inside the commit.
    let revs = (0..2_000)
        .map(|i| {
            rev(
                &format!("//depot/bulk/{i:06}/{}", "x".repeat(300)),
                1,
                0,
                FileAction::Add,
            )
        })
        .collect();
    submit(store.as_ref(), revs);
    // The checkpoint thread copies the pages over shortly after; wait at most 10 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size() <= before + 500_000 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        size() > before + 500_000,
        "database file grew from {before} to only {} bytes",
        size()
    );
    // Nothing was lost on the way.
    let snap = store.snapshot().expect("snapshot");
    let first = format!("//depot/bulk/000000/{}", "x".repeat(300));
    assert!(snap.revision(&dp(&first), 1).expect("lookup").is_some());
}

#[test]
fn the_wal_is_cut_back_after_a_burst_of_writes() {
    let (dir, store) = open();
    let wal = dir.path().join("meta.db-wal");
    let size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    // Several MB of pages in one commit: past the default WAL size limit (4 MiB).
    let revs = (0..15_000)
        .map(|i| {
            rev(
                &format!("//depot/burst/{i:06}/{}", "y".repeat(200)),
                1,
                0,
                FileAction::Add,
            )
        })
        .collect();
    submit(store.as_ref(), revs);
    let peak = size();
    assert!(peak > 4 << 20, "the burst grew the WAL to {peak} bytes");
    // A snapshot still reading from the log keeps it for a while (quiet intervals pass)...
    let pinned = store.snapshot().expect("snapshot");
    assert!(
        pinned
            .revision(&dp("//depot/none"), 1)
            .expect("read")
            .is_none()
    );
    std::thread::sleep(std::time::Duration::from_millis(800));
    drop(pinned);
    // ...and once it is gone, with no more commits, the checkpoint thread empties the WAL;
    // wait at most 10 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        size(),
        0,
        "WAL still {} bytes after the burst ({peak})",
        size()
    );
    // Nothing was lost on the way, and writing goes on.
    submit(
        store.as_ref(),
        vec![rev("//depot/after", 1, 0, FileAction::Add)],
    );
    let snap = store.snapshot().expect("snapshot");
    let first = format!("//depot/burst/000000/{}", "y".repeat(200));
    assert!(snap.revision(&dp(&first), 1).expect("lookup").is_some());
    assert!(
        snap.revision(&dp("//depot/after"), 1)
            .expect("lookup")
            .is_some()
    );
}

#[test]
fn jobs_written_counts_the_jobs_that_kept_their_changes() {
    let (_dir, store) = open();
    let written = |store: &SqliteStore| {
        let snap = store.snapshot().expect("snapshot");
        snap.jobs_written().expect("counter")
    };
    let before = written(&store);
    let snap = store.snapshot().expect("snapshot");
    let seen = snap.jobs_written().expect("counter");
    assert_eq!(seen, before);
    // A job that rolls back changes nothing and is not counted; one that keeps is.
    let failed = write(store.as_ref(), |txn| {
        txn.ensure_user("ghost", 0)?;
        Err::<(), _>(StoreError::JobLost)
    });
    assert!(failed.is_err());
    assert_eq!(written(&store), before);
    let in_job = write(store.as_ref(), |txn| {
        let seen = txn.jobs_written()?;
        txn.ensure_user("u", 0)?;
        Ok::<_, StoreError>(seen)
    })
    .expect("job kept");
    assert_eq!(in_job, before, "a job sees the count before itself");
    assert_eq!(written(&store), before + 1);
    // The earlier snapshot still sees the old count: it can tell something was written since.
    assert_eq!(snap.jobs_written().expect("counter"), seen);
    drop(snap);
    // Jobs grouped into one transaction are counted one by one.
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let store = store.clone();
                scope.spawn(move || {
                    write(store.as_ref(), move |txn| {
                        let seen = txn.jobs_written()?;
                        txn.ensure_user(&format!("user{i}"), 0)?;
                        Ok::<_, StoreError>(seen)
                    })
                    .expect("job kept")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let mut sorted = counts.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [before + 1, before + 2, before + 3, before + 4]);
    assert_eq!(written(&store), before + 5);
}

/// The live skip-scan steps over the directory's own files and over files deleted at head
/// (by delete or move/delete), finds a live file after dead ones in the same subdirectory, and
/// counts a file deleted and added again as live.
#[test]
fn live_subdir_scan_skips_files_deleted_at_head() {
    let (_dir, store) = open();
    let adds = [
        "//depot/d/own.txt",
        "//depot/d/a/gone.txt",
        "//depot/d/b/moved.txt",
        "//depot/d/b/z/live.txt",
        "//depot/d/c/old.txt",
        "//depot/d/c/x.txt",
        "//depot/d/e/back.txt",
    ];
    submit(
        store.as_ref(),
        adds.iter().map(|p| rev(p, 1, 0, FileAction::Add)).collect(),
    );
    submit(
        store.as_ref(),
        vec![
            rev("//depot/d/a/gone.txt", 2, 0, FileAction::Delete),
            rev("//depot/d/b/moved.txt", 2, 0, FileAction::MoveDelete),
            rev("//depot/d/c/old.txt", 2, 0, FileAction::Delete),
            rev("//depot/d/c/x.txt", 2, 0, FileAction::Edit),
            rev("//depot/d/e/back.txt", 2, 0, FileAction::Delete),
        ],
    );
    submit(
        store.as_ref(),
        vec![rev("//depot/d/e/back.txt", 3, 0, FileAction::Add)],
    );
    let snap = store.snapshot().expect("snapshot");
    let range = PathRange::prefix("//depot/d/");
    let mut live = Vec::new();
    let mut all = Vec::new();
    let mut after = "//depot/d/".to_string();
    while let Some(path) = snap.next_live_subdir_path(&range, &after).expect("scan") {
        after = path.to_string();
        live.push(path.to_string());
    }
    let mut after = "//depot/d/".to_string();
    while let Some(path) = snap.next_subdir_path(&range, &after).expect("scan") {
        after = path.to_string();
        all.push(path.to_string());
    }
    assert_eq!(
        live,
        [
            "//depot/d/b/z/live.txt",
            "//depot/d/c/x.txt",
            "//depot/d/e/back.txt"
        ]
    );
    assert_eq!(all.len(), 6, "{all:?}");
    // Where a range holds no delete, the plain scan is the live one.
    for (prefix, any) in [
        ("//depot/d/", true),
        ("//depot/d/a/", true),
        ("//depot/d/b/", true),
        ("//depot/d/b/z/", false),
        ("//depot/d/c/", true),
        ("//depot/d/e/", true),
        ("//depot/d/own", false),
        ("//depot/x/", false),
    ] {
        let found = snap
            .any_delete_in(&PathRange::prefix(prefix))
            .expect("probe");
        assert_eq!(found, any, "{prefix}");
    }
}

#[test]
fn a_have_lists_wal_stays_small_after_a_big_sync() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = StoreConfig {
        have_wal_size_limit_bytes: 256 << 10,
        ..StoreConfig::default()
    };
    let haves = keel_store::SqliteHaveStore::open_with(dir.path(), &config).expect("open");
    // 30,000 entries in batches of 1,000, as a client reports a big sync.
    for batch in 0..30 {
        let rows: Vec<keel_store::HaveRow> = (0..1_000)
            .map(|i| keel_store::HaveRow {
                path: dp(&format!("//depot/tree/d{batch:03}/file{i:05}.rs")),
                client: format!("tree/d{batch:03}/file{i:05}.rs"),
                rev: 1,
            })
            .collect();
        haves.apply("ws", &rows).expect("apply");
    }
    let wal = std::fs::metadata(dir.path().join("ws.db-wal")).map_or(0, |m| m.len());
    let db = std::fs::metadata(dir.path().join("ws.db"))
        .expect("db")
        .len();
    // Checkpointed at the limit and cut back to it: never the whole list again beside it.
    let limit = config.have_wal_size_limit_bytes as u64;
    assert!(
        wal <= 2 * limit,
        "WAL {wal} bytes beside a {db}-byte have list"
    );
    assert!(
        db > 2 * limit,
        "the list itself is larger ({db} bytes) than the WAL may be"
    );
    assert_eq!(
        haves
            .get("ws", &dp("//depot/tree/d000/file00000.rs"))
            .expect("get"),
        1
    );
}

#[test]
fn an_idle_have_lists_wal_is_emptied() {
    let dir = tempfile::tempdir().expect("temp dir");
    let haves = keel_store::SqliteHaveStore::open(dir.path()).expect("open");
    let rows: Vec<keel_store::HaveRow> = (0..2_000)
        .map(|i| keel_store::HaveRow {
            path: dp(&format!("//depot/idle/file{i:05}.rs")),
            client: format!("idle/file{i:05}.rs"),
            rev: 1,
        })
        .collect();
    haves.apply("ws", &rows).expect("apply");
    let wal = dir.path().join("ws.db-wal");
    let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(size() > 0, "the write went through the log");
    // No more writes: the log is emptied after a quiet interval; wait at most 10 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(size(), 0, "the idle have list's WAL was emptied");
    // The entries are in the list itself, and writing goes on.
    assert_eq!(
        haves
            .get("ws", &dp("//depot/idle/file01999.rs"))
            .expect("get"),
        1
    );
    haves
        .apply(
            "ws",
            &[keel_store::HaveRow {
                path: dp("//depot/idle/after.rs"),
                client: "idle/after.rs".into(),
                rev: 2,
            }],
        )
        .expect("apply after");
    assert_eq!(
        haves.get("ws", &dp("//depot/idle/after.rs")).expect("get"),
        2
    );
}

/// The typemap is replaced whole, read back in its order (exclusions and quoted patterns
/// included), kept across a reopen, and left alone by a failed job.
#[test]
fn typemap_is_replaced_whole_and_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("meta.db");
    let lines: Vec<String> = [
        "binary+lS2 //depot/....bin",
        "text+k //depot/src/...",
        "binary -//depot/src/vendor/...",
        "+x \"//depot/with space/...\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let table = keel_core::parse_typemap(&lines).expect("table");
    {
        let store = SqliteStore::open(&path, &StoreConfig::default()).expect("open");
        assert!(
            store
                .snapshot()
                .expect("snap")
                .typemap()
                .expect("read")
                .is_empty()
        );
        let all = table.clone();
        write(&store, move |txn| txn.replace_typemap(&all)).expect("replace");
        let refused: Result<(), StoreError> = write(&store, |txn| {
            txn.replace_typemap(&[])?;
            Err(StoreError::Corrupt("refused on purpose".into()))
        });
        assert!(refused.is_err());
    }
    let store = SqliteStore::open(&path, &StoreConfig::default()).expect("reopen");
    let read = store.snapshot().expect("snap").typemap().expect("read");
    assert_eq!(read, table);
    let one = table[1..2].to_vec();
    write(&store, move |txn| txn.replace_typemap(&one)).expect("replace");
    let read = store.snapshot().expect("snap").typemap().expect("read");
    assert_eq!(read, table[1..2].to_vec());
}

/// `range_changes_after` answers oldest first, strictly after the change given, only inside
/// the range, and pages by `limit` without losing or repeating a row.
#[test]
fn range_changes_after_pages_oldest_first_within_the_range() {
    let (_dir, store) = open();
    let mut changes = Vec::new();
    for i in 1..=4u32 {
        changes.push(submit(
            store.as_ref(),
            vec![
                rev("//depot/a/f", i, 0, FileAction::Edit),
                rev("//depot/b/g", i, 0, FileAction::Edit),
            ],
        ));
    }
    let snap = store.snapshot().expect("snapshot");
    let range = PathRange::prefix("//depot/a/");
    let all = snap
        .range_changes_after(&range, ChangeNumber(0), 100)
        .expect("all");
    assert_eq!(
        all.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        changes,
        "every change of //depot/a/, oldest first"
    );
    assert!(all.iter().all(|(_, p)| p.as_str() == "//depot/a/f"));
    let after_second = snap
        .range_changes_after(&range, changes[1], 100)
        .expect("after the second");
    assert_eq!(
        after_second.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        changes[2..].to_vec()
    );
    let mut paged = Vec::new();
    let mut after = ChangeNumber(0);
    for _ in 0..10 {
        let page = snap.range_changes_after(&range, after, 1).expect("page");
        let Some((last, _)) = page.last() else { break };
        after = *last;
        paged.extend(page.into_iter().map(|(c, _)| c));
    }
    assert_eq!(paged, changes);
    assert!(
        snap.range_changes_after(&range, changes[3], 100)
            .expect("none newer")
            .is_empty()
    );
}

/// The webhooks table: replacing it keeps the state of webhooks that keep their name, starts
/// new ones at the change given, and drops the state of removed ones for good.
#[test]
fn webhooks_keep_their_delivery_state_by_name() {
    use keel_core::WebhookLine;
    use keel_store::WebhookStateRow;
    let (_dir, store) = open();
    let line = |name: &str| WebhookLine {
        name: name.into(),
        path: "//depot/...".into(),
        url: format!("http://127.0.0.1:9/{name}"),
        secret: (name == "a").then(|| "s".to_string()),
    };
    let (a, b) = (line("a"), line("b"));
    let table = vec![a.clone(), b.clone()];
    write(store.as_ref(), move |txn| {
        txn.replace_webhooks(&table, ChangeNumber(5))
    })
    .expect("save");
    let progressed = WebhookStateRow {
        delivered: ChangeNumber(7),
        attempts: 2,
        sent: 3,
        failures: 4,
        last_attempt: 99,
        last_status: "500 Internal Server Error".into(),
    };
    let state = progressed.clone();
    write(store.as_ref(), move |txn| {
        txn.put_webhook_state("a", &state)
    })
    .expect("state");
    let rows = store
        .snapshot()
        .expect("snapshot")
        .webhooks()
        .expect("read");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0], (a.clone(), progressed.clone()));
    assert_eq!(rows[1].1.delivered, ChangeNumber(5));
    assert_eq!(rows[1].1.attempts, 0);
    // b removed, c added later: a keeps its state, c starts at 9, b's state is gone.
    let table = vec![line("c"), a.clone()];
    write(store.as_ref(), move |txn| {
        txn.replace_webhooks(&table, ChangeNumber(9))?;
        txn.put_webhook_state(
            "b",
            &WebhookStateRow {
                delivered: ChangeNumber(1),
                attempts: 0,
                sent: 0,
                failures: 0,
                last_attempt: 0,
                last_status: String::new(),
            },
        )
    })
    .expect("replace");
    let rows = store
        .snapshot()
        .expect("snapshot")
        .webhooks()
        .expect("read");
    let names: Vec<&str> = rows.iter().map(|(l, _)| l.name.as_str()).collect();
    assert_eq!(names, vec!["c", "a"]);
    assert_eq!(rows[0].1.delivered, ChangeNumber(9));
    assert_eq!(rows[1].1, progressed);
}

/// `tickets_of` lists one user's unexpired tickets, newest first, up to the limit, and no one
/// else's.
#[test]
fn tickets_of_lists_a_users_live_tickets_newest_first() {
    let (_dir, store) = open();
    let ticket = |n: u8, user: &str, issued: i64, expires: i64| keel_store::TicketRow {
        hash: [n; 32],
        user: user.to_string(),
        host: "h".to_string(),
        address: String::new(),
        issued,
        expires,
    };
    write(store.as_ref(), move |txn| {
        txn.put_ticket(&ticket(1, "alice", 10, 1000))?;
        txn.put_ticket(&ticket(2, "alice", 20, 1000))?;
        txn.put_ticket(&ticket(3, "alice", 5, 50))?;
        txn.put_ticket(&ticket(4, "bob", 30, 1000))?;
        Ok::<_, StoreError>(())
    })
    .expect("tickets stored");
    let snap = store.snapshot().expect("snapshot");
    let hashes = |user: &str, now: i64, limit: usize| -> Vec<u8> {
        snap.tickets_of(user, now, limit)
            .expect("listed")
            .iter()
            .map(|t| t.hash[0])
            .collect()
    };
    assert_eq!(hashes("alice", 40, 10), [2, 1, 3]);
    assert_eq!(
        hashes("alice", 100, 10),
        [2, 1],
        "expired tickets are left out"
    );
    assert_eq!(hashes("alice", 40, 1), [2]);
    assert_eq!(hashes("bob", 40, 10), [4]);
    assert!(hashes("carol", 40, 10).is_empty());
}

/// Counters and keys are two namespaces of name-ordered values: a write is seen by later
/// snapshots, not by an older one; deleting reports whether the name was stored; listings
/// page in name order.
#[test]
fn counters_and_keys_are_separate_paged_namespaces() {
    use keel_core::CounterSpace::{Counter, Key};
    let (_dir, store) = open();
    let before = store.snapshot().expect("snapshot");
    write(store.as_ref(), |txn| {
        txn.put_counter(Counter, "b", "2")?;
        txn.put_counter(Counter, "a", "1")?;
        txn.put_counter(Counter, "c", "three")?;
        txn.put_counter(Key, "a", "key value")?;
        Ok::<_, StoreError>(())
    })
    .expect("write");
    assert_eq!(before.get_counter(Counter, "a").expect("get"), None);
    drop(before);
    let snap = store.snapshot().expect("snapshot");
    assert_eq!(
        snap.get_counter(Counter, "a").expect("get").as_deref(),
        Some("1")
    );
    assert_eq!(
        snap.get_counter(Key, "a").expect("get").as_deref(),
        Some("key value")
    );
    assert_eq!(snap.get_counter(Key, "b").expect("get"), None);
    assert_eq!(snap.change_counter().expect("change"), ChangeNumber(0));
    let first = snap.list_counters(Counter, None, 2).expect("list");
    assert_eq!(
        first,
        vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string())
        ]
    );
    let rest = snap.list_counters(Counter, Some("b"), 2).expect("list");
    assert_eq!(rest, vec![("c".to_string(), "three".to_string())]);
    assert_eq!(snap.list_counters(Key, None, 10).expect("list").len(), 1);
    drop(snap);
    let (gone, again) = write(store.as_ref(), |txn| {
        let gone = txn.delete_counter(Counter, "a")?;
        let again = txn.delete_counter(Counter, "a")?;
        Ok::<_, StoreError>((gone, again))
    })
    .expect("delete");
    assert!(gone && !again);
    let snap = store.snapshot().expect("snapshot");
    assert_eq!(snap.get_counter(Counter, "a").expect("get"), None);
    assert_eq!(
        snap.get_counter(Key, "a").expect("get").as_deref(),
        Some("key value")
    );
}

#[test]
fn a_recorded_modification_time_reads_back_and_a_set_based_submit_keeps_the_lazy_one() {
    let (_dir, store) = open();
    let digest = Digest([7; 32]);
    submit(
        store.as_ref(),
        vec![RevisionRow {
            digest: Some(digest),
            mod_time: 1_000_000_001,
            ..rev("//depot/src/f", 1, 0, FileAction::Add)
        }],
    );
    let snap = store.snapshot().expect("snapshot");
    let src = snap.revision(&dp("//depot/src/f"), 1).expect("read");
    assert_eq!(src.map(|r| r.mod_time), Some(1_000_000_001));
    drop(snap);
    // A copy opened with the source's time: the open record keeps it, the set-based submit
    // (no upload) gives it to the new revision.
    let mut copy = lazy_copy("//depot/b/f", digest, true);
    if let Some(lazy) = copy.lazy.as_mut() {
        lazy.mod_time = 1_000_000_001;
    }
    let shelved = keel_store::ShelvedRow {
        change: ChangeNumber(50),
        path: dp("//depot/s/f"),
        action: FileAction::Add,
        file_type: FileType::parse("text+m").expect("text+m"),
        digest: Some(digest),
        size: 10,
        md5: String::new(),
        base_rev: 0,
        move_file: None,
        mod_time: 1_200_000_000,
    };
    let put = shelved.clone();
    write(store.as_ref(), move |txn| {
        txn.put_opened_owned(&copy)?;
        txn.put_shelved(&put)
    })
    .expect("open a copy, shelve a file");
    let snap = store.snapshot().expect("snapshot");
    let opened = snap.opened_file(&dp("//depot/b/f")).expect("opened");
    assert_eq!(
        opened[0].lazy.as_ref().map(|l| l.mod_time),
        Some(1_000_000_001)
    );
    let shelf = snap
        .shelved_in_change(ChangeNumber(50), None, 10)
        .expect("shelf");
    assert_eq!(shelf, vec![shelved]);
    drop(snap);
    let n = write(store.as_ref(), |txn| {
        let n = txn.allocate_change()?;
        txn.commit_without_new_content("w", ChangeNumber(0), n, 5, false)?;
        Ok::<_, StoreError>(n)
    })
    .expect("submit the copy");
    let snap = store.snapshot().expect("snapshot");
    let copied = snap
        .revision(&dp("//depot/b/f"), 1)
        .expect("read")
        .expect("submitted");
    assert_eq!((copied.change, copied.time), (n, 5));
    assert_eq!(copied.mod_time, 1_000_000_001, "{copied:?}");
}

/// A user's sealed P4 password verifier (`UserRow::p4_digest`, migration for p4pass) reads
/// back, is replaced and dropped with the row, and survives reopening.
#[test]
fn a_users_p4_digest_is_kept_replaced_and_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("meta.db");
    let digest = |store: &SqliteStore| {
        store
            .snapshot()
            .expect("snapshot")
            .get_user("alice")
            .expect("lookup")
            .and_then(|u| u.p4_digest)
    };
    let set = |store: &SqliteStore, value: Option<&str>| {
        let value = value.map(str::to_string);
        write(store, move |txn| {
            txn.ensure_user("alice", 0)?;
            let mut row = txn.get_user("alice")?.expect("made");
            row.p4_digest = value;
            txn.put_user(&row)
        })
        .expect("written");
    };
    {
        let store = SqliteStore::open(&path, &StoreConfig::default()).expect("open");
        set(&store, None);
        assert_eq!(digest(&store), None);
        set(&store, Some("sealed-1"));
        assert_eq!(digest(&store).as_deref(), Some("sealed-1"));
        set(&store, Some("sealed-2"));
    }
    let store = SqliteStore::open(&path, &StoreConfig::default()).expect("reopen");
    assert_eq!(digest(&store).as_deref(), Some("sealed-2"));
    set(&store, None);
    assert_eq!(digest(&store), None);
    set(&store, Some("sealed-3"));
    write(&store, |txn| txn.delete_user("alice")).expect("deleted");
    assert!(
        store
            .snapshot()
            .expect("snapshot")
            .get_user("alice")
            .expect("lookup")
            .is_none()
    );
}

#[test]
fn a_have_list_pages_through_a_range_in_path_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let haves = keel_store::SqliteHaveStore::open(dir.path()).expect("open");
    let rows: Vec<keel_store::HaveRow> = ["a", "b", "c"]
        .iter()
        .flat_map(|top| {
            (0..250).map(move |i| keel_store::HaveRow {
                path: dp(&format!("//depot/{top}/f{i:03}")),
                client: format!("{top}/f{i:03}"),
                rev: 1,
            })
        })
        .collect();
    haves.apply("ws", &rows).expect("apply");
    // Pages of 100 through //depot/b/..., starting before the range and after its first row.
    let range = PathRange::prefix("//depot/b/");
    for start in [None, Some("//depot/a/f100"), Some("//depot/b/f000")] {
        let mut after = start.map(str::to_string);
        let mut seen = Vec::new();
        for _ in 0..10 {
            let page = haves
                .page("ws", &range, after.as_deref(), 100)
                .expect("page");
            let full = page.len() == 100;
            after = page.last().map(|r| r.path.as_str().to_string());
            seen.extend(page.into_iter().map(|r| r.path.as_str().to_string()));
            if !full {
                break;
            }
        }
        let skip = usize::from(start == Some("//depot/b/f000"));
        let want: Vec<String> = (skip..250).map(|i| format!("//depot/b/f{i:03}")).collect();
        assert_eq!(seen, want, "from {start:?}");
    }
}
