//! Uploads whose small files are hashed and compressed on the upload's threads: every file
//! lands under its own content whatever order the threads finish in, a large file streams
//! beside them, a path sent twice keeps what was sent last, and damage is refused by path.

mod support;

use keel_blob::BlobStore;
use keel_core::ChangeRef;
use keel_service::{ServiceError, SubmitError, UploadError};
use support::World;

/// The digest of `bytes` as the client would claim it.
fn digest(w: &World, bytes: &[u8]) -> String {
    let mut probe = w.blobs.writer().expect("writer");
    probe.write(bytes).expect("write");
    probe.finish().expect("finish").info.digest.to_hex()
}

fn send(w: &World, s: &mut keel_service::SubmitSession, path: &str, bytes: &[u8], claim: &str) {
    let up = s.uploads();
    up.begin_file(&w.service, path).expect("file begins");
    // Sent in chunks of at most 64 KiB, as a client does.
    for chunk in bytes.chunks(64 << 10) {
        up.write_chunk(&w.service, chunk).expect("chunk");
    }
    up.end_file(&w.service, claim, bytes.len() as u64)
        .expect("file ends");
}

fn content(i: usize) -> Vec<u8> {
    format!("file {i}\n").repeat(1 + i % 50).into_bytes()
}

#[test]
fn many_small_files_a_large_one_and_a_resent_path_land_under_their_content() {
    let w = World::new();
    let paths: Vec<String> = (0..300).map(|i| format!("//depot/f{i:03}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    w.add(&w.ann, &refs).expect("add");
    w.add(&w.ann, &["//depot/large"]).expect("add large");
    let mut s = w
        .service
        .submit_begin(&w.ann, ChangeRef::Default, "many")
        .expect("begin");
    // A first version of f000, replaced by the last one sent.
    send(
        &w,
        &mut s,
        &paths[0],
        b"superseded\n",
        &digest(&w, b"superseded\n"),
    );
    for (i, path) in paths.iter().enumerate() {
        let bytes = content(i);
        send(&w, &mut s, path, &bytes, &digest(&w, &bytes));
    }
    // Past `upload_whole_bytes`: streamed through a writer as it arrives.
    let large: Vec<u8> = (0..(3usize << 20)).map(|i| (i % 251) as u8).collect();
    send(&w, &mut s, "//depot/large", &large, &digest(&w, &large));
    let result = s.commit(&w.service).expect("commit");
    let files = w.submitted(&result);
    assert_eq!(files.len(), 301);
    for file in files {
        let want = match file.depot_file.as_str() {
            "//depot/large" => large.clone(),
            path => content(path[9..].parse().expect("a numbered file")),
        };
        let stored = file.head_digest.expect("a digest");
        assert_eq!(stored.to_hex(), digest(&w, &want), "{}", file.depot_file);
        assert_eq!(file.head_size, want.len() as u64, "{}", file.depot_file);
        assert!(
            w.blobs.contains(&stored).expect("contains"),
            "{}",
            file.depot_file
        );
    }
}

#[test]
fn a_damaged_file_among_many_is_refused_by_path_and_nothing_commits() {
    let w = World::new();
    let paths: Vec<String> = (0..200).map(|i| format!("//depot/f{i:03}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    w.add(&w.ann, &refs).expect("add");
    let mut s = w
        .service
        .submit_begin(&w.ann, ChangeRef::Default, "damaged")
        .expect("begin");
    for (i, path) in paths.iter().enumerate() {
        let bytes = content(i);
        let claim = if i == 137 {
            digest(&w, b"something else")
        } else {
            digest(&w, &bytes)
        };
        send(&w, &mut s, path, &bytes, &claim);
    }
    let refused = s.commit(&w.service).expect_err("damaged content refused");
    assert!(
        matches!(&refused, SubmitError::Service(ServiceError::Upload(UploadError::Damaged { path, .. })) if path == "//depot/f137"),
        "{refused:?}"
    );
    assert_eq!(w.opened(&w.ann).len(), 200, "every file still open");
}
