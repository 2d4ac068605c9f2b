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
