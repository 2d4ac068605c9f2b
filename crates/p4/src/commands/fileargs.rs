//! What the read commands share: their file arguments mapped through the workspace (only
//! loaded when an argument needs it), a missing file's warning (`//depot/x - no such
//! file(s).`, which lets the other arguments run), and the record fields clients read.

use crate::cmd::{Cmd, CmdError, number};
use crate::filespec::{Place, is_depot_syntax};
use crate::wire::report::{Generic, Report, Severity};
use keel_service::{FileInfo, ListOptions, ServiceError};

/// One file argument: as the client gave it, and in the service's syntax.
#[derive(Debug, Clone)]
pub struct Arg {
    pub given: String,
    pub keel: String,
}

/// The arguments in the service's syntax; none given means the files under the client's
/// current directory (`all_if_none`) or none at all. The workspace is loaded only when an
/// argument is not in depot or client syntax.
pub fn map(
    cmd: &Cmd,
    args: &[String],
    all_if_none: bool,
) -> impl Future<Output = Result<(Vec<Arg>, Option<Place>), CmdError>> + Send + 'static {
    let needs_place = (args.is_empty() && all_if_none) || args.iter().any(|a| !is_depot_syntax(a));
    let place = needs_place.then(|| Place::of(cmd));
    let args = args.to_vec();
    async move {
        let place = match place {
            Some(p) => Some(p.await?),
            None => None,
        };
        mapped(&args, all_if_none, place)
    }
}

fn mapped(
    args: &[String],
    all_if_none: bool,
    place: Option<Place>,
) -> Result<(Vec<Arg>, Option<Place>), CmdError> {
    let mapped = match (&place, args.is_empty()) {
        (Some(p), true) if all_if_none => p
            .args_or_all(&[])?
            .into_iter()
            .map(|k| Arg {
                given: k.clone(),
                keel: k,
            })
            .collect(),
        (Some(p), _) => args
            .iter()
            .map(|a| {
                Ok(Arg {
                    given: a.clone(),
                    keel: p.to_keel(a)?,
                })
            })
            .collect::<Result<Vec<_>, CmdError>>()?,
        (None, _) => args
            .iter()
            .map(|a| Arg {
                given: a.clone(),
                keel: a.clone(),
            })
            .collect(),
    };
    Ok((mapped, place))
}

/// The caller's workspace as the client sees it, when it has one (for local paths in
/// records); `None` when the caller names no workspace or it does not exist.
pub fn place_if_any(
    cmd: &Cmd,
    known: Option<Place>,
) -> impl Future<Output = Option<Place>> + Send + 'static {
    let lookup = (known.is_none() && !cmd.caller.workspace.is_empty()).then(|| Place::of(cmd));
    async move {
        match lookup {
            Some(l) => l.await.ok(),
            None => known,
        }
    }
}

/// The warning of an argument that matched nothing.
pub fn no_such(arg: &str) -> Report {
    Report::new(Severity::Warn, Generic::Empty, number::NO_SUCH_FILES)
        .arg("path", arg)
        .text(" - no such file(s).")
}

/// The outcome of one argument's service call: its records, or the warning when it matched
/// nothing (any other failure stops the command).
pub fn per_arg<T>(
    cmd: &mut Cmd,
    given: &str,
    result: Result<T, ServiceError>,
) -> Result<Option<T>, CmdError> {
    match result {
        Ok(t) => Ok(Some(t)),
        Err(ServiceError::NoSuchFiles { .. }) => {
            cmd.report(no_such(given));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The MD5 digest as clients compare it (upper-case hex).
pub fn md5(info: &FileInfo) -> String {
    info.head_md5.to_ascii_uppercase()
}

/// The head type's name (`text`, `binary+x`), empty when there is none.
pub fn head_type(info: &FileInfo) -> String {
    info.head_type.map(|t| t.to_string()).unwrap_or_default()
}

/// The head action's name, empty when there is none.
pub fn head_action(info: &FileInfo) -> String {
    info.head_action
        .map(|a| a.as_str().to_string())
        .unwrap_or_default()
}

/// The local path of a record's workspace file (`client_file`, relative to the root).
pub fn local_path(place: Option<&Place>, info: &FileInfo) -> Option<String> {
    let place = place?;
    let rel = info.client_file.as_ref()?;
    place.local(&format!("//{}/{}", place.workspace, rel))
}

/// The client-syntax path of a record's workspace file (`//ws/a/b`).
pub fn client_syntax(place: Option<&Place>, workspace: &str, info: &FileInfo) -> Option<String> {
    let rel = info.client_file.as_ref()?;
    let ws = place.map_or(workspace, |p| p.workspace.as_str());
    Some(format!("//{ws}/{rel}"))
}

/// A description cut to `max` characters (`changes` without `-l`), on one line when `flat`.
pub fn cut(desc: &str, max: Option<usize>, flat: bool) -> String {
    let text = if flat {
        desc.trim_end().replace(['\n', '\t'], " ")
    } else {
        desc.to_string()
    };
    match max {
        Some(n) if text.chars().count() > n => text.chars().take(n).collect(),
        _ => text,
    }
}

/// The files `specs` (each `file#rev`) name, as listed; a spec that names nothing is left out.
pub async fn listed(cmd: &mut Cmd, specs: Vec<String>) -> Result<Vec<FileInfo>, CmdError> {
    Ok(cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.files(caller, &specs, ListOptions::default(), &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await??)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_as_changes_shows_them() {
        assert_eq!(cut("short\nsecond\n", Some(31), true), "short second");
        assert_eq!(cut(&"x".repeat(40), Some(31), true).len(), 31);
        assert_eq!(cut("a\nb\n", None, false), "a\nb\n");
    }

    #[test]
    fn a_missing_file_is_a_warning_naming_it() {
        let r = no_such("//depot/x");
        assert_eq!(r.severity, Severity::Warn);
        assert_eq!(r.rendered(), "//depot/x - no such file(s).");
    }
}
