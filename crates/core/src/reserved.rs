//! File names Keel keeps for itself in a workspace: no depot file may have one as its last
//! path component, and the client never writes one from the server's data.
//!
//! A `.keel` file holds the client's settings (server address, user) and is read from the
//! working directory and every directory above it, so a synced one would redirect the
//! user's next command; `.keel-state` and `.keel-have` are the client's caches of a workspace
//! and `.keel_tickets` its login tickets.

/// The reserved names: the client's settings file (`keel_client::config::CONFIG_FILE_NAME`),
/// state file, have cache and tickets file.
pub const RESERVED_FILE_NAMES: &[&str] = &[".keel", ".keel-state", ".keel-have", ".keel_tickets"];

/// The reserved name a `/`-separated path (depot, workspace or local) ends in, if any.
pub fn reserved_name(path: &str) -> Option<&'static str> {
    let last = path.rsplit('/').next().unwrap_or(path);
    RESERVED_FILE_NAMES.iter().copied().find(|n| *n == last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_component_counts() {
        for (path, reserved) in [
            ("//depot/.keel", Some(".keel")),
            ("//depot/sub/dir/.keel-state", Some(".keel-state")),
            ("//ws/.keel-have", Some(".keel-have")),
            (".keel_tickets", Some(".keel_tickets")),
            ("//depot/.keel/file", None),
            ("//depot/.keelrc", None),
            ("//depot/x.keel", None),
            ("//depot/.keel-tmp-1", None),
            ("//depot/.KEEL", None),
        ] {
            assert_eq!(reserved_name(path), reserved, "{path}");
        }
    }
}
