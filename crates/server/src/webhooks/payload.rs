//! The JSON a webhook receives for one submitted change, shaped like a code host's push
//! event (one change, its files, a link back), and its signature header.

use keel_service::WatchedChange;
use ring::hmac;
use serde_json::{Value, json};

/// The body posted for `watched` by webhook `name` of server `server` (its address).
pub(crate) fn body(name: &str, server: &str, watched: &WatchedChange) -> Vec<u8> {
    let c = &watched.change;
    let files: Vec<Value> = watched
        .files
        .iter()
        .map(|f| {
            json!({
                "depotFile": f.depot_file.as_str(),
                "rev": f.head_rev,
                "action": f.action.or(f.head_action).map_or("", |a| a.as_str()),
                "type": f.head_type.as_ref().map(|t| t.to_string()).unwrap_or_default(),
                "digest": f.head_digest.map(|d| d.to_string()).unwrap_or_default(),
                "fileSize": f.head_size,
            })
        })
        .collect();
    let payload = json!({
        "event": "change-submitted",
        "webhook": name,
        "delivery": delivery_id(name, c.change.0),
        "server": server,
        "change": {
            "number": c.change.0,
            "user": c.user,
            "workspace": c.workspace,
            "description": c.description,
            "time": c.time,
            "url": format!("keel://{server}/changes/{}", c.change.0),
        },
        "files": files,
        "moreFiles": watched.more_files,
    });
    serde_json::to_vec(&payload).expect("a JSON value always serializes")
}

/// Names one delivery: the same for every retry of it, so a receiver can drop repeats.
pub(crate) fn delivery_id(name: &str, change: u64) -> String {
    format!("{name}-{change}")
}

/// `sha256=HEX` of the body's HMAC-SHA256 under `secret` (`X-Keel-Signature`).
pub(crate) fn signature(secret: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(hmac::sign(&key, body).as_ref()))
}

#[cfg(test)]
mod tests {
    /// RFC 4231 test case 2.
    #[test]
    fn signature_is_hmac_sha256_in_hex() {
        assert_eq!(
            super::signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
