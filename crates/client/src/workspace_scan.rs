//! Comparing the workspace directory with the have list: what to add, edit (content changed,
//! or the executable bit or file kind no longer matching the type) or delete.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use keel_core::{BaseType, FileType, LocalKind, PathPattern, detect_base_type};
use keel_proto::v1::FileRecord;

use crate::error::{Error, IoContext, Result};
use crate::have_index::{HaveFile, HaveIndex};
use crate::local_state::{LocalState, Recording};
use crate::workspace::WorkspaceCtx;
use crate::workspace_walk::{is_keel_file, walk_stat};

/// Bytes sampled to tell text from binary.
const SAMPLE: usize = 64 * 1024;

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

/// Compares the files under the workspace root with `have` and `opened`.
///
/// `patterns` (server syntax, either `//WS/...` or depot paths) restrict the scan; empty means
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
    // The walk meets files in the index's order, so each lookup first tries the next entry.
    let mut hint = 0;
    let mut types = TypeCache::default();
    walk_stat(&ws.root, |client_file, local, meta| {
        let in_have = have.find(client_file, &mut hint);
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
                )?;
                if new_type.is_some() || digest != have_digest {
                    let mut edit = entry(&file, local());
                    edit.new_type = new_type;
                    result.edit.push(edit);
                }
            }
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
    })?;
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
    /// (lstat'ed as `meta`) when the file's kind or executable bit no longer matches it; None
    /// when it still does.
    fn changed(
        &mut self,
        have_type: &str,
        path: &dyn Fn() -> PathBuf,
        meta: &std::fs::Metadata,
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
        let local = if meta.file_type().is_symlink() {
            LocalKind::Symlink
        } else {
            LocalKind::File {
                executable: executable_bit(meta),
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
    let executable = !meta.file_type().is_symlink() && executable_bit(&meta).unwrap_or(false);
    Ok(FileType {
        base,
        executable,
        writable: false,
        exclusive: false,
    }
    .to_string())
}

/// Whether a file is executable; None where the platform keeps no executable bit.
#[cfg(unix)]
fn executable_bit(meta: &std::fs::Metadata) -> Option<bool> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable_bit(_meta: &std::fs::Metadata) -> Option<bool> {
    None
}

/// All files (and symlinks) under `dir`, not following symlinked directories; skips the
/// workspace's `.keel` settings file and `.keel-state` state file and the client's own temp
/// files. Sorted.
pub fn walk_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = match std::fs::read_dir(&current) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && current == dir => continue,
            Err(e) => return Err(Error::io(&current, e)),
        };
        for entry in entries {
            let entry = entry.at(&current)?;
            let path = entry.path();
            let name = entry.file_name();
            let file_type = entry.file_type().at(&path)?;
            if file_type.is_dir() {
                pending.push(path);
            } else if (current == dir && is_keel_file(&name))
                || name.to_string_lossy().starts_with(".keel-tmp-")
            {
                continue;
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
