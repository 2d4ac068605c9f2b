//! The workspace's have list as a scan needs it: fixed-size entries sorted by client file (in
//! [`path_order`]), their strings in one byte arena — the cache file's own bytes when it is
//! loaded from `.keel-have` — so a list of 70,000 files is two allocations, not 200,000.

use keel_proto::v1::{FileRecord, FilesRequest};

use crate::connect::Connection;
use crate::error::Result;
use crate::path_order;
use crate::workspace::WorkspaceCtx;

/// One file the workspace has, borrowed from the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaveFile<'a> {
    /// Relative to the root, `/`-separated.
    pub client_file: &'a str,
    pub depot_file: &'a str,
    pub have_rev: u32,
    /// The have revision's type.
    pub file_type: &'a str,
    /// The have revision's BLAKE3 digest; None when the server gave none it could parse.
    pub digest: Option<[u8; 32]>,
}

/// Where a string lies in an arena: made only by [`Span::push`] (of a `&str`) or
/// [`Span::within`] (of a `&str` borrowed from the arena), so every span marks UTF-8 text of the
/// one arena it was made for, which [`text`] relies on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    off: u32,
    len: u32,
}

impl Span {
    /// The empty string, valid in any arena.
    pub(crate) const EMPTY: Span = Span { off: 0, len: 0 };

    pub(crate) fn of(self, arena: &[u8]) -> &[u8] {
        &arena[self.off as usize..(self.off + self.len) as usize]
    }

    /// Appends `s` to `arena`.
    pub(crate) fn push(arena: &mut Vec<u8>, s: &str) -> Span {
        let off = arena.len() as u32;
        arena.extend_from_slice(s.as_bytes());
        Span {
            off,
            len: s.len() as u32,
        }
    }

    /// The place of `s`, text already checked as UTF-8 and borrowed from `arena` itself (a
    /// loaded file's bytes, below 4 GiB).
    pub(crate) fn within(arena: &[u8], s: &str) -> Span {
        let off = (s.as_ptr() as usize)
            .checked_sub(arena.as_ptr() as usize)
            .filter(|off| off + s.len() <= arena.len())
            .expect("the string lies in the arena");
        Span {
            off: off as u32,
            len: s.len() as u32,
        }
    }
}

/// A span's text. The check that it is UTF-8 was made when the span was: [`Span::push`] took a
/// `&str`, [`Span::within`] one checked at load; the owner of an arena (the have index, the
/// local state) reads it only with spans made for it, and appends to it without changing the
/// bytes a span covers.
pub(crate) fn text(arena: &[u8], span: Span) -> &str {
    let bytes = span.of(arena);
    debug_assert!(std::str::from_utf8(bytes).is_ok(), "arena spans hold UTF-8");
    // SAFETY: `bytes` are exactly the bytes of a `&str` (see above): valid UTF-8, whole
    // characters. Slicing by the span is bounds-checked, so a stray span panics instead.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) client: Span,
    pub(crate) depot: Span,
    pub(crate) file_type: Span,
    pub(crate) have_rev: u32,
    pub(crate) digest: Option<[u8; 32]>,
    /// While building: this entry says the file left the list.
    removed: bool,
}

impl Entry {
    pub(crate) fn new(
        client: Span,
        depot: Span,
        file_type: Span,
        have_rev: u32,
        digest: Option<[u8; 32]>,
    ) -> Entry {
        Entry {
            client,
            depot,
            file_type,
            have_rev,
            digest,
            removed: false,
        }
    }
}

/// The have list by client file, sorted in [`path_order`].
#[derive(Debug, Default)]
pub struct HaveIndex {
    arena: Vec<u8>,
    entries: Vec<Entry>,
}

impl HaveIndex {
    /// Streams the whole workspace's have list from the server.
    pub async fn fetch(ws: &WorkspaceCtx, conn: &Connection) -> Result<HaveIndex> {
        let mut stream = conn
            .reply(conn.client().have(FilesRequest {
                caller: conn.caller(),
                files: vec![ws.all_files()],
                ..Default::default()
            }))
            .await?;
        let mut index = HaveIndex::default();
        while let Some(record) = stream.message().await.map_err(|s| conn.status(s))? {
            index.insert(ws, record);
        }
        index.finish();
        Ok(index)
    }

    /// An empty index with room for `(arena bytes, entries)` (see [`size`](Self::size)), and a
    /// sixteenth more.
    pub(crate) fn with_room((bytes, entries): (usize, usize)) -> HaveIndex {
        HaveIndex {
            arena: Vec::with_capacity(bytes + bytes / 16),
            entries: Vec::with_capacity(entries + entries / 16),
        }
    }

