//! What the open and submit commands need of the caller's workspace: its place (root and the
//! client's `cwd`, for file arguments), its view (for depot-syntax arguments of `add`), its
//! `allwrite` option, and the local path of a workspace file (with P4's `%40 %23 %25 %2A`
//! escapes of `@ # % *` undone, as the client's file names have them).

use crate::cmd::{Cmd, CmdError, usage};
use crate::filespec::{Place, split_rev};
use keel_core::{ChangeRef, View, WorkspaceOptions};

/// The caller's workspace, loaded once per command.
pub struct Work {
    pub place: Place,
    view: Option<View>,
    pub allwrite: bool,
}

impl Work {
    /// Loads the caller's workspace (the future holds no borrow of `cmd`).
    pub fn load(
        cmd: &Cmd,
    ) -> impl std::future::Future<Output = Result<Work, CmdError>> + Send + 'static {
        let name = cmd.caller.workspace.clone();
        let cwd = cmd.req.text("cwd").unwrap_or_default();
        let lookup = name.clone();
        let spec = cmd.call(move |svc, caller| svc.get_workspace(caller, &lookup));
        async move {
            let spec = spec.await??;
            let view = View::parse_lines(spec.view.iter()).ok();
            let allwrite = WorkspaceOptions::parse(&spec.options)
                .map(|o| o.allwrite)
                .unwrap_or(false);
            Ok(Work {
                place: Place {
                    workspace: name,
                    root: spec.root,
                    cwd,
                },
                view,
                allwrite,
            })
        }
    }

    /// The workspace's view, when it parses.
    pub fn view(&self) -> Option<&View> {
        self.view.as_ref()
    }

    /// The local path of a path relative to the root (`client_file` of the service's records).
    pub fn local_of_rel(&self, rel: &str) -> String {
        let local = self
            .place
            .local(&format!("//{}/{}", self.place.workspace, rel))
            .unwrap_or_else(|| rel.to_string());
        unescape(&local)
    }

    /// The local path of one file argument already in the service's syntax (`//ws/a` or
    /// `//depot/a` mapped through the view); `None` when it is in no view.
    pub fn local_of_arg(&self, keel_arg: &str) -> Option<String> {
        let (path, _) = split_rev(keel_arg);
        let client_path = match path
            .strip_prefix("//")
            .and_then(|p| p.strip_prefix(self.place.workspace.as_str()))
            .filter(|rest| rest.starts_with('/'))
        {
            Some(_) => path.to_string(),
            None => self.view.as_ref()?.translate(path)?,
        };
        self.place.local(&client_path).map(|l| unescape(&l))
    }
}

/// `@ # % *` escaped as P4 depot paths carry them (what `add -f` adds).
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '%' => out.push_str("%25"),
            '@' => out.push_str("%40"),
            '#' => out.push_str("%23"),
            '*' => out.push_str("%2A"),
            c => out.push(c),
        }
    }
    out
}

/// The escapes of [`escape`] undone (one pass: `%2540` is `%40`).
pub fn unescape(path: &str) -> String {
    if !path.contains('%') {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3).map(str::to_ascii_uppercase);
        let c = match code.as_deref() {
            Some("40") => Some('@'),
            Some("23") => Some('#'),
            Some("25") => Some('%'),
            Some("2A") => Some('*'),
            _ => None,
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The change a `-c` flag names: `default` or a number.
pub fn change_arg(value: Option<&str>) -> Result<Option<ChangeRef>, CmdError> {
    match value {
        None => Ok(None),
        Some("default") => Ok(Some(ChangeRef::Default)),
        Some(v) => v
            .parse::<u64>()
            .map(|n| Some(ChangeRef::from_number(n)))
            .map_err(|_| usage(format!("Invalid changelist number '{v}'."))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        assert_eq!(escape("a@b#c%d*e"), "a%40b%23c%25d%2Ae");
        assert_eq!(unescape(&escape("a@b#c%d*e%40")), "a@b#c%d*e%40");
    }

    #[test]
    fn change_flags_name_default_or_a_number() {
        assert_eq!(change_arg(None).unwrap(), None);
        assert_eq!(
            change_arg(Some("default")).unwrap(),
            Some(ChangeRef::Default)
        );
        assert_eq!(
            change_arg(Some("7")).unwrap(),
            Some(ChangeRef::from_number(7))
        );
        assert!(change_arg(Some("seven")).is_err());
    }
}
