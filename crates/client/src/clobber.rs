//! The sync's clobber check: may a writable file that is not opened be replaced?
//!
//! Only when no local work would be lost, that is when the file's content is the content of a
//! revision of the same depot file. With `allwrite` (or a `+w` type) every file a sync writes is
//! writable, and a sync that was cut off may have written a newer revision than its have list
//! records; by the next sync the head may have moved on again, so the file matches neither the
//! have nor the target revision. Comparing with every revision of the file recognises it: its
//! content is in the depot, so replacing it loses nothing.
//!
//! The checks go from cheap to dear, so a normal sync pays nothing extra: the target digest (in
//! the sync record), then the have revision's digest (also in the sync record, for files a
//! sync leaves writable; from a server that does not send it, one Have call per sync on the
//! first file that needs it), then the file's own revisions (one Files call per file, only for
//! files that failed both).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use keel_core::FileType;
use keel_proto::v1::{FilesRequest, SyncFile};

use crate::connect::Connection;
use crate::error::Result;
use crate::stream::collect;
use crate::transfer;
use crate::workspace::WorkspaceCtx;

/// The clobber check of one sync: remembers the have list's digests once it has read them.
#[derive(Default)]
pub struct ClobberCheck {
    /// Depot file → digest of its have revision, read on first need.
    have_digests: Option<HashMap<String, String>>,
}

impl ClobberCheck {
    /// True when the writable, unopened file at `local` may be replaced by (or, for a delete,
    /// removed for) `file`.
    pub async fn safe_to_overwrite(
        &mut self,
        conn: &Connection,
        ws: &WorkspaceCtx,
        file: &SyncFile,
        local: &Path,
    ) -> Result<bool> {
        let keywords = crate::keywords::form_of(&file.file_type);
        let Some(local_digest) = transfer::hash_local_as(local, keywords)? else {
            return Ok(true);
        };
        let same = |digest: &str| !digest.is_empty() && digest.eq_ignore_ascii_case(&local_digest);
        if same(&file.digest) {
            return Ok(true);
        }
        // Without allwrite or +w a sync leaves files read-only: a writable one was made so by
        // the user, and only the incoming content itself is safe to put over it.
        let synced_writable =
            ws.options.allwrite || FileType::parse(&file.file_type).is_ok_and(|t| t.writable);
        if !synced_writable {
            return Ok(false);
        }
        // The server names the have revision's digest for files a sync leaves writable.
        if !file.have_digest.is_empty() {
            if same(&file.have_digest) {
                return Ok(true);
            }
        } else if self.have_digests.is_none() {
            let records = ws.have(conn, Vec::new()).await?;
            self.have_digests = Some(
                records
                    .into_iter()
                    .map(|r| (r.depot_file, r.head_digest))
                    .collect(),
            );
        }
        if file.have_digest.is_empty() {
            let have = self
                .have_digests
                .as_ref()
                .and_then(|m| m.get(&file.depot_file));
            if have.is_some_and(|d| same(d)) {
                return Ok(true);
            }
        }
        Ok(revision_digests(conn, &file.depot_file)
            .await?
            .iter()
            .any(|d| same(d)))
    }
}

/// The content digests of every revision of `depot_file` (none when it no longer exists).
async fn revision_digests(conn: &Connection, depot_file: &str) -> Result<HashSet<String>> {
    let reply = conn
        .client()
        .files(FilesRequest {
            caller: conn.caller(),
            files: vec![depot_file.to_string()],
            all_revisions: true,
            ..Default::default()
        })
        .await;
    let records = match reply {
        Ok(stream) => collect(conn, stream.into_inner()).await,
        Err(status) => Err(conn.status(status)),
    };
    match records {
        Ok(records) => Ok(records.into_iter().map(|r| r.head_digest).collect()),
        // Obliterated meanwhile: no revision vouches for the file.
        Err(e) if e.code() == Some(tonic::Code::NotFound) => Ok(HashSet::new()),
        Err(e) => Err(e),
    }
}
