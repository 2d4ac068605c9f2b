//! `content`: one stored blob by digest, for caching proxies.

use crate::{Caller, Service, ServiceError};
use keel_blob::StoredBlob;
use keel_core::Digest;

impl Service {
    /// Opens the stored blob `digest` names (its stored form: raw or one zstd frame).
    ///
    /// Anyone may ask: digests are unguessable names of content some revision or shelved file
    /// holds. Access control must check that the caller may read one of those revisions.
    pub fn content(&self, caller: &Caller, digest: &str) -> Result<StoredBlob, ServiceError> {
        self.touch_user(caller)?;
        let parsed = Digest::from_hex(digest).map_err(|e| ServiceError::BadArgument {
            arg: digest.to_string(),
            reason: e.to_string(),
        })?;
        self.blobs
            .open(&parsed)
            .map_err(ServiceError::opening(|| digest.to_string()))?
            .ok_or(ServiceError::NoSuchContent { digest: parsed })
    }
}
