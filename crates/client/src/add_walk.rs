//! Finding the new files `add` names under a directory, and the type to add each with.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use keel_core::{BaseType, detect_base_type};

use crate::error::{Error, IoContext, Result};
use crate::ignore_rules::{IgnoreConfig, Rules};
use crate::local_state::FileStat;
use crate::workspace_scan::{SAMPLE, new_file_type};
use crate::workspace_walk::is_keel_file;

/// One file (or symlink) found under the walked directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkedFile {
    pub path: PathBuf,
    /// The path below the walked directory, `/`-separated (names shown lossily as UTF-8).
    pub rel: String,
    /// Whether the directory entry is a symlink (not followed).
    pub symlink: bool,
}

/// The ignore rules a walk honours: the ignore files looked for in each directory, the rules
/// in effect in the walked directory (its own files' included) and where that directory is
/// below the workspace root.
pub struct WalkIgnore<'a> {
    pub config: &'a IgnoreConfig,
    pub rules: Rules,
    pub dir_rel: String,
}

/// All files (and symlinks) under `dir`, in path order, not following symlinked directories;
/// skips files with a reserved name (`.keel`, `.keel-state`, ..., at any depth: the server
/// refuses to add them) and the client's own temp files, and, with `ignore`, the files and
/// directories its rules cover. Each directory's entries are sorted by name and visited
/// depth-first, which is path order without comparing whole paths. A missing `dir` has no
/// files.
pub fn walk_files(dir: &Path, ignore: Option<&WalkIgnore>) -> Result<Vec<WalkedFile>> {
    let mut out = Vec::new();
    let scope = ignore.map(|i| (i.config, i.rules.clone(), i.dir_rel.clone()));
    walk_dir(dir, dir, "", scope, &mut out)?;
    Ok(out)
}

/// The ignore files looked for, the rules in effect in a directory, and its path below the
/// workspace root.
type Scope<'a> = (&'a IgnoreConfig, Rules, String);

fn below(dir_rel: &str, name: &str) -> String {
    if dir_rel.is_empty() {
        name.to_string()
    } else {
        format!("{dir_rel}/{name}")
    }
}

fn walk_dir(
    top: &Path,
    current: &Path,
    rel: &str,
    scope: Option<Scope>,
    out: &mut Vec<WalkedFile>,
) -> Result<()> {
    let entries = match std::fs::read_dir(current) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && current == top => return Ok(()),
        Err(e) => return Err(Error::io(current, e)),
    };
    let mut named: Vec<(OsString, std::fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = entry.at(current)?;
        let file_type = entry.file_type().at(&entry.path())?;
        named.push((entry.file_name(), file_type));
    }
    named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, file_type) in named {
        let path = current.join(&name);
        let shown = name.to_string_lossy();
        let child = if rel.is_empty() {
            shown.to_string()
        } else {
            format!("{rel}/{shown}")
        };
        let from_root = scope.as_ref().map(|(_, _, dir_rel)| below(dir_rel, &shown));
        let ignored = |is_dir: bool| match (&scope, &from_root) {
            (Some((_, rules, _)), Some(from_root)) => rules.ignores(from_root, is_dir),
            _ => false,
        };
        if file_type.is_dir() {
            if ignored(true) {
                continue;
            }
            let inner = match (&scope, from_root) {
                (Some((config, rules, _)), Some(from_root)) => {
                    let rules =
                        rules.enter(config, &path, &from_root, |n| path.join(n).is_file())?;
                    Some((*config, rules, from_root))
                }
                _ => None,
            };
            walk_dir(top, &path, &child, inner, out)?;
        } else if is_keel_file(&name) || shown.starts_with(".keel-tmp-") || ignored(false) {
            continue;
        } else {
            out.push(WalkedFile {
                path,
                rel: child,
                symlink: file_type.is_symlink(),
            });
        }
    }
    Ok(())
}

/// The type to add a walked file with: `symlink`, or `text`/`binary` from its first 64 KiB,
/// plus `+x` when it is executable. The mode comes from the open file, so the path is looked
/// up once.
pub fn walked_type(file: &WalkedFile) -> Result<String> {
    let (base, executable) = if file.symlink {
        (BaseType::Symlink, false)
    } else {
        let opened = std::fs::File::open(&file.path).at(&file.path)?;
        let meta = opened.metadata().at(&file.path)?;
        let mut sample = Vec::with_capacity(SAMPLE.min(meta.len() as usize + 1));
        opened
            .take(SAMPLE as u64)
            .read_to_end(&mut sample)
            .at(&file.path)?;
        let executable = FileStat::of(&meta).executable().unwrap_or(false);
        (detect_base_type(&sample), executable)
    };
    Ok(new_file_type(base, executable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_is_in_path_order_with_relative_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "b/x",
            "a-b",
            "a/z",
            "a/b/c",
            ".keel",
            "a/.keel",
            "a/.keel-tmp-1",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, rel).unwrap();
        }
        let walked = walk_files(root, None).unwrap();
        let rels: Vec<&str> = walked.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["a/b/c", "a/z", "a-b", "b/x"]);
        let mut paths: Vec<PathBuf> = walked.iter().map(|f| f.path.clone()).collect();
        let in_order = paths.clone();
        paths.sort();
        assert_eq!(paths, in_order);
        assert_eq!(walked[0].path, root.join("a/b/c"));
        assert!(walk_files(&root.join("missing"), None).unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn walked_types_name_symlinks_binaries_and_executables() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("t"), "text\n").unwrap();
        std::fs::write(root.join("b"), [0u8, 1, 2, 0]).unwrap();
        std::fs::write(root.join("x"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(root.join("x"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("t", root.join("l")).unwrap();
        let types: Vec<(String, String)> = walk_files(root, None)
            .unwrap()
            .iter()
            .map(|f| (f.rel.clone(), walked_type(f).unwrap()))
            .collect();
        let expected: Vec<(String, String)> = [
            ("b", "binary"),
            ("l", "symlink"),
            ("t", "text"),
            ("x", "text+x"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(types, expected);
    }
}
