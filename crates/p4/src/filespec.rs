//! File arguments as P4 clients send them (local paths relative to the client's `cwd`, client
//! syntax `//CLIENT/...`, depot syntax, each with an optional `#rev`/`@change` suffix) turned
//! into the workspace or depot syntax the service takes, and the service's workspace paths
//! turned back into the local paths the client reads and writes.
//!
//! P4 clients map nothing themselves: the server knows the workspace's root and the client's
//! current directory (the `cwd` variable of every command). The mapping here is lexical, as it
//! must be: the server never sees the client's file system. A client on Windows sends `\`
//! separators and a drive letter; both are understood, and local paths sent back use the
//! root's own separator.

use crate::cmd::{Cmd, CmdError, number};
use crate::wire::report::{Generic, Report};

/// The workspace a command works in, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The workspace's name (the client's `P4CLIENT`).
    pub workspace: String,
    /// Its root, as the spec's `Root:` field has it (a path on the client's machine).
    pub root: String,
    /// The client's current directory.
    pub cwd: String,
}

/// Why an argument cannot be mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("Path '{path}' is not under client's root '{root}'.")]
    OutsideRoot { path: String, root: String },
    #[error("{arg} - a relative path needs the client's current directory, which it did not send.")]
    NoCwd { arg: String },
}

impl From<SpecError> for Report {
    fn from(e: SpecError) -> Report {
        Report::failed(Generic::Usage, number::USAGE, e.to_string())
    }
}

impl From<SpecError> for CmdError {
    fn from(e: SpecError) -> CmdError {
        CmdError::Report(e.into())
    }
}

/// Splits an argument into its path and revision suffix (`#3`, `@42`, `@label`, or empty).
pub fn split_rev(arg: &str) -> (&str, &str) {
    match arg.find(['#', '@']) {
        Some(at) => arg.split_at(at),
        None => (arg, ""),
    }
}

/// Whether the argument is in depot or client syntax (`//...`), passed through as it is.
pub fn is_depot_syntax(arg: &str) -> bool {
    arg.starts_with("//")
}

impl Place {
    /// The place of `cmd`: its caller's workspace (loaded for its root) and the `cwd` the
    /// client sent.
    pub fn of(cmd: &Cmd) -> impl Future<Output = Result<Place, CmdError>> + Send + 'static {
        // Nothing of `cmd` is held across the wait (a command is not shared between threads).
        let name = cmd.caller.workspace.clone();
        let lookup = name.clone();
        let cwd = cmd.req.text("cwd").unwrap_or_default();
        let spec = cmd.call(move |svc, caller| svc.get_workspace(caller, &lookup));
        async move {
            let spec = spec.await??;
            Ok(Place {
                workspace: name,
                root: spec.root,
                cwd,
            })
        }
    }

    /// Whether the client's paths are Windows paths (a drive letter or `\` in root or cwd).
    fn windows(&self) -> bool {
        is_windows_path(&self.root) || is_windows_path(&self.cwd)
    }

    /// The argument in the syntax the service takes: depot and client syntax unchanged, a
    /// local path (relative to `cwd` unless absolute) as `//WORKSPACE/rel`, the revision
    /// suffix and wildcards kept.
    pub fn to_keel(&self, arg: &str) -> Result<String, SpecError> {
        if is_depot_syntax(arg) {
            return Ok(arg.to_string());
        }
        let (path, rev) = split_rev(arg);
        let windows = self.windows();
        let path = if path.is_empty() { "..." } else { path };
        let absolute = if is_absolute(path, windows) {
            normalize(path, windows)
        } else {
            if self.cwd.is_empty() {
                return Err(SpecError::NoCwd {
                    arg: arg.to_string(),
                });
            }
            normalize(&format!("{}/{}", self.cwd, path), windows)
        };
        let root = normalize(&self.root, windows);
        let rel = strip_root(&absolute, &root, windows).ok_or_else(|| SpecError::OutsideRoot {
            path: absolute.clone(),
            root: self.root.clone(),
        })?;
        let rel = if rel.is_empty() { "..." } else { rel };
        Ok(format!("//{}/{}{}", self.workspace, rel, rev))
    }

    /// Every argument mapped; none given means the files under `cwd` when `cwd` is under the
    /// root (as a client's bare `p4 sync` from a subdirectory does) and the whole view
    /// otherwise.
    pub fn args_or_all(&self, args: &[String]) -> Result<Vec<String>, SpecError> {
        if args.is_empty() {
            let all = self
                .to_keel("...")
                .unwrap_or_else(|_| format!("//{}/...", self.workspace));
            return Ok(vec![all]);
        }
        args.iter().map(|a| self.to_keel(a)).collect()
    }

    /// The local path of a workspace path (`//WORKSPACE/a/b` → `ROOT/a/b`), in the root's own
    /// separators; `None` for a path of another workspace.
    pub fn local(&self, workspace_path: &str) -> Option<String> {
        let rest = workspace_path
            .strip_prefix("//")?
            .strip_prefix(self.workspace.as_str())?
            .strip_prefix('/')?;
        let windows = self.windows();
        let sep = if windows { '\\' } else { '/' };
        let root = self.root.trim_end_matches(['/', '\\']);
        let rest = if windows {
            rest.replace('/', "\\")
        } else {
            rest.to_string()
        };
        Some(format!("{root}{sep}{rest}"))
    }
}

