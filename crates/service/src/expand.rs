//! Expanding a file argument to the revisions it selects, streamed in path order.

use crate::args::FileArg;
use crate::paging::Cursor;
use crate::{Service, ServiceError};
use keel_core::{ChangeNumber, RevSpec};
use keel_store::{PathRange, ReadTxn, RevisionRow};

/// The change a revision spec bounds head lookups by; `Err` for specs that select nothing known.
pub(crate) fn bound_of(
    text: &str,
    rev: &Option<RevSpec>,
) -> Result<Option<ChangeNumber>, ServiceError> {
    match rev {
        Some(RevSpec::Change(n)) => Ok(Some(*n)),
        Some(RevSpec::Label(name)) => Err(ServiceError::NotFound(format!(
            "{text} - label '{name}' does not exist"
        ))),
        _ => Ok(None),
    }
}

impl Service {
    /// A cursor over the newest revision (at `at`) of every file in `range`, path order.
    pub(crate) fn head_cursor<'a>(
        &self,
        snap: &'a dyn ReadTxn,
        range: PathRange,
        at: Option<ChangeNumber>,
    ) -> Cursor<'a, RevisionRow> {
        let page = self.config.page_size;
        Cursor::new(
            Box::new(move |after| Ok(snap.head_revisions(&range, after, at, page)?)),
            |r: &RevisionRow| r.path.as_str(),
            page,
        )
    }

    /// The revision `rev` selects of a file whose newest revision (within the bound) is `head`.
    pub(crate) fn select_revision(
        &self,
        snap: &dyn ReadTxn,
        text: &str,
        rev: &Option<RevSpec>,
        head: RevisionRow,
        have_of: Option<&str>,
    ) -> Result<Option<RevisionRow>, ServiceError> {
        match rev {
            Some(RevSpec::None) => Ok(None),
            Some(RevSpec::Rev(n)) if *n < head.rev => Ok(snap.revision(&head.path, *n)?),
            Some(RevSpec::Have) => {
                let ws = have_of.ok_or_else(|| {
                    ServiceError::Invalid(format!("{text} - #have needs a workspace"))
                })?;
                match self.have.get(ws, &head.path)? {
                    0 => Ok(None),
                    rev => Ok(snap.revision(&head.path, rev)?),
                }
            }
            _ => Ok(Some(head)),
        }
    }

    /// Calls `f` with the revision `arg` selects of each matching file, in path order, and
    /// returns how many files matched. `have_of` gives the workspace whose have list `#have` reads.
    pub(crate) fn for_each_selected(
        &self,
        snap: &dyn ReadTxn,
        arg: &FileArg,
        have_of: Option<&str>,
        f: &mut dyn FnMut(RevisionRow) -> Result<(), ServiceError>,
    ) -> Result<usize, ServiceError> {
        let at = bound_of(&arg.text, &arg.rev)?;
        let mut matched = 0;
        for scope in &arg.scopes {
            let mut heads = self.head_cursor(snap, scope.clone(), at);
            while let Some(head) = heads.next_row()? {
                if !arg.matches(&head.path) {
                    continue;
                }
                if let Some(rev) = self.select_revision(snap, &arg.text, &arg.rev, head, have_of)? {
                    matched += 1;
                    f(rev)?;
                }
            }
        }
        Ok(matched)
    }
}
