//! Integrate plans on one snapshot and opens its targets in write jobs of
//! `ServiceConfig::integrate_batch` files: a branch of several batches opens and reports every
//! target once, and the whole branch then submits as one change.

use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};
use keel_core::{ChangeRef, FileAction};
use keel_service::{
    Caller, IntegrateMode, IntegrateRequest, OpenAction, OpenRequest, Service, ServiceConfig,
    WorkspaceSpec,
};
use keel_store::{MetaStore, SqliteHaveStore, SqliteStore, StoreConfig};
use std::sync::Arc;

#[test]
fn a_branch_of_several_batches_opens_every_target_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let meta: Arc<dyn MetaStore> = Arc::new(
        SqliteStore::open(&dir.path().join("metadata.db"), &StoreConfig::default()).expect("store"),
    );
    let have = SqliteHaveStore::open(&dir.path().join("have")).expect("have");
    let blobs = Arc::new(
        FsBlobStore::open(dir.path().join("content"), CompressionPolicy::default()).expect("blobs"),
    );
    let config = ServiceConfig {
        integrate_batch: 2,
        submit_batch: 3,
        ..ServiceConfig::default()
    };
    let service = Service::new(
        meta,
        have,
        blobs.clone(),
        Arc::new(|| 0),
        config,
        dir.path().to_path_buf(),
    );
    let who = Caller {
        user: "ann".into(),
        workspace: "ann-ws".into(),
        host: String::new(),
        address: None,
        force: false,
    };
    let spec = WorkspaceSpec {
        name: who.workspace.clone(),
        owner: who.user.clone(),
        root: dir.path().join("ws").display().to_string(),
        view: vec![format!("//depot/... //{}/...", who.workspace)],
        ..WorkspaceSpec::default()
    };
    service.save_workspace(&who, spec, true).expect("workspace");

    let sources: Vec<String> = (0..5).map(|i| format!("//depot/main/f{i}")).collect();
    let req = OpenRequest {
        files: sources.clone(),
        ..OpenRequest::default()
    };
    service.open(&who, OpenAction::Add, req).expect("opened");
    let mut session = service
        .submit_begin(&who, ChangeRef::Default, "main")
        .expect("begin");
    let expected: Vec<String> = session.uploads().expected().map(str::to_string).collect();
    for path in expected {
        let mut probe = blobs.writer().expect("writer");
        probe.write(path.as_bytes()).expect("write");
        let digest = probe.finish().expect("finish").info.digest.to_hex();
        let uploads = session.uploads();
        uploads.begin_file(&service, &path).expect("file begins");
        uploads
            .write_chunk(&service, path.as_bytes())
            .expect("chunk");
        uploads
            .end_file(&service, &digest, path.len() as u64)
            .expect("file ends");
    }
    session.commit(&service).expect("main submitted");

    let mut reported = Vec::new();
    let request = IntegrateRequest {
        from: "//depot/main/...".into(),
        to: "//depot/rel/...".into(),
        ..IntegrateRequest::default()
    };
    service
        .integrate(&who, IntegrateMode::Integrate, request, &mut |f| {
            reported.push(f.depot_file.into_string());
            Ok(())
        })
        .expect("integrated");
    let targets: Vec<String> = (0..5).map(|i| format!("//depot/rel/f{i}")).collect();
    assert_eq!(reported, targets);

    // Every target is opened exactly once, and the branch submits whole.
    let session = service
        .submit_begin(&who, ChangeRef::Default, "branch")
        .expect("begin");
    let result = session.commit(&service).expect("branch submitted");
    let mut submitted = Vec::new();
    service
        .submitted_files(&result, &mut |batch| {
            submitted.extend(
                batch
                    .into_iter()
                    .map(|f| (f.depot_file.into_string(), f.action)),
            );
            Ok(())
        })
        .expect("submitted files");
    let branched: Vec<(String, Option<FileAction>)> = targets
        .iter()
        .map(|t| (t.clone(), Some(FileAction::Branch)))
        .collect();
    assert_eq!(submitted, branched);
}
