//! A model of the metadata store: random operation sequences applied both to the SQLite
//! `MetaStore` and to plain in-memory maps, with every observable read compared after each step.
//!
//! Shared by the seeded `store_model` test in this directory and the `store_model` fuzz target
//! (`fuzz/fuzz_targets/store_model.rs` includes this file by path). Operations are decoded from
//! bytes, so a fuzzer's input and a seeded PRNG's output drive the same code. Names come from
//! small pools so operations collide on the same workspaces, files, changes and labels.

use keel_core::{
    ChangeNumber, DepotPath, Digest, FileAction, FileType, SpecLock, WorkspaceOptions,
};
use keel_store::{
    ChangeFilter, ChangeRow, ChangeStatus, IntegRow, LabelRow, MetaStore, OpenedRow, PathRange,
    ReadTxn, RevisionRow, ShelvedRow, SqliteStore, StoreConfig, StoreError, WorkspaceRow, WriteTxn,
    write,
};
use std::collections::{BTreeMap, BTreeSet};

const WORKSPACES: [&str; 3] = ["ws-a", "ws-b", "ws-c"];
const PATHS: [&str; 6] = [
    "//depot/a",
    "//depot/b",
    "//depot/dir/c",
    "//depot/dir/d",
    "//depot/dir/sub/e",
    "//depot/z",
];
const LABELS: [&str; 2] = ["rel-1", "rel-2"];
const OPEN_ACTIONS: [FileAction; 4] = [
    FileAction::Add,
    FileAction::Edit,
    FileAction::Delete,
    FileAction::Branch,
];
/// Listings are read in pages this small so paging is exercised on every comparison.
const PAGE: usize = 2;

/// One step applied to both the store and the model.
#[derive(Clone, Debug)]
pub enum Op {
    PutWorkspace {
        ws: usize,
        root: u8,
    },
    /// Only a workspace with no open files and no pending changes is deleted.
    DeleteWorkspace {
        ws: usize,
    },
    NewChange {
        ws: usize,
    },
    /// Opens in the default change, or with `numbered` in the workspace's oldest pending change.
    Open {
        ws: usize,
        path: usize,
        action: usize,
        numbered: bool,
    },
    Revert {
        ws: usize,
        path: usize,
    },
    /// Submits the default change, or with `numbered` the oldest pending change.
    Submit {
        ws: usize,
        numbered: bool,
    },
    /// A submit whose job fails after writing: nothing of it may remain.
    AbortedSubmit {
        ws: usize,
    },
    /// Deletes the oldest pending change when nothing is opened or shelved in it.
    DeleteChange {
        ws: usize,
    },
    /// Shelves an opened file of a numbered change.
    Shelve {
        ws: usize,
        path: usize,
    },
    DeleteShelved {
        ws: usize,
        path: usize,
    },
    PutLabel {
        label: usize,
        locked: bool,
    },
    DeleteLabel {
        label: usize,
    },
    /// Sets (rev > 0) or removes (0) a label entry, on an existing label.
    Tag {
        label: usize,
        path: usize,
        rev: u32,
    },
    /// Records an integration of `from`'s head into `to`'s head (both must exist).
    Integrate {
        to: usize,
        from: usize,
    },
    /// Deletes every revision, integration record and label entry of a file.
    Obliterate {
        path: usize,
    },
}

