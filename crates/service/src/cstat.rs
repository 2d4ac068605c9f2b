//! `cstat`: for each submitted change touching the files, whether the caller's workspace has
//! it (`have`: every revision of it among the files, or a later one), lacks it (`need`) or
//! has part of it (`partial`), from the have list.

use crate::args::FileArg;
use crate::{Caller, Service, ServiceError};
use keel_core::ChangeNumber;
use std::collections::BTreeMap;

/// How much of a change the workspace has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeSync {
    Have,
    Need,
    Partial,
}

impl ChangeSync {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSync::Have => "have",
            ChangeSync::Need => "need",
            ChangeSync::Partial => "partial",
        }
    }
}

impl Service {
    /// `cstat FILE...`: the changes that touched the selected files, oldest first, with how
    /// much of each the caller's workspace has synced. A revision counts as had when the have
    /// list holds it or a later one; every revision of a file deleted at head, when the file is
    /// absent. Holds one counter pair per change until the files have been read.
    pub fn cstat(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(ChangeNumber, ChangeSync) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        // change -> (revisions had, revisions in all)
        let mut changes: BTreeMap<ChangeNumber, (u32, u32)> = BTreeMap::new();
        for arg in &args {
            self.for_each_selected(snap.as_ref(), &who, arg, Some(ws.name()), &mut |head| {
                let have = self.have.get(ws.name(), &head.path)?;
                for rev in snap.file_revisions(&head.path)? {
                    if rev.rev > head.rev {
                        continue;
                    }
                    who.scan()?;
                    // An absent file whose head is deleted is as the head has it: every
                    // revision of it is superseded.
                    let had = if have > 0 {
                        have >= rev.rev
                    } else {
                        head.action.is_delete()
                    };
                    let entry = changes.entry(rev.change).or_default();
                    entry.0 += u32::from(had);
                    entry.1 += 1;
                }
                Ok(())
            })?;
        }
        for (change, (had, all)) in changes {
            who.result()?;
            let state = match had {
                0 => ChangeSync::Need,
                n if n == all => ChangeSync::Have,
                _ => ChangeSync::Partial,
            };
            sink(change, state)?;
        }
        Ok(())
    }
}
