//! One pending change's open records, streamed a page at a time (what a submit plans from).

use crate::fileinfo::from_opened;
use crate::paging::opened_pages;
use crate::upload::needs_content;
use crate::{Caller, FileInfo, Service, ServiceError};
use keel_core::{ChangeNumber, ChangeRef};

impl Service {
    /// Lists the open records of the caller's pending `change` (0 = the default changelist)
    /// in path order, a page (`ServiceConfig::page_size`) at a time, so no listing of the change
    /// is held; with `content_only`, only those whose revision carries content (the files a
    /// submit may upload or make read-only).
    pub fn opened_in_change(
        &self,
        caller: &Caller,
        change: ChangeRef,
        content_only: bool,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self
            .optional_workspace(snap.as_ref(), caller)?
            .ok_or(ServiceError::OpenedNeedsWorkspace)?;
        opened_pages(
            snap.as_ref(),
            ws.name(),
            ChangeNumber(change.number()),
            self.config.page_size,
            &mut |rows| {
                for row in rows {
                    let wanted = !content_only || needs_content(row.action);
                    if wanted && who.lists(row.path.as_str()) {
                        sink(from_opened(&row, Some(&ws)))?;
                    }
                }
                Ok(())
            },
        )
    }
}