/// Bytes consumed one decision at a time.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data, pos: 0 }
    }

    fn byte(&mut self) -> Option<u8> {
        let b = self.data.get(self.pos).copied();
        self.pos += 1;
        b
    }

    fn pick(&mut self, n: usize) -> Option<usize> {
        self.byte().map(|b| b as usize % n)
    }

    fn flag(&mut self) -> Option<bool> {
        self.byte().map(|b| b & 1 == 1)
    }

    /// The next operation, or `None` when the input is used up.
    pub fn op(&mut self) -> Option<Op> {
        let ws = WORKSPACES.len();
        let paths = PATHS.len();
        Some(match self.pick(15)? {
            0 => Op::PutWorkspace {
                ws: self.pick(ws)?,
                root: self.byte()?,
            },
            1 => Op::DeleteWorkspace { ws: self.pick(ws)? },
            2 => Op::NewChange { ws: self.pick(ws)? },
            3 | 4 => Op::Open {
                ws: self.pick(ws)?,
                path: self.pick(paths)?,
                action: self.pick(OPEN_ACTIONS.len())?,
                numbered: self.flag()?,
            },
            5 => Op::Revert {
                ws: self.pick(ws)?,
                path: self.pick(paths)?,
            },
            6 => Op::Submit {
                ws: self.pick(ws)?,
                numbered: self.flag()?,
            },
            7 => Op::AbortedSubmit { ws: self.pick(ws)? },
            8 => Op::DeleteChange { ws: self.pick(ws)? },
            9 => Op::Shelve {
                ws: self.pick(ws)?,
                path: self.pick(paths)?,
            },
            10 => Op::DeleteShelved {
                ws: self.pick(ws)?,
                path: self.pick(paths)?,
            },
            11 => Op::PutLabel {
                label: self.pick(LABELS.len())?,
                locked: self.flag()?,
            },
            12 => match self.flag()? {
                true => Op::DeleteLabel {
                    label: self.pick(LABELS.len())?,
                },
                false => Op::Tag {
                    label: self.pick(LABELS.len())?,
                    path: self.pick(paths)?,
                    rev: self.pick(4)? as u32,
                },
            },
            13 => Op::Integrate {
                to: self.pick(paths)?,
                from: self.pick(paths)?,
            },
            _ => Op::Obliterate {
                path: self.pick(paths)?,
            },
        })
    }
}

/// Content digests that differ per file, revision and kind (0 = revision, 1 = shelved).
fn digest(kind: u8, path: &str, n: u64) -> Digest {
    let mut d = [0u8; 32];
    d[0] = kind;
    d[1..9].copy_from_slice(&n.to_le_bytes());
    let p = path.as_bytes();
    let len = p.len().min(23);
    d[9..9 + len].copy_from_slice(&p[p.len() - len..]);
    Digest(d)
}

/// The typed form of a pool path.
fn depot(path: &str) -> DepotPath {
    DepotPath::parse(path).expect("pool paths are depot paths")
}

fn text() -> FileType {
    FileType::parse("text").expect("text is a file type")
}

/// The expected state, kept in ordered maps.
#[derive(Default)]
struct Model {
    workspaces: BTreeMap<String, String>,
    changes: BTreeMap<u64, ChangeRow>,
    last_change: u64,
    /// Oldest revision first.
    revisions: BTreeMap<String, Vec<RevisionRow>>,
    /// By (workspace, path).
    opened: BTreeMap<(String, String), OpenedRow>,
    labels: BTreeMap<String, bool>,
    label_revs: BTreeMap<(String, String), u32>,
    shelved: BTreeMap<(u64, String), ShelvedRow>,
    /// By the table's key (to_path, to_rev, from_path, from_end).
    integrations: BTreeMap<(String, u32, String, u32), IntegRow>,
    jobs: u64,
    revisions_removed: u64,
}

impl Model {
    fn head(&self, path: &str) -> Option<&RevisionRow> {
        self.revisions.get(path).and_then(|r| r.last())
    }

    fn oldest_pending(&self, ws: &str) -> Option<u64> {
        self.changes
            .values()
            .find(|c| c.status == ChangeStatus::Pending && c.workspace == ws)
            .map(|c| c.change.0)
    }

    /// The change an operation on `ws` uses: its oldest pending change when `numbered`, else
    /// the default (0); `None` when the workspace does not exist or has no pending change.
    fn change_to_use(&self, ws: &str, numbered: bool) -> Option<u64> {
        if !self.workspaces.contains_key(ws) {
            return None;
        }
        if numbered {
            self.oldest_pending(ws)
        } else {
            Some(0)
        }
    }

