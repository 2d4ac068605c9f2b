//! The webhooks table (`keel webhooks`, super users only) and what the server's dispatcher
//! reads and records: for each webhook, the next submitted change after the last one it
//! delivered that touches its path, and the outcome of each attempt.

use crate::args::FileArg;
use crate::watch::{Everything, WatchLimits, WatchedChange, changes_after, last_submitted};
use crate::{Caller, Service, ServiceError};
use keel_core::{ChangeNumber, Right, WebhookLine, parse_webhooks};
use keel_store::WebhookStateRow;

impl Service {
    fn check_super(&self, caller: &Caller, command: &'static str) -> Result<(), ServiceError> {
        if self.is_super(caller)? {
            Ok(())
        } else {
            Err(ServiceError::CommandDenied {
                command,
                needed: Right::Super,
            })
        }
    }

    /// The webhooks table with each webhook's delivery state (super users only).
    pub fn webhooks(
        &self,
        caller: &Caller,
    ) -> Result<Vec<(WebhookLine, WebhookStateRow)>, ServiceError> {
        self.touch_user(caller)?;
        self.check_super(caller, "webhooks")?;
        Ok(self.meta.snapshot()?.webhooks()?)
    }

    /// Replaces the webhooks table with `lines` (super users only); a line that does not
    /// parse refuses the whole table, naming the line and the token. A new webhook reports
    /// the changes submitted after this; one that keeps its name keeps its place.
    pub fn save_webhooks(
        &self,
        caller: &Caller,
        lines: &[String],
    ) -> Result<Vec<WebhookLine>, ServiceError> {
        self.check_table("webhooks", lines)?;
        self.touch_user(caller)?;
        self.check_super(caller, "webhooks -i")?;
        let table = parse_webhooks(lines).map_err(|e| ServiceError::BadArgument {
            arg: e.line.clone(),
            reason: e.to_string(),
        })?;
        let saved = table.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let start = last_submitted(&*txn)?;
            txn.replace_webhooks(&table, start)?;
            Ok::<_, ServiceError>(())
        })?;
        Ok(saved)
    }

    /// The table and states as the dispatcher reads them (the server itself, no caller).
    pub fn webhook_table(&self) -> Result<Vec<(WebhookLine, WebhookStateRow)>, ServiceError> {
        Ok(self.meta.snapshot()?.webhooks()?)
    }

    /// The first submitted change after `after` with a file `hook` matches, with those files
    /// (at most `max_files`).
    pub fn webhook_next(
        &self,
        hook: &WebhookLine,
        after: ChangeNumber,
        max_files: usize,
    ) -> Result<Option<WatchedChange>, ServiceError> {
        let snap = self.meta.snapshot()?;
        let arg = FileArg::parse(&hook.path, snap.as_ref(), None)?;
        let limits = WatchLimits {
            changes: 1,
            files: max_files,
        };
        let mut next = changes_after(
            snap.as_ref(),
            &Everything,
            std::slice::from_ref(&arg),
            after,
            limits,
            self.config.page_size,
        )?;
        Ok(next.pop())
    }

    /// Records the outcome of a delivery attempt.
    pub fn record_webhook(&self, name: &str, state: WebhookStateRow) -> Result<(), ServiceError> {
        let name = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.put_webhook_state(&name, &state)
                .map_err(ServiceError::from)
        })?;
        Ok(())
    }
}
