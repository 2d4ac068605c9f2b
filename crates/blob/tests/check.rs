//! Re-reading stored blobs (`check_content`): intact blobs recompute their digest, every kind of
//! damage to the stored file is told apart, and a check stops when asked.

use keel_blob::{
    BlobInfo, BlobStore, CheckedContent, CompressionPolicy, ContentCheck, Encoding, FsBlobStore,
    StoredAt, StoredBlob, check_content, recompute,
};
use keel_core::Digest;
use std::io::Read;

/// Compressible text (stored as zstd) and random bytes (stored raw), both several read chunks.
fn contents() -> (Vec<u8>, Vec<u8>) {
    let text = b"fn main() { println!(\"verify\"); }\n".repeat(4000);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let random = (0..100_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    (text, random)
}

fn put(store: &FsBlobStore, content: &[u8]) -> BlobInfo {
    let mut w = store.writer().expect("writer");
    w.write(content).expect("write");
    let pending = w.finish().expect("finish");
    let info = pending.info.clone();
    store.publish(vec![pending]).expect("publish");
    info
}

/// Where the store keeps a blob's stored bytes (a pack record or a file of its own).
fn stored_at(store: &FsBlobStore, info: &BlobInfo) -> StoredAt {
    store
        .stored_at(&info.digest)
        .expect("stored_at")
        .expect("stored")
}

/// A policy that stores these contents as files of their own (they outgrow the sample).
fn as_files() -> CompressionPolicy {
    CompressionPolicy {
        sample_bytes: 4096,
        ..CompressionPolicy::default()
    }
}

/// Rewrites the stored bytes of `at` in place with `f` (which may change their length only
/// for a blob stored as its own file).
fn rewrite(at: &StoredAt, f: impl FnOnce(&mut Vec<u8>)) {
    let mut file = std::fs::read(&at.path).expect("read");
    let range = at.offset as usize..(at.offset + at.len) as usize;
    let mut region = file[range.clone()].to_vec();
    f(&mut region);
    if at.packed {
        assert_eq!(
            region.len() as u64,
            at.len,
            "a pack record keeps its length"
        );
    }
    file.splice(range, region);
    std::fs::write(&at.path, file).expect("write");
}

fn check(store: &FsBlobStore, digest: &Digest) -> CheckedContent {
    let mut buf = vec![0u8; 16 * 1024];
    check_content(store, digest, &mut buf, &|| false).expect("not stopped")
}

/// How a damage to the stored file shows.
#[derive(Debug)]
enum Want {
    Intact,
    OtherContent,
    Undecodable,
    Missing,
}

#[test]
fn each_damage_is_told_apart() {
    let (text, random) = contents();
    type Damage = fn(&FsBlobStore, &BlobInfo, &StoredAt);
    let flip: Damage = |_, _, at| {
        rewrite(at, |bytes| {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x5a;
        })
    };
    // A file cut short; in a pack, the second half zeroed (a pack record keeps its length).
    let truncate: Damage = |_, _, at| {
        rewrite(at, |bytes| {
            let half = bytes.len() / 2;
            if at.packed {
                bytes[half..].fill(0);
            } else {
                bytes.truncate(half);
            }
        })
    };
    let append: Damage = |_, _, at| rewrite(at, |bytes| bytes.extend_from_slice(b"junk"));
    let delete: Damage = |store, info, _| {
        store.delete(&info.digest).expect("delete");
    };
    let untouched: Damage = |_, _, _| {};
    let cases: [(&str, &[u8], Damage, Want); 9] = [
        ("intact zstd", &text, untouched, Want::Intact),
        ("intact raw", &random, untouched, Want::Intact),
        ("raw byte flipped", &random, flip, Want::OtherContent),
        ("raw truncated", &random, truncate, Want::OtherContent),
        (
            "raw with junk appended",
            &random,
            append,
            Want::OtherContent,
        ),
        ("zstd truncated", &text, truncate, Want::Undecodable),
        ("zstd with junk appended", &text, append, Want::Undecodable),
        ("zstd deleted", &text, delete, Want::Missing),
        ("raw deleted", &random, delete, Want::Missing),
    ];
    for (layout, policy) in [
        ("packed", CompressionPolicy::default()),
        ("file", as_files()),
    ] {
        for (name, content, damage, want) in &cases {
            let name = format!("{layout}, {name}");
            let dir = tempfile::tempdir().expect("temp dir");
            let store = FsBlobStore::open(dir.path().join("content"), policy).expect("open");
            let info = put(&store, content);
            let at = stored_at(&store, &info);
            assert_eq!(at.packed, layout == "packed", "{name}: {at:?}");
            if at.packed && name.contains("appended") {
                // A pack record has a fixed length: nothing can be appended to it.
                continue;
            }
            damage(&store, &info, &at);
            let stored_len = store
                .stored_at(&info.digest)
                .expect("stored_at")
                .map_or(0, |at| at.len);
            let got = check(&store, &info.digest);
            match (&want, &got.check) {
                (Want::Intact, ContentCheck::Content { digest, size }) => {
                    assert_eq!(
                        (digest, *size),
                        (&info.digest, content.len() as u64),
                        "{name}"
                    );
                }
                (Want::OtherContent, ContentCheck::Content { digest, .. }) => {
                    assert_ne!(digest, &info.digest, "{name}");
                }
                (Want::Undecodable, ContentCheck::Undecodable { reason }) => {
                    assert!(!reason.is_empty(), "{name}");
                }
                (Want::Missing, ContentCheck::Missing) => {}
                _ => panic!("{name}: expected {want:?}, got {:?}", got.check),
            }
            // Every stored byte that decoding reached was counted; an intact blob is read whole.
            assert!(got.stored_bytes <= stored_len, "{name}: {got:?}");
            if matches!(want, Want::Intact | Want::OtherContent) {
                assert_eq!(got.stored_bytes, stored_len, "{name}");
            }
        }
    }
}

/// A zstd blob with a byte flipped inside its compressed data never passes as the original.
#[test]
fn damaged_zstd_never_passes_for_the_original() {
    let (text, _) = contents();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let store = FsBlobStore::open(&root, CompressionPolicy::default()).expect("open");
    let info = put(&store, &text);
    let stored = stored_at(&store, &info);
    let original = std::fs::read(&stored.path).expect("read");
    let start = stored.offset as usize;
    // Every 97th byte after the frame header, one at a time.
    for at in (start + 16..start + stored.len as usize).step_by(97) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x01;
        std::fs::write(&stored.path, &bytes).expect("write");
        let got = check(&store, &info.digest).check;
        assert!(
            !matches!(&got, ContentCheck::Content { digest, .. } if *digest == info.digest),
            "byte {at} flipped and still {got:?}"
        );
    }
}

