//! End-to-end: `keel proxy` between the real CLI and the real server. Content a proxy has
//! served once comes from its cache (counted on the primary with `contentBytesSent`), a
//! corrupt cache file is dropped and fetched again, the cache survives a restart and stays
//! within its size, metadata commands pass through, and a missing or wrong target is named.

use crate::common::{
    Client, Fixture, Proxy, bytes, create_workspace, field, read, str_field, write,
};
use std::path::Path;

/// The tree the primary holds: text files, an incompressible file (stored raw) and one
/// larger than the proxy's in-memory verification size (streamed from its cache file).
const TREE: &[(&str, usize)] = &[
    ("src/a.c", 400),
    ("src/b.c", 5_000),
    ("src/deep/c.h", 70),
    ("docs/readme.txt", 12_000),
    ("assets/blob.bin", 30_000),
    ("assets/big.bin", 1_500_000),
    ("empty.txt", 0),
];

fn content(i: usize, rel: &str, len: usize) -> Vec<u8> {
    if rel.ends_with(".bin") {
        bytes(i as u64 + 7, len)
    } else {
        format!("line {i} of {rel}\n")
            .repeat(len / 10 + 1)
            .into_bytes()[..len]
            .to_vec()
    }
}

/// Submits `TREE` directly to the primary from workspace `w`.
fn submit_tree(fx: &Fixture) -> Client {
    let w = fx.workspace("writer", "w");
    for (i, (rel, len)) in TREE.iter().enumerate() {
        write(&w.cwd, rel, content(i, rel, *len));
    }
    w.ok(&["add", "..."]);
    w.ok(&["submit", "-d", "tree"]);
    w
}

/// A workspace created through the proxy, rooted at `<temp>/<name>`.
fn proxied_workspace(fx: &Fixture, proxy: &Proxy, name: &str) -> Client {
    let root = fx.dir.path().join(name);
    create_workspace(proxy.client("bob", name, &root), &root, name)
}

/// The primary's stored content bytes sent so far (asked directly, not through the proxy).
fn primary_sent(fx: &Fixture) -> u64 {
    let c = fx.server.client("probe", "", fx.dir.path());
    field(&c.json(&["info"])[0], "contentBytesSent")
        .as_u64()
        .expect("contentBytesSent is a number")
}

fn proxy_info(c: &Client) -> serde_json::Value {
    c.json(&["info"]).remove(0)
}

fn n(v: &serde_json::Value, key: &str) -> u64 {
    field(v, key)
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn assert_tree(root: &Path) {
    for (i, (rel, len)) in TREE.iter().enumerate() {
        assert_eq!(read(root, rel), content(i, rel, *len), "{rel} differs");
    }
}

fn start_proxy(fx: &Fixture, extra: &[&str]) -> Proxy {
    Proxy::start(&fx.server.addr, &fx.dir.path().join("cache"), extra).expect("proxy starts")
}

#[test]
fn second_sync_through_proxy_transfers_no_content_from_primary() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let before = primary_sent(&fx);

    let a = proxied_workspace(&fx, &proxy, "a");
    a.ok(&["sync"]);
    assert_tree(&a.cwd);
    let after_first = primary_sent(&fx);
    assert!(
        after_first > before + 1_500_000,
        "the first sync fetched the tree"
    );

    let b = proxied_workspace(&fx, &proxy, "b");
    let synced = b.json(&["sync"]);
    assert_eq!(synced.len(), TREE.len());
    assert_tree(&b.cwd);
    assert_eq!(
        primary_sent(&fx),
        after_first,
        "the second sync fetched nothing"
    );

    let info = proxy_info(&b);
    assert_eq!(n(&info, "proxyMisses"), TREE.len() as u64);
    assert_eq!(n(&info, "proxyHits"), TREE.len() as u64);
    assert_eq!(n(&info, "proxyBytesFromTarget"), after_first - before);
    assert_eq!(n(&info, "proxyBytesServed"), 2 * (after_first - before));
    assert_eq!(n(&info, "proxyCacheFiles"), TREE.len() as u64);

    // print is served from the cache too, byte for byte the submitted content.
    for (i, (rel, len)) in TREE.iter().enumerate() {
        let via_proxy = b.run(&["print", "-q", &format!("//depot/{rel}")]);
        assert!(via_proxy.status.success(), "print {rel}");
        assert_eq!(via_proxy.stdout, content(i, rel, *len), "{rel}");
    }
    assert_eq!(
        primary_sent(&fx),
        after_first,
        "print through a warm proxy fetched nothing"
    );
}

#[test]
fn concurrent_cold_syncs_fetch_each_digest_once() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let before = primary_sent(&fx);
    let clients: Vec<Client> = (0..4)
        .map(|i| proxied_workspace(&fx, &proxy, &format!("c{i}")))
        .collect();
    let mut children: Vec<_> = clients.iter().map(|c| c.spawn(&["sync"])).collect();
    for child in &mut children {
        assert!(child.wait().expect("sync runs").success());
    }
    for c in &clients {
        assert_tree(&c.cwd);
    }
    let info = proxy_info(&clients[0]);
    assert_eq!(
        primary_sent(&fx) - before,
        n(&info, "proxyCacheBytes"),
        "each blob crossed from the primary once"
    );
}

