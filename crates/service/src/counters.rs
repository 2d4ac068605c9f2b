//! `counter`/`counters` and `key`/`keys`: named values scripts keep on the server. Reading
//! needs list access, setting review access (keys can be hidden behind admin with the
//! `keys.hide` setting); the server's reserved counters need `-f` and super access, and the
//! `change` counter reads the newest change number and is never set. Every change is one
//! write job, so an increment reads and writes under the single writer: concurrent `-i`s
//! never hand out the same value.

use crate::access::Access;
use crate::paging::Cursor;
use crate::{Caller, CounterOpError, Service, ServiceError};
use keel_core::counter::{
    self, CHANGE_COUNTER, KEYS_HIDE, KeysHide, check_name, check_value, is_protected,
};
use keel_core::{CounterSpace, Right};
use keel_store::ReadTxn;

/// What `counter`/`key` does to a name besides reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterOp {
    /// Store this value.
    Set(String),
    /// Remove it (reads as 0 again).
    Delete,
    /// Add one to a numeric value (absent counts as 0).
    Increment,
    /// Store `to` only when the value is `from` now (absent counts as "0").
    CompareAndSet { from: String, to: String },
}

/// The outcome of a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterUpdate {
    pub name: String,
    /// The value now; `None` when deleted.
    pub value: Option<String>,
    /// The value before ("0" when it was not stored).
    pub previous: String,
}

/// The value of a name that is not stored.
const UNSET: &str = "0";

fn keys_hide(snap: &dyn ReadTxn) -> Result<KeysHide, ServiceError> {
    Ok(match snap.get_setting(KEYS_HIDE)? {
        None => KeysHide::default(),
        // A stored value no longer valid hides everything, so damage never opens keys.
        Some(text) => KeysHide::parse(&text).unwrap_or(KeysHide::HideAll),
    })
}

impl Service {
    /// Refuses a read (`write` false) or a change of `space` the caller may not make.
    fn counter_rights(
        &self,
        caller: &Caller,
        space: CounterSpace,
        write: bool,
        snap: &dyn ReadTxn,
    ) -> Result<Access, CounterOpError> {
        let access = Access::for_user(self.user_access(caller)?);
        let hide = match space {
            CounterSpace::Counter => KeysHide::Open,
            CounterSpace::Key => keys_hide(snap)?,
        };
        let needed = match (write, hide) {
            (false, KeysHide::Open) => Right::List,
            (false, _) => Right::Admin,
            (true, KeysHide::HideAll) => Right::Admin,
            (true, _) => Right::Review,
        };
        if !access.user.allows_anywhere(needed) {
            return Err(CounterOpError::Denied {
                space,
                what: if write { "setting" } else { "reading" },
                needed,
            });
        }
        Ok(access)
    }

    /// `counter NAME` / `key NAME`: the value, "0" when not stored.
    pub fn get_counter(
        &self,
        caller: &Caller,
        space: CounterSpace,
        name: &str,
    ) -> Result<String, CounterOpError> {
        self.touch_user(caller)?;
        check_name(space, name)?;
        let snap = self.meta.snapshot()?;
        self.counter_rights(caller, space, false, snap.as_ref())?;
        if space == CounterSpace::Counter && name == CHANGE_COUNTER {
            return Ok(snap.change_counter()?.0.to_string());
        }
        Ok(snap
            .get_counter(space, name)?
            .unwrap_or_else(|| UNSET.to_string()))
    }

    /// `counter NAME VALUE`, `-d`, `-i`, `--from/--to` (and the same for keys): one write job,
    /// so the value read and the value written belong to the same transaction.
    pub fn update_counter(
        &self,
        caller: &Caller,
        space: CounterSpace,
        name: &str,
        op: CounterOp,
        force: bool,
    ) -> Result<CounterUpdate, CounterOpError> {
        self.touch_user(caller)?;
        check_name(space, name)?;
        match &op {
            CounterOp::Set(value) => check_value(space, name, value)?,
            CounterOp::CompareAndSet { to, .. } => check_value(space, name, to)?,
            CounterOp::Delete | CounterOp::Increment => {}
        }
        {
            let snap = self.meta.snapshot()?;
            self.counter_rights(caller, space, true, snap.as_ref())?;
        }
        if space == CounterSpace::Counter {
            if name == CHANGE_COUNTER {
                return Err(CounterOpError::ChangeCounter);
            }
            if is_protected(name) {
                if !force {
                    return Err(CounterOpError::Protected {
                        name: name.to_string(),
                    });
                }
                if !self.is_super(caller)? {
                    return Err(CounterOpError::ForceNeedsSuper {
                        name: name.to_string(),
                    });
                }
            }
        }
        let name = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let stored = txn.get_counter(space, &name)?;
            let previous = stored.clone().unwrap_or_else(|| UNSET.to_string());
            let value = match op {
                CounterOp::Set(value) => Some(value),
                CounterOp::Delete => None,
                CounterOp::Increment => {
                    Some(counter::increment(space, &name, stored.as_deref())?.to_string())
                }
                CounterOp::CompareAndSet { from, to } => {
                    if previous != from {
                        return Err(CounterOpError::NotExpected {
                            space,
                            name,
                            expected: from,
                            actual: previous,
                        });
                    }
                    Some(to)
                }
            };
            match &value {
                Some(value) => txn.put_counter(space, &name, value)?,
                None => {
                    txn.delete_counter(space, &name)?;
                }
            }
            Ok(CounterUpdate {
                name,
                value,
                previous,
            })
        })
    }

    /// `counters [-e FILTER] [-m MAX]` / `keys`: stored names in name order (counters also
    /// list `change`), those matching `filter` (`*` wildcards), at most `max` (0: all).
    pub fn list_counters(
        &self,
        caller: &Caller,
        space: CounterSpace,
        filter: Option<&str>,
        max: usize,
        sink: &mut dyn FnMut(String, String) -> Result<(), ServiceError>,
    ) -> Result<(), CounterOpError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let access = self.counter_rights(caller, space, false, snap.as_ref())?;
        let wanted = |name: &str| filter.is_none_or(|f| counter::name_matches(f, name));
        let mut change = (space == CounterSpace::Counter && wanted(CHANGE_COUNTER))
            .then(|| snap.change_counter())
            .transpose()?;
        let mut sent = 0usize;
        let mut send = |name: String, value: String| -> Result<bool, ServiceError> {
            if max > 0 && sent >= max {
                return Ok(false);
            }
            access.result()?;
            sent += 1;
            sink(name, value)?;
            Ok(true)
        };
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.list_counters(space, after, page)?)),
            |row: &(String, String)| row.0.as_str(),
            page,
        );
        while let Some((name, value)) = cursor.next_row()? {
            access.scan()?;
            if change.is_some() && name.as_str() > CHANGE_COUNTER {
                let n = change.take().map_or(0, |c| c.0);
                if !send(CHANGE_COUNTER.to_string(), n.to_string())? {
                    return Ok(());
                }
            }
            if wanted(&name) && !send(name, value)? {
                return Ok(());
            }
        }
        if let Some(n) = change {
            send(CHANGE_COUNTER.to_string(), n.0.to_string())?;
        }
        Ok(())
    }
}