/// A reader that fails mid-way: the file's own error, not the decoder's.
struct FailingReader {
    left: usize,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.left);
        buf[..n].fill(b'x');
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_read_error_is_unreadable_for_both_encodings() {
    for encoding in [Encoding::Raw, Encoding::Zstd] {
        let blob = StoredBlob {
            encoding,
            stored_size: 10_000,
            reader: Box::new(FailingReader { left: 5000 }),
        };
        let mut buf = vec![0u8; 1024];
        let got = recompute(blob, &mut buf, &|| false).expect("not stopped");
        match (&encoding, &got.check) {
            (_, ContentCheck::Unreadable { reason }) => {
                assert!(reason.contains("disk on fire"), "{reason}");
            }
            // A zstd decoder may refuse the garbage before the file fails.
            (Encoding::Zstd, ContentCheck::Undecodable { .. }) => {}
            _ => panic!("{encoding:?}: {got:?}"),
        }
    }
    // Raw content that fails after some bytes: those bytes were read.
    let blob = StoredBlob {
        encoding: Encoding::Raw,
        stored_size: 10_000,
        reader: Box::new(FailingReader { left: 5000 }),
    };
    let got = recompute(blob, &mut [0u8; 1000], &|| false).expect("not stopped");
    assert_eq!(got.stored_bytes, 5000);
}

#[test]
fn a_check_stops_when_asked() {
    let (text, _) = contents();
    let dir = tempfile::tempdir().expect("temp dir");
    let store = FsBlobStore::open(dir.path().join("c"), CompressionPolicy::default()).expect("o");
    let info = put(&store, &text);
    let stop = std::cell::Cell::new(0);
    let got = check_content(&store, &info.digest, &mut [0u8; 1024], &|| {
        stop.set(stop.get() + 1);
        stop.get() > 3
    });
    assert!(got.is_none());
    assert_eq!(stop.get(), 4, "asked before every read until it said stop");
}