fn is_windows_path(p: &str) -> bool {
    let b = p.as_bytes();
    (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') || p.contains('\\')
}

fn is_absolute(path: &str, windows: bool) -> bool {
    if windows {
        is_windows_path(path) && path.as_bytes().get(1) == Some(&b':')
            || path.starts_with('\\')
            || path.starts_with('/')
    } else {
        path.starts_with('/')
    }
}

/// `path` with `.` and `..` components resolved lexically and separators made `/`; a
/// Windows drive letter is kept and upper-cased.
fn normalize(path: &str, windows: bool) -> String {
    let path = if windows {
        path.replace('\\', "/")
    } else {
        path.to_string()
    };
    let (prefix, rest) = match path.as_bytes() {
        [d, b':', ..] if windows && d.is_ascii_alphabetic() => (
            format!("{}:", (*d as char).to_ascii_uppercase()),
            &path[2..],
        ),
        _ => (String::new(), path.as_str()),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("{prefix}/{}", parts.join("/"))
}

/// The part of `path` below `root` (empty for the root itself), both normalized.
fn strip_root<'a>(path: &'a str, root: &str, windows: bool) -> Option<&'a str> {
    let root = root.trim_end_matches('/');
    let head = path.get(..root.len())?;
    let same = if windows {
        head.eq_ignore_ascii_case(root)
    } else {
        head == root
    };
    if !same {
        return None;
    }
    match &path[root.len()..] {
        "" => Some(""),
        rest => rest.strip_prefix('/'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(root: &str, cwd: &str) -> Place {
        Place {
            workspace: "ws".into(),
            root: root.into(),
            cwd: cwd.into(),
        }
    }

    #[test]
    fn arguments_map_to_workspace_syntax() {
        let p = place("/home/a/ws", "/home/a/ws/src");
        let cases = [
            ("main.c", "//ws/src/main.c"),
            ("main.c#3", "//ws/src/main.c#3"),
            ("../doc/...@12", "//ws/doc/...@12"),
            ("...", "//ws/src/..."),
            ("./x/*.h", "//ws/src/x/*.h"),
            ("/home/a/ws/top.txt", "//ws/top.txt"),
            ("//depot/a/...#head", "//depot/a/...#head"),
            ("//ws/b", "//ws/b"),
            ("@label", "//ws/src/...@label"),
        ];
        for (arg, want) in cases {
            assert_eq!(p.to_keel(arg).unwrap(), want, "{arg}");
        }
    }

    #[test]
    fn a_path_outside_the_root_is_refused_naming_both() {
        let p = place("/home/a/ws", "/home/a/ws");
        let e = p.to_keel("../other/f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Path '/home/a/other/f' is not under client's root '/home/a/ws'."
        );
        // A sibling whose name starts with the root's is outside too.
        assert!(p.to_keel("/home/a/ws2/f").is_err());
        assert!(place("/r", "").to_keel("f").is_err());
    }

    #[test]
    fn no_arguments_mean_the_files_under_cwd_or_the_whole_view() {
        assert_eq!(
            place("/r", "/r/sub").args_or_all(&[]).unwrap(),
            ["//ws/sub/..."]
        );
        assert_eq!(
            place("/r", "/elsewhere").args_or_all(&[]).unwrap(),
            ["//ws/..."]
        );
    }

    #[test]
    fn windows_clients_are_understood() {
        let p = place("C:\\work\\ws", "c:\\work\\ws\\src");
        assert_eq!(p.to_keel("a\\b.c").unwrap(), "//ws/src/a/b.c");
        assert_eq!(p.to_keel("C:\\work\\ws\\x").unwrap(), "//ws/x");
        assert_eq!(p.local("//ws/src/a.c").unwrap(), "C:\\work\\ws\\src\\a.c");
    }

    #[test]
    fn workspace_paths_map_back_to_local_paths() {
        let p = place("/r/", "/r");
        assert_eq!(p.local("//ws/a/b.txt").unwrap(), "/r/a/b.txt");
        assert_eq!(p.local("//other/a"), None);
        assert_eq!(p.local("//wsx/a"), None);
    }
}
