//! `review` and `reviews`, what a change-review daemon calls: the submitted changes after a
//! point (a change, or the value of a counter such as `review`) with their authors, and the
//! users whose `Reviews` field covers the files of a change or of file arguments.

use crate::access::Access;
use crate::args::FileArg;
use crate::labels::label_view;
use crate::paging::Cursor;
use crate::{Caller, Service, ServiceError, UserSpec};
use keel_core::{ChangeNumber, ChangeStatus, CounterSpace, View};
use keel_store::{ReadTxn, RevisionRow};

/// Where `review` starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReviewFrom {
    /// Every submitted change.
    All,
    /// This change and every later one (`-c N`).
    Change(ChangeNumber),
    /// The changes after the counter's value (`-t NAME`).
    Counter(String),
}

/// One submitted change as `review` lists it, with its author's spec fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewChange {
    pub change: ChangeNumber,
    pub user: String,
    /// Empty when the author has no user spec (any more).
    pub email: String,
    pub full_name: String,
}

impl Service {
    /// `review [-c N | -t COUNTER]`: submitted changes, oldest first, from the start point to
    /// the newest change. Reads each change number once (MaxScanRows counts them).
    pub fn review_changes(
        &self,
        caller: &Caller,
        from: ReviewFrom,
        sink: &mut dyn FnMut(ReviewChange) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let access = Access::for_user(self.user_access(caller)?);
        let snap = self.meta.snapshot()?;
        let first = match from {
            ReviewFrom::All => 1,
            ReviewFrom::Change(n) => n.0.max(1),
            ReviewFrom::Counter(name) => {
                keel_core::counter::check_name(CounterSpace::Counter, &name).map_err(|e| {
                    ServiceError::BadArgument {
                        arg: name.clone(),
                        reason: e.to_string(),
                    }
                })?;
                let value = snap.get_counter(CounterSpace::Counter, &name)?;
                let text = value.as_deref().unwrap_or("0").trim();
                let at: u64 = text.parse().map_err(|_| ServiceError::BadArgument {
                    arg: name.clone(),
                    reason: format!(
                        "counter '{name}' holds '{text}', which is not a change number"
                    ),
                })?;
                at.saturating_add(1)
            }
        };
        let last = snap.change_counter()?.0;
        for n in first..=last {
            access.scan()?;
            let Some(row) = snap.get_change(ChangeNumber(n))? else {
                continue;
            };
            if row.status != ChangeStatus::Submitted {
                continue;
            }
            access.result()?;
            let author = snap.get_user(&row.user)?;
            sink(ReviewChange {
                change: row.change,
                email: author.as_ref().map(|u| u.email.clone()).unwrap_or_default(),
                full_name: author.map(|u| u.full_name).unwrap_or_default(),
                user: row.user,
            })?;
        }
        Ok(())
    }

    /// `reviews [-c N] [FILE...]`: users whose `Reviews` cover a file of change `change` or a
    /// file the arguments select (every user with a `Reviews` field when neither is given), in
    /// name order. Only files the caller may list count.
    pub fn reviewers(
        &self,
        caller: &Caller,
        change: Option<ChangeNumber>,
        files: &[String],
        sink: &mut dyn FnMut(UserSpec) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let access = Access::for_user(self.user_access(caller)?);
        let snap = self.meta.snapshot()?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), None))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(n) = change {
            match snap.get_change(n)? {
                Some(row) if row.status == ChangeStatus::Submitted => {}
                Some(_) => {
                    return Err(ServiceError::BadArgument {
                        arg: format!("-c {n}"),
                        reason: format!(
                            "change {n} is pending; reviews -c takes a submitted change"
                        ),
                    });
                }
                None => return Err(ServiceError::NoSuchChange { change: n }),
            }
        }
        let mut reviewers = self.reviewer_views(snap.as_ref())?;
        if change.is_some() || !args.is_empty() {
            let mut unmatched = reviewers.len();
            let mut visit = |path: &str| -> Result<bool, ServiceError> {
                for (_, view, hit) in reviewers.iter_mut().filter(|(_, _, hit)| !*hit) {
                    if view.translate(path).is_some() {
                        *hit = true;
                        unmatched -= 1;
                    }
                }
                Ok(unmatched > 0)
            };
            if let Some(n) = change {
                let page = self.config.page_size;
                let mut revs = Cursor::new(
                    Box::new(|after| Ok(snap.change_revisions(n, after, page)?)),
                    |r: &RevisionRow| r.path.as_str(),
                    page,
                );
                while let Some(rev) = revs.next_row()? {
                    access.scan()?;
                    if access.lists(rev.path.as_str()) && !visit(rev.path.as_str())? {
                        break;
                    }
                }
            }
            for arg in &args {
                let mut more = true;
                self.for_each_selected(snap.as_ref(), &access, arg, None, &mut |rev| {
                    if more {
                        more = visit(rev.path.as_str())?;
                    }
                    Ok(())
                })?;
            }
            reviewers.retain(|(_, _, hit)| *hit);
        }
        for (user, _, _) in reviewers {
            access.result()?;
            sink(user)?;
        }
        Ok(())
    }

    /// Every user with a `Reviews` field and its compiled view, in name order (a field that no
    /// longer compiles counts as reviewing nothing).
    fn reviewer_views(
        &self,
        snap: &dyn ReadTxn,
    ) -> Result<Vec<(UserSpec, View, bool)>, ServiceError> {
        let page = self.config.page_size;
        let mut users = Cursor::new(
            Box::new(|after| Ok(snap.list_users(after, page)?)),
            |u: &keel_store::UserRow| u.name.as_str(),
            page,
        );
        let mut out = Vec::new();
        while let Some(row) = users.next_row()? {
            if row.reviews.is_empty() {
                continue;
            }
            if let Ok(view) = label_view(&row.reviews) {
                out.push((UserSpec::from(row), view, false));
            }
        }
        Ok(out)
    }
}
