//! `dirs`: the immediate subdirectories of a depot directory that hold files at the revision
//! asked (Perforce: a directory whose every file is deleted there is listed only with `-D`).

use crate::access::Access;

use crate::expand::{Selection, selection_of};
use crate::paging::Cursor;
use crate::{Caller, Service, ServiceError, error::bad_argument};
use keel_core::{FileSpec, PathPattern, RevSpec};
use keel_store::{PathRange, ReadTxn, RevisionRow};

/// Rows the first liveness probe of a directory reads; each further page is four times larger
/// (up to the service's page size), so a directory whose first file is live costs one tiny
/// query and one full of deleted files still streams in pages.
const FIRST_PROBE_ROWS: usize = 1;

/// Options of `dirs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DirsOptions {
    /// `dirs -D`: also list directories whose every file is deleted at the revision asked.
    pub include_deleted: bool,
}

impl Service {
    /// `dirs`: immediate subdirectories matching `//path/*` (optionally `@change`, `@label`,
    /// `#have`, ...): those holding at least one file not deleted at that revision, or with
    /// `include_deleted` at least one file that exists there.
    pub fn dirs(
        &self,
        caller: &Caller,
        dirs: &[String],
        opts: DirsOptions,
        sink: &mut dyn FnMut(String) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let specs = dirs
            .iter()
            .map(|text| FileSpec::parse(text).map_err(|e| bad_argument(text, e)))
            .collect::<Result<Vec<_>, _>>()?;
        // Only `#have` needs the caller's workspace.
        let ws = if specs.iter().any(|s| s.rev == Some(RevSpec::Have)) {
            self.optional_workspace(snap.as_ref(), caller)?
        } else {
            None
        };
        let have_of = ws.as_ref().map(|w| w.name());
        for (text, spec) in dirs.iter().zip(specs) {
            PathPattern::parse(&spec.path).map_err(|e| bad_argument(text, e))?;
            let Some(parent) = spec
                .path
                .strip_suffix("/*")
                .or_else(|| spec.path.strip_suffix("/..."))
            else {
                return Err(ServiceError::DirsPattern { arg: text.clone() });
            };
            let selection = selection_of(snap.as_ref(), text, &spec.rev)?;
            // At head the skip-scan itself tells: every stored path has a revision there (so
            // `-D` needs no probe), and without `-D` it steps over files deleted there.
            let at_head = matches!(spec.rev, None | Some(RevSpec::Head));
            let probe = !at_head;
            let prefix = format!("{parent}/");
            let range = PathRange::prefix(&prefix);
            let mut after = prefix.clone();
            let mut found = 0;
            // Without `-D`, files deleted at head are stepped over, file by file only where the
            // range holds a delete at all (deletes are few: one probe tells).
            let live_only = at_head && !opts.include_deleted && snap.any_delete_in(&range)?;
            // Skip-scan: one query per subdirectory; the directory's own files are stepped over
            // inside SQLite, so a flat directory of many files costs one scan, not a probe each.
            let next = |after: &str| {
                if live_only {
                    snap.next_live_subdir_path(&range, after)
                } else {
                    snap.next_subdir_path(&range, after)
                }
            };
            while let Some(path) = next(&after)? {
                let rest = &path.as_str()[prefix.len()..];
                let Some(slash) = rest.find('/') else {
                    after = path.into_string();
                    continue;
                };
                // Built in place, `after` reusing its buffer: this runs per subdirectory.
                let mut dir = String::with_capacity(prefix.len() + slash + 1);
                dir.push_str(&prefix);
                dir.push_str(&rest[..slash]);
                after.clear();
                after.push_str(&dir);
                after.push('/');
                after.push(char::MAX);
                who.scan()?;
                // The first file found decides unless it must be probed or is hidden from
                // the caller; then the directory is listed only for a file they may list.
                let listed = (!probe && who.lists(path.as_str()))
                    || self.dir_has_files(
                        snap.as_ref(),
                        &who,
                        &format!("{dir}/"),
                        text,
                        (&selection, &spec.rev),
                        have_of,
                        opts.include_deleted,
                    )?;
                if listed {
                    sink(dir)?;
                    found += 1;
                }
            }
            if found == 0 {
                return Err(ServiceError::NoSuchFiles { arg: text.clone() });
            }
        }
        Ok(())
    }

    /// Whether some file under `dir` (ending in `/`) has a revision the spec selects that is
    /// not a delete (or any selected revision, with `include_deleted`). Stops at the first.
    #[allow(clippy::too_many_arguments)]
    fn dir_has_files(
        &self,
        snap: &dyn ReadTxn,
        who: &Access,
        dir: &str,
        text: &str,
        (selection, rev): (&Selection, &Option<RevSpec>),
        have_of: Option<&str>,
        include_deleted: bool,
    ) -> Result<bool, ServiceError> {
        let range = PathRange::prefix(dir);
        let mut heads = match selection {
            Selection::Newest { at, .. } => {
                let at = *at;
                let max = self.config.page_size.max(FIRST_PROBE_ROWS);
                let mut limit = FIRST_PROBE_ROWS;
                Cursor::new(
                    Box::new(move |after| {
                        let rows = snap.head_revisions(&range, after, at, limit)?;
                        limit = (limit * 4).min(max);
                        Ok(rows)
                    }),
                    |r: &RevisionRow| r.path.as_str(),
                    FIRST_PROBE_ROWS,
                )
            }
            Selection::Static(_) => self.selected_cursor(snap, range, selection),
        };
        while let Some(head) = heads.next_row()? {
            who.scan()?;
            if !selection.admits(head.path.as_str()) || !who.lists(head.path.as_str()) {
                continue;
            }
            if let Some(row) = self.select_revision(snap, text, rev, head, have_of)?
                && (include_deleted || !row.action.is_delete())
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
