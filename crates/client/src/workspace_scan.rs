//! Comparing the workspace directory with the have list: what to add, edit (content changed,
//! or the executable bit or file kind no longer matching the type) or delete.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use keel_core::{BaseType, FileType, LocalKind, PathPattern, detect_base_type};
use keel_proto::v1::FileRecord;

use crate::error::{Error, IoContext, Result};
use crate::have_index::{HaveFile, HaveIndex};
use crate::local_state::{FileStat, LocalState, Recording};
use crate::workspace::WorkspaceCtx;
use crate::workspace_walk::Walk;

/// Bytes sampled to tell text from binary.
pub(crate) const SAMPLE: usize = 64 * 1024;

/// One file the scan found out of step with the have list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanEntry {
    pub client_file: String,
    pub depot_file: String,
    pub local: PathBuf,
    /// Detected type for adds; the have revision's type otherwise.
    pub file_type: String,
    /// For edits: the type to open the file with when its executable bit or its kind
    /// (file or symlink) no longer matches `file_type`.
    pub new_type: Option<String>,
    pub have_rev: u32,
}

/// The result of a scan, each list sorted by client file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScanResult {
    pub add: Vec<ScanEntry>,
    pub edit: Vec<ScanEntry>,
    pub delete: Vec<ScanEntry>,
}

