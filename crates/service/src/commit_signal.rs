//! Who hears of each submit: the server registers one listener (it wakes the subscriptions
//! of `watch` and queues webhooks); a submit calls it after its transaction committed, so a
//! reader woken by it sees the change. A small change's paths come with it, so a subscriber
//! whose paths it does not touch need not read the store.

use keel_core::{ChangeNumber, DepotPath};
use std::sync::OnceLock;

/// The function told of every submitted change, once its commit is visible to readers, with
/// the change's files when it has at most `MAX_PATHS` (256) paths (`None` otherwise).
pub type CommitListener = Box<dyn Fn(ChangeNumber, Option<&[DepotPath]>) + Send + Sync>;

/// Most paths of a change the listener is given.
pub const MAX_PATHS: usize = 256;

/// The listener slot of a [`Service`](crate::Service): set once, at start-up.
#[derive(Default)]
pub(crate) struct CommitSignal {
    listener: OnceLock<CommitListener>,
}

impl CommitSignal {
    /// Registers `listener`; `false` when one already was (it stays).
    pub(crate) fn listen(&self, listener: CommitListener) -> bool {
        self.listener.set(listener).is_ok()
    }

    /// Tells the listener that `change` was submitted.
    pub(crate) fn committed(&self, change: ChangeNumber, paths: Option<&[DepotPath]>) {
        if let Some(listener) = self.listener.get() {
            listener(change, paths);
        }
    }
}

impl crate::Service {
    /// Calls `listener` after every submit commits, with the submitted change's number
    /// (`false` when a listener was already registered).
    pub fn on_commit(&self, listener: CommitListener) -> bool {
        self.commits.listen(listener)
    }
}
