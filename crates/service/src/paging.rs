//! Streaming over paged store listings, and a peekable cursor for merge joins.

use crate::ServiceError;
use std::collections::VecDeque;

/// Fetches the page after a key (`None` = from the start).
pub(crate) type Fetch<'a, T> = Box<dyn FnMut(Option<&str>) -> Result<Vec<T>, ServiceError> + 'a>;

/// A cursor over a paged listing, in key order.
pub(crate) struct Cursor<'a, T> {
    fetch: Fetch<'a, T>,
    key: fn(&T) -> &str,
    buffer: VecDeque<T>,
    last: Option<String>,
    page: usize,
    done: bool,
}

impl<'a, T> Cursor<'a, T> {
    pub(crate) fn new(fetch: Fetch<'a, T>, key: fn(&T) -> &str, page: usize) -> Self {
        Cursor {
            fetch,
            key,
            buffer: VecDeque::new(),
            last: None,
            page,
            done: false,
        }
    }

    fn fill(&mut self) -> Result<(), ServiceError> {
        if self.buffer.is_empty() && !self.done {
            let rows = (self.fetch)(self.last.as_deref())?;
            if rows.len() < self.page {
                self.done = true;
            }
            if let Some(last) = rows.last() {
                self.last = Some((self.key)(last).to_string());
            } else {
                self.done = true;
            }
            self.buffer.extend(rows);
        }
        Ok(())
    }

    pub(crate) fn peek(&mut self) -> Result<Option<&T>, ServiceError> {
        self.fill()?;
        Ok(self.buffer.front())
    }

    pub(crate) fn next_row(&mut self) -> Result<Option<T>, ServiceError> {
        self.fill()?;
        Ok(self.buffer.pop_front())
    }
}

/// Hands `each` the open records of pending `change` in `workspace`, path order, `page` at a
/// time (at least one record per page).
pub(crate) fn opened_pages<E: From<keel_store::StoreError>>(
    snap: &dyn keel_store::ReadTxn,
    workspace: &str,
    change: keel_core::ChangeNumber,
    page: usize,
    each: &mut dyn FnMut(Vec<keel_store::OpenedRow>) -> Result<(), E>,
) -> Result<(), E> {
    let page = page.max(1);
    let mut after: Option<keel_core::DepotPath> = None;
    loop {
        let rows = snap.opened_in_change(
            workspace,
            change,
            after.as_ref().map(keel_core::DepotPath::as_str),
            page,
        )?;
        let full = rows.len() == page;
        after = rows.last().map(|r| r.path.clone());
        each(rows)?;
        if !full {
            return Ok(());
        }
    }
}
