//! A 1 GiB file submits and syncs with the server's memory staying small.

use crate::common::Fixture;
use std::io::{Read, Write};

const BLOCK: usize = 1 << 20;
const BLOCKS: usize = 1024;

fn block(base: &[u8], i: usize) -> Vec<u8> {
    let mut b = base.to_vec();
    b[..8].copy_from_slice(&(i as u64).to_le_bytes());
    b
}

#[test]
fn one_gib_file_round_trips_in_bounded_server_memory() {
    if crate::common::skip_slow("one_gib_file_round_trips_in_bounded_server_memory") {
        return;
    }
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let base = crate::common::bytes(7, BLOCK);
    {
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(a.cwd.join("huge.bin")).expect("create"));
        for i in 0..BLOCKS {
            f.write_all(&block(&base, i)).expect("write block");
        }
        f.flush().expect("flush");
    }
    a.ok(&["add", "huge.bin"]);
    a.ok(&["submit", "-d", "one gibibyte"]);
    b.ok(&["sync", "-q"]);

    let mut synced = std::fs::File::open(b.cwd.join("huge.bin")).expect("open synced");
    let mut buf = vec![0u8; BLOCK];
    for i in 0..BLOCKS {
        synced.read_exact(&mut buf).expect("read block");
        assert!(buf == block(&base, i), "block {i} differs");
    }
    assert_eq!(synced.read(&mut buf).expect("eof"), 0, "no trailing bytes");

    let peak_mib = fx.server.peak_rss_kib() / 1024;
    println!("server peak RSS after 1 GiB submit + sync: {peak_mib} MiB");
    assert!(peak_mib < 300, "server peak memory {peak_mib} MiB");
}
