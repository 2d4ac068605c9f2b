//! Mapping between local file arguments, workspace syntax (`//WS/rel`) and safe local paths.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use keel_core::ClientPath;

use crate::error::{Error, Result};

/// Splits a file argument into its path and its revision suffix (`#3`, `@42`, or empty).
pub fn split_rev(arg: &str) -> (&str, &str) {
    match arg.find(['#', '@']) {
        Some(at) => arg.split_at(at),
        None => (arg, ""),
    }
}

/// True for depot or workspace syntax (`//...`), which passes through unchanged.
pub fn is_depot_syntax(arg: &str) -> bool {
    arg.starts_with("//")
}

/// True when a path contains a Perforce wildcard (`...` or `*`).
pub fn has_wildcards(path: &str) -> bool {
    path.contains("...") || path.contains('*')
}

/// Converts a file argument to workspace syntax `//WS/rel/path[#rev]`.
///
/// Depot-syntax arguments are returned unchanged. Local paths are taken relative to `cwd`
/// unless absolute; wildcards and the revision suffix are kept. A local path outside `root`
/// is an error naming it.
pub fn to_workspace_syntax(arg: &str, cwd: &Path, workspace: &str, root: &Path) -> Result<String> {
    if is_depot_syntax(arg) {
        return Ok(arg.to_string());
    }
    let (path, rev) = split_rev(arg);
    if path.is_empty() {
        return Ok(format!("//{workspace}/...{rev}"));
    }
    let absolute = absolute_local(path, cwd);
    let rel = relative_to_root(&absolute, root)?;
    if rel.is_empty() {
        return Err(Error::BadArgument {
            arg: arg.to_string(),
            reason: "names the workspace root itself; use ... for all files".into(),
        });
    }
    Ok(format!("//{workspace}/{rel}{rev}"))
}

/// Makes a local argument absolute (relative to `cwd`) and lexically normalised.
pub fn absolute_local(path: &str, cwd: &Path) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&cwd.join(path))
    }
}

/// The `/`-separated path of `absolute` relative to `root` ("" for the root itself).
pub fn relative_to_root(absolute: &Path, root: &Path) -> Result<String> {
    let absolute = normalize(absolute);
    let root_norm = normalize(root);
    if let Ok(rel) = absolute.strip_prefix(&root_norm) {
        return Ok(join_components(rel));
    }
    // Symlinked prefixes (e.g. /tmp -> /private/tmp): compare the resolved forms.
    if let (Some(abs_real), Ok(root_real)) = (resolve_existing(&absolute), root_norm.canonicalize())
        && let Ok(rel) = abs_real.strip_prefix(&root_real)
    {
        return Ok(join_components(rel));
    }
    Err(Error::OutsideRoot {
        path: absolute,
        root: root.to_path_buf(),
    })
}