    fn change_busy(&self, change: u64) -> bool {
        self.opened.values().any(|o| o.change.0 == change)
            || self.shelved.keys().any(|(c, _)| *c == change)
    }

    /// The revisions a submit of `ws`'s `change` creates (change number still 0).
    fn submit_revisions(&self, ws: &str, change: u64) -> Vec<RevisionRow> {
        self.opened
            .values()
            .filter(|o| o.workspace == ws && o.change.0 == change)
            .map(|o| {
                let rev = self.head(o.path.as_str()).map(|h| h.rev).unwrap_or(0) + 1;
                revision_of(o, rev)
            })
            .collect()
    }
}

fn revision_of(o: &OpenedRow, rev: u32) -> RevisionRow {
    let deleted = o.action.is_delete();
    RevisionRow {
        path: o.path.clone(),
        rev,
        change: ChangeNumber(0),
        action: o.action,
        file_type: o.file_type,
        digest: (!deleted).then(|| digest(0, o.path.as_str(), rev as u64)),
        size: if deleted { 0 } else { 7 },
        md5: String::new(),
        time: 0,
        mod_time: 0,
    }
}

fn change_row(change: u64, status: ChangeStatus, ws: &str) -> ChangeRow {
    ChangeRow {
        change: ChangeNumber(change),
        status,
        user: "fuzz".into(),
        workspace: ws.to_string(),
        description: format!("change {change}"),
        time: 0,
    }
}

/// The submit job as a store writer runs it: reads its open files inside the transaction.
fn submit_in(txn: &mut dyn WriteTxn, ws: &str, change: u64) -> Result<ChangeNumber, StoreError> {
    let files = txn.opened_in_change(ws, ChangeNumber(change), None, usize::MAX)?;
    let number = if change == 0 {
        txn.allocate_change()?
    } else {
        ChangeNumber(change)
    };
    txn.put_change(&change_row(number.0, ChangeStatus::Submitted, ws))?;
    for o in &files {
        let rev = txn.head_revision(&o.path)?.map(|h| h.rev).unwrap_or(0) + 1;
        let mut r = revision_of(o, rev);
        r.change = number;
        txn.insert_revision(&r)?;
    }
    txn.delete_opened_in_change(ws, ChangeNumber(change))?;
    Ok(number)
}

/// A temporary SQLite store and the model it must agree with.
pub struct Harness {
    _dir: tempfile::TempDir,
    store: SqliteStore,
    model: Model,
    /// `jobs_written` of the fresh store, before any operation.
    jobs_base: u64,
    pub log: Vec<Op>,
}

