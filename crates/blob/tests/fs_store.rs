//! The content store contract, checked against the filesystem backend.

use keel_blob::{BlobStore, CompressionPolicy, Encoding, FsBlobStore};
use std::io::Read;

fn store() -> (tempfile::TempDir, FsBlobStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store =
        FsBlobStore::open(dir.path().join("content"), CompressionPolicy::default()).expect("open");
    (dir, store)
}

fn put(store: &FsBlobStore, chunks: &[&[u8]]) -> keel_blob::BlobInfo {
    let mut w = store.writer().expect("writer");
    for c in chunks {
        w.write(c).expect("write");
    }
    let pending = w.finish().expect("finish");
    let info = pending.info.clone();
    store.publish(vec![pending]).expect("publish");
    info
}

fn read_back(store: &FsBlobStore, info: &keel_blob::BlobInfo) -> Vec<u8> {
    let blob = store.open(&info.digest).expect("open").expect("present");
    let mut out = Vec::new();
    blob.into_content_reader()
        .expect("reader")
        .read_to_end(&mut out)
        .expect("read");
    out
}

#[test]
fn round_trips_and_picks_encoding() {
    let (_dir, store) = store();
    let text = b"hello hello hello hello hello hello hello hello\n".repeat(100);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..5000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let cases: Vec<(&[u8], Encoding)> = vec![
        (&text, Encoding::Zstd),
        (&random, Encoding::Raw),
        (b"", Encoding::Raw),
    ];
    for (content, encoding) in cases {
        let info = put(&store, &[content]);
        assert_eq!(info.size, content.len() as u64);
        assert_eq!(info.digest.0, *blake3::hash(content).as_bytes());
        assert_eq!(
            info.encoding,
            encoding,
            "content of {} bytes",
            content.len()
        );
        assert_eq!(read_back(&store, &info), content);
    }
}

#[test]
fn content_read_whole_matches_the_streamed_content_and_a_wrong_size_fails() {
    let (_dir, store) = store();
    let text = b"line of a small text file\n".repeat(300);
    let random: Vec<u8> = (0..3000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    // Several blobs one after the other on this thread reuse one decompression context.
    for content in [&text[..], &random[..], b"", &text[..100]] {
        let info = put(&store, &[content]);
        let blob = store.open(&info.digest).expect("open").expect("present");
        let whole = blob.read_content(info.size).expect("read whole");
        assert_eq!(whole, read_back(&store, &info));
        assert_eq!(whole, content);
    }
    // A size too small for a zstd blob's content is an error, not a short read.
    let info = put(&store, &[&text]);
    assert_eq!(info.encoding, Encoding::Zstd);
    let blob = store.open(&info.digest).expect("open").expect("present");
    let err = blob.read_content(10).expect_err("too small").to_string();
    assert!(err.contains("blob content"), "{err}");
}

#[test]
fn large_blob_streams_in_chunks() {
    let (_dir, store) = store();
    let chunk = b"0123456789abcdef".repeat(64 * 1024); // 1 MiB, compressible
    let info = put(&store, &[&chunk, &chunk, &chunk]);
    assert_eq!(info.size, 3 * chunk.len() as u64);
    assert_eq!(info.encoding, Encoding::Zstd);
    assert!(info.stored_size < info.size / 10);
    assert_eq!(read_back(&store, &info).len(), 3 * chunk.len());
}

#[test]
fn same_content_is_stored_once_and_md5_is_recorded() {
    let (dir, store) = store();
    let a = put(&store, &[b"same bytes"]);
    let b = put(&store, &[b"same ", b"bytes"]);
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.md5, format!("{:x}", md5_of(b"same bytes")));
    let stored = keel_blob::stored_blobs(&dir.path().join("content")).expect("list");
    assert_eq!(stored.len(), 1, "{stored:?}");
}

#[test]
fn unfinished_writer_leaves_nothing() {
    let (dir, store) = store();
    let mut w = store.writer().expect("writer");
    w.write(b"never finished").expect("write");
    drop(w);
    let root = dir.path().join("content");
    assert!(keel_blob::stored_blobs(&root).expect("list").is_empty());
    assert!(walk(&root.join("tmp")).is_empty());
}

#[test]
fn delete_reports_reclaimed_bytes() {
    let (_dir, store) = store();
    let info = put(&store, &[b"to be obliterated"]);
    assert!(store.contains(&info.digest).expect("contains"));
    assert_eq!(
        store.delete(&info.digest).expect("delete"),
        info.stored_size
    );
    assert!(!store.contains(&info.digest).expect("contains"));
    assert_eq!(store.delete(&info.digest).expect("delete again"), 0);
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

fn md5_of(data: &[u8]) -> md5::digest::Output<md5::Md5> {
    use md5::Digest;
    md5::Md5::digest(data)
}

#[test]
fn unpublished_blobs_are_invisible_and_a_batch_publishes_together() {
    let (dir, store) = store();
    let pending: Vec<_> = (0..20u8)
        .map(|i| {
            let mut w = store.writer().expect("writer");
            w.write(&[i; 100]).expect("write");
            w.finish().expect("finish")
        })
        .collect();
    let digests: Vec<_> = pending.iter().map(|p| p.info.digest).collect();
    assert!(
        digests
            .iter()
            .all(|d| !store.contains(d).expect("contains")),
        "not yet visible"
    );
    store.publish(pending).expect("publish batch");
    assert!(digests.iter().all(|d| store.contains(d).expect("contains")));
    let leftovers = walk(&dir.path().join("content/tmp"));
    assert!(leftovers.is_empty(), "temp files moved away: {leftovers:?}");
}

#[test]
fn a_large_batch_holds_no_descriptor_per_blob() {
    // With 256 descriptors allowed, 2,000 fresh blobs still publish (each temp file is closed
    // as soon as it is written).
    let limit = libc::rlimit {
        rlim_cur: 256,
        rlim_max: libc::RLIM_INFINITY,
    };
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit calls with valid pointers.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut old);
        libc::setrlimit(
            libc::RLIMIT_NOFILE,
            &libc::rlimit {
                rlim_max: old.rlim_max,
                ..limit
            },
        );
    }
    let (_dir, store) = store();
    let pending: Vec<_> = (0..2000u32)
        .map(|i| {
            let mut w = store.writer().expect("writer");
            w.write(format!("distinct content {i}\n").as_bytes())
                .expect("write");
            w.finish().expect("finish")
        })
        .collect();
    let digests: Vec<_> = pending.iter().map(|p| p.info.digest).collect();
    let published = store.publish(pending);
    // SAFETY: restores the limit read above.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &old) };
    published.expect("publish 2,000 blobs under a 256-descriptor limit");
    assert!(digests.iter().all(|d| store.contains(d).expect("contains")));
}
