//! Shared fixture of the service table tests: a `Service` over a temporary SQLite store and
//! blob store, three users with workspaces, short helpers for the usual steps, and `check`,
//! which runs one table case on a fresh fixture and compares its outcome with the expected one.

#![allow(dead_code)]

use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};
use keel_core::ChangeRef;
use keel_service::{
    Caller, ChangeError, FileInfo, HaveEntry, IntegrateError, IntegrateMode, IntegrateRequest,
    OpenAction, OpenError, OpenRequest, Service, ServiceConfig, ServiceError, ShelveError,
    ShelveSession, SubmitError, SubmitResult, SubmitSession, SyncAction, SyncOptions, Uploads,
    WorkspaceSpec,
};
use keel_service::{DepotError, LabelError, ObliterateError};
use keel_store::{MetaStore, SqliteHaveStore, SqliteStore, StoreConfig};
use std::sync::Arc;

/// A server in a temporary directory with three users: ann and bob map all of `//depot/...`,
/// cat maps only `//depot/main/...`.
pub struct World {
    _dir: tempfile::TempDir,
    pub service: Service,
    pub blobs: Arc<FsBlobStore>,
    pub ann: Caller,
    pub bob: Caller,
    pub cat: Caller,
}

impl World {
    /// Integrates and returns every file the integrate reported.
    pub fn integrate(
        &self,
        who: &Caller,
        mode: IntegrateMode,
        req: IntegrateRequest,
    ) -> Result<Vec<FileInfo>, IntegrateError> {
        let mut files = Vec::new();
        self.service.integrate(who, mode, req, &mut |f| {
            files.push(f);
            Ok(())
        })?;
        Ok(files)
    }

    /// Every file a submit reports, in the order the reply gives them.
    pub fn submitted(&self, result: &SubmitResult) -> Vec<FileInfo> {
        let mut files = Vec::new();
        self.service
            .submitted_files(result, &mut |page| {
                files.extend(page);
                Ok(())
            })
            .expect("submitted files read back");
        files
    }

    pub fn new() -> World {
        Self::with_store_config(StoreConfig::default())
    }

    /// A world whose stores use `config`.
    pub fn with_store_config(config: StoreConfig) -> World {
        let dir = tempfile::tempdir().expect("temp dir");
        let meta: Arc<dyn MetaStore> =
            Arc::new(SqliteStore::open(&dir.path().join("metadata.db"), &config).expect("store"));
        let have =
            SqliteHaveStore::open_with(&dir.path().join("have"), &config).expect("have store");
        let blobs = Arc::new(
            FsBlobStore::open(dir.path().join("content"), CompressionPolicy::default())
                .expect("blob store"),
        );
        let service = Service::new(
            meta,
            have,
            blobs.clone(),
            Arc::new(|| 1_700_000_000),
            ServiceConfig::default(),
            dir.path().to_path_buf(),
        );
        let world = World {
            service,
            blobs,
            ann: caller("ann"),
            bob: caller("bob"),
            cat: caller("cat"),
            _dir: dir,
        };
        world.workspace(&world.ann, "//depot/...");
        world.workspace(&world.bob, "//depot/...");
        world.workspace(&world.cat, "//depot/main/...");
        world
    }

    /// A second service over the same stores whose syncs never take the shortcut of a marked
    /// have list (`sync_since_max_changes` 0): the reference its plans are checked against.
    pub fn without_sync_shortcut(&self) -> Service {
        let dir = self._dir.path();
        let meta: Arc<dyn MetaStore> = Arc::new(
            SqliteStore::open(&dir.join("metadata.db"), &StoreConfig::default()).expect("store"),
        );
        let have = SqliteHaveStore::open(&dir.join("have")).expect("have store");
        let config = ServiceConfig {
            sync_since_max_changes: 0,
            ..ServiceConfig::default()
        };
        Service::new(
            meta,
            have,
            self.blobs.clone(),
            Arc::new(|| 1_700_000_000),
            config,
            dir.to_path_buf(),
        )
    }

