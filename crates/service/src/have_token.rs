//! `HaveIfChanged`: the workspace's have list, only what changed in it, or word that the
//! client's copy is current.
//!
//! A token is `UID.COUNTER.CONTEXT`: the have list's generation (`keel_store::HaveGeneration`,
//! which moves with every write of its entries) and a hash of everything else the answer
//! depends on: the workspace and its view (each record's client file), the store's
//! `revisions_removed` counter (an obliterate may drop a have revision's record), the
//! protections' version (what the caller may list) and who asks from where (protections match
//! user, groups and address). With the same context, a client at an older counter of the same
//! generation gets a delta: each path written since, as its entry is now.
//!
//! Races: the context and the generation are read before the records are, so the records sent
//! are never older than the token says. A write that lands while they are sent is at worst
//! sent again next time, and every record is a whole entry, so applying it twice is harmless.

use crate::fileinfo::set_head;
use crate::records::FileInfo;
use crate::{Caller, Service, ServiceError};
use keel_store::HaveDelta;

/// What `have_if_changed` sends, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum HavePart {
    /// What follows is a delta (sent before its first record, even when it has none).
    Delta,
    File(Box<FileInfo>),
}

/// How `have_if_changed` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HaveListing {
    /// The client's token is current: nothing was sent.
    Unchanged,
    /// The whole list was sent; this token names it.
    Sent { token: String },
    /// Only the files written since the client's token were sent (have_rev 0: gone); this
    /// token names the list with them applied.
    Delta { token: String },
}

/// A token taken apart.
struct Token<'a> {
    uid: &'a str,
    counter: u64,
    context: &'a str,
}

impl<'a> Token<'a> {
    fn parse(text: &'a str) -> Option<Token<'a>> {
        let mut parts = text.splitn(3, '.');
        Some(Token {
            uid: parts.next()?,
            counter: parts.next()?.parse().ok()?,
            context: parts.next()?,
        })
    }
}

impl Service {
    /// The caller's workspace's have list through `sink` (whole, or what changed since
    /// `token`), unless `token` says the caller holds it already.
    pub fn have_if_changed(
        &self,
        caller: &Caller,
        token: &str,
        sink: &mut dyn FnMut(HavePart) -> Result<(), ServiceError>,
    ) -> Result<HaveListing, ServiceError> {
        self.touch_user(caller)?;
        let context = {
            let snap = self.meta.snapshot()?;
            let ws = self.caller_workspace(snap.as_ref(), caller)?;
            let mut hasher = blake3::Hasher::new();
            let mut put = |part: &[u8]| {
                hasher.update(&(part.len() as u64).to_le_bytes());
                hasher.update(part);
            };
            put(ws.name().as_bytes());
            put(ws.row.view.join("\n").as_bytes());
            put(&snap.revisions_removed()?.to_le_bytes());
            put(&snap.access_version()?.to_le_bytes());
            put(caller.user.as_bytes());
            put(caller.host.as_bytes());
            put(caller
                .address
                .map(|a| a.to_string())
                .unwrap_or_default()
                .as_bytes());
            (hasher.finalize().to_hex()[..32].to_string(), ws.row.name)
        };
        let (context, workspace) = context;
        if let Some(held) = Token::parse(token).filter(|t| t.context == context) {
            let (now, delta) = self.have.delta_since(&workspace, held.uid, held.counter)?;
            let token = format!("{}.{}.{context}", now.uid, now.counter);
            match delta {
                HaveDelta::Current => return Ok(HaveListing::Unchanged),
                HaveDelta::Changed(rows) => {
                    sink(HavePart::Delta)?;
                    self.send_delta(caller, rows, &mut |f| sink(HavePart::File(Box::new(f))))?;
                    return Ok(HaveListing::Delta { token });
                }
                HaveDelta::Unknown => {}
            }
        }
        let now = self.have.generation(&workspace)?;
        self.have_list(caller, &[], &mut |f| sink(HavePart::File(Box::new(f))))?;
        Ok(HaveListing::Sent {
            token: format!("{}.{}.{context}", now.uid, now.counter),
        })
    }

    /// Each changed path's entry as `have` describes it, or with have_rev 0 when it is no
    /// longer in the have list or the caller may not list it.
    fn send_delta(
        &self,
        caller: &Caller,
        rows: Vec<(keel_core::DepotPath, Option<keel_store::HaveRow>)>,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        // Taken after the have rows were read: every revision they name is in it.
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        for (path, row) in rows {
            who.scan()?;
            let mut info = FileInfo::new(path.clone());
            info.client_file = ws.client_file(&path);
            if let Some(row) = row.filter(|_| who.lists(path.as_str())) {
                if let Some(rev) = snap.revision(&path, row.rev)? {
                    set_head(&mut info, &rev);
                }
                info.have_rev = row.rev;
            }
            sink(info)?;
        }
        Ok(())
    }
}