fn join_components(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Refuses `dir` (a local directory, or a file's parent) when it resolves, through a
/// symlink, outside the workspace `root`; `path` is what the error names. A root that does
/// not exist has nothing under it to lead out.
pub fn check_inside_root(root: &Path, dir: &Path, path: &Path) -> Result<()> {
    let (Ok(root_real), Some(resolved)) = (root.canonicalize(), resolve_existing(dir)) else {
        return Ok(());
    };
    if resolved.starts_with(&root_real) {
        return Ok(());
    }
    Err(Error::ThroughSymlink {
        path: path.to_path_buf(),
        resolved,
        root: root.to_path_buf(),
    })
}

/// Lexical normalisation: drops `.` and resolves `..` without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalises the longest existing ancestor of `path` and re-appends the rest.
fn resolve_existing(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return Some(out);
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// Maps a server-supplied `client_file` to a local path under `root`.
///
/// Refuses anything that is not a valid ClientPath (`..`, absolute, control characters), a
/// reserved file name (`.keel`, `.keel-state`, ...: `keel_core::RESERVED_FILE_NAMES`) and any
/// path whose parent directory resolves (through symlinks) outside the root: the client never
/// writes outside its workspace root, nor over its own files, whatever the server sends.
pub fn client_file_to_local(root: &Path, client_file: &str) -> Result<PathBuf> {
    LocalResolver::new(root).resolve(client_file)
}

/// [`client_file_to_local`] for many files: resolves the root once and remembers the parent
/// directories it has already found inside the root.
///
/// A directory found inside the root can only come to resolve elsewhere when a symlink is
/// created on its path, so whoever creates symlinks in the workspace must call
/// [`LocalResolver::forget`] before resolving more files.
pub struct LocalResolver {
    root: PathBuf,
    /// The canonical root, once it exists.
    root_real: Option<PathBuf>,
    inside: HashSet<PathBuf>,
    /// Most directories remembered in `inside` before it starts over.
    limit: usize,
}

impl LocalResolver {
    /// A resolver remembering the default number of directories
    /// (`TransferConfig::remembered_dirs`).
    pub fn new(root: &Path) -> LocalResolver {
        LocalResolver::with_limit(root, crate::TransferConfig::default().remembered_dirs)
    }

    /// A resolver remembering at most `limit` directories before it starts over.
    pub fn with_limit(root: &Path, limit: usize) -> LocalResolver {
        LocalResolver {
            root: root.to_path_buf(),
            root_real: None,
            inside: HashSet::new(),
            limit,
        }
    }

    /// The safe local path of `client_file` (see [`client_file_to_local`]).
    pub fn resolve(&mut self, client_file: &str) -> Result<PathBuf> {
        let refuse = |reason: String| Error::UnsafeClientPath {
            path: client_file.to_string(),
            reason,
        };
        ClientPath::parse(client_file).map_err(|e| refuse(e.to_string()))?;
        if let Some(name) = keel_core::reserved_name(client_file) {
            return Err(refuse(format!(
                "'{name}' is a file name Keel reserves for its own files (settings, state, \
                 tickets); the server should not have sent it"
            )));
        }
        let mut local = self.root.clone();
        for segment in client_file.split('/') {
            let component = Path::new(segment);
            if segment.contains('\\')
                || component.components().count() != 1
                || !matches!(component.components().next(), Some(Component::Normal(_)))
            {
                return Err(refuse(format!("invalid path segment {segment:?}")));
            }
            local.push(segment);
        }
        let parent = local.parent().unwrap_or(&self.root);
        if self.inside.contains(parent) {
            return Ok(local);
        }
        if self.root_real.is_none() {
            // A root that does not exist yet has nothing under it that could lead outside.
            self.root_real = self.root.canonicalize().ok();
        }
        if let Some(root_real) = &self.root_real {
            let resolved =
                resolve_existing(parent).ok_or_else(|| refuse("cannot resolve parent".into()))?;
            if !resolved.starts_with(root_real) {
                return Err(refuse(format!(
                    "its directory resolves to {} outside the workspace root {}",
                    resolved.display(),
                    self.root.display()
                )));
            }
            if self.inside.len() >= self.limit {
                self.inside.clear();
            }
            self.inside.insert(parent.to_path_buf());
        }
        Ok(local)
    }

    /// Forgets the directories found inside the root (after a symlink was created).
    pub fn forget(&mut self) {
        self.inside.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_syntax_table() {
        let root = Path::new("/ws/root");
        let cases: &[(&str, &str, Result<&str, ()>)] = &[
            ("a.txt", "/ws/root", Ok("//W/a.txt")),
            ("./a.txt", "/ws/root/src", Ok("//W/src/a.txt")),
            ("../b/c.txt", "/ws/root/src", Ok("//W/b/c.txt")),
            ("...", "/ws/root/src", Ok("//W/src/...")),
            ("src/...", "/ws/root", Ok("//W/src/...")),
            ("*.c", "/ws/root/lib", Ok("//W/lib/*.c")),
            ("x.c#3", "/ws/root", Ok("//W/x.c#3")),
            ("x.c@42", "/ws/root", Ok("//W/x.c@42")),
            ("...#head", "/ws/root", Ok("//W/...#head")),
            ("@12", "/ws/root/x", Ok("//W/...@12")),
            ("/ws/root/deep/f", "/elsewhere", Ok("//W/deep/f")),
            ("//depot/x#3", "/elsewhere", Ok("//depot/x#3")),
            ("//W/y/...", "/elsewhere", Ok("//W/y/...")),
            ("/ws/other/f", "/ws/root", Err(())),
            ("../../etc/passwd", "/ws/root/a", Err(())),
            (".", "/ws/root", Err(())),
        ];
        for (arg, cwd, want) in cases {
            let got = to_workspace_syntax(arg, Path::new(cwd), "W", root);
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(&g, w, "arg {arg} in {cwd}"),
                (Err(()), Err(_)) => {}
                (w, g) => panic!("arg {arg} in {cwd}: want {w:?}, got {g:?}"),
            }
        }
    }

    #[test]
    fn outside_root_error_names_path() {
        let err = to_workspace_syntax("/tmp/zzz/f", Path::new("/"), "W", Path::new("/ws/root"))
            .unwrap_err();
        assert!(err.to_string().contains("/tmp/zzz/f"), "{err}");
    }

    #[test]
    fn client_file_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        let cases: &[(&str, bool)] = &[
            ("a.txt", true),
            ("sub/b.txt", true),
            ("new/dir/c.txt", true),
            ("../x", false),
            ("sub/../../x", false),
            ("/etc/passwd", false),
            ("a\0b", false),
            ("a\nb", false),
            ("", false),
            ("sub//x", false),
            ("./x", false),
            (".keel", false),
            ("sub/.keel", false),
            ("sub/.keel-state", false),
            (".keel-have", false),
            ("sub/.keel_tickets", false),
            (".keel/x", true),
            ("sub/.keelrc", true),
            #[cfg(unix)]
            ("escape/file", false),
            #[cfg(unix)]
            ("escape/deeper/file", false),
        ];
        for (client_file, ok) in cases {
            let got = client_file_to_local(&root, client_file);
            assert_eq!(got.is_ok(), *ok, "{client_file:?}: {got:?}");
            if let Ok(path) = got {
                assert!(path.starts_with(&root));
            } else if let Err(e) = got {
                assert!(e.to_string().contains("refusing"), "{e}");
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_through_a_symlink_out_of_the_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("in")).unwrap();
        for (rel, ok) in [
            ("sub", true),
            ("in", true),
            ("out", false),
            ("out/x", false),
        ] {
            let got = check_inside_root(&root, &root.join(rel), &root.join(rel));
            assert_eq!(got.is_ok(), ok, "{rel}: {got:?}");
            if let Err(e) = got {
                assert!(e.to_string().contains("outside the workspace root"), "{e}");
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn resolver_checks_again_after_forget() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let mut resolver = LocalResolver::new(&root);
        assert!(resolver.resolve("d/x").is_ok());
        std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
        // Remembered: the caller promised to call `forget` after creating a symlink.
        assert!(resolver.resolve("d/y").is_ok());
        resolver.forget();
        let err = resolver.resolve("d/y").unwrap_err();
        assert!(
            err.to_string().contains("outside the workspace root"),
            "{err}"
        );
    }
}