    /// A second handle on the metadata store, to plant rows no command would write (a row
    /// as an older server stored it).
    pub fn meta(&self) -> Arc<dyn MetaStore> {
        Arc::new(
            SqliteStore::open(
                &self._dir.path().join("metadata.db"),
                &StoreConfig::default(),
            )
            .expect("store"),
        )
    }

    /// The content store's directory (`ab/cd/<hex>.zst|.raw` files).
    pub fn content_root(&self) -> std::path::PathBuf {
        self._dir.path().join("content")
    }

    fn workspace(&self, who: &Caller, depot_side: &str) {
        let spec = WorkspaceSpec {
            name: who.workspace.clone(),
            owner: who.user.clone(),
            root: self._dir.path().join(&who.workspace).display().to_string(),
            view: vec![format!("{depot_side} //{}/...", who.workspace)],
            ..WorkspaceSpec::default()
        };
        self.service
            .save_workspace(who, spec, true)
            .expect("workspace saved");
    }

    /// Saves `who`'s workspace with `lines` as its view (root and owner as made).
    pub fn set_view(&self, who: &Caller, lines: &[&str]) {
        let spec = WorkspaceSpec {
            name: who.workspace.clone(),
            owner: who.user.clone(),
            root: self._dir.path().join(&who.workspace).display().to_string(),
            view: lines.iter().map(|l| l.to_string()).collect(),
            ..WorkspaceSpec::default()
        };
        self.service
            .save_workspace(who, spec, false)
            .expect("view saved");
    }

    /// Opens files for `action` in `change` with a type (`""` = detected/head type).
    pub fn open_as(
        &self,
        who: &Caller,
        action: OpenAction,
        change: u64,
        file_type: &str,
        files: &[&str],
    ) -> Result<Vec<FileInfo>, OpenError> {
        let req = OpenRequest {
            files: strings(files),
            change: ChangeRef::from_number(change),
            file_type: ty(file_type),
            add_types: Vec::new(),
        };
        self.service.open(who, action, req)
    }

    pub fn add(&self, who: &Caller, files: &[&str]) -> Result<Vec<FileInfo>, OpenError> {
        self.open_as(who, OpenAction::Add, 0, "", files)
    }

    pub fn edit(&self, who: &Caller, files: &[&str]) -> Result<Vec<FileInfo>, OpenError> {
        self.open_as(who, OpenAction::Edit, 0, "", files)
    }

    pub fn delete(&self, who: &Caller, files: &[&str]) -> Result<Vec<FileInfo>, OpenError> {
        self.open_as(who, OpenAction::Delete, 0, "", files)
    }

    /// Submits `change` (0 = default), uploading each expected file with `content` as its
    /// bytes followed by its path.
    pub fn submit_with(
        &self,
        who: &Caller,
        change: u64,
        content: &str,
    ) -> Result<SubmitResult, SubmitError> {
        let mut session: SubmitSession =
            self.service
                .submit_begin(who, ChangeRef::from_number(change), "a change")?;
        self.upload(session.uploads(), content)?;
        session.commit(&self.service)
    }

    pub fn submit(&self, who: &Caller, change: u64) -> Result<SubmitResult, SubmitError> {
        self.submit_with(who, change, "content")
    }

    /// Shelves the opened files of `change`.
    pub fn shelve(&self, who: &Caller, change: u64) -> Result<u64, ShelveError> {
        let mut session: ShelveSession =
            self.service
                .shelve_begin(who, ChangeRef::from_number(change), &[], false)?;
        self.upload(session.uploads(), "shelved")?;
        Ok(session.commit(&self.service)?.0.0)
    }

    fn upload(&self, uploads: &mut Uploads, content: &str) -> Result<(), ServiceError> {
        let expected: Vec<String> = uploads.expected().map(str::to_string).collect();
        for path in expected {
            let bytes = format!("{content} {path}\n");
            let mut probe = self.blobs.writer().expect("writer");
            probe.write(bytes.as_bytes()).expect("write");
            let digest = probe.finish().expect("finish").info.digest.to_hex();
            uploads.begin_file(&self.service, &path)?;
            uploads.write_chunk(&self.service, bytes.as_bytes())?;
            uploads.end_file(&self.service, &digest, bytes.len() as u64)?;
        }
        Ok(())
    }