#[test]
fn corrupt_cache_file_is_dropped_and_fetched_again() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let a = proxied_workspace(&fx, &proxy, "a");
    a.ok(&["sync"]);
    let sent = primary_sent(&fx);

    // Flip bytes in the middle of the largest and of a small cached file (same length).
    let mut files = cache_files(&proxy.cache);
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let (small, big) = (
        files[files.len() - 3].clone(),
        files[files.len() - 1].clone(),
    );
    let mut refetched = 0;
    for path in [&small, &big] {
        let mut data = std::fs::read(path).expect("cache file");
        let mid = data.len() / 2;
        data[mid] ^= 0xff;
        std::fs::write(path, &data).expect("corrupt it");
        refetched += data.len() as u64;
    }

    let b = proxied_workspace(&fx, &proxy, "b");
    b.ok(&["sync"]);
    assert_tree(&b.cwd);
    let info = proxy_info(&b);
    assert_eq!(n(&info, "proxyDroppedCorrupt"), 2);
    assert_eq!(
        primary_sent(&fx),
        sent + refetched,
        "exactly the two files came again"
    );
    for path in [&small, &big] {
        assert!(path.exists(), "{} was fetched back", path.display());
    }
    // Now healthy: a third sync is all hits.
    let c = proxied_workspace(&fx, &proxy, "c");
    c.ok(&["sync"]);
    assert_tree(&c.cwd);
    assert_eq!(primary_sent(&fx), sent + refetched);
}

#[test]
fn restarted_proxy_keeps_its_cache() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let mut proxy = start_proxy(&fx, &[]);
    proxied_workspace(&fx, &proxy, "a").ok(&["sync"]);
    let sent = primary_sent(&fx);
    // A leftover temp file (as a crash mid-fetch leaves) is cleared at start.
    write(&proxy.cache, "tmp/leftover.partial", "half a blob");

    proxy.restart();
    assert!(!proxy.cache.join("tmp/leftover.partial").exists());
    let b = proxied_workspace(&fx, &proxy, "b");
    b.ok(&["sync"]);
    assert_tree(&b.cwd);
    assert_eq!(
        primary_sent(&fx),
        sent,
        "the restarted proxy served from its cache"
    );
    let info = proxy_info(&b);
    assert_eq!(n(&info, "proxyCacheFiles"), TREE.len() as u64);
    assert_eq!(n(&info, "proxyHits"), TREE.len() as u64);
    assert_eq!(n(&info, "proxyMisses"), 0);
}

#[test]
fn cache_stays_within_its_size_evicting_least_recently_used() {
    let fx = Fixture::new();
    submit_tree(&fx);
    // Room for everything but the big file: each sync evicts and refetches.
    let proxy = start_proxy(&fx, &["--cache-size", "100000"]);
    let a = proxied_workspace(&fx, &proxy, "a");
    a.ok(&["sync"]);
    assert_tree(&a.cwd);
    let info = proxy_info(&a);
    assert!(n(&info, "proxyCacheBytes") <= 100_000, "{info}");
    let on_disk: u64 = cache_files(&proxy.cache)
        .iter()
        .map(|p| std::fs::metadata(p).expect("stat").len())
        .sum();
    assert_eq!(
        on_disk,
        n(&info, "proxyCacheBytes"),
        "evicted files are gone from disk"
    );
    // The big file was evicted as soon as a later file was stored; a second sync is still
    // exact, and only what was evicted is fetched again.
    let sent = primary_sent(&fx);
    let b = proxied_workspace(&fx, &proxy, "b");
    b.ok(&["sync"]);
    assert_tree(&b.cwd);
    assert!(
        primary_sent(&fx) > sent,
        "evicted content was fetched again"
    );
    assert!(
        n(&proxy_info(&b), "proxyHits") > 0,
        "what fit was served from the cache"
    );
}

#[test]
fn clients_killed_mid_sync_leave_the_cache_whole() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let clients: Vec<Client> = (0..3)
        .map(|i| proxied_workspace(&fx, &proxy, &format!("k{i}")))
        .collect();
    // Each client is killed at a different point of its sync (or after it, when it is fast):
    // the proxy's fetches finish or leave nothing under a digest's name.
    for (i, c) in clients.iter().enumerate() {
        let mut child = c.spawn(&["sync"]);
        std::thread::sleep(std::time::Duration::from_millis(20 * i as u64));
        let _ = child.kill();
        let _ = child.wait();
    }
    let b = proxied_workspace(&fx, &proxy, "b");
    b.ok(&["sync"]);
    assert_tree(&b.cwd);
    let info = proxy_info(&b);
    assert_eq!(n(&info, "proxyDroppedCorrupt"), 0);
    assert_eq!(n(&info, "proxyCacheFiles"), TREE.len() as u64);
    // The tree was submitted, never synced or printed directly: all the primary sent is
    // what the proxy fetched, each blob once.
    assert_eq!(primary_sent(&fx), n(&info, "proxyBytesFromTarget"));
    assert_eq!(primary_sent(&fx), n(&info, "proxyCacheBytes"));
}

