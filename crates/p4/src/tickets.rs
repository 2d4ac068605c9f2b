//! P4 tickets and the challenge that proves one. A P4 client keeps a 32-hex-digit ticket and
//! never sends it: asked with a random token, it answers `MD5(MD5(token + ticket) + daddr)`
//! (uppercase hex; `daddr` is the server's address as the client's socket sees it). So the
//! server must be able to recompute the ticket: it derives it, with a key of its own, from the
//! stored id (hash) of one of Keel's tickets. The key lives in a file under the root, never in
//! the metadata, so a copy of the database or a checkpoint gives no usable P4 ticket.

use md5::{Digest, Md5};
use std::path::Path;

/// Where the key lives under the server root.
pub const KEY_FILE: &str = "p4/ticket.key";

/// The key P4 tickets are derived with.
#[derive(Clone)]
pub struct TicketKey([u8; 32]);

impl std::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TicketKey(..)")
    }
}

/// Why the key cannot be read or made.
pub use keel_service::KeyFileError as KeyError;

impl TicketKey {
    /// A key from its bytes (tests).
    pub fn from_bytes(bytes: [u8; 32]) -> TicketKey {
        TicketKey(bytes)
    }

    /// The key under `root`, made (random, readable by the owner only) on first use.
    pub fn load_or_create(root: &Path) -> Result<TicketKey, KeyError> {
        keel_service::load_or_create_key(&root.join(KEY_FILE), "P4 ticket key").map(TicketKey)
    }

    /// The P4 ticket of the Keel ticket stored under `id`: 32 uppercase hex digits.
    pub fn ticket(&self, id: &[u8; 32]) -> String {
        let derived = blake3::keyed_hash(&self.0, id);
        hex::encode_upper(&derived.as_bytes()[..16])
    }
}

/// `MD5` of `parts`, in uppercase hex (how the client digests).
pub fn md5_hex(parts: &[&[u8]]) -> String {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    hex::encode_upper(h.finalize())
}

/// The answer a client holding `ticket` gives to `token` (with `daddr` when the client names
/// the server's address, as clients at protocol level 29 and later do).
pub fn expected_answer(token: &str, ticket: &str, daddr: Option<&str>) -> String {
    let inner = md5_hex(&[token.as_bytes(), ticket.as_bytes()]);
    match daddr {
        Some(addr) => md5_hex(&[inner.as_bytes(), addr.as_bytes()]),
        None => inner,
    }
}

/// A fresh random challenge token (32 hex digits).
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(hex::encode_upper(bytes))
}

/// Compares two answers in time independent of where they differ.
pub fn same_answer(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| {
            acc | (x.to_ascii_uppercase() ^ y.to_ascii_uppercase())
        }) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_tickets_look_like_client_digests_and_differ_by_key() {
        let a = TicketKey::from_bytes([1; 32]);
        let b = TicketKey::from_bytes([2; 32]);
        let t = a.ticket(&[7; 32]);
        assert_eq!(t.len(), 32);
        assert!(
            t.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
        );
        assert_eq!(t, a.ticket(&[7; 32]));
        assert_ne!(t, b.ticket(&[7; 32]));
        assert_ne!(t, a.ticket(&[8; 32]));
    }

    #[test]
    fn answer_is_md5_of_md5_and_address() {
        // MD5("") = D41D8CD98F00B204E9800998ECF8427E.
        assert_eq!(md5_hex(&[]), "D41D8CD98F00B204E9800998ECF8427E");
        let inner = md5_hex(&[b"TOKEN", b"TICKET"]);
        assert_eq!(expected_answer("TOKEN", "TICKET", None), inner);
        assert_eq!(
            expected_answer("TOKEN", "TICKET", Some("127.0.0.1:1666")),
            md5_hex(&[inner.as_bytes(), b"127.0.0.1:1666"])
        );
        assert!(same_answer("abc0", "ABC0"));
        assert!(!same_answer("abc0", "abc1"));
        assert!(!same_answer("abc", "abc0"));
    }

    #[test]
    fn key_file_is_made_once_and_read_back() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join("root");
        let first = TicketKey::load_or_create(&dir).expect("made");
        let again = TicketKey::load_or_create(&dir).expect("read");
        assert_eq!(first.ticket(&[3; 32]), again.ticket(&[3; 32]));
        std::fs::write(dir.join(KEY_FILE), "not hex").expect("damage");
        assert!(matches!(
            TicketKey::load_or_create(&dir),
            Err(KeyError::Damaged { .. })
        ));
    }
}
