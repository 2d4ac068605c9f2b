//! End-to-end: the `keel` linked with musl, as the package ships it (`KEEL_MUSL_KEEL`, which
//! `scripts/test.sh` builds). It is a static executable; beside a `keel-server` it answers the
//! quick reads byte for byte as the dynamic `keel` does and hands every other line on; and it
//! hands a quick read on too when musl would find the server's host or the user otherwise than
//! the system's C library (`name_service.rs`). Over TLS it trusts what the user trusts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{Fixture, KEEL, Server, submit_files};

/// The musl `keel`, required with the slow cases (`scripts/test.sh` sets both).
fn musl_keel(test: &str) -> Option<PathBuf> {
    match std::env::var_os("KEEL_MUSL_KEEL") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("KEEL_SLOW_TESTS").is_ok_and(|v| v == "1") => {
            panic!("{test}: KEEL_MUSL_KEEL is not set (scripts/test.sh builds the musl keel)")
        }
        None => {
            eprintln!(
                "{test}: skipped (KEEL_MUSL_KEEL names the musl keel; scripts/test.sh sets it)"
            );
            None
        }
    }
}

/// The musl `keel` copied into `dir`, with the `keel-server` this test run built beside it when
/// `paired`.
fn install(musl: &Path, dir: &Path, paired: bool) -> PathBuf {
    let keel = dir.join("keel");
    std::fs::copy(musl, &keel).expect("copy the musl keel");
    if paired {
        std::fs::copy(env!("CARGO_BIN_EXE_keel-server"), dir.join("keel-server"))
            .expect("copy keel-server");
    }
    keel
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_musl_keel_is_static_and_answers_as_the_dynamic_one() {
    let Some(musl) = musl_keel("the_musl_keel_is_static_and_answers_as_the_dynamic_one") else {
        return;
    };
    let headers = Command::new("readelf")
        .args(["--program-headers", "--wide"])
        .arg(&musl)
        .output()
        .expect("run readelf (binutils)");
    let headers = String::from_utf8_lossy(&headers.stdout);
    assert!(headers.contains("LOAD"), "{headers}");
    assert!(
        !headers.contains("INTERP"),
        "no program interpreter: {headers}"
    );

    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    submit_files(&ws, &["src/a.c", "src/b.c"], "first");
    let dir = tempfile::tempdir().expect("tempdir");
    let keel = install(&musl, dir.path(), true);
    let run = |program: &Path, args: &[&str]| ws.command_of(program, args).output().expect("run");
    let reads: [&[&str]; 9] = [
        &["fstat", "//depot/src/a.c"],
        &["--json", "files", "//depot/..."],
        &["filelog", "-m", "5", "src/a.c"],
        &["changes", "-m", "1", "//depot/..."],
        &["describe", "-s", "1"],
        &["have", "//depot/..."],
        &["where", "src/b.c"],
        &["dirs", "//depot/*"],
        &["files", "//depot/src/*"],
    ];
    for args in reads {
        let musl_out = run(&keel, args);
        let dynamic = run(Path::new(KEEL), args);
        assert!(
            musl_out.status.success(),
            "keel {args:?}: {}",
            stderr(&musl_out)
        );
        assert!(!musl_out.stdout.is_empty(), "keel {args:?} printed nothing");
        assert_eq!(musl_out.stdout, dynamic.stdout, "keel {args:?}");
    }
    // Other verbs run in keel-server: an edit, seen by both executables, and reverted.
    let edit = run(&keel, &["edit", "src/a.c"]);
    assert!(edit.status.success(), "{}", stderr(&edit));
    let opened = run(&keel, &["opened"]);
    assert_eq!(opened.stdout, run(Path::new(KEEL), &["opened"]).stdout);
    assert!(String::from_utf8_lossy(&opened.stdout).contains("//depot/src/a.c"));
    let revert = run(&keel, &["revert", "src/a.c"]);
    assert!(revert.status.success(), "{}", stderr(&revert));
    let opened = String::from_utf8_lossy(&run(&keel, &["opened"]).stdout).into_owned();
    assert!(!opened.contains("//depot/src/a.c"), "{opened}");
}

/// The `hosts` (or `passwd`) line of this machine's `/etc/nsswitch.conf`: its sources.
fn sources(database: &str) -> Vec<String> {
    let text = std::fs::read_to_string("/etc/nsswitch.conf").unwrap_or_default();
    let line = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim() == database);
    match line {
        Some((_, sources)) => sources
            .split_whitespace()
            .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect(),
        None if database == "hosts" => vec!["dns".into(), "files".into()],
        None => vec!["files".into()],
    }
}

