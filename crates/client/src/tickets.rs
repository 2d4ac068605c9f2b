//! The tickets file, like P4TICKETS: one `SERVER=USER:TICKET` line per server address and
//! user, in `KEEL_TICKETS` or else `~/.keel_tickets`. It is only ever replaced whole: the new
//! content goes to a temporary file created 0600 beside it, which is synced and renamed over
//! it, so a crash leaves the old file or the new one and the tickets are never readable by
//! other users. Each change reads, edits and replaces the file holding an exclusive lock on a
//! `.lock` file beside it, so two logins at once (two shells, a build's parallel jobs) never
//! lose each other's ticket.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};

/// The file's name in the home directory.
pub const TICKETS_FILE_NAME: &str = ".keel_tickets";

/// A tickets file (which need not exist yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketFile {
    pub path: PathBuf,
}

/// One line: (server, user, ticket).
type Entry = (String, String, String);

fn parse(text: &str) -> Vec<Entry> {
    text.lines()
        .filter_map(|line| {
            let (server, rest) = line.trim().split_once('=')?;
            let (user, ticket) = rest.rsplit_once(':')?;
            Some((server.to_string(), user.to_string(), ticket.to_string()))
        })
        .collect()
}

impl TicketFile {
    /// `KEEL_TICKETS`, else `.keel_tickets` in `HOME`; `None` when neither is set.
    pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Option<TicketFile> {
        let path = env("KEEL_TICKETS")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(TICKETS_FILE_NAME)))?;
        Some(TicketFile { path })
    }

    fn entries(&self) -> Result<Vec<Entry>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e).at(&self.path),
        }
    }

    /// Every stored ticket as (server, user, ticket), in file order (none when the file does
    /// not exist).
    pub fn list(&self) -> Result<Vec<(String, String, String)>> {
        self.entries()
    }

    /// The ticket stored for `user` on `server`.
    pub fn get(&self, server: &str, user: &str) -> Result<Option<String>> {
        Ok(self
            .entries()?
            .into_iter()
            .find(|(s, u, _)| s == server && u == user)
            .map(|(_, _, t)| t))
    }

    /// Stores (replaces) the ticket of `user` on `server`.
    pub fn set(&self, server: &str, user: &str, ticket: &str) -> Result<()> {
        self.locked(|| {
            let mut entries = self.entries()?;
            entries.retain(|(s, u, _)| !(s == server && u == user));
            entries.push((server.to_string(), user.to_string(), ticket.to_string()));
            self.write(&entries)
        })
    }

    /// Forgets the ticket of `user` on `server`; returns whether there was one.
    pub fn remove(&self, server: &str, user: &str) -> Result<bool> {
        self.locked(|| {
            let mut entries = self.entries()?;
            let before = entries.len();
            entries.retain(|(s, u, _)| !(s == server && u == user));
            if entries.len() == before {
                return Ok(false);
            }
            self.write(&entries)?;
            Ok(true)
        })
    }

    /// Runs `edit` holding the exclusive lock on the file's `.lock` companion (the tickets
    /// file itself is replaced by renames, so it cannot carry the lock).
    fn locked<T>(&self, edit: impl FnOnce() -> Result<T>) -> Result<T> {
        let mut name = self.path.clone().into_os_string();
        name.push(".lock");
        let lock_path = PathBuf::from(name);
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let lock = options.open(&lock_path).at(&lock_path)?;
        lock.lock().at(&lock_path)?;
        let out = edit();
        drop(lock);
        out
    }

    fn write(&self, entries: &[Entry]) -> Result<()> {
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // tempfile creates its files 0600 on Unix.
        let mut tmp = tempfile::Builder::new()
            .prefix(".keel_tickets.")
            .tempfile_in(dir)
            .at(dir)?;
        for (server, user, ticket) in entries {
            writeln!(tmp, "{server}={user}:{ticket}").at(tmp.path())?;
        }
        tmp.as_file().sync_all().at(tmp.path())?;
        tmp.persist(&self.path)
            .map_err(|e| e.error)
            .at(&self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_at_once_keep_every_ticket() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = TicketFile {
            path: dir.path().join("tickets"),
        };
        std::thread::scope(|s| {
            for t in 0..8 {
                let file = &file;
                s.spawn(move || {
                    for i in 0..10 {
                        let user = format!("u{t}-{i}");
                        file.set("h:1", &user, "T").expect("write");
                    }
                });
            }
        });
        assert_eq!(file.list().expect("read").len(), 80);
    }

    #[test]
    fn tickets_are_kept_per_server_and_user_in_a_private_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = TicketFile {
            path: dir.path().join("tickets"),
        };
        assert_eq!(file.get("h:1", "alice").expect("read"), None);
        file.set("h:1", "alice", "AAA").expect("write");
        file.set("h:2", "alice", "BBB").expect("write");
        file.set("h:1", "bob", "CCC").expect("write");
        file.set("h:1", "alice", "DDD").expect("write");
        assert_eq!(
            file.get("h:1", "alice").expect("read").as_deref(),
            Some("DDD")
        );
        assert_eq!(
            file.get("h:2", "alice").expect("read").as_deref(),
            Some("BBB")
        );
        assert!(file.remove("h:1", "bob").expect("remove"));
        assert!(!file.remove("h:1", "bob").expect("remove"));
        assert_eq!(file.get("h:1", "bob").expect("read"), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file.path)
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let located = TicketFile::locate(&|k| (k == "HOME").then(|| "/home/a".to_string()));
        assert_eq!(
            located.map(|f| f.path),
            Some(PathBuf::from("/home/a/.keel_tickets"))
        );
        let over = TicketFile::locate(&|k| (k == "KEEL_TICKETS").then(|| "/t/x".to_string()));
        assert_eq!(over.map(|f| f.path), Some(PathBuf::from("/t/x")));
    }
}
