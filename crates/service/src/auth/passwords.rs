//! Passwords: stored only as argon2id hashes (PHC strings with their own salt and costs),
//! checked under the login limits and the hashing gate, and `passwd`, which sets or changes
//! one.

use crate::{AuthError, Caller, Service};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use keel_core::{SecurityLevel, password_is_strong};

use super::settings::security_level;

impl Service {
    /// The argon2id hash of `password` with a fresh random salt, at the configured cost,
    /// through the hashing gate.
    pub(crate) fn hash_password(&self, password: &str) -> Result<String, AuthError> {
        let _permit = self.hashes.enter().map_err(|_| AuthError::Busy)?;
        self.hash_ungated(password)
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

    /// Whether `password` matches a stored hash (whose own parameters are used).
    pub(crate) fn password_matches(stored: &str, password: &str) -> bool {
        PasswordHash::new(stored).is_ok_and(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
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
        password: &str,
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
        if !new.is_empty() && level.requires_strong_passwords() && !password_is_strong(new) {
            return Err(AuthError::WeakPassword {
                user: target,
                level: level.number(),
            });
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

    #[test]
    fn hashes_verify_and_never_contain_the_password() {
        let stored = {
            let params = Params::new(64, 1, 1, None).expect("params");
            let salt = SaltString::encode_b64(&[7u8; 16]).expect("salt");
            Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
                .hash_password(b"Secret-pass1", &salt)
                .expect("hash")
                .to_string()
        };
        assert!(stored.starts_with("$argon2id$"));
        assert!(!stored.contains("Secret-pass1"));
        assert!(Service::password_matches(&stored, "Secret-pass1"));
        assert!(!Service::password_matches(&stored, "secret-pass1"));
        assert!(!Service::password_matches("not a hash", "Secret-pass1"));
    }
}