    /// The bytes of its strings and its entries: what an index of about the same list needs.
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.arena.len(), self.entries.len())
    }

    /// Builds the index from records already at hand.
    pub fn from_records(ws: &WorkspaceCtx, records: impl IntoIterator<Item = FileRecord>) -> Self {
        let mut index = HaveIndex::default();
        for record in records {
            index.insert(ws, record);
        }
        index.finish();
        index
    }

    /// An index over entries already in order whose spans lie in `arena` (a loaded file's
    /// bytes; the loader checked the order and the spans).
    pub(crate) fn from_sorted(arena: Vec<u8>, entries: Vec<Entry>) -> HaveIndex {
        HaveIndex { arena, entries }
    }

    /// Adds one have record (ignored when it maps to no client file); [`finish`] puts the
    /// index back in order.
    pub(crate) fn insert(&mut self, ws: &WorkspaceCtx, record: FileRecord) {
        let Some(client_file) = ws.client_file_of(&record) else {
            return;
        };
        let mut digest = [0u8; 32];
        let digest = hex::decode_to_slice(&record.head_digest, &mut digest)
            .ok()
            .map(|()| digest);
        self.push(
            &client_file,
            &record.depot_file,
            record.have_rev,
            &record.head_type,
            digest,
        );
    }

    /// Adds one entry; [`finish`] puts the index back in order.
    pub(crate) fn push(
        &mut self,
        client_file: &str,
        depot_file: &str,
        have_rev: u32,
        file_type: &str,
        digest: Option<[u8; 32]>,
    ) {
        let entry = Entry::new(
            Span::push(&mut self.arena, client_file),
            Span::push(&mut self.arena, depot_file),
            Span::push(&mut self.arena, file_type),
            have_rev,
            digest,
        );
        self.entries.push(entry);
    }

    /// Forgets the file a have record names (ignored when it maps to no client file); takes
    /// effect at [`finish`].
    pub(crate) fn remove(&mut self, ws: &WorkspaceCtx, record: &FileRecord) {
        if let Some(client_file) = ws.client_file_of(record) {
            let mut entry = Entry::new(
                Span::push(&mut self.arena, &client_file),
                Span::EMPTY,
                Span::EMPTY,
                0,
                None,
            );
            entry.removed = true;
            self.entries.push(entry);
        }
    }

    /// Sorts the entries added since the last call into place: of several for one client
    /// file the last added wins, and a removal drops it.
    pub(crate) fn finish(&mut self) {
        let arena = &self.arena;
        // Stable: entries of one file keep the order they were added in.
        self.entries
            .sort_by(|a, b| path_order::cmp(a.client.of(arena), b.client.of(arena)));
        // In place, no second vector: `later` is dropped once copied over the `kept` one.
        self.entries.dedup_by(|later, kept| {
            let same = later.client.of(arena) == kept.client.of(arena);
            if same {
                *kept = *later;
            }
            same
        });
        self.entries.retain(|e| !e.removed);
    }

    /// The position of `client_file`, trying `*hint` first (see [`path_order::find`]).
    pub fn find(&self, client_file: &str, hint: &mut usize) -> Option<usize> {
        path_order::find(
            self.entries.len(),
            |i| self.entries[i].client.of(&self.arena),
            client_file.as_bytes(),
            hint,
        )
    }

    /// The entry at position `i` (below [`len`](Self::len)).
    pub fn at(&self, i: usize) -> HaveFile<'_> {
        let e = &self.entries[i];
        HaveFile {
            client_file: text(&self.arena, e.client),
            depot_file: text(&self.arena, e.depot),
            have_rev: e.have_rev,
            file_type: text(&self.arena, e.file_type),
            digest: e.digest,
        }
    }

    pub fn get(&self, client_file: &str) -> Option<HaveFile<'_>> {
        self.find(client_file, &mut 0).map(|i| self.at(i))
    }

    pub fn contains(&self, client_file: &str) -> bool {
        self.find(client_file, &mut 0).is_some()
    }

    /// Every entry, in client file order.
    pub fn iter(&self) -> impl Iterator<Item = HaveFile<'_>> {
        (0..self.entries.len()).map(|i| self.at(i))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(index: &mut HaveIndex, client: &str, rev: u32, removed: bool) {
        let mut e = Entry::new(
            Span::push(&mut index.arena, client),
            Span::push(&mut index.arena, &format!("//d/{client}")),
            Span::push(&mut index.arena, "text"),
            rev,
            None,
        );
        e.removed = removed;
        index.entries.push(e);
    }

    #[test]
    fn finish_sorts_keeps_the_last_word_and_drops_removals() {
        let mut index = HaveIndex::default();
        put(&mut index, "b", 1, false);
        put(&mut index, "a/x", 1, false);
        put(&mut index, "a.c", 1, false);
        put(&mut index, "b", 2, false);
        put(&mut index, "a.c", 0, true);
        put(&mut index, "c", 0, true);
        index.finish();
        let files: Vec<(&str, u32)> = index.iter().map(|f| (f.client_file, f.have_rev)).collect();
        assert_eq!(files, [("a/x", 1), ("b", 2)]);
        assert_eq!(index.get("b").unwrap().depot_file, "//d/b");
        assert!(!index.contains("a.c"));
    }
}