#[test]
fn metadata_commands_and_shelves_work_through_proxy() {
    let fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let a = proxied_workspace(&fx, &proxy, "a");
    a.ok(&["sync"]);
    assert_eq!(a.json(&["files", "//depot/..."]).len(), TREE.len());
    let fstat = a.json(&["fstat", "//depot/src/a.c"]);
    assert_eq!(str_field(&fstat[0], "headRev"), "1");
    assert_eq!(a.json(&["changes"]).len(), 1);

    a.ok(&["edit", "src/a.c"]);
    write(&a.cwd, "src/a.c", "changed through the proxy\n");
    a.ok(&["submit", "-d", "via proxy"]);
    let direct = fx.server.client("bob", "", fx.dir.path());
    assert_eq!(
        direct.run(&["print", "-q", "//depot/src/a.c"]).stdout,
        b"changed through the proxy\n"
    );

    // Shelve through the proxy, unshelve (content via print @=) into another workspace.
    a.ok(&["edit", "src/b.c"]);
    write(&a.cwd, "src/b.c", "shelved text\n");
    a.ok(&["shelve", "--description", "wip"]);
    let b = proxied_workspace(&fx, &proxy, "b");
    b.ok(&["sync"]);
    b.ok(&["unshelve", "-s", "3"]);
    assert_eq!(read(&b.cwd, "src/b.c"), b"shelved text\n");
    assert!(proxy_info(&b).get("proxyAddress").is_some());
}

#[test]
fn proxy_refuses_a_target_that_is_not_keel_naming_it() {
    // Something that accepts connections and speaks no HTTP/2.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    listener.set_nonblocking(true).expect("nonblocking");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let junk = std::thread::spawn(move || {
        use std::io::Write;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !stopped.load(std::sync::atomic::Ordering::Relaxed)
            && std::time::Instant::now() < deadline
        {
            match listener.accept() {
                Ok((mut c, _)) => {
                    let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    });
    let dir = tempfile::tempdir().expect("temp");
    let err = Proxy::start(&addr, &dir.path().join("cache"), &[])
        .err()
        .expect("a proxy in front of a non-Keel address refuses to start");
    assert!(
        err.contains(&format!("target {addr} is not a reachable Keel server")),
        "{err}"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    junk.join().expect("junk listener");

    // Nothing listening at all.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let gone = closed.local_addr().expect("addr").to_string();
    drop(closed);
    let err = Proxy::start(&gone, &dir.path().join("cache2"), &[])
        .err()
        .expect("a proxy in front of nothing refuses to start");
    assert!(
        err.contains(&format!("target {gone} is not a reachable Keel server")),
        "{err}"
    );
}

#[test]
fn target_going_away_is_named_and_the_proxy_recovers() {
    let mut fx = Fixture::new();
    submit_tree(&fx);
    let proxy = start_proxy(&fx, &[]);
    let a = proxied_workspace(&fx, &proxy, "a");
    let server = fx.server.addr.clone();

    fx.server.kill9();
    let wanted = format!("target {server} is unavailable");
    let err = a.fail(&["files", "//depot/..."]);
    assert!(err.contains(&wanted), "files: {err}");
    let err = a.fail(&["sync"]);
    assert!(err.contains(&wanted), "sync: {err}");
    let info = a.run(&["info"]);
    assert!(!info.status.success());

    fx.server.restart_same_address();
    assert_eq!(a.json(&["files", "//depot/..."]).len(), TREE.len());
    a.ok(&["sync"]);
    assert_tree(&a.cwd);
}

/// Every blob file in a proxy cache (`tmp/` excluded).
fn cache_files(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for fan in std::fs::read_dir(cache).expect("cache dir").flatten() {
        if fan.file_name() == "tmp" || !fan.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(fan.path())
            .expect("fan-out dir")
            .flatten()
        {
            out.push(f.path());
        }
    }
    out
}

#[test]
fn a_bad_proxy_config_file_is_refused_naming_file_and_key() {
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("proxy.toml");
    std::fs::write(&config, "fetch_ahed = 4\n").expect("write config");
    let out = std::process::Command::new(crate::common::KEEL)
        .args(["proxy", "--target", "127.0.0.1:1", "--cache"])
        .arg(dir.path().join("cache"))
        .arg("--config")
        .arg(&config)
        .output()
        .expect("run keel proxy");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&config.display().to_string()) && err.contains("fetch_ahed"),
        "{err}"
    );
    assert!(!dir.path().join("cache").exists(), "nothing was created");
}