/// Compares the files `walk` finds under the workspace root with `have` and `opened`.
///
/// The walk is started by the caller (before it loads `have` and `state`, so the two overlap),
/// after it started `rec`, so no file is stat'ed before the recording's clock. `patterns` (server syntax, either `//WS/...` or depot paths) restrict the scan; empty means
/// the whole workspace. Opened files are never reported. A file in the have list is read only
/// when `state` holds no entry with its current stat; what is read is recorded in `state`
/// (the caller saves it).
pub fn scan(
    ws: &WorkspaceCtx,
    have: &HaveIndex,
    opened: &[FileRecord],
    patterns: &[String],
    state: &mut LocalState,
    rec: &mut Recording,
    walk: Walk,
) -> Result<ScanResult> {
    // A pattern naming the whole workspace (`//WS/...`, what a scan from the root asks for)
    // selects every file: the scan is then unrestricted and checks no file against patterns.
    let all_files = ws.all_files();
    let whole = patterns
        .iter()
        .any(|p| crate::paths::split_rev(p).0 == all_files);
    let patterns = if whole { &[][..] } else { patterns };
    let compiled = patterns
        .iter()
        .map(|p| {
            let path = crate::paths::split_rev(p).0;
            PathPattern::parse(path).map_err(|e| Error::BadArgument {
                arg: p.clone(),
                reason: e.to_string(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let selected = |client_file: &str, depot_file: &str| {
        compiled.is_empty()
            || compiled.iter().any(|p| {
                p.matches(&ws.workspace_path(client_file))
                    || (!depot_file.is_empty() && p.matches(depot_file))
            })
    };
    let opened_depot: HashSet<&str> = opened.iter().map(|r| r.depot_file.as_str()).collect();
    let opened_client: HashSet<String> =
        opened.iter().filter_map(|r| ws.client_file_of(r)).collect();
    let is_opened = |client_file: &str, depot_file: &str| {
        !opened.is_empty()
            && (opened_client.contains(client_file) || opened_depot.contains(depot_file))
    };
    let mut result = ScanResult::default();
    // Which have-list entries were found in the workspace, by position.
    let mut seen = vec![false; have.len()];
    // The walk meets each directory's files in the index's order, so each lookup first tries
    // the next entry.
    let mut hint = 0;
    let mut types = TypeCache::default();
    let mut visit = |client_file: &str,
                     local: &dyn Fn() -> PathBuf,
                     meta: &FileStat,
                     ignored: bool,
                     hint: &mut usize|
     -> Result<()> {
        let in_have = have.find(client_file, hint);
        if let Some(i) = in_have {
            seen[i] = true;
        }
        if !opened.is_empty() && opened_client.contains(client_file) {
            return Ok(());
        }
        match in_have.map(|i| have.at(i)) {
            Some(file) => {
                if is_opened(client_file, file.depot_file)
                    || !selected(client_file, file.depot_file)
                {
                    return Ok(());
                }
                let Some(have_digest) = file.digest else {
                    return Ok(());
                };
                let new_type = types.changed(file.file_type, local, meta)?;
                let digest = state.digest(
                    rec,
                    client_file,
                    file.depot_file,
                    file.have_rev,
                    local,
                    meta,
                    crate::keywords::form_of(file.file_type),
                )?;
                if new_type.is_some() || digest != have_digest {
                    let mut edit = entry(&file, local());
                    edit.new_type = new_type;
                    result.edit.push(edit);
                }
            }
            // A new file an ignore rule covers is not the workspace's; one the have list
            // holds stays the workspace's whatever the rules say.
            None if ignored => {}
            None => {
                let Some(depot_file) = ws.depot_of_client(client_file) else {
                    return Ok(());
                };
                if is_opened(client_file, &depot_file) || !selected(client_file, &depot_file) {
                    return Ok(());
                }
                let local = local();
                result.add.push(ScanEntry {
                    file_type: detect_type(&local)?,
                    client_file: client_file.to_string(),
                    depot_file,
                    local,
                    new_type: None,
                    have_rev: 0,
                });
            }
        }
        Ok(())
    };
    let pruned = walk.for_each(|client_file, local, meta, ignored| {
        visit(client_file, local, meta, ignored, &mut hint)
    })?;
    if !pruned.is_empty() {
        // Files of the have list in directories the walk left unread (ignored ones) are
        // looked up one by one: the rules never hide a file the workspace already has.
        let pruned: HashSet<&str> = pruned.iter().map(String::as_str).collect();
        let under_pruned = |client_file: &str| {
            client_file
                .match_indices('/')
                .any(|(at, _)| pruned.contains(&client_file[..at]))
        };
        let mut hint = 0;
        for i in 0..have.len() {
            let file = have.at(i);
            if !under_pruned(file.client_file) {
                continue;
            }
            let local = ws.display_local(file.client_file);
            let meta = match std::fs::symlink_metadata(&local) {
                Ok(meta) => FileStat::of(&meta),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&local, e)),
            };
            let client_file = file.client_file.to_string();
            visit(&client_file, &|| local.clone(), &meta, true, &mut hint)?;
        }
    }
    for (i, _) in seen.iter().enumerate().filter(|(_, seen)| !**seen) {
        let file = have.at(i);
        if is_opened(file.client_file, file.depot_file)
            || !selected(file.client_file, file.depot_file)
        {
            continue;
        }
        let local = ws.display_local(file.client_file);
        result.delete.push(entry(&file, local));
    }
    // Entries of files gone from the workspace or the have list are of no further use; a
    // restricted scan keeps those it did not look at.
    let mut hint = 0;
    state.retain(|client_file| {
        have.find(client_file, &mut hint)
            .is_some_and(|i| seen[i] || !compiled.is_empty())
    });
    for list in [&mut result.add, &mut result.edit, &mut result.delete] {
        list.sort_by(|a, b| a.client_file.cmp(&b.client_file));
    }
    Ok(result)
}

fn entry(file: &HaveFile<'_>, local: PathBuf) -> ScanEntry {
    ScanEntry {
        client_file: file.client_file.to_string(),
        depot_file: file.depot_file.to_string(),
        local,
        file_type: file.file_type.to_string(),
        new_type: None,
        have_rev: file.have_rev,
    }
}

/// The have types met so far, parsed once each (a workspace has a handful).
#[derive(Default)]
struct TypeCache {
    parsed: Vec<(String, Option<FileType>)>,
}

impl TypeCache {
    /// The type `have_type` (the have revision's) becomes for the local file at `path()`
    /// (lstat'ed as `stat`) when the file's kind or executable bit no longer matches it; None
    /// when it still does.
    fn changed(
        &mut self,
        have_type: &str,
        path: &dyn Fn() -> PathBuf,
        stat: &FileStat,
    ) -> Result<Option<String>> {
        let known = self.parsed.iter().position(|(t, _)| t == have_type);
        let at = known.unwrap_or_else(|| {
            let parsed = FileType::parse(have_type).ok();
            self.parsed.push((have_type.to_string(), parsed));
            self.parsed.len() - 1
        });
        let Some(have) = self.parsed[at].1 else {
            return Ok(None);
        };
        let local = if stat.is_symlink() {
            LocalKind::Symlink
        } else {
            LocalKind::File {
                executable: stat.executable(),
            }
        };
        let adjusted = have.adjusted_to(local, || sample_base(&path()))?;
        Ok((adjusted != have).then(|| adjusted.to_string()))
    }
}

/// Text or binary, from the first 64 KiB of a regular file.
fn sample_base(path: &Path) -> Result<BaseType> {
    let mut sample = Vec::with_capacity(SAMPLE);
    std::fs::File::open(path)
        .and_then(|f| f.take(SAMPLE as u64).read_to_end(&mut sample))
        .at(path)?;
    Ok(detect_base_type(&sample))
}

/// The type Keel would give a new local file: `symlink`, or `text`/`binary` from its first
/// 64 KiB, plus `+x` when it is executable.
pub fn detect_type(path: &Path) -> Result<String> {
    let meta = std::fs::symlink_metadata(path).at(path)?;
    let base = if meta.file_type().is_symlink() {
        BaseType::Symlink
    } else {
        sample_base(path)?
    };
    let executable =
        !meta.file_type().is_symlink() && FileStat::of(&meta).executable().unwrap_or(false);
    Ok(new_file_type(base, executable))
}

/// The type string a new file is added with: its base type, `+x` when executable.
pub(crate) fn new_file_type(base: BaseType, executable: bool) -> String {
    FileType {
        executable,
        ..FileType::plain(base)
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    use keel_proto::v1::Workspace;

    use crate::ignore_rules::IgnoreConfig;
    use crate::local_state::StateKey;

    /// A workspace of `dirs` nested directories of `files` files each, every file in the have
    /// list with its digest.
    fn workspace(dirs: usize, files: usize) -> (tempfile::TempDir, WorkspaceCtx, HaveIndex) {
        let dir = tempfile::tempdir().unwrap();
        let ws = WorkspaceCtx::from_spec(Workspace {
            name: "ws".into(),
            root: dir.path().display().to_string(),
            view: vec!["//depot/... //ws/...".into()],
            ..Workspace::default()
        })
        .unwrap();
        let mut records = Vec::new();
        for d in 0..dirs {
            for f in 0..files {
                let client_file = format!("d{}/e{d}/f{f}.txt", d % 3);
                let content = format!("file {d} {f}\n");
                let path = dir.path().join(&client_file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &content).unwrap();
                records.push(FileRecord {
                    depot_file: format!("//depot/{client_file}"),
                    client_file,
                    head_type: "text".into(),
                    head_digest: blake3::hash(content.as_bytes()).to_hex().to_string(),
                    have_rev: 1,
                    ..FileRecord::default()
                });
            }
        }
        let have = HaveIndex::from_records(&ws, records);
        (dir, ws, have)
    }

    fn client_files(list: &[ScanEntry]) -> Vec<&str> {
        list.iter().map(|e| e.client_file.as_str()).collect()
    }

    #[test]
    fn every_change_is_found_whatever_the_walks_threads_and_their_order() {
        let (dir, ws, have) = workspace(12, 40);
        let root = dir.path();
        // Changes spread over directories the walking threads share.
        for d in [0, 5, 11] {
            std::fs::write(root.join(format!("d{}/e{d}/f7.txt", d % 3)), "edited\n").unwrap();
        }
        for d in [1, 6] {
            std::fs::remove_file(root.join(format!("d{}/e{d}/f39.txt", d % 3))).unwrap();
        }
        std::fs::write(root.join("d2/e8/new.txt"), "new\n").unwrap();
        std::fs::write(root.join("top.txt"), "new\n").unwrap();
        let key = StateKey {
            server: "127.0.0.1:1".into(),
            workspace: "ws".into(),
            root: root.display().to_string(),
        };
        for threads in [1, 2, 3] {
            for files_ahead in [1, 1 << 16] {
                // Twice: hashing every file, then answered from the state saved by the first.
                let _ = std::fs::remove_file(root.join(crate::local_state::STATE_FILE_NAME));
                for pass in 0..2 {
                    let mut state = LocalState::load(root, key.clone());
                    let mut rec = Recording::start(Duration::ZERO, 4096);
                    let walk =
                        Walk::start(root, threads, files_ahead, &IgnoreConfig::none()).unwrap();
                    let result = scan(&ws, &have, &[], &[], &mut state, &mut rec, walk).unwrap();
                    let what = format!("{threads} threads, {files_ahead} ahead, pass {pass}");
                    assert_eq!(
                        client_files(&result.edit),
                        ["d0/e0/f7.txt", "d2/e11/f7.txt", "d2/e5/f7.txt"],
                        "{what}"
                    );
                    assert_eq!(
                        client_files(&result.delete),
                        ["d0/e6/f39.txt", "d1/e1/f39.txt"],
                        "{what}"
                    );
                    assert_eq!(
                        client_files(&result.add),
                        ["d2/e8/new.txt", "top.txt"],
                        "{what}"
                    );
                    // Every file but the new ones read on the first pass, none on the second.
                    let expected_hashed = if pass == 0 { 12 * 40 - 2 } else { 0 };
                    assert_eq!(rec.hashed, expected_hashed, "{what}");
                    state.save().unwrap();
                }
            }
        }
    }
}
