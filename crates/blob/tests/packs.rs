//! Pack files: blobs survive reopening, sealing, a lost or damaged index, a torn append and
//! kill -9 during writes and reclaims; reclaiming frees disk; an old root migrates whole.

use keel_blob::{BlobConfig, BlobInfo, BlobStore, FsBlobStore, stored_blobs};
use keel_core::Digest;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Distinct, mildly compressible content number `i` of about `len` bytes.
fn content(i: u32, len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(i);
    let mut out = format!("blob {i}\n").into_bytes();
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(format!("line {} {}\n", state % 1000, i).as_bytes());
    }
    out
}

/// Random (incompressible) content number `i` of `len` bytes.
fn random(i: u32, len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64 ^ u64::from(i);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn config(pack_bytes: u64) -> BlobConfig {
    BlobConfig {
        pack_bytes,
        ..BlobConfig::default()
    }
}

fn put_all(store: &FsBlobStore, contents: &[Vec<u8>]) -> Vec<BlobInfo> {
    let pending: Vec<_> = contents
        .iter()
        .map(|c| {
            let mut w = store.writer().expect("writer");
            w.write(c).expect("write");
            w.finish().expect("finish")
        })
        .collect();
    let infos = pending.iter().map(|p| p.info.clone()).collect();
    store.publish(pending).expect("publish");
    infos
}

fn read_back(store: &FsBlobStore, digest: &Digest) -> Option<Vec<u8>> {
    let blob = store.open(digest).expect("open")?;
    let mut out = Vec::new();
    blob.into_content_reader()
        .expect("reader")
        .read_to_end(&mut out)
        .expect("read");
    Some(out)
}

fn assert_all_there(store: &FsBlobStore, contents: &[Vec<u8>], infos: &[BlobInfo], when: &str) {
    for (c, info) in contents.iter().zip(infos) {
        assert_eq!(
            read_back(store, &info.digest).as_deref(),
            Some(&c[..]),
            "{when}: blob of {} bytes",
            c.len()
        );
    }
}

fn files_named(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

#[test]
fn blobs_survive_reopen_and_sealing_and_small_ones_are_packed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    // Packs of 64 KiB: 300 blobs of ~2 KiB seal several.
    let mut contents: Vec<Vec<u8>> = (0..300).map(|i| content(i, 2000)).collect();
    contents.push(content(1000, 3 << 20)); // a large blob: a file of its own
    let infos = {
        let store = FsBlobStore::open_with(&root, &config(64 << 10)).expect("open");
        let mut infos = Vec::new();
        for chunk in contents.chunks(37) {
            infos.extend(put_all(&store, chunk));
        }
        assert_all_there(&store, &contents, &infos, "before reopening");
        infos
    };
    let packs = files_named(&root.join("packs"), "pack");
    assert!(packs.len() >= 3, "sealed several packs: {packs:?}");
    assert_eq!(
        files_named(&root.join("packs"), "idx").len(),
        packs.len() - 1,
        "every sealed pack has its index"
    );
    let listed = stored_blobs(&root).expect("list");
    assert_eq!(listed.len(), contents.len());
    let large = &listed[&infos[300].digest];
    assert!(!large.packed, "{large:?}");
    assert!(large.path.starts_with(root.join("files")), "{large:?}");
    assert_eq!(listed.values().filter(|at| at.packed).count(), 300);
    let store = FsBlobStore::open_with(&root, &config(64 << 10)).expect("reopen");
    assert_all_there(&store, &contents, &infos, "after reopening");
    // Publishing the same content again adds nothing.
    let before: u64 = packs
        .iter()
        .map(|p| p.metadata().expect("meta").len())
        .sum();
    put_all(&store, &contents[..50]);
    let after: u64 = files_named(&root.join("packs"), "pack")
        .iter()
        .map(|p| p.metadata().expect("meta").len())
        .sum();
    assert_eq!(before, after);
}

#[test]
fn a_lost_or_damaged_index_is_rebuilt_from_its_pack() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let contents: Vec<Vec<u8>> = (0..200).map(|i| content(i, 3000)).collect();
    let infos = {
        let store = FsBlobStore::open_with(&root, &config(16 << 10)).expect("open");
        let mut infos = Vec::new();
        for chunk in contents.chunks(20) {
            infos.extend(put_all(&store, chunk));
        }
        infos
    };
    let indexes = files_named(&root.join("packs"), "idx");
    assert!(indexes.len() >= 2, "{indexes:?}");
    std::fs::remove_file(&indexes[0]).expect("lose an index");
    let mut bytes = std::fs::read(&indexes[1]).expect("read index");
    bytes[20] ^= 0xff;
    std::fs::write(&indexes[1], bytes).expect("damage an index");
    let store = FsBlobStore::open_with(&root, &config(16 << 10)).expect("reopen");
    assert_all_there(&store, &contents, &infos, "after rebuilding indexes");
    assert_eq!(files_named(&root.join("packs"), "idx").len(), indexes.len());
}

