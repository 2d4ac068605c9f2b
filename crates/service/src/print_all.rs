//! `print -a`: every revision a file argument's range holds (`//depot/a.txt` all of them,
//! `//depot/a.txt#2,#4` those), newest first, each with its record as `print` gives it.
//! Deleted revisions have no content and are skipped.

use crate::args::FileArg;
use crate::fileinfo::from_revision;
use crate::rev_range::RangeArg;
use crate::{Caller, Content, FileInfo, Service, ServiceError};
use keel_core::Right;

impl Service {
    /// Calls `sink` with each revision in range of each file the arguments select, newest
    /// first per file. An argument that selects nothing with content is an error naming it.
    pub fn print_all(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(FileInfo, Content) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        if files.is_empty() {
            return Err(ServiceError::NoFileArguments { command: None });
        }
        for text in files {
            if text.contains("@=") {
                return Err(ServiceError::BadArgument {
                    arg: text.clone(),
                    reason: format!(
                        "{text} - shelved files have one revision; print them without -a"
                    ),
                });
            }
            let range = RangeArg::parse(text)?;
            let arg = FileArg::parse(&range.upper, snap.as_ref(), ws.as_ref())?;
            let mut printed = 0;
            self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |head| {
                    // Newest first, as the store gives them; the range reads them oldest first.
                    let mut revisions = snap.file_revisions(&head.path)?;
                    revisions.reverse();
                    let Some(first) = range.first_rev(&revisions, head.rev)? else {
                        return Ok(());
                    };
                    for rev in revisions
                        .into_iter()
                        .rev()
                        .filter(|r| r.rev >= first && r.rev <= head.rev)
                    {
                        who.scan()?;
                        if rev.action.is_delete() {
                            continue;
                        }
                        who.require(Right::Read, rev.path.as_str())?;
                        printed += 1;
                        let mut info = from_revision(&rev);
                        if rev.file_type.expanded_keywords() != keel_core::Keywords::None {
                            info.user = snap
                                .get_change(rev.change)?
                                .map(|c| c.user)
                                .unwrap_or_default();
                        }
                        sink(info, self.content_of(&rev)?)?;
                    }
                    Ok(())
                },
            )?;
            if printed == 0 {
                return Err(ServiceError::NoSuchFiles { arg: text.clone() });
            }
        }
        Ok(())
    }
}
