//! P4Java (from Maven Central) against the P4 front end, as a Java CI plugin drives it:
//! `tests/p4java/Drive.java` is compiled against the jars `scripts/test.sh` copies into
//! `target/p4java/lib` (or `KEEL_P4JAVA_LIB`) and run once per scenario; each step prints one
//! JSON object. Without Java or the jars the tests fail saying how to get them.

use crate::p4_harness::{P4Server, ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The directory of P4Java's jars: `KEEL_P4JAVA_LIB`, else `target/p4java/lib`.
fn p4java_lib() -> PathBuf {
    let lib = std::env::var_os("KEEL_P4JAVA_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/p4java/lib"));
    let has_jar = std::fs::read_dir(&lib).is_ok_and(|d| {
        d.flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("p4java-"))
    });
    assert!(
        has_jar,
        "P4Java is missing from {}: copy it with `mvn -q -f crates/keel/tests/p4java/pom.xml \
         dependency:copy-dependencies -DoutputDirectory=$PWD/target/p4java/lib` \
         (scripts/test.sh does this) or point KEEL_P4JAVA_LIB at a directory of its jars",
        lib.display()
    );
    lib
}

/// Drive.java compiled into a fresh directory.
fn compile(lib: &Path, out: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/p4java/Drive.java");
    let status = Command::new("javac")
        .arg("-cp")
        .arg(lib.join("*"))
        .arg("-d")
        .arg(out)
        .arg(&source)
        .status()
        .expect("javac runs (install a JDK: apt-get install default-jdk-headless)");
    assert!(status.success(), "javac failed on {}", source.display());
}