#[test]
fn a_torn_append_is_cut_off_and_writing_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let contents: Vec<Vec<u8>> = (0..20).map(|i| content(i, 1500)).collect();
    let infos = {
        let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("open");
        put_all(&store, &contents)
    };
    let pack = files_named(&root.join("packs"), "pack")
        .pop()
        .expect("a pack");
    let intact = std::fs::read(&pack).expect("read pack");
    // What a crash can leave past the last acknowledged record: part of a record, zeros,
    // or a whole header whose data never arrived.
    let whole_record = {
        let store = FsBlobStore::open_with(dir.path().join("other"), &BlobConfig::default())
            .expect("open other");
        put_all(&store, &[content(99, 1500)]);
        let other = files_named(&dir.path().join("other/packs"), "pack")
            .pop()
            .expect("pack");
        std::fs::read(other).expect("read")
    };
    let tails: Vec<(&str, Vec<u8>)> = vec![
        ("half a header", whole_record[..30].to_vec()),
        ("header without its data", whole_record[..70].to_vec()),
        (
            "a record with its data cut",
            whole_record[..whole_record.len() - 10].to_vec(),
        ),
        ("zeros", vec![0u8; 4096]),
        ("a whole record whose data was zeroed", {
            let mut r = whole_record.clone();
            let len = r.len();
            r[70..len].fill(0);
            r
        }),
    ];
    for (name, tail) in tails {
        let mut torn = intact.clone();
        torn.extend_from_slice(&tail);
        std::fs::write(&pack, &torn).expect("write torn pack");
        let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
        assert_eq!(
            std::fs::metadata(&pack).expect("meta").len(),
            intact.len() as u64,
            "{name}: cut back to the last whole record"
        );
        assert_all_there(&store, &contents, &infos, name);
        // The next append follows the last whole record and reads back after reopening.
        let fresh = vec![content(500, 1800)];
        let fresh_info = put_all(&store, &fresh);
        drop(store);
        let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
        assert_all_there(&store, &fresh, &fresh_info, name);
        assert_all_there(&store, &contents, &infos, name);
        std::fs::write(&pack, &intact).expect("restore pack");
    }
}

/// Bytes the filesystem holds for a file (holes excluded).
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("meta").blocks() * 512
}

#[test]
fn reclaiming_frees_disk_and_stays_reclaimed_and_content_can_return() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let contents: Vec<Vec<u8>> = (0..8).map(|i| random(i, 256 << 10)).collect();
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("open");
    let infos = put_all(&store, &contents);
    let pack = files_named(&root.join("packs"), "pack")
        .pop()
        .expect("a pack");
    let before = allocated(&pack);
    for info in &infos[..4] {
        assert_eq!(
            store.delete(&info.digest).expect("delete"),
            info.stored_size
        );
        assert!(!store.contains(&info.digest).expect("contains"));
        assert_eq!(store.delete(&info.digest).expect("delete again"), 0);
    }
    let after = allocated(&pack);
    // Filesystems without hole punching keep the bytes; the ones Keel runs on free them.
    assert!(
        after + (4 * (256 << 10) - 4 * 8192) <= before,
        "allocated {before} -> {after}"
    );
    drop(store);
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
    for info in &infos[..4] {
        assert!(
            !store.contains(&info.digest).expect("contains"),
            "stays reclaimed"
        );
    }
    assert_all_there(&store, &contents[4..], &infos[4..], "survivors");
    // The same content stored again is a new record, found after reopening too.
    let again = put_all(&store, &contents[..1]);
    drop(store);
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
    assert_all_there(&store, &contents[..1], &again, "stored again");
    assert!(!store.contains(&infos[1].digest).expect("contains"));
}

