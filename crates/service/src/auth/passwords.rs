//! Passwords: stored only as argon2id hashes (PHC strings with their own salt and costs),
//! checked under the login limits and the hashing gate, and `passwd`, which sets or changes
//! one. The hash is of the password's MD5 (uppercase hex, `md5:` before the PHC string),
//! because that digest is all a P4 client sends for what its user typed: so a password set or
//! checked through either front end is the same password. Hashes made before (of the password
//! itself) are still checked, and replaced at the next login that matches.

use crate::{AuthError, Caller, Service};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use keel_core::{SecurityLevel, password_is_strong};

use super::settings::security_level;

/// What marks a stored hash as argon2id of the password's MD5 (the form a P4 client sends).
const MD5_SCHEME: &str = "md5:";

/// A password as a front end received it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordInput<'a> {
    /// The password as its user typed it (Keel's own clients).
    Typed(&'a str),
    /// The password's MD5 in hex, which is what a P4 client sends for what its user typed at
    /// a password prompt (`login`, `passwd`).
    Md5(&'a str),
}

impl PasswordInput<'_> {
    /// The password's MD5 in uppercase hex.
    pub fn md5(&self) -> String {
        match self {
            PasswordInput::Typed(p) => md5_upper(p),
            PasswordInput::Md5(d) => d.to_ascii_uppercase(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            PasswordInput::Typed(p) | PasswordInput::Md5(p) => p.is_empty(),
        }
    }
}

/// MD5 of `text` in uppercase hex.
fn md5_upper(text: &str) -> String {
    use md5::{Digest, Md5};
    hex::encode_upper(Md5::digest(text.as_bytes()))
}

/// Whether `stored` predates the MD5 form (a hash of the password itself), so a login that
/// matches it replaces it.
pub(crate) fn predates_md5_form(stored: &str) -> bool {
    !stored.starts_with(MD5_SCHEME)
}

impl Service {
    /// The stored form of `password`: the argon2id hash of its MD5 with a fresh random salt,
    /// at the configured cost, through the hashing gate.
    pub(crate) fn hash_password(&self, password: PasswordInput<'_>) -> Result<String, AuthError> {
        let _permit = self.hashes.enter().map_err(|_| AuthError::Busy)?;
        Ok(format!(
            "{MD5_SCHEME}{}",
            self.hash_ungated(&password.md5())?
        ))
    }

    fn hash_ungated(&self, password: &str) -> Result<String, AuthError> {
        let internal = |what: &str, e: &dyn std::fmt::Display| AuthError::Internal {
            reason: format!("{what}: {e}"),
        };
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|e| internal("no random bytes for a salt", &e))?;
        let salt = SaltString::encode_b64(&salt).map_err(|e| internal("salt", &e))?;
        let params = Params::new(
            self.config.password_hash_kib,
            self.config.password_hash_passes,
            1,
            None,
        )
        .map_err(|e| internal("password hash parameters", &e))?;
        Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| internal("hashing a password", &e))
    }

    /// A stand-in hash at the configured cost (of a random password nobody knows), checked
    /// for a user without a stored hash so that its answer takes as long as a wrong
    /// password's. Made once, by the first check that needs it (under its permit).
    fn stand_in_hash(&self) -> Result<&str, AuthError> {
        if let Some(hash) = self.stand_in_hash.get() {
            return Ok(hash.as_str());
        }
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| AuthError::Internal {
            reason: format!("no random bytes for a stand-in password: {e}"),
        })?;
        let hash = self.hash_ungated(&hex::encode(secret))?;
        Ok(self.stand_in_hash.get_or_init(|| hash).as_str())
    }

    /// Whether `password` matches a stored hash (whose own parameters are used). A hash of
    /// the older form (of the password itself) matches the password typed, or the MD5 a P4
    /// client sent when that MD5 is what was hashed (a password once set through a P4 client).
    pub(crate) fn password_matches(stored: &str, password: PasswordInput<'_>) -> bool {
        let verify = |phc: &str, secret: &str| {
            PasswordHash::new(phc).is_ok_and(|h| {
                Argon2::default()
                    .verify_password(secret.as_bytes(), &h)
                    .is_ok()
            })
        };
        match (stored.strip_prefix(MD5_SCHEME), password) {
            (Some(phc), _) => verify(phc, &password.md5()),
            (None, PasswordInput::Typed(p)) => verify(stored, p),
            (None, PasswordInput::Md5(d)) => verify(stored, &d.to_ascii_uppercase()),
        }
    }

    /// Checks `password` for `user` (whose stored hash is `stored`; `None` for a user
    /// without a password or not on record): the attempt is counted against the limits of
    /// the user from the caller's address and of the address before any hash, and the hash
    /// runs under the hashing gate. A user without a stored hash costs the same hash and
    /// counts the same; at `level` 3 and above (where nobody may list users without logging
    /// in) the answer is also the same as for a wrong password.
    pub(crate) fn check_password(
        &self,
        caller: &Caller,
        user: &str,
        stored: Option<&str>,
        password: PasswordInput<'_>,
        level: SecurityLevel,
    ) -> Result<(), AuthError> {
        let now = self.now();
        let attempt = self
            .limiter
            .reserve(user, caller.address, now)
            .map_err(|l| {
                self.hashes.limited();
                tracing::info!(
                    user,
                    address = ?caller.address,
                    who = l.who.as_str(),
                    "login refused by the limits"
                );
                AuthError::RateLimited {
                    who: l.who,
                    retry_after_secs: l.retry_after_secs,
                }
            })?;
        let Ok(permit) = self.hashes.enter() else {
            attempt.release();
            return Err(AuthError::Busy);
        };
        let matched = match stored {
            Some(stored) => Self::password_matches(stored, password),
            None => {
                let stand_in = self.stand_in_hash()?;
                let _ = Self::password_matches(stand_in, password);
                false
            }
        };
        self.hashes.counted();
        drop(permit);
        if matched {
            attempt.succeeded();
            return Ok(());
        }
        attempt.failed();
        tracing::info!(user, address = ?caller.address, "failed password");
        if stored.is_none() && !level.tickets_for_everyone() {
            return Err(AuthError::NoPassword {
                user: user.to_string(),
            });
        }
        if let (Some(stored), PasswordInput::Md5(_)) = (stored, password)
            && predates_md5_form(stored)
        {
            return Err(AuthError::PasswordPredatesDigests {
                user: user.to_string(),
            });
        }
        Err(AuthError::PasswordInvalid {
            user: user.to_string(),
        })
    }

    /// `passwd [USER]`: sets `user`'s password (the caller's own when `None`). Changing one's
    /// own password needs the old one when one is set; another user's needs a super user.
    /// Every ticket of the user is invalidated. An empty `new` removes the password, which
    /// only security level 0 allows.
    pub fn set_password(
        &self,
        caller: &Caller,
        user: Option<&str>,
        old: &str,
        new: &str,
    ) -> Result<(), AuthError> {
        self.set_password_from(
            caller,
            user,
            PasswordInput::Typed(old),
            PasswordInput::Typed(new),
        )
    }

    /// `passwd` with the passwords as a front end received them. A new password received
    /// only as its MD5 (from a P4 client) is stored as one typed would be; where the security
    /// level requires strong passwords it is refused, since a digest's strength cannot be
    /// checked.
    pub fn set_password_from(
        &self,
        caller: &Caller,
        user: Option<&str>,
        old: PasswordInput<'_>,
        new: PasswordInput<'_>,
    ) -> Result<(), AuthError> {
        self.touch_user(caller)?;
        let target = user.unwrap_or(&caller.user).to_string();
        let snap = self.meta.snapshot()?;
        let level = security_level(snap.as_ref())?;
        let row = snap
            .get_user(&target)?
            .ok_or_else(|| AuthError::NoSuchUser {
                user: target.clone(),
            })?;
        drop(snap);
        if target != caller.user {
            if !self.is_super(caller)? {
                return Err(AuthError::OtherUser {
                    caller: caller.user.clone(),
                    user: target,
                    what: "set the password of",
                });
            }
        } else if let Some(stored) = &row.password_hash {
            self.check_password(caller, &target, Some(stored), old, level)?;
        }
        if new.is_empty() && level.number() > 0 {
            return Err(AuthError::PasswordRequired {
                user: target,
                level: level.number(),
            });
        }
        if !new.is_empty() && level.requires_strong_passwords() {
            match new {
                PasswordInput::Typed(p) if !password_is_strong(p) => {
                    return Err(AuthError::WeakPassword {
                        user: target,
                        level: level.number(),
                    });
                }
                PasswordInput::Typed(_) => {}
                PasswordInput::Md5(_) => {
                    return Err(AuthError::DigestStrengthUnknown {
                        user: target,
                        level: level.number(),
                    });
                }
            }
        }
        let hash = if new.is_empty() {
            None
        } else {
            Some(self.hash_password(new)?)
        };
        // A new password replaces the P4 verifier; none (or the setting off) drops it.
        let verifier = self.p4_verifier(&target, new)?;
        let now = self.now();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let mut row = txn
                .get_user(&target)?
                .ok_or_else(|| AuthError::NoSuchUser {
                    user: target.clone(),
                })?;
            row.password_hash = hash;
            row.p4_digest = verifier;
            row.updated = now;
            txn.put_user(&row)?;
            txn.delete_tickets_of(&target, now)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cheap argon2id PHC string of `secret`, for the tests.
    fn phc(secret: &str) -> String {
        let params = Params::new(64, 1, 1, None).expect("params");
        let salt = SaltString::encode_b64(&[7u8; 16]).expect("salt");
        Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
            .hash_password(secret.as_bytes(), &salt)
            .expect("hash")
            .to_string()
    }

    #[test]
    fn the_md5_form_matches_the_typed_password_and_a_p4_clients_digest_of_it() {
        let digest = md5_upper("Secret-pass1");
        let stored = format!("{MD5_SCHEME}{}", phc(&digest));
        assert!(!predates_md5_form(&stored));
        for input in [
            PasswordInput::Typed("Secret-pass1"),
            PasswordInput::Md5(&digest),
            PasswordInput::Md5(&digest.to_ascii_lowercase()),
        ] {
            assert!(Service::password_matches(&stored, input), "{input:?}");
        }
        let other = md5_upper("secret-pass1");
        assert!(!Service::password_matches(
            &stored,
            PasswordInput::Md5(&other)
        ));
        assert!(!Service::password_matches(
            &stored,
            PasswordInput::Typed(&digest)
        ));
        // The older forms: of the password itself (set natively) takes only the typed
        // password; of its MD5 (set through a P4 client) takes only the digest.
        let typed_form = phc("Secret-pass1");
        assert!(predates_md5_form(&typed_form));
        assert!(Service::password_matches(
            &typed_form,
            PasswordInput::Typed("Secret-pass1")
        ));
        assert!(!Service::password_matches(
            &typed_form,
            PasswordInput::Md5(&digest)
        ));
        let digest_form = phc(&digest);
        assert!(Service::password_matches(
            &digest_form,
            PasswordInput::Md5(&digest)
        ));
        assert!(!Service::password_matches(
            &digest_form,
            PasswordInput::Typed("Secret-pass1")
        ));
    }

    #[test]
    fn hashes_verify_and_never_contain_the_password() {
        let stored = phc("Secret-pass1");
        assert!(stored.starts_with("$argon2id$"));
        assert!(!stored.contains("Secret-pass1"));
        let typed = PasswordInput::Typed;
        assert!(Service::password_matches(&stored, typed("Secret-pass1")));
        assert!(!Service::password_matches(&stored, typed("secret-pass1")));
        assert!(!Service::password_matches(
            "not a hash",
            typed("Secret-pass1")
        ));
    }
}