/// A quick read whose server host musl would look up otherwise than the system goes to
/// keel-server (alone, the musl `keel` then names it as missing); an address, or a name every
/// source musl reads answers, stays in `keel`; likewise the user from the password database.
#[test]
fn a_name_musl_would_find_otherwise_is_left_to_keel_server() {
    let Some(musl) = musl_keel("a_name_musl_would_find_otherwise_is_left_to_keel_server") else {
        return;
    };
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    submit_files(&ws, &["src/a.c"], "first");
    let dir = tempfile::tempdir().expect("tempdir");
    let keel = install(&musl, dir.path(), false);
    let port = ws.addr.rsplit_once(':').expect("host:port").1.to_string();
    let missing = format!("{} is missing", dir.path().join("keel-server").display());
    let fstat = |server: &str| {
        ws.command_of(&keel, &["-s", server, "fstat", "//depot/src/a.c"])
            .output()
            .expect("run")
    };

    let by_address = fstat(&format!("127.0.0.1:{port}"));
    assert!(by_address.status.success(), "{}", stderr(&by_address));

    // mDNS sources answer `.local` names, which musl would ask DNS for.
    let hosts = sources("hosts");
    let mdns_or_other = hosts.iter().any(|s| s != "files" && s != "dns");
    let local = fstat(&format!("keel-e2e-test.local:{port}"));
    assert!(!local.status.success());
    assert_eq!(
        stderr(&local).contains(&missing),
        mdns_or_other,
        "hosts: {hosts:?}: {}",
        stderr(&local)
    );

    // `localhost`, when `files` is asked first and lists it, is found alike.
    let listed = std::fs::read_to_string("/etc/hosts")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .any(|l| l.split_whitespace().skip(1).any(|name| name == "localhost"));
    if hosts.first().is_some_and(|s| s == "files") && listed {
        let out = fstat(&format!("localhost:{port}"));
        assert!(out.status.success(), "{}", stderr(&out));
    }

    // No setting names the user: the password database does. musl reads /etc/passwd only, so
    // the answer stays in `keel` when `files` is asked first and has this process's uid.
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").expect("/proc"));
    let in_passwd = std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(':').nth(2) == Some(uid.to_string().as_str()));
    let files_first = sources("passwd").first().is_some_and(|s| s == "files");
    let mut info = ws.command_of(&keel, &["-s", &format!("127.0.0.1:{port}"), "info"]);
    let info = info
        .env_remove("KEEL_USER")
        .env_remove("USER")
        .env_remove("USERNAME")
        .output()
        .expect("run");
    if in_passwd && files_first {
        assert!(info.status.success(), "{}", stderr(&info));
    } else {
        assert!(stderr(&info).contains(&missing), "{}", stderr(&info));
    }
}

/// Over TLS the musl `keel` (rustls and ring built for musl) refuses an untrusted server as the
/// dynamic one does, and once the user trusts it, answers quick reads with its fingerprint.
#[test]
fn the_musl_keel_speaks_tls_with_the_users_trust() {
    let Some(musl) = musl_keel("the_musl_keel_speaks_tls_with_the_users_trust") else {
        return;
    };
    let server = Server::start_tls();
    let fingerprint = server.fingerprint.clone().expect("a TLS fingerprint");
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = tempfile::tempdir().expect("tempdir");
    let keel = install(&musl, bin.path(), true);
    let c = server.client("alice", "", dir.path());
    let untrusted = c.command_of(&keel, &["info"]).output().expect("run");
    assert!(!untrusted.status.success());
    let refusal = stderr(&untrusted);
    assert!(
        refusal.contains("is not trusted") && refusal.contains(&fingerprint),
        "{refusal}"
    );
    assert_eq!(refusal, c.fail(&["info"]), "the dynamic keel's refusal");

    c.ok(&["trust", "-y"]);
    let info = c
        .command_of(&keel, &["--json", "info"])
        .output()
        .expect("run");
    assert!(info.status.success(), "{}", stderr(&info));
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("one JSON line");
    assert_eq!(info["serverTlsFingerprint"], fingerprint.as_str());
    assert_eq!(info["serverAddress"], server.addr.as_str());
}
