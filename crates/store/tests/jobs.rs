//! The job tables' contract, checked against the SQLite backend: jobs with their word index
//! (replaced on every save, gone with the job), the job spec, fixes by job and by change, and
//! a checkpoint plus the journal restoring all of them.

use keel_core::ChangeNumber;
use keel_core::job::WordRange;
use keel_store::backup::{restore, write_checkpoint};
use keel_store::{FixRow, JobRow, MetaStore, StoreConfig, StoreError, open_root, write};
use std::path::{Path, PathBuf};

fn job(name: &str, description: &str) -> JobRow {
    JobRow {
        name: name.into(),
        fields: vec![
            ("Job".into(), name.into()),
            ("Status".into(), "open".into()),
            ("Description".into(), description.into()),
        ],
        created: 1,
        updated: 2,
        accessed: 3,
    }
}

fn words(description: &str) -> Vec<(String, String)> {
    let mut out = vec![("status".to_string(), "open".to_string())];
    out.extend(
        description
            .split_whitespace()
            .map(|w| ("description".to_string(), w.to_lowercase())),
    );
    out
}

fn save(store: &dyn MetaStore, name: &str, description: &str) {
    let (row, words) = (job(name, description), words(description));
    write(store, move |txn| txn.put_job(&row, &words)).expect("job saved");
}

fn range(field: Option<&str>, lo: &str, hi: Option<&str>) -> WordRange {
    WordRange {
        field: field.map(String::from),
        lo: lo.into(),
        hi: hi.map(String::from),
    }
}

fn fix(job: &str, change: u64) -> FixRow {
    FixRow {
        job: job.into(),
        change: ChangeNumber(change),
        user: "alice".into(),
        workspace: "ws".into(),
        date: 10,
        status: "closed".into(),
    }
}

#[test]
fn jobs_are_found_through_their_words_and_fixes_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    let meta = &stores.meta;
    save(meta, "job1", "Crash on start");
    save(meta, "job2", "Slow start");
    save(meta, "job3", "crashes daily");
    let snap = meta.snapshot().unwrap();
    assert_eq!(
        snap.get_job("job2").unwrap(),
        Some(job("job2", "Slow start"))
    );
    let names = |r: &WordRange, after: Option<&str>, limit: usize| {
        snap.jobs_by_word(r, after, limit).unwrap()
    };
    let crash = range(Some("description"), "crash", Some("crash"));
    assert_eq!(names(&crash, None, 10), ["job1"]);
    let prefix = range(None, "crash", Some("crash\u{10FFFF}"));
    assert_eq!(names(&prefix, None, 10), ["job1", "job3"]);
    // Each job once, paged by name.
    let any = range(None, "", None);
    assert_eq!(names(&any, None, 2), ["job1", "job2"]);
    assert_eq!(names(&any, Some("job2"), 2), ["job3"]);
    drop(snap);

    // A save replaces the job's words; a delete removes them with the job.
    save(meta, "job1", "Fixed");
    write(meta, |txn| txn.delete_job("job3")).unwrap();
    let snap = meta.snapshot().unwrap();
    assert!(snap.jobs_by_word(&prefix, None, 10).unwrap().is_empty());
    assert_eq!(
        snap.list_jobs(None, 10)
            .unwrap()
            .iter()
            .map(|j| j.name.as_str())
            .collect::<Vec<_>>(),
        ["job1", "job2"]
    );
    drop(snap);

    let numbers = write(meta, |txn| {
        Ok::<_, StoreError>((txn.next_job_number()?, txn.next_job_number()?))
    })
    .unwrap();
    assert_eq!(numbers, (1, 2));

    write(meta, |txn| {
        txn.put_job_spec("Fields:\n\t101 Job word 32 required\n", 5)?;
        txn.put_fix(&fix("job1", 4))?;
        txn.put_fix(&fix("job1", 7))?;
        txn.put_fix(&fix("job2", 7))
    })
    .unwrap();
    let snap = meta.snapshot().unwrap();
    assert_eq!(snap.job_spec().unwrap().map(|(_, t)| t), Some(5));
    let changes: Vec<u64> = snap
        .fixes_of_job("job1")
        .unwrap()
        .iter()
        .map(|f| f.change.0)
        .collect();
    assert_eq!(changes, [7, 4]);
    let jobs: Vec<String> = snap
        .fixes_of_change(ChangeNumber(7))
        .unwrap()
        .into_iter()
        .map(|f| f.job)
        .collect();
    assert_eq!(jobs, ["job1", "job2"]);
    let page = snap.list_fixes(None, 2).unwrap();
    assert_eq!(page, [fix("job2", 7), fix("job1", 7)]);
    let rest = snap
        .list_fixes(Some((ChangeNumber(7), "job1")), 10)
        .unwrap();
    assert_eq!(rest, [fix("job1", 4)]);
    drop(snap);
    assert!(write(meta, |txn| txn.delete_fix("job1", ChangeNumber(4))).unwrap());
    assert!(!write(meta, |txn| txn.delete_fix("job1", ChangeNumber(4))).unwrap());
}

fn journals(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("journal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("journal."))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_checkpoint_and_the_journal_restore_jobs_and_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stores = open_root(&root, &StoreConfig::default()).unwrap();
    save(&stores.meta, "job1", "before the checkpoint");
    let ckpt = write_checkpoint(
        &stores.meta,
        stores.have.dir(),
        stores.journal.as_deref(),
        &root,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .expect("checkpoint written")
    .path;
    save(&stores.meta, "job2", "after the checkpoint");
    write(&stores.meta, |txn| {
        txn.put_job_spec("spec text", 9)?;
        txn.put_fix(&fix("job2", 3))
    })
    .unwrap();
    drop(stores);
    let target = dir.path().join("restored");
    restore(
        &ckpt,
        &journals(&root),
        &target,
        &StoreConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    let stores = open_root(&target, &StoreConfig::default()).unwrap();
    let snap = stores.meta.snapshot().unwrap();
    assert_eq!(
        snap.get_job("job1").unwrap(),
        Some(job("job1", "before the checkpoint"))
    );
    let after = range(Some("description"), "after", Some("after"));
    assert_eq!(snap.jobs_by_word(&after, None, 10).unwrap(), ["job2"]);
    assert_eq!(snap.job_spec().unwrap(), Some(("spec text".to_string(), 9)));
    assert_eq!(snap.fixes_of_job("job2").unwrap(), [fix("job2", 3)]);
}
