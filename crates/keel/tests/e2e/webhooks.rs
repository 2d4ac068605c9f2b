//! End-to-end: webhooks. A real HTTP receiver on loopback gets one signed JSON payload per
//! matching change, in change order; a 500 is retried, a receiver that is down gets every
//! change once it is up (also across a server restart), and a bad table line is refused by
//! its number and token, leaving the table as it was.

use crate::access::protect;
use crate::common::{Client, Server, str_field, submit_files, workspace_on};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Short retries, so the tests wait little.
const CONFIG: &str =
    "webhook_retry_min_ms = 100\nwebhook_retry_max_ms = 300\nwebhook_timeout_ms = 3000\n";

/// One POST the receiver got, and what it answered.
#[derive(Clone, Debug)]
struct Delivery {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    answered: u16,
}

impl Delivery {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the payload is JSON")
    }

    /// The number of the change it announces.
    fn change(&self) -> u64 {
        self.json()["change"]["number"].as_u64().expect("number")
    }
}

/// A loopback HTTP receiver: answers each POST with the next status of `script` (then 200),
/// keeps what it got; stops when dropped.
struct Receiver {
    got: Arc<Mutex<Vec<Delivery>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    fn start(listener: TcpListener, script: Vec<u16>) -> Receiver {
        listener.set_nonblocking(true).expect("nonblocking");
        let got = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (got2, stop2) = (got.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut script = script.into_iter();
            while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let status = script.next().unwrap_or(200);
                        if let Some(d) = serve(stream, status) {
                            got2.lock().expect("lock").push(d);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Receiver {
            got,
            stop,
            thread: Some(thread),
        }
    }

    /// Waits (at most 20 s) until `n` deliveries were answered 200; all deliveries so far.
    fn wait_ok(&self, n: usize) -> Vec<Delivery> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = self.got.lock().expect("lock").clone();
            if got.iter().filter(|d| d.answered == 200).count() >= n {
                return got;
            }
            assert!(Instant::now() < deadline, "only {got:?} arrived in 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (headers, Content-Length body) and answers `status`.
fn serve(stream: TcpStream, status: u16) -> Option<Delivery> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let reason = if status == 200 {
        "OK"
    } else {
        "Internal Server Error"
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    assert!(request_line.starts_with("POST "), "{request_line}");
    Some(Delivery {
        headers,
        body,
        answered: status,
    })
}

/// A server on a fresh root with [`CONFIG`] and metrics, and alice's workspace on it.
fn setup(dir: &std::path::Path) -> (Server, Client) {
    let root = dir.join("server");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("keel.toml"), CONFIG).expect("keel.toml");
    let server = Server::start_full(&root, &[], &["--metrics-listen", "127.0.0.1:0"])
        .expect("server starts");
    let alice = workspace_on(&server, dir, "alice", "alice-ws");
    (server, alice)
}

fn save_table(ws: &Client, lines: &[String]) -> std::process::Output {
    let form = format!("Webhooks:\n\t{}\n", lines.join("\n\t"));
    ws.run_stdin(&["webhooks", "-i"], &form)
}

/// Saves the table, which must be accepted.
fn save_table_ok(ws: &Client, lines: &[String]) {
    let out = save_table(ws, lines);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A loopback port with nothing listening on it (bound, then let go): a receiver that is down.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// The hooks' status once the first has failed at least `failures` times (waited for, at most
/// ten seconds).
fn status_after_failures(ws: &Client, failures: u64) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let status = ws.json(&["webhooks", "--status"]);
        if status[0]["failures"].as_u64().unwrap_or(0) >= failures || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status[0]["failures"].as_u64().expect("failures") >= failures,
        "{status:?}"
    );
    status
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    hex::encode(ring::hmac::sign(&key, body).as_ref())
}

#[test]
fn signed_payloads_arrive_in_order_and_a_500_is_retried() {
    let dir = tempfile::tempdir().expect("temp");
    let (server, alice) = setup(dir.path());
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let receiver = Receiver::start(listener, vec![500]);
    save_table_ok(
        &alice,
        &[format!(
            "ci //depot/a/... http://127.0.0.1:{port}/hook s3cret"
        )],
    );
    let c1 = submit_files(&alice, &["a/one"], "first");
    let c2 = submit_files(&alice, &["b/two"], "elsewhere");
    let c3 = submit_files(&alice, &["a/one"], "third");
    let got = receiver.wait_ok(2);
    let changes: Vec<(u64, u16)> = got.iter().map(|d| (d.change(), d.answered)).collect();
    assert_eq!(changes, vec![(c1, 500), (c1, 200), (c3, 200)], "not {c2}");
    for d in &got {
        let signature = d.header("x-keel-signature").expect("signed");
        assert_eq!(signature, format!("sha256={}", hmac_hex("s3cret", &d.body)));
        assert_eq!(d.header("content-type"), Some("application/json"));
    }
    assert_eq!(
        got[0].header("x-keel-delivery"),
        got[1].header("x-keel-delivery")
    );
    let payload = got[2].json();
    assert_eq!(payload["event"], "change-submitted");
    assert_eq!(payload["webhook"], "ci");
    assert_eq!(payload["change"]["user"], "alice");
    assert_eq!(payload["change"]["workspace"], "alice-ws");
    assert_eq!(payload["change"]["description"], "third");
    assert!(
        payload["change"]["url"]
            .as_str()
            .expect("link")
            .ends_with(&format!("/changes/{c3}"))
    );
    assert_eq!(payload["files"][0]["depotFile"], "//depot/a/one");
    assert_eq!(payload["files"][0]["action"], "edit");

    // The status: delivered through c3, two sent, one failure.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let status = alice.json(&["webhooks", "--status"]);
        if status[0]["delivered"] == c3 || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.len(), 1);
    assert_eq!(str_field(&status[0], "name"), "ci");
    assert_eq!(status[0]["delivered"], c3);
    assert_eq!(status[0]["sent"], 2);
    assert_eq!(status[0]["failures"], 1);
    assert_eq!(str_field(&status[0], "lastStatus"), "200 OK");
    let metrics = crate::metrics::scrape(&server.metrics_url().expect("metrics"));
    assert_eq!(
        crate::metrics::value(&metrics, "keel_webhook_deliveries_total", &[]),
        2.0
    );
    assert_eq!(
        crate::metrics::value(&metrics, "keel_webhook_failures_total", &[]),
        1.0
    );
    assert_eq!(
        crate::metrics::value(&metrics, "keel_webhooks_retrying", &[]),
        0.0
    );
}

#[test]
fn a_receiver_that_was_down_gets_every_change_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp");
    let (mut server, alice) = setup(dir.path());
    // A port with nothing listening: the receiver is down.
    let port = closed_port();
    save_table_ok(
        &alice,
        &[format!("down //depot/... http://127.0.0.1:{port}/")],
    );
    let c1 = submit_files(&alice, &["x/one"], "one");
    let c2 = submit_files(&alice, &["x/two"], "two");
    let failing = status_after_failures(&alice, 2);
    assert!(failing[0]["delivered"].as_u64().expect("delivered") < c1);
    assert!(
        str_field(&failing[0], "lastStatus").contains("cannot connect"),
        "{failing:?}"
    );
    // The submits were not held up, and a restart loses nothing owed.
    server.restart_same_address();
    let receiver = Receiver::start(
        TcpListener::bind(("127.0.0.1", port)).expect("rebind"),
        vec![],
    );
    let got = receiver.wait_ok(2);
    let changes: Vec<u64> = got.iter().map(|d| d.change()).collect();
    assert_eq!(changes, vec![c1, c2]);
    assert!(
        got.iter().all(|d| d.header("x-keel-signature").is_none()),
        "no secret, no signature"
    );
}