/// The earlier layout's file for a blob: `ROOT/ab/cd/<hex>.zst` (zstd of the content).
fn write_legacy(root: &Path, data: &[u8]) -> Digest {
    let digest = Digest(*blake3::hash(data).as_bytes());
    let hex = digest.to_hex();
    let dir = root.join(&hex[0..2]).join(&hex[2..4]);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let compressed = zstd::bulk::compress(data, 3).expect("compress");
    std::fs::write(dir.join(format!("{hex}.zst")), compressed).expect("write legacy");
    digest
}

#[test]
fn a_root_in_the_earlier_layout_migrates_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let mut contents: Vec<Vec<u8>> = (0..150).map(|i| content(i, 2500)).collect();
    contents.push(random(7, 2 << 20)); // stays a file of its own
    let digests: Vec<Digest> = contents.iter().map(|c| write_legacy(&root, c)).collect();
    // An interrupted earlier migration: one blob already packed, its legacy file still there.
    {
        let store =
            FsBlobStore::open_with(dir.path().join("seed"), &BlobConfig::default()).expect("seed");
        put_all(&store, &contents[..1]);
    }
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("open migrates");
    for (c, d) in contents.iter().zip(&digests) {
        assert_eq!(read_back(&store, d).as_deref(), Some(&c[..]));
    }
    let left: Vec<_> = std::fs::read_dir(&root)
        .expect("read root")
        .flatten()
        .map(|e| e.file_name().into_string().expect("utf-8"))
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(
        left,
        ["files", "packs", "tmp"],
        "no legacy directory is left"
    );
    let listed = stored_blobs(&root).expect("list");
    assert_eq!(listed.len(), contents.len());
    assert!(!listed[&digests[150]].packed);
    drop(store);
    // Opening again changes nothing.
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
    assert_eq!(stored_blobs(&root).expect("list").len(), contents.len());
    assert_eq!(
        read_back(&store, &digests[3]).as_deref(),
        Some(&contents[3][..])
    );
}

// kill -9: the test re-runs this binary as a child that writes (or reclaims) in a loop and
// prints each digest once the store has acknowledged it; the parent kills it mid-way, reopens
// the store and checks every acknowledged blob.

const CHILD_ENV: &str = "KEEL_PACKS_TEST_CHILD";

/// The child's side: `publish:ROOT` or `delete:ROOT`.
#[test]
fn child_process_role() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (what, root) = role.split_once(':').expect("role:root");
    let store = FsBlobStore::open_with(root, &config(256 << 10)).expect("child open");
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match what {
        "publish" => {
            for batch in 0..2000u32 {
                let contents: Vec<Vec<u8>> =
                    (0..10).map(|i| content(batch * 10 + i, 3000)).collect();
                for info in put_all(&store, &contents) {
                    writeln!(out, "{}", info.digest.to_hex()).expect("stdout");
                }
                out.flush().expect("flush");
            }
        }
        "delete" => {
            for i in 0..2000u32 {
                let digest = Digest(*blake3::hash(&content(i, 3000)).as_bytes());
                store.delete(&digest).expect("delete");
                writeln!(out, "{}", digest.to_hex()).expect("stdout");
                out.flush().expect("flush");
            }
        }
        other => panic!("unknown role {other}"),
    }
}

