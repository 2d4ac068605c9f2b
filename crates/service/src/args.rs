//! File arguments: depot or workspace syntax with wildcards and a revision, resolved to the
//! depot-path ranges to scan and a matcher that decides each candidate file.

use crate::context::{WorkspaceCtx, load_workspace};
use crate::{ServiceError, error::bad_argument};
use keel_core::{FileSpec, LineKind, PathPattern, RevSpec, View, ViewLine};
use keel_store::{PathRange, ReadTxn};

/// One resolved file argument.
pub(crate) struct FileArg {
    pub text: String,
    /// Non-overlapping depot ranges, in order, that hold every candidate.
    pub scopes: Vec<PathRange>,
    matcher: Matcher,
    pub rev: Option<RevSpec>,
    /// The workspace named in workspace syntax (`//NAME/...`), if any.
    pub workspace: Option<WorkspaceCtx>,
}

enum Matcher {
    Depot(PathPattern),
    /// A pattern over workspace-syntax paths, decided through the workspace's view.
    Client(PathPattern),
}

/// Literal text of a view or pattern side, up to its first wildcard.
pub(crate) fn literal_prefix(side: &str) -> &str {
    let end = [side.find("..."), side.find('*'), side.find("%%")]
        .into_iter()
        .flatten()
        .min();
    &side[..end.unwrap_or(side.len())]
}

impl FileArg {
    /// Resolves `text`; `caller_ws` is used when the argument names the caller's workspace.
    pub(crate) fn parse(
        text: &str,
        snap: &dyn ReadTxn,
        caller_ws: Option<&WorkspaceCtx>,
    ) -> Result<FileArg, ServiceError> {
        let spec = FileSpec::parse(text).map_err(|e| bad_argument(text, e))?;
        let pattern = PathPattern::parse(&spec.path).map_err(|e| bad_argument(text, e))?;
        let first = spec
            .path
            .trim_start_matches("//")
            .split('/')
            .next()
            .unwrap_or("");
        // `//...` (or `//*/...`): every depot, as a depot pattern over all of them.
        let every_depot = first.contains("...") || first.contains('*');
        if every_depot || snap.get_depot(first)?.is_some() {
            let scopes = vec![scope_of(&pattern)];
            return Ok(FileArg {
                text: text.to_string(),
                scopes,
                matcher: Matcher::Depot(pattern),
                rev: spec.rev,
                workspace: None,
            });
        }
        let ws = match caller_ws {
            Some(ws) if ws.name() == first => WorkspaceCtx::new(ws.row.clone())?,
            _ => match snap.get_workspace(first)? {
                Some(_) => load_workspace(snap, first)?,
                None => {
                    return Err(ServiceError::UnknownRoot {
                        arg: text.to_string(),
                        name: first.to_string(),
                    });
                }
            },
        };
        let scopes = client_scopes(&ws, &pattern);
        Ok(FileArg {
            text: text.to_string(),
            scopes,
            matcher: Matcher::Client(pattern),
            rev: spec.rev,
            workspace: Some(ws),
        })
    }

    /// Whether a depot file is selected by this argument.
    pub(crate) fn matches(&self, depot: &str) -> bool {
        match &self.matcher {
            Matcher::Depot(p) => p.matches(depot),
            Matcher::Client(p) => {
                let ws = self
                    .workspace
                    .as_ref()
                    .expect("client matchers carry their workspace");
                ws.view
                    .translate(depot)
                    .is_some_and(|client| p.matches(&client))
            }
        }
    }

    /// The single depot file this argument names, when it has no wildcards.
    pub(crate) fn exact_file(&self) -> Option<String> {
        match &self.matcher {
            Matcher::Depot(p) if !p.has_wildcards() => Some(p.as_str().to_string()),
            Matcher::Client(p) if !p.has_wildcards() => self
                .workspace
                .as_ref()
                .and_then(|ws| ws.depot_file(p.as_str())),
            _ => None,
        }
    }
}

fn scope_of(pattern: &PathPattern) -> PathRange {
    if pattern.has_wildcards() {
        PathRange::prefix(pattern.literal_prefix())
    } else {
        PathRange::exact(pattern.as_str())
    }
}

/// Depot ranges that can hold files matching a workspace-syntax pattern.
fn client_scopes(ws: &WorkspaceCtx, pattern: &PathPattern) -> Vec<PathRange> {
    if !pattern.has_wildcards() {
        return ws
            .depot_file(pattern.as_str())
            .map(|d| PathRange::exact(&d))
            .into_iter()
            .collect();
    }
    let wanted = pattern.literal_prefix();
    let mut prefixes = Vec::new();
    for line in ws.view.lines() {
        if line.kind == LineKind::Exclude {
            continue;
        }
        let left = literal_prefix(&line.left);
        let right = literal_prefix(&line.right);
        if let Some(rest) = wanted.strip_prefix(right) {
            let simple = line.left[left.len()..].starts_with("...")
                && line.right[right.len()..].starts_with("...");
            prefixes.push(if simple {
                format!("{left}{rest}")
            } else {
                left.to_string()
            });
        } else if right.starts_with(wanted) {
            prefixes.push(left.to_string());
        }
    }
    disjoint_scopes(prefixes)
}

/// The disjoint path ranges one side of a view can reach (`side` picks it: `|l| &l.left` for
/// the depot side of a workspace view or the source of a branch mapping): the literal prefix of
/// every line that is not an exclusion.
pub(crate) fn view_scopes(view: &View, side: fn(&ViewLine) -> &str) -> Vec<PathRange> {
    let prefixes = view
        .lines()
        .iter()
        .filter(|l| l.kind != LineKind::Exclude)
        .map(|l| literal_prefix(side(l)).to_string())
        .collect();
    disjoint_scopes(prefixes)
}

/// Sorted, non-overlapping ranges covering every given prefix.
pub(crate) fn disjoint_scopes(mut prefixes: Vec<String>) -> Vec<PathRange> {
    prefixes.sort();
    let mut out: Vec<PathRange> = Vec::new();
    for p in prefixes {
        if out.last().is_some_and(|last: &PathRange| last.contains(&p)) {
            continue;
        }
        out.push(PathRange::prefix(&p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_stops_at_first_wildcard() {
        for (side, want) in [
            ("//depot/a/...", "//depot/a/"),
            ("//depot/*.c", "//depot/"),
            ("//depot/%%1/x", "//depot/"),
            ("//depot/plain", "//depot/plain"),
        ] {
            assert_eq!(literal_prefix(side), want, "{side}");
        }
    }

    #[test]
    fn nested_prefixes_collapse() {
        let got = disjoint_scopes(vec![
            "//depot/a/b/".into(),
            "//depot/a/".into(),
            "//depot/c/".into(),
        ]);
        let los: Vec<&str> = got.iter().map(|r| r.lo.as_str()).collect();
        assert_eq!(los, ["//depot/a/", "//depot/c/"]);
    }
}