#[test]
fn a_bad_line_is_refused_by_number_and_only_super_users_see_the_table() {
    let dir = tempfile::tempdir().expect("temp");
    let (server, alice) = setup(dir.path());
    let good = "ci //depot/... http://127.0.0.1:9/hook".to_string();
    assert!(
        save_table(&alice, std::slice::from_ref(&good))
            .status
            .success()
    );
    let out = save_table(
        &alice,
        &[
            good.clone(),
            "two //depot/... ftp://127.0.0.1/x".to_string(),
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("ftp://127.0.0.1/x"),
        "{err}"
    );
    let out = save_table(
        &alice,
        &["three //depot/... http://127.0.0.1:70000/".to_string()],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("70000"));
    // The table is as it was.
    let table = alice.json(&["webhooks", "-o"]);
    assert_eq!(table.len(), 1);
    assert_eq!(str_field(&table[0], "url"), "http://127.0.0.1:9/hook");
    let text = alice.ok(&["webhooks", "-o"]);
    assert!(text.contains(&format!("Webhooks:\n\t{good}")), "{text}");

    protect(
        &alice,
        &["write user * * //...", "super user alice * //..."],
    );
    let bob = workspace_on(&server, dir.path(), "bob", "bob-ws");
    let err = bob.fail(&["webhooks", "-o"]);
    assert!(err.contains("super"), "{err}");
    let out = save_table(&bob, &[]);
    assert!(!out.status.success());
    assert_eq!(
        alice.json(&["webhooks", "-o"]).len(),
        1,
        "bob changed nothing"
    );
}

/// The "receiver down for a minute", with the retry knobs making a minute a couple of
/// seconds: the server keeps retrying (back-off between 100 and 300 ms) without a restart and
/// without holding up submits; once the receiver is up, each change arrives exactly once, in
/// order, signed.
#[test]
fn a_receiver_down_for_a_while_gets_each_change_once_when_it_is_up() {
    let dir = tempfile::tempdir().expect("temp");
    let (_server, alice) = setup(dir.path());
    let port = closed_port();
    save_table_ok(
        &alice,
        &[format!("later //depot/... http://127.0.0.1:{port}/ k3y")],
    );
    let c1 = submit_files(&alice, &["x/one"], "one");
    let c2 = submit_files(&alice, &["x/two"], "two");
    // Down long enough for several attempts (bounded wait).
    status_after_failures(&alice, 4);
    let receiver = Receiver::start(
        TcpListener::bind(("127.0.0.1", port)).expect("rebind"),
        vec![],
    );
    let c3 = submit_files(&alice, &["x/three"], "three");
    receiver.wait_ok(3);
    // Give a duplicate the time to show up (bounded), then count.
    std::thread::sleep(Duration::from_millis(700));
    let got = receiver.got.lock().expect("lock").clone();
    let changes: Vec<u64> = got.iter().map(|d| d.change()).collect();
    assert_eq!(changes, vec![c1, c2, c3], "each once, in order");
    for d in &got {
        let signature = d.header("x-keel-signature").expect("signed");
        assert_eq!(signature, format!("sha256={}", hmac_hex("k3y", &d.body)));
    }
}
