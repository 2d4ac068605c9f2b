//! `HaveIfChanged`: the workspace's whole have list, or word that the client's copy is current.
//!
//! The token names everything the whole-workspace `have` answer depends on: the have list's
//! generation (its entries), the store's `revisions_removed` counter (an obliterate may drop a
//! have revision's record), the protections' version (what the caller may list), the
//! workspace's view (each record's client file), and who asks from where (protections match
//! user, groups and address). It is read before the list is, so a list sent with a token is
//! never older than the token says; a write racing the reply only makes the next call send
//! the list again.

use crate::context::caller_workspace;
use crate::records::FileInfo;
use crate::{Caller, Service, ServiceError};

/// How `have_if_changed` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HaveListing {
    /// The client's token is current: nothing was sent.
    Unchanged,
    /// The whole list was sent; this token names it.
    Sent { token: String },
}

impl Service {
    /// The caller's workspace's have list through `sink`, unless `token` says the caller holds
    /// it already.
    pub fn have_if_changed(
        &self,
        caller: &Caller,
        token: &str,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<HaveListing, ServiceError> {
        let current = self.have_token(caller)?;
        if !token.is_empty() && token == current {
            return Ok(HaveListing::Unchanged);
        }
        self.have_list(caller, &[], sink)?;
        Ok(HaveListing::Sent { token: current })
    }

    /// The token the caller's whole have list has now.
    fn have_token(&self, caller: &Caller) -> Result<String, ServiceError> {
        let snap = self.meta.snapshot()?;
        let ws = caller_workspace(snap.as_ref(), caller)?;
        let generation = self.have.generation(ws.name())?;
        let mut hasher = blake3::Hasher::new();
        let mut put = |part: &[u8]| {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        };
        put(ws.name().as_bytes());
        put(generation.uid.as_bytes());
        put(&generation.counter.to_le_bytes());
        put(&snap.revisions_removed()?.to_le_bytes());
        put(&snap.access_version()?.to_le_bytes());
        put(ws.row.view.join("\n").as_bytes());
        put(caller.user.as_bytes());
        put(caller.host.as_bytes());
        put(caller
            .address
            .map(|a| a.to_string())
            .unwrap_or_default()
            .as_bytes());
        Ok(hasher.finalize().to_hex()[..32].to_string())
    }
}