/// Runs the child in `role` on `root` until it acknowledged at least `at_least` digests (or
/// finished), kills it with SIGKILL and returns what it acknowledged.
fn run_and_kill(role: &str, root: &Path, at_least: usize) -> Vec<Digest> {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_process_role",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{role}:{}", root.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Ok(d) = Digest::from_hex(line.trim())
                && tx.send(d).is_err()
            {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut acked = Vec::new();
    while acked.len() < at_least && Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(d) => acked.push(d),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    child.kill().expect("kill -9");
    child.wait().expect("wait");
    reader.join().expect("reader");
    acked.extend(rx.try_iter());
    assert!(
        acked.len() >= at_least.min(1),
        "the child acknowledged something"
    );
    acked
}

#[test]
fn kill_9_during_writes_loses_no_acknowledged_blob() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    for (round, at_least) in [(0, 25), (1, 260), (2, 700)] {
        let acked = run_and_kill("publish", &root, at_least);
        let store = FsBlobStore::open_with(&root, &config(256 << 10)).expect("reopen");
        for d in &acked {
            let data = read_back(&store, d).unwrap_or_else(|| panic!("round {round}: lost {d:?}"));
            assert_eq!(Digest(*blake3::hash(&data).as_bytes()), *d, "round {round}");
        }
        // Everything listed reads back whole.
        for d in stored_blobs(&root).expect("list").keys() {
            let data = read_back(&store, d).expect("listed blob opens");
            assert_eq!(Digest(*blake3::hash(&data).as_bytes()), *d, "round {round}");
        }
    }
}

#[test]
fn kill_9_during_reclaims_leaves_each_blob_whole_or_gone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let contents: Vec<Vec<u8>> = (0..600).map(|i| content(i, 3000)).collect();
    let infos = {
        let store = FsBlobStore::open_with(&root, &config(256 << 10)).expect("open");
        put_all(&store, &contents)
    };
    let deleted = run_and_kill("delete", &root, 200);
    let store = FsBlobStore::open_with(&root, &config(256 << 10)).expect("reopen");
    let deleted: std::collections::HashSet<Digest> = deleted.into_iter().collect();
    for (c, info) in contents.iter().zip(&infos) {
        if let Some(data) = read_back(&store, &info.digest) {
            assert!(
                !deleted.contains(&info.digest),
                "an acknowledged reclaim came back"
            );
            assert_eq!(&data, c, "a surviving blob is whole");
        }
    }
    // Reclaiming goes on after the crash, and new content still lands.
    for info in &infos {
        store.delete(&info.digest).expect("delete after crash");
    }
    let fresh = vec![content(9999, 3000)];
    let fresh_info = put_all(&store, &fresh);
    drop(store);
    let store = FsBlobStore::open_with(&root, &config(256 << 10)).expect("reopen");
    assert_all_there(&store, &fresh, &fresh_info, "after reclaiming everything");
    assert_eq!(stored_blobs(&root).expect("list").len(), 1);
}

#[test]
fn a_record_damaged_inside_a_pack_is_reported_then_replaced_by_a_fresh_copy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("content");
    let contents: Vec<Vec<u8>> = (0..10).map(|i| random(i, 2000)).collect();
    let infos = {
        let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("open");
        put_all(&store, &contents)
    };
    let at = stored_blobs(&root)
        .expect("list")
        .remove(&infos[4].digest)
        .expect("listed");
    let mut pack = std::fs::read(&at.path).expect("read pack");
    pack[at.offset as usize + 7] ^= 0x40;
    std::fs::write(&at.path, &pack).expect("damage");
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
    // Still there (verify reads and reports it), and its neighbours are untouched.
    let damaged = read_back(&store, &infos[4].digest).expect("the damaged blob is still found");
    assert_ne!(damaged, contents[4]);
    assert_all_there(
        &store,
        &contents[5..],
        &infos[5..],
        "records after the damage",
    );
    // Storing the content again writes a fresh copy, which wins, now and after reopening.
    put_all(&store, &contents[4..5]);
    assert_all_there(&store, &contents[4..5], &infos[4..5], "fresh copy");
    drop(store);
    let store = FsBlobStore::open_with(&root, &BlobConfig::default()).expect("reopen");
    assert_all_there(&store, &contents, &infos, "after reopening");
}
