//! Re-reading stored blobs (`check_content`): intact blobs recompute their digest, every kind of
//! damage to the stored file is told apart, and a check stops when asked.

use keel_blob::{
    BlobInfo, BlobStore, CheckedContent, CompressionPolicy, ContentCheck, Encoding, FsBlobStore,
    StoredBlob, check_content, recompute,
};
use keel_core::Digest;
use std::io::Read;
use std::path::{Path, PathBuf};

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

/// The stored file of a blob (`ROOT/ab/cd/<hex>.zst|.raw`, the store's documented layout).
fn stored_file(root: &Path, info: &BlobInfo) -> PathBuf {
    let hex = info.digest.to_hex();
    let ext = match info.encoding {
        Encoding::Raw => "raw",
        Encoding::Zstd => "zst",
    };
    root.join(&hex[0..2])
        .join(&hex[2..4])
        .join(format!("{hex}.{ext}"))
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
    type Damage = fn(&Path);
    let flip: Damage = |p| {
        let mut bytes = std::fs::read(p).expect("read");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x5a;
        std::fs::write(p, bytes).expect("write");
    };
    let truncate: Damage = |p| {
        let bytes = std::fs::read(p).expect("read");
        std::fs::write(p, &bytes[..bytes.len() / 2]).expect("write");
    };
    let append: Damage = |p| {
        let mut bytes = std::fs::read(p).expect("read");
        bytes.extend_from_slice(b"trailing junk");
        std::fs::write(p, bytes).expect("write");
    };
    let delete: Damage = |p| std::fs::remove_file(p).expect("remove");
    let untouched: Damage = |_| {};
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
    for (name, content, damage, want) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("content");
        let store = FsBlobStore::open(&root, CompressionPolicy::default()).expect("open");
        let info = put(&store, content);
        let file = stored_file(&root, &info);
        assert!(file.exists(), "{name}: stored at {}", file.display());
        damage(&file);
        let stored_len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
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
        // Every stored byte that decoding reached was counted; an intact file is read whole.
        assert!(got.stored_bytes <= stored_len, "{name}: {got:?}");
        if matches!(want, Want::Intact | Want::OtherContent) {
            assert_eq!(got.stored_bytes, stored_len, "{name}");
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
    let file = stored_file(&root, &info);
    let original = std::fs::read(&file).expect("read");
    // Every 97th byte after the frame header, one at a time.
    for at in (16..original.len()).step_by(97) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x01;
        std::fs::write(&file, &bytes).expect("write");
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