/// Runs `scenario` with P4Java against `port`, authenticated by `ticket`; one object per step.
fn drive(port: &str, scenario: &str, ticket: &str) -> Vec<Value> {
    let lib = p4java_lib();
    let dir = tempfile::tempdir().expect("temp dir");
    let classes = dir.path().join("classes");
    compile(&lib, &classes);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let classpath = format!("{}:{}", lib.join("*").display(), classes.display());
    let mut child = Command::new("java")
        .args(["-cp", &classpath, "Drive", port, scenario])
        .arg(&work)
        .arg(ticket)
        .env("HOME", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java runs");
    // Bounded: a hang in the server fails the test instead of stalling the suite.
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("P4Java's {scenario} scenario did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the P4Java driver failed ({}):\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The step named `name`, after checking it threw nothing.
fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    let s = steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {steps:?}"));
    assert!(s.get("error").is_none(), "step {name} failed: {s}");
    s
}

/// A password set and a ticket issued through P4Python; the ticket P4Java will present.
fn ticket_of_alice(s: &P4Server) -> String {
    let r = s.drive(&[
        json!({"method": "run_password", "args": ["", "Secret-9"]}),
        json!({"new": true, "input": "Secret-9", "cmd": ["login", "-p"], "tagged": false}),
    ]);
    ok(&r[1])[0].as_str().expect("ticket").to_string()
}

#[test]
fn p4java_connects_proves_a_ticket_and_manages_clients() {
    let s = P4Server::start();
    let ticket = ticket_of_alice(&s);
    let steps = drive(&s.port, "basics", &ticket);

    let connect = step(&steps, "connect");
    // P4Java parses the version's third field as YYYY.N and refuses servers before 2005.2.
    assert!(
        connect["versionNumber"].as_i64().expect("number") >= 20052,
        "{connect}"
    );
    assert!(
        connect["serverVersion"]
            .as_str()
            .expect("version")
            .starts_with("Keel/"),
        "{connect}"
    );
    assert_eq!(connect["caseSensitive"], true);
    assert_eq!(connect["unicode"], false);
    let root = connect["serverRoot"].as_str().expect("root");
    assert!(Path::new(root).ends_with("server"), "{connect}");

    // Without a ticket, a password-protected user is refused.
    let refused = steps
        .iter()
        .find(|s| s["step"] == "no ticket")
        .expect("step");
    let error = refused["error"].as_str().expect("refused without a ticket");
    assert!(
        error.contains("P4PASSWD") && error.contains("alice"),
        "{error}"
    );

    let with = step(&steps, "ticket");
    assert!(
        with["status"]
            .as_str()
            .expect("status")
            .contains("ticket expires"),
        "{with}"
    );
    assert_eq!(with["users"], json!(["alice"]));
    assert_eq!(step(&steps, "depots")["depots"], json!(["depot:LOCAL"]));
    assert_eq!(step(&steps, "create client")["said"], "Client ci-1 saved.");
    let read = step(&steps, "read client");
    assert_eq!(read["owner"], "alice");
    assert_eq!(read["view"], json!(["//depot/... //ci-1/..."]));
    assert!(
        read["root"].as_str().expect("root").ends_with("ci-1"),
        "{read}"
    );
    assert_eq!(read["clients"], 1);
    assert_eq!(step(&steps, "disconnect")["connected"], false);
}

#[test]
fn p4java_runs_a_ci_plugins_loop_add_submit_changes_sync_print_fstat_filelog() {
    let s = P4Server::start();
    let ticket = ticket_of_alice(&s);
    let steps = drive(&s.port, "daily", &ticket);

    let first = step(&steps, "add and submit");
    assert_eq!(first["status"], "SUBMITTED", "{first}");
    assert_eq!(
        first["submitted"],
        json!([
            "//depot/src/a.txt#1 add",
            "//depot/src/b.bin#1 add",
            "INFO: Submitted as change 1"
        ])
    );
    assert_eq!(
        step(&steps, "changes")["changes"],
        json!(["1 alice first files"])
    );
    let synced = step(&steps, "sync a second workspace");
    assert_eq!(
        synced["synced"],
        json!(["//depot/src/a.txt#1 added", "//depot/src/b.bin#1 added"])
    );
    assert_eq!(synced["content"], "alpha\n");
    assert_eq!(step(&steps, "print")["content"], "alpha\n");
    assert_eq!(
        step(&steps, "fstat")["files"],
        json!(["//depot/src/a.txt#1 text", "//depot/src/b.bin#1 binary"])
    );
    assert_eq!(
        step(&steps, "edit and submit")["submitted"],
        json!(["//depot/src/a.txt#2 edit", "INFO: Submitted as change 2"])
    );
    assert_eq!(
        step(&steps, "filelog")["revisions"],
        json!(["#2 edit 2", "#1 add 1"])
    );
    // reconcile: the new file opened for add, the have files (text and binary) not. As from
    // a P4 server, the record has the revision as `workRev` (the file spec's getWorkRev())
    // and no `rev`, so its getEndRevision() is -1.
    let reconciled = step(&steps, "reconcile");
    assert_eq!(
        reconciled["reconciled"],
        json!(["//depot/src/c.txt#-1 add"])
    );
    assert_eq!(reconciled["workRevs"], json!(["//depot/src/c.txt#1 add"]));
    // opened has `rev` (the end revision P4Java reads), fstat `workRev` and no head.
    let opened = step(&steps, "opened");
    assert_eq!(opened["opened"], json!(["//depot/src/c.txt#1 add"]));
    assert_eq!(opened["fstat"], json!(["//depot/src/c.txt#1 add head 0"]));
}

/// With `p4_password_digests`, P4Java logs in with a password set through Keel's own client
/// (it answers the prompt's challenge, checked against the sealed verifier); a wrong one is
/// refused.
#[test]
fn p4java_logs_in_with_a_password_where_the_server_keeps_p4_digests() {
    let s = P4Server::start_with("127.0.0.1:0", &[], &["p4_password_digests = true"]);
    let out = s.server.client("alice", "", s.home.path()).run_with(
        &["passwd"],
        &[],
        "Secret-9\nSecret-9\n",
    );
    assert!(out.status.success(), "keel passwd: {out:?}");
    let steps = drive(&s.port, "password", "Secret-9");
    assert_eq!(step(&steps, "login")["ticketLength"], 32, "{steps:?}");
    assert_eq!(step(&steps, "changes")["count"], 0, "{steps:?}");
    let wrong = steps
        .iter()
        .find(|s| s["step"] == "wrong password")
        .expect("step");
    let error = wrong["error"].as_str().expect("refused");
    assert!(error.contains("password invalid"), "{error}");
}
