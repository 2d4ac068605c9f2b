//! The workspace's have list as last fetched (`ROOT/.keel-have`), with the server's token for
//! it, so `status` and `reconcile` ask the server only whether it changed (`HaveIfChanged`):
//! they receive no records when it did not, and only the files written since when the server
//! still knows which.
//!
//! A cache, never the truth: the server compares tokens, and any have-list write, view change,
//! obliterate or protections change there gives a new token and the whole list again. A
//! missing, torn or foreign file (see `state_file`) is simply not used.
//!
//! Body (little-endian, after the shared framing): token (u32 length + UTF-8), entry count
//! u64, then per entry client file, depot file (u32 length + UTF-8), have revision u32, file
//! type (u32 length + UTF-8), a digest flag u8 and the digest (32 bytes, zeros without one).
//! Entries are in [`path_order`] of their client files, each once (a file out of order is
//! refused), so the loaded index uses them in place: its strings stay in the file's bytes.

use std::path::Path;

use keel_proto::v1::HaveIfChangedRequest;
use keel_proto::v1::have_if_changed_message::Body;

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::have_index::{Entry, HaveIndex};
use crate::local_state::StateKey;
use crate::path_order;
use crate::state_file;
use crate::workspace::WorkspaceCtx;

/// The cache file's name at the workspace root; scans skip it.
pub const HAVE_CACHE_FILE_NAME: &str = ".keel-have";
const MAGIC: &[u8; 8] = b"KEELHAVE";
/// The format version; a file of another version is not used.
const VERSION: u32 = 2;

/// What [`fetch`] did.
pub struct CachedHave {
    pub index: HaveIndex,
    /// The cached list was used: current (no records sent) or brought up to date with the
    /// records of the files written since.
    pub reused: bool,
    /// The fresh list could not be cached (the next call fetches it again).
    pub save_error: Option<Error>,
}

/// The workspace's whole have list: the cached copy when the server says it is current, else
/// streamed from the server (and cached). A server without `HaveIfChanged` gets a plain `Have`.
pub async fn fetch(ws: &WorkspaceCtx, conn: &Connection) -> Result<CachedHave> {
    let key = StateKey::of(ws, conn);
    let path = ws.root.join(HAVE_CACHE_FILE_NAME);
    // Checked (hash, version, key) and parsed once; unused when the server sends a new list.
    let mut cached = read_with_room(&path)
        .ok()
        .and_then(|bytes| decode(bytes, &key).ok());
    let token = cached
        .as_ref()
        .map(|(token, _)| token.clone())
        .unwrap_or_default();
    let request = HaveIfChangedRequest {
        caller: conn.caller(),
        token,
    };
    let mut stream = match conn.client().have_if_changed(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) if status.code() == tonic::Code::Unimplemented => {
            return Ok(CachedHave {
                index: HaveIndex::fetch(ws, conn).await?,
                reused: false,
                save_error: None,
            });
        }
        Err(status) => return Err(conn.status(status)),
    };
    let first = stream.message().await.map_err(|s| conn.status(s))?;
    let body = first.as_ref().and_then(|m| m.body.as_ref());
    let (mut index, delta) = match body {
        Some(Body::Unchanged(true)) | Some(Body::Delta(true)) => match cached.take() {
            Some((_, index)) => (index, matches!(body, Some(Body::Delta(true)))),
            // The server answered a token this client did not send: ask for the whole list.
            None => {
                return Ok(CachedHave {
                    index: HaveIndex::fetch(ws, conn).await?,
                    reused: false,
                    save_error: None,
                });
            }
        },
        // A whole new list, most likely about the size of the cached one: room for that much
        // up front, so the index does not grow by copying itself as the records arrive.
        _ => {
            let room = cached.as_ref().map_or((0, 0), |(_, old)| old.size());
            drop(cached.take());
            (HaveIndex::with_room(room), false)
        }
    };
    if let Some(Body::Unchanged(true)) = body {
        return Ok(CachedHave {
            index,
            reused: true,
            save_error: None,
        });
    }
    drop(cached);
    let mut fresh_token = None;
    let mut next = if delta {
        stream.message().await.map_err(|s| conn.status(s))?
    } else {
        first
    };
    while let Some(message) = next {
        match message.body {
            // In a delta, a record of revision 0 says the file left the have list.
            Some(Body::File(record)) if delta && record.have_rev == 0 => index.remove(ws, &record),
            Some(Body::File(record)) => index.insert(ws, record),
            Some(Body::Token(t)) => fresh_token = Some(t),
            Some(Body::Unchanged(_)) | Some(Body::Delta(_)) | None => {}
        }
        next = stream.message().await.map_err(|s| conn.status(s))?;
    }
    index.finish();
    let save_error = match fresh_token {
        Some(token) if ws.root.is_dir() => save(&path, &key, &token, &index).err(),
        _ => None,
    };
    Ok(CachedHave {
        index,
        reused: delta,
        save_error,
    })
}

