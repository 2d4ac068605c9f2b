//! `content`: one stored blob by digest, for replicas and caching proxies.
//!
//! A digest is only a name: who may fetch it is decided by the files that hold it. Super
//! users and service users whose type a super user set (replicas, proxies) may fetch any; everyone else only the content of a
//! revision or shelved file they may read: the one the request names (one point read), else
//! one found through the digest indexes (content-owning revisions and shelved files; lazy
//! copies, such as a branch's files, are found only when named).

use crate::{Caller, Service, ServiceError};
use keel_blob::StoredBlob;
use keel_core::{DepotPath, Digest, Right, UserType};

/// The file revision a content request says the digest is the content of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentOf {
    pub depot_file: String,
    pub rev: u32,
}

impl Service {
    /// Opens the stored blob `digest` names (its stored form: raw or one zstd frame), once
    /// the caller may read it (see the module's rules); `of` names the revision it is for.
    pub fn content(
        &self,
        caller: &Caller,
        digest: &str,
        of: Option<&ContentOf>,
    ) -> Result<StoredBlob, ServiceError> {
        self.touch_user(caller)?;
        let parsed = Digest::from_hex(digest).map_err(|e| ServiceError::BadArgument {
            arg: digest.to_string(),
            reason: e.to_string(),
        })?;
        self.check_content_access(caller, &parsed, of)?;
        self.blobs
            .open(&parsed)
            .map_err(ServiceError::opening(|| digest.to_string()))?
            .ok_or(ServiceError::NoSuchContent { digest: parsed })
    }

    fn check_content_access(
        &self,
        caller: &Caller,
        digest: &Digest,
        of: Option<&ContentOf>,
    ) -> Result<(), ServiceError> {
        let who = self.access_of(caller)?;
        if who.user.unrestricted() || who.user.allows_anywhere(Right::Super) {
            return Ok(());
        }
        let snap = self.meta.snapshot()?;
        // A service type counts only when a super user set it (`UserRow::effective_type`).
        let user = snap.get_user(&caller.user)?;
        if user
            .as_ref()
            .is_some_and(|u| u.effective_type() == UserType::Service)
        {
            return Ok(());
        }
        if user
            .as_ref()
            .is_some_and(|u| u.user_type == UserType::Service)
        {
            tracing::warn!(
                user = %caller.user,
                "Type service was not set by a super user, so it grants nothing; a super \
                 user confirms it by saving the spec (user -f -i)"
            );
        }
        if let Some(of) = of
            && let Ok(path) = DepotPath::parse(&of.depot_file)
            && who.user.allows(Right::Read, path.as_str())
            && snap
                .revision(&path, of.rev)?
                .is_some_and(|r| r.digest.as_ref() == Some(digest))
        {
            return Ok(());
        }
        let paths = snap.digest_paths(digest, self.config.page_size.max(1))?;
        if paths.iter().any(|p| who.user.allows(Right::Read, p)) {
            return Ok(());
        }
        tracing::info!(user = %caller.user, %digest, "content by digest refused by protections");
        Err(ServiceError::ContentDenied { digest: *digest })
    }
}
