//! Password verifiers for P4 clients whose `P4PASSWD` holds the password itself (the server
//! setting `p4_password_digests`, off by default). Such a client answers the challenge with
//! `MD5(token + MD5(password))`, so recognising it needs `MD5(password)`, which argon2 cannot
//! give back. With the setting on, the service keeps that MD5 per user (`UserRow::p4_digest`),
//! sealed with ChaCha20-Poly1305 under a key in `ROOT/p4/password.key` (mode 0600, never in the
//! metadata, journal or checkpoints) and bound to the user's name: recorded when a password
//! is set or a login with it succeeds, replaced when it changes, dropped when it is removed,
//! and every verifier is dropped when the server starts with the setting off.

use crate::{AuthError, Caller, PasswordInput, Service};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use md5::{Digest, Md5};

/// Where the sealing key lives under the server root.
pub const KEY_FILE: &str = "p4/password.key";

/// Users whose verifiers are dropped per write when the setting is off.
const DROP_PAGE: usize = 500;

/// The key verifiers are sealed with.
pub(crate) struct DigestKey(ChaCha20Poly1305);

impl DigestKey {
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> DigestKey {
        DigestKey(ChaCha20Poly1305::new(Key::from_slice(&bytes)))
    }

    /// `digest` sealed for `user`: hex of a random nonce and the ciphertext.
    pub(crate) fn seal(&self, user: &str, digest: &str) -> Result<String, AuthError> {
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).map_err(|e| AuthError::Internal {
            reason: format!("no random bytes for a nonce: {e}"),
        })?;
        let sealed = self
            .0
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: digest.as_bytes(),
                    aad: user.as_bytes(),
                },
            )
            .map_err(|_| AuthError::Internal {
                reason: "sealing a password verifier failed".to_string(),
            })?;
        Ok(format!("{}{}", hex::encode(nonce), hex::encode(sealed)))
    }

    /// The digest sealed for `user`, or `None` when `sealed` is damaged, for another user or
    /// sealed with another key.
    pub(crate) fn open(&self, user: &str, sealed: &str) -> Option<String> {
        let bytes = hex::decode(sealed).ok()?;
        if bytes.len() < 12 {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let plain = self
            .0
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: user.as_bytes(),
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }
}

/// `MD5(password)` in uppercase hex, as a P4 client digests a password before answering;
/// like the client, a password that already is a digest (32 hex digits, which is what some
/// clients send for `login` and `passwd`) is taken as it is.
pub fn p4_password_md5(password: &str) -> String {
    if password.len() == 32 && password.bytes().all(|b| b.is_ascii_hexdigit()) {
        return password.to_ascii_uppercase();
    }
    hex::encode_upper(Md5::digest(password.as_bytes()))
}

/// The verifier's MD5 for a password as received: a P4 client's digest is the MD5 itself.
fn verifier_md5(password: PasswordInput<'_>) -> String {
    match password {
        PasswordInput::Typed(p) => p4_password_md5(p),
        PasswordInput::Md5(_) => password.md5(),
    }
}

impl Service {
    /// Turns `p4_password_digests` on (reading or making `ROOT/p4/password.key`) or off
    /// (dropping every stored verifier); called once at startup. Returns how many verifiers
    /// were dropped.
    pub fn set_p4_password_digests(&self, on: bool) -> Result<usize, AuthError> {
        if on {
            let path = self.root.join(KEY_FILE);
            let bytes =
                crate::load_or_create_key(&path, "P4 password verifier key").map_err(|e| {
                    AuthError::Internal {
                        reason: e.to_string(),
                    }
                })?;
            let _ = self.p4_digests.set(DigestKey::from_bytes(bytes));
            return Ok(0);
        }
        let mut dropped = 0;
        let mut after: Option<String> = None;
        for _ in 0..1_000_000 {
            let users = self
                .meta
                .snapshot()?
                .list_users(after.as_deref(), DROP_PAGE)?;
            let Some(last) = users.last() else { break };
            after = Some(last.name.clone());
            let names: Vec<String> = users
                .into_iter()
                .filter(|u| u.p4_digest.is_some())
                .map(|u| u.name)
                .collect();
            if names.is_empty() {
                continue;
            }
            dropped += keel_store::write(self.meta.as_ref(), move |txn| {
                let mut n = 0;
                for name in &names {
                    if let Some(mut row) = txn.get_user(name)?
                        && row.p4_digest.is_some()
                    {
                        row.p4_digest = None;
                        txn.put_user(&row)?;
                        n += 1;
                    }
                }
                Ok::<_, AuthError>(n)
            })?;
        }
        if dropped > 0 {
            tracing::info!(
                dropped,
                "p4_password_digests is off: dropped stored verifiers"
            );
        }
        Ok(dropped)
    }

