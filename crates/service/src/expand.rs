//! Expanding a file argument to the revisions it selects, streamed in path order.
//!
//! A revision spec becomes a [`Selection`]: the newest revision at a change (`@N`, or head), an
//! automatic label (its change, limited to its View), or a static label (exactly the revisions
//! it holds; files it lacks select nothing).

use crate::access::Access;
use crate::args::FileArg;
use crate::labels::LabelCtx;
use crate::paging::{Cursor, Fetch};
use crate::{Service, ServiceError};
use keel_core::{ChangeNumber, RevSpec, View};
use keel_store::{PathRange, ReadTxn, RevisionRow};

/// Which revision of each file a revision spec selects, before `#rev`/`#have` refinements.
pub(crate) enum Selection {
    /// The newest revision at or before `at` (any when `None`); only files in `view` when set.
    Newest {
        at: Option<ChangeNumber>,
        view: Option<View>,
    },
    /// The revisions a static label holds.
    Static(String),
}

impl Selection {
    /// Whether a file can be selected at all (automatic labels select only their View).
    pub(crate) fn admits(&self, path: &str) -> bool {
        match self {
            Selection::Newest {
                view: Some(view), ..
            } => view.translate(path).is_some(),
            _ => true,
        }
    }
}

/// The selection `rev` makes; unknown labels are NotFound, named with the argument.
pub(crate) fn selection_of(
    snap: &dyn ReadTxn,
    text: &str,
    rev: &Option<RevSpec>,
) -> Result<Selection, ServiceError> {
    match rev {
        Some(RevSpec::Change(n)) => Ok(Selection::Newest {
            at: Some(*n),
            view: None,
        }),
        Some(RevSpec::Label(name)) => {
            let row = snap
                .get_label(name)?
                .ok_or_else(|| ServiceError::NoSuchLabel {
                    arg: text.to_string(),
                    name: name.to_string(),
                })?;
            let label = LabelCtx::new(row)?;
            Ok(match label.revision {
                Some(at) => Selection::Newest {
                    at: Some(at),
                    view: Some(label.view),
                },
                None => Selection::Static(label.row.name),
            })
        }
        _ => Ok(Selection::Newest {
            at: None,
            view: None,
        }),
    }
}

/// Pages of a static label's revisions in `range` (see [`label_page`]).
fn label_fetch<'a>(
    snap: &'a dyn ReadTxn,
    label: String,
    range: PathRange,
    page: usize,
) -> Fetch<'a, RevisionRow> {
    Box::new(move |after| label_page(snap, &label, &range, after, page))
}

/// One page of a static label's revisions in `range` after `after`: at least `page` rows
/// unless the label's entries run out (entries whose revision is gone are skipped without
/// ending the listing).
fn label_page(
    snap: &dyn ReadTxn,
    label: &str,
    range: &PathRange,
    after: Option<&str>,
    page: usize,
) -> Result<Vec<RevisionRow>, ServiceError> {
    let mut out = Vec::new();
    let mut after = after.map(str::to_string);
    loop {
        let entries = snap.label_revs(label, range, after.as_deref(), page)?;
        let short = entries.len() < page;
        for (path, rev) in &entries {
            if let Some(row) = snap.revision(path, *rev)? {
                out.push(row);
            }
        }
        after = entries.last().map(|(path, _)| path.to_string());
        if short || out.len() >= page {
            return Ok(out);
        }
    }
}

/// One page of the revisions `selection` picks in `range` after `after`, path order: fewer
/// than `page` rows only at the end. For callers that take a fresh snapshot per page.
pub(crate) fn selected_page(
    snap: &dyn ReadTxn,
    range: &PathRange,
    selection: &Selection,
    after: Option<&str>,
    page: usize,
) -> Result<Vec<RevisionRow>, ServiceError> {
    match selection {
        Selection::Newest { at, .. } => Ok(snap.head_revisions(range, after, *at, page)?),
        Selection::Static(label) => label_page(snap, label, range, after, page),
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

    /// A cursor over the revisions `selection` picks in `range`, path order.
    pub(crate) fn selected_cursor<'a>(
        &self,
        snap: &'a dyn ReadTxn,
        range: PathRange,
        selection: &Selection,
    ) -> Cursor<'a, RevisionRow> {
        match selection {
            Selection::Newest { at, .. } => self.head_cursor(snap, range, *at),
            Selection::Static(label) => {
                let page = self.config.page_size;
                Cursor::new(
                    label_fetch(snap, label.clone(), range, page),
                    |r: &RevisionRow| r.path.as_str(),
                    page,
                )
            }
        }
    }

    /// The revision `rev` selects of a file whose selected revision (see [`Selection`]) is `head`.
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
                let ws = have_of.ok_or_else(|| ServiceError::HaveNeedsWorkspace {
                    arg: text.to_string(),
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
        who: &Access,
        arg: &FileArg,
        have_of: Option<&str>,
        f: &mut dyn FnMut(RevisionRow) -> Result<(), ServiceError>,
    ) -> Result<usize, ServiceError> {
        self.for_each_selected_as(snap, who, arg, have_of, f)
    }

    /// [`Service::for_each_selected`] with a callback that fails with a command family's error.
    /// Files `who` may not list are skipped as if absent; every file read counts against
    /// MaxScanRows and every file handed to `f` against MaxResults.
    pub(crate) fn for_each_selected_as<E: From<ServiceError>>(
        &self,
        snap: &dyn ReadTxn,
        who: &Access,
        arg: &FileArg,
        have_of: Option<&str>,
        f: &mut dyn FnMut(RevisionRow) -> Result<(), E>,
    ) -> Result<usize, E> {
        self.for_each_selected_upto(snap, who, arg, have_of, usize::MAX, f)
    }

    /// [`Service::for_each_selected_as`] that stops once `limit` files were handed to `f`
    /// (`files -m N` reads no further than its Nth file).
    pub(crate) fn for_each_selected_upto<E: From<ServiceError>>(
        &self,
        snap: &dyn ReadTxn,
        who: &Access,
        arg: &FileArg,
        have_of: Option<&str>,
        limit: usize,
        f: &mut dyn FnMut(RevisionRow) -> Result<(), E>,
    ) -> Result<usize, E> {
        let selection = selection_of(snap, &arg.text, &arg.rev)?;
        let mut matched = 0;
        for scope in &arg.scopes {
            if matched >= limit {
                break;
            }
            let mut heads = self.selected_cursor(snap, scope.clone(), &selection);
            while matched < limit
                && let Some(head) = heads.next_row()?
            {
                who.scan()?;
                if !arg.matches(head.path.as_str())
                    || !selection.admits(head.path.as_str())
                    || !who.lists(head.path.as_str())
                {
                    continue;
                }
                if let Some(rev) = self.select_revision(snap, &arg.text, &arg.rev, head, have_of)? {
                    who.result()?;
                    matched += 1;
                    f(rev)?;
                }
            }
        }
        Ok(matched)
    }
}