    /// Adds and submits files in one change; returns its number.
    pub fn seed(&self, who: &Caller, files: &[&str]) -> u64 {
        self.add(who, files).expect("seed files opened for add");
        self.submit(who, 0).expect("seed change submitted").change.0
    }

    /// Edits and submits files in one change; returns its number.
    pub fn bump(&self, who: &Caller, files: &[&str]) -> u64 {
        self.edit(who, files).expect("files opened for edit");
        self.submit_with(who, 0, "bumped")
            .expect("edit submitted")
            .change
            .0
    }

    /// A new pending numbered change of `who`.
    pub fn new_change(&self, who: &Caller) -> u64 {
        self.service
            .save_change(who, None, "pending work", &[])
            .expect("change created")
            .change
            .0
    }

    /// The sync plan for `files` as `(depot file, rev, action)` (nothing recorded).
    pub fn sync_plan(
        &self,
        who: &Caller,
        files: &[&str],
    ) -> Result<Vec<(String, u32, &'static str)>, ServiceError> {
        let mut out = Vec::new();
        let opts = SyncOptions {
            preview: true,
            ..SyncOptions::default()
        };
        self.service.sync(who, &strings(files), opts, &mut |e| {
            out.push((
                e.item.depot_file.into_string(),
                e.item.rev,
                e.item.action.as_str(),
            ));
            Ok(())
        })?;
        Ok(out)
    }

    /// Syncs and records the have list as the client would after writing the files.
    pub fn sync(&self, who: &Caller, files: &[&str]) -> Result<(), ServiceError> {
        let mut have = Vec::new();
        let totals = self
            .service
            .sync(who, &strings(files), SyncOptions::default(), &mut |e| {
                if e.item.action != SyncAction::Resolve {
                    have.push(HaveEntry {
                        depot_file: e.item.depot_file.into_string(),
                        rev: e.item.rev,
                    });
                }
                Ok(())
            })?;
        // The mark goes with the last batch, as the client sends it.
        self.service.update_have(who, have, totals.mark, 0)?;
        Ok(())
    }

    /// `(depot file, action, change)` of `who`'s opened files.
    pub fn opened(&self, who: &Caller) -> Vec<(String, String, u64)> {
        let mut out = Vec::new();
        self.service
            .opened(who, &[], false, "", None, &mut |f| {
                let action = f.action.map(|a| a.as_str().to_string()).unwrap_or_default();
                out.push((f.depot_file.into_string(), action, f.change.number()));
                Ok(())
            })
            .expect("opened");
        out
    }
}