    /// The sealed verifier to store for `user` whose password is now `password`: `None` when
    /// the setting is off or the password is empty.
    pub(crate) fn p4_verifier(
        &self,
        user: &str,
        password: PasswordInput<'_>,
    ) -> Result<Option<String>, AuthError> {
        match self.p4_digests.get() {
            Some(key) if !password.is_empty() => key.seal(user, &verifier_md5(password)).map(Some),
            _ => Ok(None),
        }
    }

    /// Records `password`'s verifier for `user` after a successful login, unless the one
    /// stored (`stored`) already holds it.
    pub(crate) fn record_p4_verifier(
        &self,
        user: &str,
        stored: Option<&str>,
        password: PasswordInput<'_>,
    ) -> Result<(), AuthError> {
        let Some(key) = self.p4_digests.get() else {
            return Ok(());
        };
        let digest = verifier_md5(password);
        if stored.and_then(|s| key.open(user, s)).as_deref() == Some(digest.as_str()) {
            return Ok(());
        }
        let sealed = key.seal(user, &digest)?;
        let user = user.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            if let Some(mut row) = txn.get_user(&user)? {
                row.p4_digest = Some(sealed);
                txn.put_user(&row)?;
            }
            Ok::<_, AuthError>(())
        })
    }

    /// Whether a P4 client's `login` can be challenged for `user`'s password: the setting is
    /// on and the user has a password and a verifier of it (so the answer can be checked
    /// without the client sending the password's MD5 itself).
    pub fn p4_login_challenge_ready(&self, user: &str) -> Result<bool, AuthError> {
        let Some(key) = self.p4_digests.get() else {
            return Ok(false);
        };
        let row = self.meta.snapshot()?.get_user(user)?;
        Ok(row
            .filter(|r| r.password_hash.is_some())
            .and_then(|r| r.p4_digest)
            .is_some_and(|sealed| key.open(user, &sealed).is_some()))
    }

    /// Lets the caller in on a P4 answer made from the password itself: `proves` is told the
    /// user's `MD5(password)` (uppercase hex) and says whether the answer matches it. Refused
    /// with `P4DigestsOff` when the setting is off, `TicketInvalid` when the user has no
    /// verifier or the answer does not match (a failure counted like a wrong password).
    pub fn prove_p4_password(
        &self,
        caller: &Caller,
        server: &str,
        proves: &mut dyn FnMut(&str) -> bool,
    ) -> Result<(), AuthError> {
        let Some(key) = self.p4_digests.get() else {
            return Err(AuthError::P4DigestsOff {
                user: caller.user.clone(),
            });
        };
        let invalid = || AuthError::TicketInvalid {
            user: caller.user.clone(),
            server: server.to_string(),
        };
        let now = self.now();
        let attempt = self
            .limiter
            .reserve(&caller.user, caller.address, now)
            .map_err(|l| AuthError::RateLimited {
                who: l.who,
                retry_after_secs: l.retry_after_secs,
            })?;
        let row = self.meta.snapshot()?.get_user(&caller.user)?;
        let digest = row
            .filter(|r| r.password_hash.is_some())
            .and_then(|r| r.p4_digest)
            .and_then(|sealed| key.open(&caller.user, &sealed));
        match digest {
            Some(d) if proves(&d) => {
                attempt.succeeded();
                Ok(())
            }
            _ => {
                attempt.failed();
                Err(invalid())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_verifiers_open_only_for_their_user_and_key() {
        let key = DigestKey::from_bytes([5; 32]);
        let digest = p4_password_md5("Secret-1");
        assert_eq!(digest.len(), 32);
        let sealed = key.seal("alice", &digest).expect("sealed");
        assert!(!sealed.to_uppercase().contains(&digest));
        assert_eq!(key.open("alice", &sealed).as_deref(), Some(digest.as_str()));
        assert_eq!(key.open("bob", &sealed), None);
        assert_eq!(DigestKey::from_bytes([6; 32]).open("alice", &sealed), None);
        assert_eq!(key.open("alice", "zz"), None);
        assert_ne!(key.seal("alice", &digest).expect("sealed"), sealed);
    }
}
