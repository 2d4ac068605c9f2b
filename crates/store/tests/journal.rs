//! The journal, checkpoints and restore, checked against the SQLite backend: every table is
//! journaled, rolled-back jobs leave no record, a checkpoint plus the journal restores exactly
//! what was committed, and damage or bad input is refused naming the file.

use keel_core::{ChangeNumber, DepotPath, Digest, FileAction, FileType, IntegHow};
use keel_store::backup::{RestoreError, restore, write_checkpoint};
use keel_store::journal::format::Target;
use keel_store::journal::read::JournalFile;
use keel_store::{
    ChangeRow, ChangeStatus, DepotRow, HaveMark, HaveRow, HaveState, LazyContent, MetaStore,
    OpenedRow, PathRange, PendingInteg, RevisionRow, RootStores, StoreConfig, StoreError,
    open_root, write,
};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

fn dp(path: &str) -> DepotPath {
    DepotPath::parse(path).expect("depot path")
}

fn submit(store: &dyn MetaStore, paths: &[&str]) -> ChangeNumber {
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    write(store, move |txn| {
        let n = txn.allocate_change()?;
        txn.put_change(&ChangeRow {
            change: n,
            status: ChangeStatus::Submitted,
            user: "u".into(),
            workspace: "w".into(),
            description: format!("change {}", n.0),
            time: 0,
        })?;
        for p in &paths {
            let rev = txn.head_revision(&dp(p))?.map_or(1, |r| r.rev + 1);
            txn.insert_revision(&RevisionRow {
                path: dp(p),
                rev,
                change: n,
                action: if rev == 1 {
                    FileAction::Add
                } else {
                    FileAction::Edit
                },
                file_type: FileType::parse("text").expect("text type"),
                digest: Some(Digest([rev as u8; 32])),
                size: 10,
                md5: String::new(),
                time: 0,
                mod_time: 0,
            })?;
        }
        Ok::<_, StoreError>(n)
    })
    .expect("submit")
}

fn have(stores: &RootStores, ws: &str, path: &str, rev: u32) {
    stores
        .have
        .apply(
            ws,
            &[HaveRow {
                path: dp(path),
                client: path.trim_start_matches("//depot/").into(),
                rev,
            }],
        )
        .expect("have list written");
}

/// Every row of every table of an SQLite file, as text, in a stable order.
fn contents(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).expect("database opens");
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // A have list's sync mark and generation are local bookkeeping too: never journaled,
    // never restored.
    tables.retain(|t| {
        !["journal_position", "sync_state", "generation", "changed"].contains(&t.as_str())
    });
    let mut out = Vec::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                let mut line = format!("{t}:");
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    line.push_str(&format!(" {v:?}"));
                }
                Ok(line)
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        // The journal position itself is bookkeeping of each root.
        rows.retain(|l| !l.contains("\"journal_position\""));
        rows.sort();
        out.extend(rows);
    }
    out
}

fn journal_records(root: &Path) -> Vec<(u64, bool, Target)> {
    let dir = root.join("journal");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let mut file = JournalFile::open(&f).expect("journal opens");
        while let Some(r) = file.next_record().expect("record reads") {
            out.push((r.position, r.void, r.target));
        }
    }
    out
}

#[test]
fn every_table_has_a_primary_key() {
    let dir = tempfile::tempdir().unwrap();
    let stores = open_root(dir.path(), &StoreConfig::default()).unwrap();
    have(&stores, "ws", "//depot/a", 1);
    for db in [
        dir.path().join("metadata.db"),
        dir.path().join("have/ws.db"),
    ] {
        let conn = Connection::open(&db).unwrap();
        let tables: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!tables.is_empty());
        for t in tables {
            let pk_columns: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM pragma_table_info('{t}') WHERE pk > 0"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(
                pk_columns > 0,
                "{}: table {t} has no primary key, so the session extension would not journal it",
                db.display()
            );
        }
    }
}