impl Harness {
    pub fn new() -> Harness {
        // In memory where the system has a tmpfs: this compares what the store returns, not
        // its durability, and every step is a durable commit.
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        }
        .expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("meta.db"), &StoreConfig::default())
            .expect("store opens");
        let jobs_base = store
            .snapshot()
            .and_then(|s| s.jobs_written())
            .expect("jobs written");
        Harness {
            _dir: dir,
            store,
            model: Model::default(),
            jobs_base,
            log: Vec::new(),
        }
    }

    /// Runs every operation the input holds, comparing after each; the first disagreement is
    /// returned with the operations that led to it.
    pub fn run(&mut self, input: &[u8]) -> Result<(), String> {
        let mut input = Input::new(input);
        while let Some(op) = input.op() {
            self.log.push(op.clone());
            self.apply(&op)
                .map_err(|e| self.report(&format!("store error: {e}")))?;
            self.compare().map_err(|e| self.report(&e))?;
        }
        Ok(())
    }

    fn report(&self, what: &str) -> String {
        let steps: Vec<String> = self
            .log
            .iter()
            .enumerate()
            .map(|(i, op)| format!("  {i}: {op:?}"))
            .collect();
        format!("{what}\nafter:\n{}", steps.join("\n"))
    }

    /// Runs a job that must be kept, and counts it.
    fn write<T: Send + 'static>(
        &mut self,
        job: impl FnOnce(&mut dyn WriteTxn) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let out = write(&self.store, job)?;
        self.model.jobs += 1;
        Ok(out)
    }

    fn apply(&mut self, op: &Op) -> Result<(), StoreError> {
        match *op {
            Op::PutWorkspace { ws, root } => {
                let name = WORKSPACES[ws].to_string();
                let root = format!("/roots/{root}");
                let row = WorkspaceRow {
                    name: name.clone(),
                    owner: "fuzz".into(),
                    host: String::new(),
                    root: root.clone(),
                    description: String::new(),
                    options: WorkspaceOptions::default(),
                    view: vec![format!("//depot/... //{name}/...")],
                    created: 0,
                    updated: 0,
                    accessed: 0,
                };
                self.write(move |txn| txn.put_workspace(&row))?;
                self.model.workspaces.insert(name, root);
            }
            Op::DeleteWorkspace { ws } => {
                let name = WORKSPACES[ws];
                let busy = self.model.opened.keys().any(|(w, _)| w == name)
                    || self.model.oldest_pending(name).is_some();
                if !busy {
                    self.write(move |txn| txn.delete_workspace(name))?;
                    self.model.workspaces.remove(name);
                }
            }
            Op::NewChange { ws } => {
                let name = WORKSPACES[ws];
                if self.model.workspaces.contains_key(name) {
                    let n = self.write(move |txn| {
                        let n = txn.allocate_change()?;
                        txn.put_change(&change_row(n.0, ChangeStatus::Pending, name))?;
                        Ok(n)
                    })?;
                    self.model.last_change += 1;
                    assert_eq!(n.0, self.model.last_change, "change numbers are sequential");
                    let row = change_row(n.0, ChangeStatus::Pending, name);
                    self.model.changes.insert(n.0, row);
                }
            }
            Op::Open {
                ws,
                path,
                action,
                numbered,
            } => {
                let name = WORKSPACES[ws];
                let Some(change) = self.model.change_to_use(name, numbered) else {
                    return Ok(());
                };
                let row = OpenedRow {
                    workspace: name.to_string(),
                    path: depot(PATHS[path]),
                    user: "fuzz".into(),
                    change: ChangeNumber(change),
                    action: OPEN_ACTIONS[action],
                    file_type: text(),
                    base_rev: self.model.head(PATHS[path]).map(|h| h.rev).unwrap_or(0),
                    move_file: None,
                    lazy: None,
                    integ: None,
                    locked: false,
                };
                let stored = row.clone();
                self.write(move |txn| txn.put_opened(&stored))?;
                self.model
                    .opened
                    .insert((row.workspace.clone(), row.path.to_string()), row);
            }
            Op::Revert { ws, path } => {
                let (name, path) = (WORKSPACES[ws], depot(PATHS[path]));
                let key = (name.to_string(), path.to_string());
                self.write(move |txn| txn.delete_opened(name, &path))?;
                self.model.opened.remove(&key);
            }
            Op::Submit { ws, numbered } => {
                let name = WORKSPACES[ws];
                let Some(change) = self.model.change_to_use(name, numbered) else {
                    return Ok(());
                };
                let revisions = self.model.submit_revisions(name, change);
                let number = self.write(move |txn| submit_in(txn, name, change))?;
                let expected = if change == 0 {
                    self.model.last_change += 1;
                    self.model.last_change
                } else {
                    change
                };
                assert_eq!(number.0, expected, "submit's change number");
                self.model.changes.insert(
                    number.0,
                    change_row(number.0, ChangeStatus::Submitted, name),
                );
                for mut r in revisions {
                    r.change = number;
                    self.model
                        .revisions
                        .entry(r.path.to_string())
                        .or_default()
                        .push(r);
                }
                self.model
                    .opened
                    .retain(|(w, _), o| !(w == name && o.change.0 == change));
            }
            Op::AbortedSubmit { ws } => {
                let name = WORKSPACES[ws];
                let outcome = write(&self.store, move |txn| {
                    submit_in(txn, name, 0)?;
                    Err::<(), _>(StoreError::JobLost)
                });
                assert!(
                    matches!(outcome, Err(StoreError::JobLost)),
                    "the failed job's own error comes back: {outcome:?}"
                );
            }
            Op::DeleteChange { ws } => {
                let name = WORKSPACES[ws];
                if let Some(change) = self.model.oldest_pending(name)
                    && !self.model.change_busy(change)
                {
                    self.write(move |txn| txn.delete_change(ChangeNumber(change)))?;
                    self.model.changes.remove(&change);
                }
            }
            Op::Shelve { ws, path } => {
                let key = (WORKSPACES[ws].to_string(), PATHS[path].to_string());
                let Some(o) = self.model.opened.get(&key).filter(|o| o.change.0 != 0) else {
                    return Ok(());
                };
                let deleted = o.action.is_delete();
                let row = ShelvedRow {
                    change: o.change,
                    path: o.path.clone(),
                    action: o.action,
                    file_type: o.file_type,
                    digest: (!deleted).then(|| digest(1, o.path.as_str(), o.change.0)),
                    size: if deleted { 0 } else { 5 },
                    md5: String::new(),
                    base_rev: o.base_rev,
                    move_file: None,
                    mod_time: 0,
                };
                let stored = row.clone();
                self.write(move |txn| txn.put_shelved(&stored))?;
                self.model
                    .shelved
                    .insert((row.change.0, row.path.to_string()), row);
            }
            Op::DeleteShelved { ws, path } => {
                let path = depot(PATHS[path]);
                if let Some(change) = self.model.oldest_pending(WORKSPACES[ws]) {
                    let key = (change, path.to_string());
                    self.write(move |txn| txn.delete_shelved(ChangeNumber(change), &path))?;
                    self.model.shelved.remove(&key);
                }
            }
            Op::PutLabel { label, locked } => {
                let row = LabelRow {
                    name: LABELS[label].to_string(),
                    owner: "fuzz".into(),
                    description: String::new(),
                    options: if locked {
                        SpecLock::Locked
                    } else {
                        SpecLock::Unlocked
                    },
                    revision: None,
                    view: vec!["//depot/...".into()],
                    created: 0,
                    updated: 0,
                };
                self.write(move |txn| txn.put_label(&row))?;
                self.model.labels.insert(LABELS[label].to_string(), locked);
            }
            Op::DeleteLabel { label } => {
                let name = LABELS[label];
                self.write(move |txn| txn.delete_label(name))?;
                self.model.labels.remove(name);
                self.model.label_revs.retain(|(l, _), _| l != name);
            }
            Op::Tag { label, path, rev } => {
                let (name, path) = (LABELS[label], depot(PATHS[path]));
                if self.model.labels.contains_key(name) {
                    let key = (name.to_string(), path.to_string());
                    self.write(move |txn| txn.set_label_rev(name, &path, rev))?;
                    if rev == 0 {
                        self.model.label_revs.remove(&key);
                    } else {
                        self.model.label_revs.insert(key, rev);
                    }
                }
            }
            Op::Integrate { to, from } => {
                let (Some(t), Some(f)) = (self.model.head(PATHS[to]), self.model.head(PATHS[from]))
                else {
                    return Ok(());
                };
                let row = IntegRow {
                    to_path: t.path.clone(),
                    to_rev: t.rev,
                    from_path: f.path.clone(),
                    from_start: 0,
                    from_end: f.rev,
                    how: keel_core::IntegHow::BranchFrom,
                    change: t.change,
                };
                let stored = row.clone();
                self.write(move |txn| txn.insert_integration(&stored))?;
                let key = (
                    row.to_path.to_string(),
                    row.to_rev,
                    row.from_path.to_string(),
                    row.from_end,
                );
                self.model.integrations.insert(key, row);
            }
            Op::Obliterate { path } => {
                let path = PATHS[path];
                let typed = depot(path);
                let (removed, _, _) = self.write(move |txn| {
                    let revs = txn.file_revisions(&typed)?;
                    for r in &revs {
                        txn.delete_revision(&r.path, r.rev)?;
                    }
                    let integs = txn.delete_integrations_of(&typed)?;
                    let labels = txn.delete_label_revs_of(&typed)?;
                    Ok((revs.len(), integs, labels))
                })?;
                let had = self
                    .model
                    .revisions
                    .remove(path)
                    .map(|r| r.len())
                    .unwrap_or(0);
                assert_eq!(
                    removed, had,
                    "revisions of {path} seen by the obliterate job"
                );
                self.model.revisions_removed += had as u64;
                self.model
                    .integrations
                    .retain(|_, i| i.to_path != path && i.from_path != path);
                self.model.label_revs.retain(|(_, p), _| p != path);
            }
        }
        Ok(())
    }

    /// Compares every observable read of a fresh snapshot with the model.
    pub fn compare(&self) -> Result<(), String> {
        let snap = self.store.snapshot().map_err(|e| e.to_string())?;
        compare_in(snap.as_ref(), &self.model, self.jobs_base).map_err(|e| e.to_string())
    }
}

