//! Submit plans its files on a snapshot and commits them later: whatever was written in between
//! must be noticed (the change's files re-read and compared), and nothing else must stop it.

use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};
use keel_core::ChangeRef;
use keel_service::{
    Caller, OpenAction, OpenRequest, Service, ServiceConfig, SubmitError, SubmitSession,
    WorkspaceSpec,
};
use keel_store::{MetaStore, SqliteHaveStore, SqliteStore, StoreConfig};
use std::path::Path;
use std::sync::Arc;

fn service(dir: &Path, config: ServiceConfig) -> (Service, Arc<FsBlobStore>) {
    let meta: Arc<dyn MetaStore> = Arc::new(
        SqliteStore::open(&dir.join("metadata.db"), &StoreConfig::default()).expect("store"),
    );
    let have = SqliteHaveStore::open(&dir.join("have")).expect("have");
    let blobs = Arc::new(
        FsBlobStore::open(dir.join("content"), CompressionPolicy::default()).expect("blobs"),
    );
    let service = Service::new(
        meta,
        have,
        blobs.clone(),
        Arc::new(|| 0),
        config,
        dir.to_path_buf(),
    );
    (service, blobs)
}

fn caller(user: &str, workspace: &str) -> Caller {
    Caller {
        user: user.into(),
        workspace: workspace.into(),
        host: String::new(),
        address: None,
        force: false,
    }
}

fn workspace(service: &Service, who: &Caller, root: &Path) {
    let spec = WorkspaceSpec {
        name: who.workspace.clone(),
        owner: who.user.clone(),
        root: root.display().to_string(),
        view: vec![format!("//depot/... //{}/...", who.workspace)],
        ..WorkspaceSpec::default()
    };
    service
        .save_workspace(who, spec, true)
        .expect("workspace saved");
}

fn add(service: &Service, who: &Caller, paths: &[&str]) {
    let req = OpenRequest {
        files: paths.iter().map(|p| p.to_string()).collect(),
        ..OpenRequest::default()
    };
    service
        .open(who, OpenAction::Add, req)
        .expect("files opened for add");
}

/// Sends every file the submit expects, each with its path as its content.
fn upload_all(service: &Service, blobs: &FsBlobStore, session: &mut SubmitSession) {
    let expected: Vec<String> = session.uploads().expected().map(str::to_string).collect();
    for path in expected {
        let mut probe = blobs.writer().expect("writer");
        probe.write(path.as_bytes()).expect("write");
        let digest = probe.finish().expect("finish").info.digest.to_hex();
        let uploads = session.uploads();
        uploads.begin_file(service, &path).expect("file begins");
        uploads
            .write_chunk(service, path.as_bytes())
            .expect("chunk");
        uploads
            .end_file(service, &digest, path.len() as u64)
            .expect("file ends");
    }
}

/// A server in a temporary directory and user ann's workspace on it.
fn fixture() -> (tempfile::TempDir, Service, Arc<FsBlobStore>, Caller) {
    fixture_with(ServiceConfig::default())
}

fn fixture_with(config: ServiceConfig) -> (tempfile::TempDir, Service, Arc<FsBlobStore>, Caller) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (service, blobs) = service(dir.path(), config);
    let who = caller("ann", "ann-ws");
    workspace(&service, &who, &dir.path().join("ws"));
    (dir, service, blobs, who)
}

#[test]
fn submit_notices_a_file_reverted_after_it_began() {
    let (_dir, service, blobs, who) = fixture();
    add(&service, &who, &["//depot/a", "//depot/b", "//depot/c"]);

    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "three files")
        .expect("begin");
    service
        .revert(&who, &["//depot/b".to_string()], false, &[])
        .expect("revert");
    upload_all(&service, &blobs, &mut session);
    let Err(err) = session.commit(&service) else {
        panic!("a submit whose files changed after it began must fail");
    };
    assert!(
        matches!(&err, SubmitError::ChangedDuringSubmit { change: None }),
        "{err:?}"
    );
    let mut opened = Vec::new();
    service
        .opened(&who, &[], false, "", None, &mut |f| {
            opened.push(f.depot_file);
            Ok(())
        })
        .expect("opened");
    assert_eq!(opened, ["//depot/a", "//depot/c"], "nothing was submitted");
}

/// The depot paths a submit committed, read back the way the server replies.
fn submitted(service: &Service, result: &keel_service::SubmitResult) -> Vec<String> {
    let mut files = Vec::new();
    service
        .submitted_files(result, &mut |batch| {
            files.extend(batch.into_iter().map(|f| f.depot_file.into_string()));
            Ok(())
        })
        .expect("submitted files");
    files
}

#[test]
fn submit_commits_when_only_unrelated_writes_came_between() {
    let (dir, service, blobs, who) = fixture();
    add(&service, &who, &["//depot/a", "//depot/b"]);

    // Nothing written between begin and commit.
    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "quiet")
        .expect("begin");
    upload_all(&service, &blobs, &mut session);
    let first = session.commit(&service).expect("quiet submit commits");
    assert_eq!(submitted(&service, &first), ["//depot/a", "//depot/b"]);

    // Another user's writes in between: the files are read again, found unchanged, committed.
    add(&service, &who, &["//depot/c"]);
    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "busy")
        .expect("begin");
    let other = caller("bob", "bob-ws");
    workspace(&service, &other, &dir.path().join("bob"));
    add(&service, &other, &["//depot/d"]);
    upload_all(&service, &blobs, &mut session);
    let second = session.commit(&service).expect("busy submit commits");
    assert_eq!(submitted(&service, &second), ["//depot/c"]);
    assert!(second.change > first.change);
}

/// The commit, the have list and the reply page through the change in batches; a change of
/// several batches (and a partial last one) is submitted whole, rechecked whole, and reported
/// whole, in path order.
#[test]
fn a_change_larger_than_one_batch_is_submitted_and_reported_whole() {
    let (dir, service, blobs, who) = fixture_with(ServiceConfig {
        submit_batch: 2,
        ..ServiceConfig::default()
    });
    let paths = [
        "//depot/a",
        "//depot/b",
        "//depot/c",
        "//depot/d",
        "//depot/e",
    ];
    add(&service, &who, &paths);
    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "five")
        .expect("begin");
    // An unrelated write in between: the commit re-reads all pages and compares.
    let other = caller("bob", "bob-ws");
    workspace(&service, &other, &dir.path().join("bob"));
    upload_all(&service, &blobs, &mut session);
    let result = session.commit(&service).expect("submit commits");
    assert_eq!(submitted(&service, &result), paths);

    let mut pages = Vec::new();
    service
        .submitted_files(&result, &mut |batch| {
            pages.push(batch.len());
            Ok(())
        })
        .expect("submitted files");
    assert_eq!(pages, [2, 2, 1]);

    // A file reverted in between changes a later page: nothing is submitted.
    add(&service, &who, &["//depot/f", "//depot/g", "//depot/h"]);
    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "three")
        .expect("begin");
    service
        .revert(&who, &["//depot/h".to_string()], false, &[])
        .expect("revert");
    upload_all(&service, &blobs, &mut session);
    let Err(err) = session.commit(&service) else {
        panic!("a submit whose last page changed must fail");
    };
    assert!(
        matches!(&err, SubmitError::ChangedDuringSubmit { change: None }),
        "{err:?}"
    );
}
