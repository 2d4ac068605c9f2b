//! The typemap (`keel typemap`): reading it, replacing it (super users), and the type it gives
//! a file added without `-t`.

use crate::{Caller, Service, ServiceError};
use keel_core::{TypemapLine, parse_typemap};

impl Service {
    /// The typemap, in table order.
    pub fn typemap(&self, caller: &Caller) -> Result<Vec<TypemapLine>, ServiceError> {
        self.touch_user(caller)?;
        Ok(self.meta.snapshot()?.typemap()?)
    }

    /// Replaces the typemap with the `TypeMap` form field's `lines`; a line that does not
    /// parse (an unknown type, a broken pattern) refuses the whole table, naming the line.
    pub fn save_typemap(
        &self,
        caller: &Caller,
        lines: &[String],
    ) -> Result<Vec<TypemapLine>, ServiceError> {
        self.check_table("typemap", lines)?;
        self.touch_user(caller)?;
        if !self.is_super(caller)? {
            return Err(ServiceError::TypemapNeedsSuper {
                user: caller.user.clone(),
            });
        }
        let table = parse_typemap(lines).map_err(|e| ServiceError::BadArgument {
            arg: e.text.clone(),
            reason: e.to_string(),
        })?;
        let saved = table.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.replace_typemap(&table).map_err(ServiceError::from)
        })?;
        Ok(saved)
    }
}