/// A cache file's bytes, in a buffer with room for the strings of a delta (a sixteenth more),
/// so the files written since the token do not make the index copy the whole list to grow.
fn read_with_room(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len() as usize;
    let mut bytes = Vec::with_capacity(len + len / 16);
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// The token and the have list of a cache file's bytes, or why they cannot be used.
fn decode(bytes: Vec<u8>, key: &StateKey) -> std::result::Result<(String, HaveIndex), String> {
    let mut r = state_file::open(&bytes, MAGIC, VERSION, key)?;
    let token = r.string()?;
    let count = r.u64()?;
    // Room for a delta's entries too (see `read_with_room`).
    let count_cap = count.min(r.bytes.len() as u64 / 48) as usize;
    let mut entries: Vec<Entry> = Vec::with_capacity(count_cap + count_cap / 16);
    for _ in 0..count {
        let client = r.span(&bytes)?;
        let depot = r.span(&bytes)?;
        let have_rev = r.u32()?;
        let file_type = r.span(&bytes)?;
        let has_digest = r.u8()? != 0;
        let digest: [u8; 32] = r.array()?;
        if let Some(last) = entries.last()
            && path_order::cmp(last.client.of(&bytes), client.of(&bytes)).is_ge()
        {
            return Err("entries out of order".into());
        }
        entries.push(Entry::new(
            client,
            depot,
            file_type,
            have_rev,
            has_digest.then_some(digest),
        ));
    }
    r.end()?;
    Ok((token, HaveIndex::from_sorted(bytes, entries)))
}

fn save(path: &Path, key: &StateKey, token: &str, index: &HaveIndex) -> Result<()> {
    state_file::replace_streamed(path, ".keel-tmp-have-", |out| {
        out.begin(MAGIC, VERSION, key)?;
        out.put_bytes(token.as_bytes())?;
        out.put(&(index.len() as u64).to_le_bytes())?;
        for f in index.iter() {
            out.put_bytes(f.client_file.as_bytes())?;
            out.put_bytes(f.depot_file.as_bytes())?;
            out.put(&f.have_rev.to_le_bytes())?;
            out.put_bytes(f.file_type.as_bytes())?;
            out.put(&[u8::from(f.digest.is_some())])?;
            out.put(&f.digest.unwrap_or([0; 32]))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state_file::test_key as key;

    fn sample() -> HaveIndex {
        let mut index = HaveIndex::default();
        index.push("d", "//depot/d", 1, "binary", None);
        index.push("a/b.c", "//depot/a/b.c", 3, "text+x", Some([7; 32]));
        index.finish();
        index
    }

    #[test]
    fn a_saved_list_loads_back_with_its_token_and_only_for_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HAVE_CACHE_FILE_NAME);
        save(&path, &key(), "tok", &sample()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (token, index) = decode(bytes.clone(), &key()).unwrap();
        assert_eq!(token, "tok");
        assert_eq!(index.len(), 2);
        assert_eq!(index.get("a/b.c"), sample().get("a/b.c"));
        assert_eq!(index.get("d").unwrap().digest, None);
        let other = StateKey {
            root: "/elsewhere".into(),
            ..key()
        };
        assert!(decode(bytes, &other).unwrap_err().contains("recorded for"));
    }

    #[test]
    fn a_torn_or_flipped_file_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HAVE_CACHE_FILE_NAME);
        save(&path, &key(), "tok", &sample()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(decode(bytes[..bytes.len() - 5].to_vec(), &key()).is_err());
        let mut flipped = bytes.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        assert!(decode(flipped, &key()).is_err());
    }

    #[test]
    fn a_path_that_is_not_utf8_is_refused_even_under_a_valid_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HAVE_CACHE_FILE_NAME);
        save(&path, &key(), "tok", &sample()).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(5).position(|w| w == b"a/b.c").unwrap();
        bytes[at + 1] = 0xff;
        let body = bytes.len() - 32;
        let sum = *blake3::hash(&bytes[..body]).as_bytes();
        bytes[body..].copy_from_slice(&sum);
        assert_eq!(decode(bytes, &key()).unwrap_err(), "a path is not UTF-8");
    }
}