pub fn caller(user: &str) -> Caller {
    Caller {
        user: user.into(),
        workspace: format!("{user}-ws"),
        host: String::new(),
        address: None,
        force: false,
    }
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// An error of any command family, so one table can hold steps of several.
#[derive(Debug)]
pub enum Failure {
    Service(ServiceError),
    Open(OpenError),
    Change(ChangeError),
    Integrate(IntegrateError),
    Shelve(ShelveError),
    Submit(SubmitError),
    Label(LabelError),
    Depot(DepotError),
    Obliterate(ObliterateError),
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Self {
        Failure::Service(e)
    }
}

impl From<OpenError> for Failure {
    fn from(e: OpenError) -> Self {
        Failure::Open(e)
    }
}

impl From<ChangeError> for Failure {
    fn from(e: ChangeError) -> Self {
        Failure::Change(e)
    }
}

impl From<IntegrateError> for Failure {
    fn from(e: IntegrateError) -> Self {
        Failure::Integrate(e)
    }
}

impl From<ShelveError> for Failure {
    fn from(e: ShelveError) -> Self {
        Failure::Shelve(e)
    }
}

impl From<SubmitError> for Failure {
    fn from(e: SubmitError) -> Self {
        Failure::Submit(e)
    }
}

impl From<LabelError> for Failure {
    fn from(e: LabelError) -> Self {
        Failure::Label(e)
    }
}

impl From<DepotError> for Failure {
    fn from(e: DepotError) -> Self {
        Failure::Depot(e)
    }
}

impl From<ObliterateError> for Failure {
    fn from(e: ObliterateError) -> Self {
        Failure::Obliterate(e)
    }
}

impl From<keel_store::StoreError> for Failure {
    fn from(e: keel_store::StoreError) -> Self {
        Failure::Service(e.into())
    }
}

/// The shared failure inside any family's error, if that is what it is.
pub fn shared(f: &Failure) -> Option<&ServiceError> {
    match f {
        Failure::Service(e) | Failure::Open(OpenError::Service(e)) => Some(e),
        Failure::Submit(SubmitError::Service(e))
        | Failure::Shelve(ShelveError::Service(e))
        | Failure::Integrate(IntegrateError::Service(e))
        | Failure::Change(ChangeError::Service(e))
        | Failure::Label(LabelError::Service(e))
        | Failure::Depot(DepotError::Service(e))
        | Failure::Obliterate(ObliterateError::Service(e)) => Some(e),
        _ => None,
    }
}

/// The message a failure shows (what the keel binary prints before any hint).
pub fn message(f: &Failure) -> String {
    match f {
        Failure::Service(e) => e.to_string(),
        Failure::Open(e) => e.to_string(),
        Failure::Change(e) => e.to_string(),
        Failure::Integrate(e) => e.to_string(),
        Failure::Shelve(e) => e.to_string(),
        Failure::Submit(e) => e.to_string(),
        Failure::Label(e) => e.to_string(),
        Failure::Depot(e) => e.to_string(),
        Failure::Obliterate(e) => e.to_string(),
    }
}

/// What a case expects: success, or an error for which the predicate holds (the typed refusal
/// and its data).
#[derive(Clone, Copy, Debug)]
pub enum Want {
    Ok,
    Refused(fn(&Failure) -> bool),
}

/// One row of a table: a setup on a fresh `World`, the step under test, and what it must give.
pub struct Case {
    pub name: &'static str,
    pub setup: fn(&World),
    pub act: fn(&World) -> Result<(), Failure>,
    pub want: Want,
}

/// Runs every case on its own fresh world and reports all mismatches together (a case whose
/// own assertions fail is reported by name too).
pub fn check(cases: &[Case]) {
    let mut failures = Vec::new();
    let mut worlds = Vec::with_capacity(cases.len());
    for case in cases {
        let world = World::new();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (case.setup)(&world);
            (case.act)(&world)
        }));
        match run {
            Ok(got) => {
                if let Some(why) = mismatch(&got, case.want) {
                    failures.push(format!("{}: {why}", case.name));
                }
            }
            Err(_) => failures.push(format!("{}: panicked (see above)", case.name)),
        }
        worlds.push(world);
    }
    close_together(worlds);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Closes the worlds side by side: closing a store waits for its checkpoint thread's pause
/// (up to 250 ms), which one after another would dominate a table's run time.
pub fn close_together(worlds: Vec<World>) {
    std::thread::scope(|s| {
        for world in worlds {
            s.spawn(move || drop(world));
        }
    });
}

fn mismatch(got: &Result<(), Failure>, want: Want) -> Option<String> {
    let matched = match (got, want) {
        (Ok(()), Want::Ok) => true,
        (Err(f), Want::Refused(holds)) => holds(f),
        _ => false,
    };
    (!matched).then(|| format!("wanted {want:?}, got {got:?}"))
}

/// Drops a command's records: the table compares outcomes.
pub fn done<T, E: Into<Failure>>(r: Result<T, E>) -> Result<(), Failure> {
    r.map(|_| ()).map_err(Into::into)
}

/// A `-t` value as the server passes it on (`""` = none).
pub fn ty(text: &str) -> Option<keel_core::TypeChange> {
    (!text.is_empty()).then(|| keel_core::TypeChange::parse(text).expect("a valid -t value"))
}
