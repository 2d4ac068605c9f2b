//! Open and submit refuse with typed errors that carry what a caller needs (who holds a lock,
//! which revision is at head, which change), not sentences.

use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};
use keel_core::{ChangeNumber, ChangeRef, FileAction};
use keel_service::{
    Caller, OpenAction, OpenError, OpenRequest, Service, ServiceConfig, ServiceError, SubmitError,
    WorkspaceSpec,
};
use keel_store::{MetaStore, SqliteHaveStore, SqliteStore, StoreConfig};
use std::path::Path;
use std::sync::Arc;

struct Fixture {
    _dir: tempfile::TempDir,
    service: Service,
    blobs: Arc<FsBlobStore>,
    ann: Caller,
    bob: Caller,
}

fn caller(user: &str) -> Caller {
    Caller {
        user: user.into(),
        workspace: format!("{user}-ws"),
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

/// A server in a temporary directory with workspaces for ann and bob.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let meta: Arc<dyn MetaStore> = Arc::new(
        SqliteStore::open(&dir.path().join("metadata.db"), &StoreConfig::default()).expect("store"),
    );
    let have = SqliteHaveStore::open(&dir.path().join("have")).expect("have");
    let blobs = Arc::new(
        FsBlobStore::open(dir.path().join("content"), CompressionPolicy::default()).expect("blobs"),
    );
    let service = Service::new(
        meta,
        have,
        blobs.clone(),
        Arc::new(|| 0),
        ServiceConfig::default(),
        dir.path().to_path_buf(),
    );
    let (ann, bob) = (caller("ann"), caller("bob"));
    workspace(&service, &ann, &dir.path().join("ann"));
    workspace(&service, &bob, &dir.path().join("bob"));
    Fixture {
        _dir: dir,
        service,
        blobs,
        ann,
        bob,
    }
}

fn open(
    f: &Fixture,
    who: &Caller,
    action: OpenAction,
    path: &str,
    file_type: &str,
) -> Result<(), OpenError> {
    let req = OpenRequest {
        files: vec![path.to_string()],
        file_type: (!file_type.is_empty())
            .then(|| keel_core::TypeChange::parse(file_type).expect("a valid -t value")),
        ..OpenRequest::default()
    };
    f.service.open(who, action, req).map(drop)
}

/// Adds and submits `path` (its path as its content) from ann's workspace.
fn submitted(f: &Fixture, path: &str) {
    open(f, &f.ann, OpenAction::Add, path, "").expect("opened for add");
    let mut session = f
        .service
        .submit_begin(&f.ann, ChangeRef::Default, "add")
        .expect("begin");
    let mut probe = f.blobs.writer().expect("writer");
    probe.write(path.as_bytes()).expect("write");
    let digest = probe.finish().expect("finish").info.digest.to_hex();
    let uploads = session.uploads();
    uploads.begin_file(&f.service, path).expect("file begins");
    uploads
        .write_chunk(&f.service, path.as_bytes())
        .expect("chunk");
    uploads
        .end_file(&f.service, &digest, path.len() as u64)
        .expect("file ends");
    session.commit(&f.service).expect("submitted");
}

#[test]
fn open_refusals_name_the_file_and_the_facts() {
    let f = fixture();
    submitted(&f, "//depot/a");

    let err = open(&f, &f.ann, OpenAction::Add, "//depot/a", "").expect_err("add of existing");
    assert!(
        matches!(&err, OpenError::AddExisting { path, head_rev: 1 } if path == "//depot/a"),
        "{err:?}"
    );

    let err = open(&f, &f.bob, OpenAction::Edit, "//depot/a", "").expect_err("not synced");
    assert!(
        matches!(&err, OpenError::NotOnClient { path } if path == "//depot/a"),
        "{err:?}"
    );

    open(&f, &f.ann, OpenAction::Edit, "//depot/a", "").expect("edit");
    let err = open(&f, &f.ann, OpenAction::Delete, "//depot/a", "").expect_err("already open");
    assert!(
        matches!(
            &err,
            OpenError::AlreadyOpened { path, wanted: FileAction::Delete, current: FileAction::Edit }
                if path == "//depot/a"
        ),
        "{err:?}"
    );

    let req = OpenRequest {
        files: vec!["//depot/b".to_string()],
        change: ChangeRef::Numbered(ChangeNumber(99)),
        ..OpenRequest::default()
    };
    let err = f
        .service
        .open(&f.ann, OpenAction::Add, req)
        .expect_err("no change 99");
    assert!(
        matches!(
            &err,
            OpenError::Service(ServiceError::NoSuchChange {
                change: ChangeNumber(99)
            })
        ),
        "{err:?}"
    );
}

#[test]
fn an_exclusive_open_names_who_holds_it() {
    let f = fixture();
    open(&f, &f.ann, OpenAction::Add, "//depot/lock", "+l").expect("ann adds +l");
    let err = open(&f, &f.bob, OpenAction::Add, "//depot/lock", "").expect_err("locked");
    assert!(
        matches!(
            &err,
            OpenError::Service(ServiceError::ExclusivelyOpened { path, user, workspace })
                if path == "//depot/lock" && user == "ann" && workspace == "ann-ws"
        ),
        "{err:?}"
    );
}

#[test]
fn submit_refusals_say_which_change() {
    let f = fixture();
    let Err(err) = f
        .service
        .submit_begin(&f.ann, ChangeRef::Default, "nothing")
    else {
        panic!("a submit of an empty default changelist must fail");
    };
    assert!(
        matches!(err, SubmitError::NothingToSubmit { change: None }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "No files to submit from the default changelist."
    );

    open(&f, &f.ann, OpenAction::Add, "//depot/c", "").expect("add");
    let Err(err) = f.service.submit_begin(&f.ann, ChangeRef::Default, " ") else {
        panic!("a submit without a description must fail");
    };
    assert!(matches!(err, SubmitError::NoDescription), "{err:?}");
}

#[test]
fn opened_of_files_not_opened_lists_nothing() {
    let f = fixture();
    open(&f, &f.ann, OpenAction::Add, "//depot/a", "").expect("add");
    let mut listed = Vec::new();
    f.service
        .opened(
            &f.ann,
            &["//depot/b".to_string()],
            false,
            "",
            None,
            &mut |i| {
                listed.push(i.depot_file);
                Ok(())
            },
        )
        .expect("a listing, not a refusal");
    assert!(listed.is_empty(), "{listed:?}");
}