/// Reads every page of a listing keyed by `key`.
fn paged<T, K: Clone>(
    mut page: impl FnMut(Option<&K>) -> Result<Vec<T>, StoreError>,
    key: impl Fn(&T) -> K,
) -> Result<Vec<T>, StoreError> {
    let mut out: Vec<T> = Vec::new();
    let mut after: Option<K> = None;
    for _ in 0..10_000 {
        let rows = page(after.as_ref())?;
        let full = rows.len() == PAGE;
        after = rows.last().map(&key);
        out.extend(rows);
        if !full {
            return Ok(out);
        }
    }
    panic!("a listing did not end within 10,000 pages");
}

macro_rules! same {
    ($what:expr, $got:expr, $want:expr) => {{
        let (got, want) = ($got, $want);
        if got != want {
            return Err(CompareError(format!(
                "{}:\n  store: {:?}\n  model: {:?}",
                $what, got, want
            )));
        }
    }};
}

#[derive(Debug)]
struct CompareError(String);

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<StoreError> for CompareError {
    fn from(e: StoreError) -> Self {
        CompareError(format!("store error while reading: {e}"))
    }
}

fn compare_in(snap: &dyn ReadTxn, m: &Model, jobs_base: u64) -> Result<(), CompareError> {
    // Workspaces.
    let got: Vec<(String, String)> = paged(
        |after| snap.list_workspaces(after.map(String::as_str), PAGE),
        |w| w.name.clone(),
    )?
    .into_iter()
    .map(|w| (w.name, w.root))
    .collect();
    let want: Vec<(String, String)> = m
        .workspaces
        .iter()
        .map(|(n, r)| (n.clone(), r.clone()))
        .collect();
    same!("workspaces", got, want);

    // Changes, newest first, and each one's file count.
    let got = paged(
        |before| snap.list_changes(&ChangeFilter::default(), before.copied(), PAGE),
        |c| c.change,
    )?;
    let want: Vec<ChangeRow> = m.changes.values().rev().cloned().collect();
    same!("changes", &got, &want);
    for c in &want {
        same!(
            format!("change {}", c.change),
            snap.get_change(c.change)?,
            Some(c.clone())
        );
        let count = match c.status {
            ChangeStatus::Pending => m.opened.values().filter(|o| o.change == c.change).count(),
            ChangeStatus::Submitted => m
                .revisions
                .values()
                .flatten()
                .filter(|r| r.change == c.change)
                .count(),
        };
        same!(
            format!("file count of change {}", c.change),
            snap.change_file_count(c)?,
            count as u32
        );
    }

    // Revisions: heads (now and at an earlier change), each file's history, each change's.
    let all = PathRange::prefix("//");
    for at in [None, Some(ChangeNumber(m.last_change / 2))] {
        let got = paged(
            |after| snap.head_revisions(&all, after.map(String::as_str), at, PAGE),
            |r| r.path.to_string(),
        )?;
        let want: Vec<RevisionRow> = m
            .revisions
            .values()
            .filter_map(|revs| revs.iter().rev().find(|r| at.is_none_or(|a| r.change <= a)))
            .cloned()
            .collect();
        same!(format!("head revisions at {at:?}"), got, want);
    }
    for path in PATHS {
        let typed = depot(path);
        let want: Vec<RevisionRow> = m
            .revisions
            .get(path)
            .map(|r| r.iter().rev().cloned().collect())
            .unwrap_or_default();
        same!(
            format!("revisions of {path}"),
            &snap.file_revisions(&typed)?,
            &want
        );
        same!(
            format!("head of {path}"),
            snap.head_revision(&typed)?,
            want.first().cloned()
        );
        for r in &want {
            same!(
                format!("{path}#{}", r.rev),
                snap.revision(&typed, r.rev)?,
                Some(r.clone())
            );
        }
    }
    for c in m
        .changes
        .values()
        .filter(|c| c.status == ChangeStatus::Submitted)
    {
        let got = paged(
            |after| snap.change_revisions(c.change, after.map(String::as_str), PAGE),
            |r| r.path.to_string(),
        )?;
        let mut want: Vec<RevisionRow> = m
            .revisions
            .values()
            .flatten()
            .filter(|r| r.change == c.change)
            .cloned()
            .collect();
        want.sort_by(|a, b| a.path.cmp(&b.path));
        same!(format!("revisions of change {}", c.change), got, want);
    }

    // Open files: per workspace, per change, per file, and over the whole range.
    for ws in WORKSPACES {
        let got = paged(
            |after| snap.opened_in_workspace(ws, after.map(String::as_str), PAGE),
            |o| o.path.to_string(),
        )?;
        let want: Vec<OpenedRow> = m
            .opened
            .iter()
            .filter(|((w, _), _)| w == ws)
            .map(|(_, o)| o.clone())
            .collect();
        same!(format!("opened in {ws}"), &got, &want);
        let changes: BTreeSet<ChangeNumber> = want.iter().map(|o| o.change).collect();
        for change in changes {
            let got = paged(
                |after| snap.opened_in_change(ws, change, after.map(String::as_str), PAGE),
                |o| o.path.to_string(),
            )?;
            let of_change: Vec<&OpenedRow> = want.iter().filter(|o| o.change == change).collect();
            same!(
                format!("opened in {ws} change {change}"),
                got.iter().collect::<Vec<_>>(),
                of_change
            );
        }
    }
    let mut by_path: Vec<OpenedRow> = m.opened.values().cloned().collect();
    by_path.sort_by(|a, b| (&a.path, &a.workspace).cmp(&(&b.path, &b.workspace)));
    let got = paged(
        |after| {
            snap.opened_in_range(
                &all,
                after.map(|(p, w): &(String, String)| (p.as_str(), w.as_str())),
                PAGE,
            )
        },
        |o| (o.path.to_string(), o.workspace.clone()),
    )?;
    same!("opened in range", &got, &by_path);
    for path in PATHS {
        let mut got = snap.opened_file(&depot(path))?;
        got.sort_by(|a, b| a.workspace.cmp(&b.workspace));
        let want: Vec<OpenedRow> = by_path.iter().filter(|o| o.path == path).cloned().collect();
        same!(format!("opened {path}"), got, want);
    }

    // Shelved files per pending change.
    for c in m
        .changes
        .values()
        .filter(|c| c.status == ChangeStatus::Pending)
    {
        let got = paged(
            |after| snap.shelved_in_change(c.change, after.map(String::as_str), PAGE),
            |s| s.path.to_string(),
        )?;
        let want: Vec<ShelvedRow> = m
            .shelved
            .iter()
            .filter(|((n, _), _)| *n == c.change.0)
            .map(|(_, s)| s.clone())
            .collect();
        same!(format!("shelved in change {}", c.change), got, want);
    }

    // Labels and their entries.
    let got: Vec<(String, String)> = paged(
        |after| snap.list_labels(after.map(String::as_str), PAGE),
        |l| l.name.clone(),
    )?
    .into_iter()
    .map(|l| (l.name, l.options.to_string()))
    .collect();
    let want: Vec<(String, String)> = m
        .labels
        .iter()
        .map(|(n, locked)| {
            (
                n.clone(),
                if *locked { "locked" } else { "unlocked" }.into(),
            )
        })
        .collect();
    same!("labels", got, want);
    for label in LABELS {
        let got = paged(
            |after| snap.label_revs(label, &all, after.map(String::as_str), PAGE),
            |(p, _)| p.to_string(),
        )?;
        let want: Vec<(DepotPath, u32)> = m
            .label_revs
            .iter()
            .filter(|((l, _), _)| l == label)
            .map(|((_, p), r)| (depot(p), *r))
            .collect();
        same!(format!("entries of {label}"), got, want);
        for path in PATHS {
            let want = m
                .label_revs
                .get(&(label.to_string(), path.to_string()))
                .copied()
                .unwrap_or(0);
            same!(
                format!("{label} holds {path}"),
                snap.label_rev(label, &depot(path))?,
                want
            );
        }
    }

    // Integration records, from both ends.
    for path in PATHS {
        let mut got = snap.integrations_into(&depot(path))?;
        let newest_first: Vec<u32> = got.iter().map(|i| i.to_rev).collect();
        let mut sorted = newest_first.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        same!(
            format!("order of integrations into {path}"),
            newest_first,
            sorted
        );
        got.sort_by(|a, b| {
            (a.to_rev, &a.from_path, a.from_end).cmp(&(b.to_rev, &b.from_path, b.from_end))
        });
        let want: Vec<IntegRow> = m
            .integrations
            .values()
            .filter(|i| i.to_path == path)
            .cloned()
            .collect();
        same!(format!("integrations into {path}"), got, want);
        let mut got = snap.integrations_from(&depot(path))?;
        got.sort_by(|a, b| {
            (&a.to_path, a.to_rev, a.from_end).cmp(&(&b.to_path, b.to_rev, b.from_end))
        });
        let want: Vec<IntegRow> = m
            .integrations
            .values()
            .filter(|i| i.from_path == path)
            .cloned()
            .collect();
        same!(format!("integrations from {path}"), got, want);
    }

    // Content references and the counters.
    for path in PATHS {
        for n in 1..=8u64 {
            let rev = digest(0, path, n);
            let in_rev = m
                .revisions
                .values()
                .flatten()
                .any(|r| r.digest == Some(rev));
            same!(
                format!("{path}#{n} content in use"),
                snap.digest_in_use(&rev)?,
                in_rev
            );
            same!(
                format!("{path}#{n} content owned"),
                snap.digest_owned(&rev)?,
                in_rev
            );
            let shelf = digest(1, path, n);
            let in_shelf = m.shelved.values().any(|s| s.digest == Some(shelf));
            same!(
                format!("{path} shelved in {n} in use"),
                snap.digest_in_use(&shelf)?,
                in_shelf
            );
        }
    }
    same!("jobs written", snap.jobs_written()? - jobs_base, m.jobs);
    same!(
        "revisions removed",
        snap.revisions_removed()?,
        m.revisions_removed
    );
    Ok(())
}