#[test]
fn rolled_back_jobs_and_empty_changes_leave_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let stores = open_root(dir.path(), &StoreConfig::default()).unwrap();
    submit(&stores.meta, &["//depot/a"]);
    let before = journal_records(dir.path());
    assert_eq!(before.len(), 1);
    // A job that fails after writing rolls back to its savepoint: nothing to journal.
    let failed: Result<(), StoreError> = write(&stores.meta, |txn| {
        txn.put_depot(&DepotRow {
            name: "gone".into(),
            kind: "local".into(),
            owner: String::new(),
            description: String::new(),
            created: 0,
        })?;
        Err(StoreError::Corrupt("refused on purpose".into()))
    });
    assert!(failed.is_err());
    // A job that changes a row and changes it back leaves no difference either.
    write(&stores.meta, |txn| {
        let depot = txn.get_depot("depot")?.expect("default depot");
        let mut changed = depot.clone();
        changed.description = "changed".into();
        txn.put_depot(&changed)?;
        txn.put_depot(&depot)?;
        Ok::<_, StoreError>(())
    })
    .unwrap_or(());
    let after = journal_records(dir.path());
    // The second job kept its (net empty) changes but bumped `jobs_written`: one record.
    assert_eq!(after.len(), 2, "{after:?}");
    // Grouped jobs, one of them rolled back: a restore reproduces exactly what committed.
    let stores = std::sync::Arc::new(stores);
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let stores = stores.clone();
            std::thread::spawn(move || {
                let name = format!("d{i}");
                let _ = write(&stores.meta, move |txn| {
                    txn.put_depot(&DepotRow {
                        name,
                        kind: "local".into(),
                        owner: String::new(),
                        description: String::new(),
                        created: 0,
                    })?;
                    if i % 2 == 1 {
                        return Err(StoreError::Corrupt("odd jobs roll back".into()));
                    }
                    Ok(())
                });
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let restored = tempfile::tempdir().unwrap();
    let ckpt = checkpoint_of(&stores, dir.path());
    drop(stores);
    let target = restored.path().join("root");
    restore(&ckpt, &[], &target, &StoreConfig::default(), &mut |_| {}).unwrap();
    let depots = contents(&target.join("metadata.db"));
    assert!(depots.iter().any(|l| l.contains("\"d0\"")));
    assert!(
        !depots
            .iter()
            .any(|l| l.contains("\"d1\"") || l.contains("\"gone\""))
    );
}

/// A lock (`locked` on an open record) is journaled with the record: a checkpoint taken while
/// the file was locked, plus the journal of its unlocking, restores it unlocked, and the
/// checkpoint alone restores it locked.
#[test]
fn a_lock_and_its_release_are_restored_from_checkpoint_and_journal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let locked = OpenedRow {
        locked: true,
        ..opened_branch("f", true)
    };
    let row = locked.clone();
    write(&stores.meta, move |txn| txn.put_opened(&row)).unwrap();
    let ckpt = checkpoint_of(&stores, &root);
    let row = OpenedRow {
        locked: false,
        ..locked.clone()
    };
    write(&stores.meta, move |txn| txn.put_opened(&row)).unwrap();
    drop(stores);
    let read_back = |target: &Path| {
        let stores = open_root(target, &StoreConfig::default()).unwrap();
        let snap = stores.meta.snapshot().unwrap();
        let rows = snap.opened_file(&locked.path).unwrap();
        assert_eq!(rows.len(), 1);
        rows[0].locked
    };
    let both = dir.path().join("both");
    restore(
        &ckpt,
        &journals(&root),
        &both,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(!read_back(&both), "the journal's unlock is replayed");
    let ckpt_only = dir.path().join("ckpt-only");
    restore(&ckpt, &[], &ckpt_only, &StoreConfig::default(), &mut |_| {}).unwrap();
    assert!(read_back(&ckpt_only), "the checkpoint holds the lock");
}

fn checkpoint_of(stores: &RootStores, root: &Path) -> PathBuf {
    write_checkpoint(
        &stores.meta,
        stores.have.dir(),
        stores.journal.as_deref(),
        root,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .expect("checkpoint written")
    .path
}

fn journals(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(root.join("journal"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = p
                .file_name()?
                .to_str()?
                .strip_prefix("journal.")?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

/// Restores `root`'s checkpoint `ckpt` and journals into `dir/restored`; returns that root.
fn restored(ckpt: &Path, root: &Path, dir: &Path) -> PathBuf {
    let target = dir.join("restored");
    restore(
        ckpt,
        &journals(root),
        &target,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    target
}

#[test]
fn checkpoint_and_journal_restore_exactly_what_committed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    for i in 0..20 {
        submit(
            &stores.meta,
            &[&format!("//depot/f{}", i % 7), "//depot/common"],
        );
        have(&stores, "ws1", &format!("//depot/f{}", i % 7), i + 1);
    }
    let ckpt = checkpoint_of(&stores, &root);
    // Writes after the checkpoint land in the next journal file.
    for i in 0..10 {
        submit(&stores.meta, &[&format!("//depot/g{i}")]);
        have(&stores, "ws2", &format!("//depot/g{i}"), 1);
        have(&stores, "ws1", "//depot/f1", 100 + i);
    }
    have(&stores, "gone", "//depot/x", 1);
    stores.have.drop_workspace("gone").unwrap();
    let mark = HaveMark {
        change: 40,
        removed: 0,
        view: "//depot/... //ws1/...".into(),
    };
    let writes = stores.have.state("ws1").unwrap().writes;
    assert!(stores.have.set_mark("ws1", &mark, writes).unwrap());
    assert_eq!(stores.have.state("ws1").unwrap().mark, Some(mark));
    let (main_before, ws1, ws2) = (
        contents(&root.join("metadata.db")),
        contents(&root.join("have/ws1.db")),
        contents(&root.join("have/ws2.db")),
    );
    drop(stores);

    let target = dir.path().join("restored");
    let report = restore(
        &ckpt,
        &journals(&root),
        &target,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(report.replayed >= 30, "{report:?}");
    assert!(report.torn.is_empty());
    assert_eq!(contents(&target.join("metadata.db")), main_before);
    assert_eq!(contents(&target.join("have/ws1.db")), ws1);
    assert_eq!(contents(&target.join("have/ws2.db")), ws2);
    assert!(!target.join("have/gone.db").exists());
    // A server can open the restored root and go on journaling from where it left off.
    let stores = open_root(&target, &StoreConfig::default()).unwrap();
    // The restored have list claims nothing: its next sync compares it whole.
    assert_eq!(stores.have.state("ws1").unwrap().mark, None);
    submit(&stores.meta, &["//depot/after-restore"]);
    assert_eq!(
        stores.journal.as_ref().unwrap().committed_position(),
        report.position + 1
    );
}

/// A have list copied inside SQLite (`copy_list`, a clone's) is one journaled write: it holds
/// the source's entries with the client paths moved to the new workspace, replaces whatever
/// the target held, returns the source's state as of the copy, and a restore from the journal
/// gives the same list.
#[test]
fn a_copied_have_list_is_journaled_and_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let ckpt = checkpoint_of(&stores, &root);
    let rows: Vec<HaveRow> = (0..5)
        .map(|i| HaveRow {
            path: dp(&format!("//depot/d/f{i}")),
            rev: i + 1,
            client: format!("//src/d/f{i}"),
        })
        .collect();
    stores.have.apply("src", &rows).unwrap();
    let mark = HaveMark {
        change: 9,
        removed: 0,
        view: "//depot/... //src/...".into(),
    };
    assert!(stores.have.set_mark("src", &mark, 1).unwrap());
    have(&stores, "cl", "//depot/stale", 3);
    let before = journal_records(&root).len();
    let (copied, state) = stores.have.copy_list("src", "cl").unwrap();
    assert_eq!(copied, 5);
    assert_eq!((state.writes, state.mark), (1, Some(mark)));
    assert_eq!(journal_records(&root).len(), before + 1, "one record");
    let copy = contents(&root.join("have/cl.db"));
    assert_eq!(copy.len(), 5, "{copy:?}");
    assert!(copy.iter().all(|l| l.contains("\"//cl/d/f")), "{copy:?}");
    assert!(!copy.iter().any(|l| l.contains("stale")), "{copy:?}");
    // The copy counts as a write of the target, and the source is untouched.
    assert_eq!(
        stores.have.state("cl").unwrap(),
        HaveState {
            writes: 2,
            mark: None
        }
    );
    assert_eq!(
        stores
            .have
            .page("src", &PathRange::prefix("//"), None, 10)
            .unwrap(),
        rows
    );
    drop(stores);
    let target = restored(&ckpt, &root, dir.path());
    assert_eq!(contents(&target.join("have/cl.db")), copy);
}

#[test]
fn a_record_whose_commit_never_happened_is_cut_off_or_voided() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    submit(&stores.meta, &["//depot/a"]);
    let journal = stores.journal.clone().unwrap();
    let body = {
        use std::io::Write;
        let mut w = journal.body_writer();
        w.write_all(b"not applied").unwrap();
        w.finish().unwrap().unwrap()
    };
    // A main record appended but never committed, at the end: cut off at the next open.
    let _lost = journal.append(&Target::Main, 4, &body).unwrap();
    drop(stores);
    drop(journal);
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    assert!(stores.recovery.cut, "{:?}", stores.recovery);
    assert_eq!(stores.recovery.voided.len(), 1);
    assert_eq!(journal_records(&root).len(), 1);

    // Now one followed by a committed have-list record: marked void in place.
    let journal = stores.journal.clone().unwrap();
    let _lost = journal.append(&Target::Main, 4, &body).unwrap();
    have(&stores, "ws", "//depot/a", 1);
    drop(stores);
    drop(journal);
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    assert!(!stores.recovery.cut);
    assert_eq!(stores.recovery.voided, vec![(2, "main".to_string())]);
    let records = journal_records(&root);
    assert_eq!(records.len(), 3);
    assert!(records[1].1, "the uncommitted record is void: {records:?}");
    // New records follow the void one; nothing is lost after it.
    submit(&stores.meta, &["//depot/b"]);
    drop(stores);
    let records = journal_records(&root);
    assert_eq!(
        records.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
}

#[test]
fn a_torn_last_record_is_cut_at_open_and_skipped_by_restore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let ckpt = checkpoint_of(&stores, &root);
    submit(&stores.meta, &["//depot/a"]);
    submit(&stores.meta, &["//depot/b", "//depot/c"]);
    drop(stores);
    let journal = journals(&root).pop().unwrap();
    let len = std::fs::metadata(&journal).unwrap().len();
    let copy = dir.path().join("journal.copy");
    std::fs::copy(&journal, &copy).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&copy).unwrap();
    file.set_len(len - 7).unwrap();
    drop(file);

    let target = dir.path().join("restored");
    let report = restore(
        &ckpt,
        std::slice::from_ref(&copy),
        &target,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(report.replayed, 1);
    assert_eq!(report.torn.len(), 1);
    assert!(report.torn[0].1.contains("cut short"), "{:?}", report.torn);
    let rows = contents(&target.join("metadata.db"));
    assert!(rows.iter().any(|l| l.contains("//depot/a")));
    assert!(!rows.iter().any(|l| l.contains("//depot/b")));

    // The server's own open cuts a torn tail off the live journal (here: half a header,
    // as a write cut short by a crash leaves).
    let whole = std::fs::read(&journal).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[40..70]);
    std::fs::write(&journal, &torn).unwrap();
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let (path, bytes, reason) = stores.recovery.torn_tail.clone().expect("torn tail found");
    assert_eq!((path, bytes), (journal.clone(), 30));
    assert!(reason.contains("shorter than a record header"), "{reason}");
    assert_eq!(std::fs::read(&journal).unwrap(), whole);
    submit(&stores.meta, &["//depot/d"]);
    drop(stores);
    assert_eq!(journal_records(&root).len(), 3);

    // The database ahead of its journal (records lost): refused, naming the file.
    std::fs::write(&journal, &whole[..whole.len() - 10]).unwrap();
    let err = open_root(&root, &StoreConfig::default())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("missing records"), "{err}");
    assert!(err.to_string().contains("journal.1"), "{err}");
}

#[test]
fn restore_refuses_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    submit(&stores.meta, &["//depot/a"]);
    let ckpt = checkpoint_of(&stores, &root);
    drop(stores);
    let cfg = StoreConfig::default();

    let missing = dir.path().join("no-such-checkpoint");
    let err = restore(&missing, &[], &dir.path().join("t1"), &cfg, &mut |_| {}).unwrap_err();
    assert!(matches!(err, RestoreError::Open { .. }), "{err}");
    assert!(err.to_string().contains("no-such-checkpoint"), "{err}");

    let corrupt = dir.path().join("corrupt");
    let mut bytes = std::fs::read(&ckpt).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&corrupt, &bytes).unwrap();
    let err = restore(&corrupt, &[], &dir.path().join("t2"), &cfg, &mut |_| {}).unwrap_err();
    assert!(matches!(err, RestoreError::Digest { .. }), "{err}");
    assert!(err.to_string().contains("corrupt"), "{err}");
    assert!(!dir.path().join("t2").exists());

    let busy = dir.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("x"), b"x").unwrap();
    let err = restore(&ckpt, &[], &busy, &cfg, &mut |_| {}).unwrap_err();
    assert!(matches!(err, RestoreError::NotEmpty { .. }), "{err}");

    // A journal that starts after the checkpoint's end leaves a gap.
    let later = tempfile::tempdir().unwrap();
    let other = open_root(later.path(), &cfg).unwrap();
    for _ in 0..5 {
        submit(&other.meta, &["//depot/z"]);
    }
    let _ = checkpoint_of(&other, later.path());
    submit(&other.meta, &["//depot/z"]);
    drop(other);
    let gap = journals(later.path()).pop().unwrap();
    let err = restore(
        &ckpt,
        std::slice::from_ref(&gap),
        &dir.path().join("t3"),
        &cfg,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, RestoreError::Missing { .. }), "{err}");
    assert!(
        err.to_string().contains(&gap.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_record_that_does_not_apply_aborts_the_restore_naming_it() {
    let cfg = StoreConfig::default();
    let depot = |description: &str| DepotRow {
        name: "d".into(),
        kind: "local".into(),
        owner: String::new(),
        description: description.into(),
        created: 0,
    };
    // Two roots with the same positions but another history: B's journal does not fit A.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut checkpoints = Vec::new();
    for (dir, text) in [(&a, "A"), (&b, "B")] {
        let stores = open_root(dir.path(), &cfg).unwrap();
        let row = depot(text);
        write(&stores.meta, move |txn| txn.put_depot(&row)).unwrap();
        checkpoints.push(checkpoint_of(&stores, dir.path()));
        let row = depot(&format!("{text}2"));
        write(&stores.meta, move |txn| txn.put_depot(&row)).unwrap();
    }
    let foreign = journals(b.path()).pop().unwrap();
    let target = a.path().join("restored");
    let err = restore(
        &checkpoints[0],
        std::slice::from_ref(&foreign),
        &target,
        &cfg,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, RestoreError::Conflict { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&foreign.display().to_string()), "{text}");
    assert!(text.contains("depots"), "{text}");
    assert!(!target.exists(), "nothing left behind");
}

#[test]
fn an_interrupted_have_list_deletion_is_finished_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    have(&stores, "ws", "//depot/a", 1);
    // The deletion's record is on disk; the crash came before the files were removed.
    let journal = stores.journal.clone().unwrap();
    let empty = journal.body_writer();
    assert!(
        empty.finish().unwrap().is_none(),
        "an empty body is no record"
    );
    let body = keel_store::journal::Body {
        encoding: keel_store::journal::format::Encoding::Raw,
        raw_len: 0,
        bytes: Vec::new(),
    };
    let _decided = journal
        .append(&Target::DropHave("ws".into()), 1, &body)
        .unwrap();
    drop(stores);
    drop(journal);
    assert!(root.join("have/ws.db").exists());
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    assert_eq!(stores.recovery.dropped, ["ws"]);
    assert!(!root.join("have/ws.db").exists());
    assert!(stores.recovery.voided.is_empty());
}

/// Groups and the protections table (migration 8) reach the checkpoint and the journal like
/// every other table, and a restore brings back both, with the `access` counter.
#[test]
fn groups_and_protections_survive_checkpoint_and_journal_restore() {
    use keel_core::{GroupLimits, Limit};
    use keel_store::GroupRow;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let group = |name: &str, max: Limit| GroupRow {
        name: name.into(),
        users: vec!["ann".into(), "bob".into()],
        subgroups: vec![],
        owners: vec!["ann".into()],
        limits: GroupLimits {
            max_results: max,
            ..Default::default()
        },
        updated: 7,
    };
    let dev = group("dev", Limit::Max(50));
    write(&stores.meta, move |txn| {
        txn.put_group(&dev)?;
        txn.put_protections(&["super user ann * //...".into()])
    })
    .unwrap();
    let ckpt = checkpoint_of(&stores, &root);
    let ops = group("ops", Limit::Unlimited);
    write(&stores.meta, move |txn| {
        txn.put_group(&ops)?;
        txn.delete_group("dev")?;
        txn.put_protections(&[
            "write user * * //...".into(),
            "super user ann 10.0.0.0/8 //...".into(),
        ])
    })
    .unwrap();
    let before = contents(&root.join("metadata.db"));
    assert!(
        before.iter().any(|l| l.starts_with("groups:")),
        "{before:?}"
    );
    drop(stores);

    let target = restored(&ckpt, &root, dir.path());
    assert_eq!(contents(&target.join("metadata.db")), before);
    let stores = open_root(&target, &StoreConfig::default()).unwrap();
    let snap = stores.meta.snapshot().unwrap();
    assert_eq!(
        snap.protections().unwrap(),
        ["write user * * //...", "super user ann 10.0.0.0/8 //..."]
    );
    assert_eq!(snap.get_group("dev").unwrap(), None);
    let ops = snap.get_group("ops").unwrap().expect("ops restored");
    assert_eq!(ops.limits.max_results, Limit::Unlimited);
    assert_eq!(ops.users, ["ann", "bob"]);
    assert_eq!(snap.access_version().unwrap(), 5);
}

/// An open record of workspace `w`'s default changelist: a branch of `//depot/main/NAME`
/// revision 1 (a lazy copy of its content) unless `deleted`, which opens `//depot/rel/NAME`
/// (at revision 1) for delete.
fn opened_branch(name: &str, deleted: bool) -> OpenedRow {
    OpenedRow {
        workspace: "w".into(),
        path: dp(&format!("//depot/rel/{name}")),
        user: "u".into(),
        change: ChangeNumber(0),
        action: if deleted {
            FileAction::Delete
        } else {
            FileAction::Branch
        },
        file_type: FileType::parse("text").expect("text type"),
        base_rev: u32::from(deleted),
        move_file: None,
        lazy: (!deleted).then(|| LazyContent {
            digest: Digest([1; 32]),
            size: 10,
            md5: String::new(),
            mod_time: 0,
            owned: true,
        }),
        integ: Some(PendingInteg {
            from_path: dp(&format!("//depot/main/{name}")),
            from_start: 0,
            from_end: 1,
            base: None,
            resolved: true,
            how: Some(if deleted {
                IntegHow::DeleteFrom
            } else {
                IntegHow::BranchFrom
            }),
        }),
        locked: false,
    }
}

/// The name of the first table of a changeset (its first header: `T`, a varint column count
/// below 128, one byte per column, the NUL-terminated name).
fn first_table(changeset: &[u8]) -> String {
    assert_eq!(changeset[0], b'T');
    let columns = usize::from(changeset[1]);
    let name = &changeset[2 + columns..];
    let end = name
        .iter()
        .position(|&b| b == 0)
        .expect("NUL-terminated name");
    String::from_utf8(name[..end].to_vec()).unwrap()
}

#[test]
fn a_branch_opened_and_submitted_set_based_journals_its_rows_and_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let names: Vec<String> = (0..300).map(|i| format!("f{i:03}")).collect();
    let sources: Vec<String> = names.iter().map(|n| format!("//depot/main/{n}")).collect();
    submit(
        &stores.meta,
        &sources.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    // Two files already on the branch, opened for delete with the other 298 branched.
    submit(&stores.meta, &["//depot/rel/f000", "//depot/rel/f001"]);
    let ckpt = checkpoint_of(&stores, &root);
    let rows: Vec<OpenedRow> = names
        .iter()
        .enumerate()
        .map(|(i, n)| opened_branch(n, i < 2))
        .collect();
    // Opened as integrate opens a batch: journaled by the job itself too.
    write(&stores.meta, move |txn| txn.open_new(&rows, true)).unwrap();
    let again = write(&stores.meta, |txn| {
        txn.open_new(&[opened_branch("f050", false)], true)
    });
    assert!(again.is_err(), "a file opened twice: {again:?}");
    // A submit that fails after journaling its rows leaves no trace in the journal.
    let failed = write(&stores.meta, |txn| {
        let n = txn.allocate_change()?;
        txn.commit_without_new_content("w", ChangeNumber(0), n, 7, false)?;
        txn.delete_opened_in_change("w", ChangeNumber(0))?;
        Err::<(), _>(StoreError::Corrupt("refused on purpose".into()))
    });
    assert!(matches!(failed, Err(StoreError::Corrupt(_))), "{failed:?}");
    let submitted = write(&stores.meta, |txn| {
        let n = txn.allocate_change()?;
        txn.put_change(&ChangeRow {
            change: n,
            status: ChangeStatus::Submitted,
            user: "u".into(),
            workspace: "w".into(),
            description: "branch".into(),
            time: 7,
        })?;
        assert!(txn.first_unsubmittable("w", ChangeNumber(0))?.is_none());
        let written = txn.commit_without_new_content("w", ChangeNumber(0), n, 7, false)?;
        let deleted = txn.delete_opened_in_change("w", ChangeNumber(0))?;
        // Recorded by the session against the row the submit wrote: the record names
        // `revisions` twice, the submit's own rows first.
        txn.delete_revision(&dp("//depot/rel/f299"), 1)?;
        Ok::<_, StoreError>((n, written, deleted))
    })
    .unwrap();
    assert_eq!((submitted.1, submitted.2), (300, 300));
    // Later jobs change rows the submit wrote, possibly in the same group: their changes are
    // journaled after the submit's rows.
    std::thread::scope(|s| {
        s.spawn(|| {
            write(&stores.meta, |txn| {
                txn.delete_revision(&dp("//depot/rel/f100"), 1)?;
                txn.delete_integrations_of(&dp("//depot/rel/f100"))
            })
            .unwrap()
        });
        s.spawn(|| {
            write(&stores.meta, |txn| {
                txn.put_opened(&opened_branch("f200", false))
            })
            .unwrap()
        });
    });
    // The submit's record starts with the rows it journaled itself, in key order, ahead of
    // the session's changeset.
    let mut records = Vec::new();
    for path in journals(&root) {
        let mut file = JournalFile::open(&path).unwrap();
        while let Some(r) = file.next_record().unwrap() {
            records.push(r.changeset(&path).unwrap());
        }
    }
    for table in ["opened", "revisions"] {
        assert!(
            records.iter().any(|c| first_table(c) == table),
            "no record starts with rows of {table} journaled by their job"
        );
    }
    let before = contents(&root.join("metadata.db"));
    assert!(before.iter().any(|l| l.starts_with("integrations:")));
    drop(stores);

    let target = restored(&ckpt, &root, dir.path());
    assert_eq!(contents(&target.join("metadata.db")), before);
}

/// Writes revision 1 of `path` with a recorded modification time.
fn submit_with_mod_time(store: &dyn MetaStore, path: &str, mod_time: i64) {
    let path = dp(path);
    write(store, move |txn| {
        let n = txn.allocate_change()?;
        txn.insert_revision(&RevisionRow {
            path,
            rev: 1,
            change: n,
            action: FileAction::Add,
            file_type: FileType::parse("binary+m").expect("binary+m"),
            digest: Some(Digest([3; 32])),
            size: 10,
            md5: String::new(),
            time: 9,
            mod_time,
        })
    })
    .expect("submit");
}

#[test]
fn recorded_modification_times_survive_checkpoint_and_journal_restore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    submit_with_mod_time(&stores.meta, "//depot/before", 1_111_111_111);
    let ckpt = checkpoint_of(&stores, &root);
    submit_with_mod_time(&stores.meta, "//depot/after", 1_222_222_222);
    drop(stores);
    let target = restored(&ckpt, &root, dir.path());
    let stores = open_root(&target, &StoreConfig::default()).unwrap();
    let snap = stores.meta.snapshot().unwrap();
    let mod_time = |path: &str| snap.revision(&dp(path), 1).unwrap().map(|r| r.mod_time);
    assert_eq!(
        mod_time("//depot/before"),
        Some(1_111_111_111),
        "from the checkpoint"
    );
    assert_eq!(
        mod_time("//depot/after"),
        Some(1_222_222_222),
        "from the journal"
    );
}
