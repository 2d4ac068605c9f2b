//! End-to-end: `keel serve --metrics-listen` and `keel proxy --metrics-listen` scraped over
//! real HTTP (hyper's client) and parsed with a Prometheus text parser (`prometheus-parse`)
//! after real CLI commands: the per-RPC counts, errors and histograms move by exactly what was
//! done, the store, journal, checkpoint and content values appear, `keel probe` lands in the
//! probe family, the proxy reports its hits, and a replica its applied position and lag.

use crate::common::{Client, Proxy, Server, create_workspace, workspace_on, write};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use prometheus_parse::{Sample, Scrape, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// A scrape: the HTTP status, the content type and the body.
fn get(url: &str) -> (u16, String, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let uri: http::Uri = url.parse().expect("metrics url");
        let authority = uri.authority().expect("host:port").to_string();
        let fetch = async {
            let stream = tokio::net::TcpStream::connect(&authority).await?;
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(std::io::Error::other)?;
            tokio::spawn(conn);
            let request = http::Request::get(uri.path())
                .header(http::header::HOST, &authority)
                .body(Empty::<Bytes>::new())
                .map_err(std::io::Error::other)?;
            let response = sender
                .send_request(request)
                .await
                .map_err(std::io::Error::other)?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(std::io::Error::other)?
                .to_bytes();
            Ok::<_, std::io::Error>((status, content_type, String::from_utf8_lossy(&body).into()))
        };
        tokio::time::timeout(Duration::from_secs(20), fetch)
            .await
            .expect("scrape within 20 s")
            .expect("scrape")
    })
}

/// Scrapes `url` and parses it; checks the OpenMetrics framing on the way.
pub(crate) fn scrape(url: &str) -> Scrape {
    let (status, content_type, body) = get(url);
    assert_eq!(status, 200, "{body}");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(body.ends_with("# EOF\n"), "no # EOF at the end:\n{body}");
    let scrape = Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).expect("parses");
    // Every family is documented: each sample's family has a HELP line.
    for sample in &scrape.samples {
        let family = ["_total", "_bucket", "_sum", "_count", "_created"]
            .iter()
            .find_map(|suffix| sample.metric.strip_suffix(suffix))
            .unwrap_or(&sample.metric);
        assert!(
            scrape.docs.contains_key(family) || scrape.docs.contains_key(&sample.metric),
            "{} has no HELP line",
            sample.metric
        );
    }
    scrape
}

/// The samples of `metric` whose labels include every `(name, value)` of `labels`.
fn find<'a>(s: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    s.samples
        .iter()
        .filter(|x| x.metric == metric)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .collect()
}

/// The value of a counter or gauge sample (0 when absent: a family with no calls yet).
pub(crate) fn value(s: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    find(s, metric, labels)
        .iter()
        .map(|x| match &x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            other => panic!("{metric} is not a single value: {other:?}"),
        })
        .sum()
}

/// The observation count of a histogram (its `+Inf` bucket; 0 when absent).
fn observations(s: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    find(s, metric, labels)
        .iter()
        .map(|x| match &x.value {
            Value::Histogram(buckets) => buckets
                .iter()
                .find(|b| b.less_than.is_infinite())
                .map_or(0.0, |b| b.count),
            other => panic!("{metric} is not a histogram: {other:?}"),
        })
        .sum()
}

fn calls(s: &Scrape, rpc: &str) -> f64 {
    value(s, "keel_rpc_calls_total", &[("rpc", rpc)])
}

/// A server with metrics on an ephemeral port, recounting its content every second.
fn server_with_metrics(dir: &Path) -> (Server, String) {
    let root = dir.join("server");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("keel.toml"), "metrics_content_scan_secs = 1\n").expect("config");
    let server = Server::start_full(&root, &[], &["--metrics-listen", "127.0.0.1:0"])
        .expect("server starts");
    let url = server
        .metrics_url()
        .expect("the listening line names the metrics address");
    (server, url)
}

fn submit_one(w: &Client, rel: &str, text: &str) {
    write(&w.cwd, rel, text);
    w.ok(&["add", rel]);
    w.ok(&["submit", "-d", rel]);
}

#[test]
fn the_counts_move_by_what_was_done() {
    let dir = tempfile::tempdir().expect("temp");
    let (server, url) = server_with_metrics(dir.path());
    let w = workspace_on(&server, dir.path(), "alice", "alice-ws");
    submit_one(&w, "a.txt", "hello metrics\n");
    let before = scrape(&url);
    assert!(
        find(&before, "keel_checkpoint_age_seconds", &[]).is_empty(),
        "no checkpoint yet"
    );

    for _ in 0..3 {
        w.ok(&["fstat", "//depot/a.txt"]);
    }
    w.ok(&["print", "//depot/a.txt"]);
    // A change that does not exist: one error on Describe.
    w.fail(&["describe", "999"]);
    submit_one(&w, "b.txt", "second\n");
    w.ok(&["admin", "checkpoint"]);
    let after = scrape(&url);

    let delta = |rpc: &str| calls(&after, rpc) - calls(&before, rpc);
    assert_eq!(delta("Fstat"), 3.0);
    assert_eq!(delta("Print"), 1.0);
    assert_eq!(delta("Describe"), 1.0);
    assert_eq!(delta("Submit"), 1.0);
    assert_eq!(delta("Checkpoint"), 1.0);
    let histogram = |s: &Scrape| observations(s, "keel_rpc_duration_seconds", &[("rpc", "Fstat")]);
    assert_eq!(histogram(&after) - histogram(&before), 3.0);
    let errors = |s: &Scrape, rpc: &str| value(s, "keel_rpc_errors_total", &[("rpc", rpc)]);
    assert_eq!(
        errors(&after, "Describe") - errors(&before, "Describe"),
        1.0
    );
    assert_eq!(errors(&after, "Fstat"), 0.0);
    assert_eq!(errors(&after, "Submit"), 0.0);
    // Every call had ended before its command exited.
    assert_eq!(value(&after, "keel_rpc_active", &[]), 0.0);
    // The metrics came over HTTP, not gRPC: nothing counted them as calls.
    assert!(find(&after, "keel_rpc_calls_total", &[("rpc", "other")]).is_empty());

    // Bytes in and out: the submit sent its file's content, the print received it.
    let bytes = |s: &Scrape, metric: &str, rpc: &str| value(s, metric, &[("rpc", rpc)]);
    let submit_in = bytes(&after, "keel_rpc_received_bytes_total", "Submit")
        - bytes(&before, "keel_rpc_received_bytes_total", "Submit");
    assert!(submit_in >= "second\n".len() as f64, "{submit_in}");
    let print_out = bytes(&after, "keel_rpc_sent_bytes_total", "Print")
        - bytes(&before, "keel_rpc_sent_bytes_total", "Print");
    assert!(print_out > 0.0, "{print_out}");

    // The values read from where they live.
    assert!(
        value(&after, "keel_content_sent_bytes_total", &[])
            > value(&before, "keel_content_sent_bytes_total", &[])
    );
    assert!(
        value(&after, "keel_writer_jobs_total", &[])
            > value(&before, "keel_writer_jobs_total", &[])
    );
    assert_eq!(value(&after, "keel_writer_queued", &[]), 0.0);
    assert!(value(&after, "keel_writer_hold_seconds_total", &[]) > 0.0);
    assert!(!find(&after, "keel_wal_bytes", &[]).is_empty());
    assert!(!find(&after, "keel_journal_bytes", &[]).is_empty());
    assert!(value(&after, "keel_journal_position", &[]) > 0.0);
    let age = find(&after, "keel_checkpoint_age_seconds", &[]);
    assert_eq!(age.len(), 1, "one checkpoint age after a checkpoint");
    assert!(value(&after, "keel_checkpoint_age_seconds", &[]) < 600.0);
    assert!(find(&after, "keel_replica_lag_records", &[]).is_empty());

    // The content store's totals, recounted every second: two files of distinct content.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut counted = scrape(&url);
    while value(&counted, "keel_content_objects", &[]) < 2.0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        counted = scrape(&url);
    }
    assert_eq!(value(&counted, "keel_content_objects", &[]), 2.0);
    assert!(value(&counted, "keel_content_bytes", &[]) > 0.0);

    // Only /metrics answers.
    let (status, _, body) = get(&url.replace("/metrics", "/other"));
    assert_eq!(status, 404);
    assert!(body.contains("/other"), "{body}");
}

#[test]
fn the_probe_lands_in_the_probe_family() {
    let dir = tempfile::tempdir().expect("temp");
    let (server, url) = server_with_metrics(dir.path());
    let w = workspace_on(&server, dir.path(), "prober", "probe-ws");
    submit_one(&w, "p.txt", "probe me\n");
    w.ok(&["sync"]);
    let runs = w.json(&["probe", "--once", "--file", "//depot/p.txt"]);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["recorded"], true, "{run}");
    assert_eq!(run["failed"], serde_json::json!([]), "{run}");
    for command in ["info", "changes", "fstat", "sync", "opened"] {
        let ms = run[format!("{command}Ms")].as_f64().expect("a latency");
        assert!(ms > 0.0, "{command}: {run}");
    }
    let text = w.ok(&["probe", "--once"]);
    assert!(text.contains(" fstat ") && text.contains(" ms"), "{text}");

    let s = scrape(&url);
    for command in ["info", "changes", "fstat", "sync", "opened"] {
        let n = observations(&s, "keel_probe_duration_seconds", &[("command", command)]);
        assert_eq!(n, 2.0, "{command}");
    }
    assert_eq!(value(&s, "keel_probe_failures_total", &[]), 0.0);
    assert_eq!(calls(&s, "ReportProbe"), 2.0);
}

/// A probe whose fstat and sync -n meet a file the probe user may not list: the run names the
/// failed steps and the file, exits non-zero, and the failure is counted in the metrics and
/// written to the command log.
#[test]
fn a_failing_probe_step_is_told_counted_and_logged() {
    let dir = tempfile::tempdir().expect("temp");
    let (server, url) = server_with_metrics(dir.path());
    let admin = workspace_on(&server, dir.path(), "alice", "alice-ws");
    submit_one(&admin, "secret/s.txt", "hidden\n");
    let form = "Protections:\n\twrite user * * //...\n\tlist user prober * -//depot/secret/...\n\tsuper user alice * //...\n";
    let out = admin.run_stdin(&["protect", "-i"], form);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = workspace_on(&server, dir.path(), "prober", "probe-ws");
    let out = w.run(&[
        "--json",
        "probe",
        "--once",
        "--file",
        "//depot/secret/s.txt",
    ]);
    assert!(!out.status.success(), "the probe passed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let run: serde_json::Value = serde_json::from_str(stdout.lines().next().expect("a run"))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    // `sync -n` of a file the user may not list finds nothing to do; `fstat` fails.
    assert_eq!(run["failed"], serde_json::json!(["fstat"]), "{run}");
    assert_eq!(run["recorded"], true, "{run}");
    assert!(
        stderr.contains("probe fstat:") && stderr.contains("//depot/secret/s.txt"),
        "{stderr}"
    );

    let s = scrape(&url);
    assert_eq!(
        value(&s, "keel_probe_failures_total", &[("command", "fstat")]),
        1.0
    );
    assert_eq!(
        value(&s, "keel_probe_failures_total", &[("command", "info")]),
        0.0
    );
    assert_eq!(
        observations(&s, "keel_probe_duration_seconds", &[("command", "fstat")]),
        1.0
    );
    let log = server.root.join("logs/commands.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    let fstat = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|r| r["command"] == "Fstat" && r["user"] == "prober");
        if let Some(found) = found {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "no probe fstat in the log:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(fstat["result"], "error", "{fstat}");
    assert_eq!(fstat["code"], "NOT_FOUND", "{fstat}");
    assert!(
        fstat["args"]
            .as_str()
            .is_some_and(|a| a.contains("//depot/secret/s.txt")),
        "{fstat}"
    );
}

/// A probe that cannot reach its server fails, naming the address, and exits non-zero.
#[test]
fn a_probe_of_a_stopped_server_fails_naming_it() {
    let dir = tempfile::tempdir().expect("temp");
    let (mut server, _url) = server_with_metrics(dir.path());
    let w = workspace_on(&server, dir.path(), "prober", "probe-ws");
    submit_one(&w, "p.txt", "probe me\n");
    server.kill9();
    let err = w.fail(&["probe", "--once", "--file", "//depot/p.txt"]);
    assert!(err.contains(&w.addr), "{err}");
}

#[test]
fn a_server_without_metrics_answers_the_probe_and_keeps_nothing() {
    let dir = tempfile::tempdir().expect("temp");
    let server = Server::start_full(&dir.path().join("server"), &[], &[]).expect("starts");
    assert_eq!(server.metrics_url(), None);
    let w = workspace_on(&server, dir.path(), "prober", "probe-ws");
    submit_one(&w, "p.txt", "probe me\n");
    let runs = w.json(&["probe", "--once"]);
    assert_eq!(runs[0]["recorded"], false, "{:?}", runs);
    assert_eq!(runs[0]["file"], "//depot/p.txt");
}

#[test]
fn an_unusable_metrics_address_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().expect("temp");
    let err = Server::start_full(
        &dir.path().join("server"),
        &[],
        &["--metrics-listen", "no-such-host.invalid:0"],
    )
    .err()
    .expect("refuses to start");
    assert!(
        err.contains("cannot listen for metrics on no-such-host.invalid:0"),
        "{err}"
    );
}

#[test]
fn the_proxy_reports_its_hits() {
    let dir = tempfile::tempdir().expect("temp");
    let server = Server::start_full(&dir.path().join("server"), &[], &[]).expect("starts");
    let w = workspace_on(&server, dir.path(), "alice", "alice-ws");
    submit_one(&w, "big.txt", &"cached line\n".repeat(1000));
    let proxy = Proxy::start(
        &server.addr,
        &dir.path().join("cache"),
        &["--metrics-listen", "127.0.0.1:0"],
    )
    .expect("proxy starts");
    let url = proxy
        .metrics_url()
        .expect("the proxy names its metrics address");
    let root = dir.path().join("via-proxy");
    let c = create_workspace(proxy.client("bob", "bob-ws", &root), &root, "bob-ws");
    c.ok(&["print", "//depot/big.txt"]);
    c.ok(&["print", "//depot/big.txt"]);
    let s = scrape(&url);
    assert_eq!(value(&s, "keel_proxy_misses_total", &[]), 1.0);
    assert_eq!(value(&s, "keel_proxy_hits_total", &[]), 1.0);
    assert_eq!(value(&s, "keel_proxy_hit_ratio", &[]), 0.5);
    assert_eq!(value(&s, "keel_proxy_cache_files", &[]), 1.0);
    assert!(value(&s, "keel_proxy_bytes_served_total", &[]) > 0.0);
}

/// Scrapes `url` until `done` holds for a scrape (bounded); returns that scrape.
fn scrape_until(url: &str, what: &str, done: impl Fn(&Scrape) -> bool) -> Scrape {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = scrape(url);
        if done(&s) {
            return s;
        }
        if Instant::now() > deadline {
            let replica: Vec<String> = s
                .samples
                .iter()
                .filter(|x| x.metric.starts_with("keel_replica_"))
                .map(|x| format!("{} {:?}", x.metric, x.value))
                .collect();
            panic!("{what}: not within 30 s; last scrape: {replica:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_replica_reports_its_position_and_a_lag_that_grows_while_the_primary_is_down() {
    let dir = tempfile::tempdir().expect("temp");
    let mut primary = Server::start_full(
        &dir.path().join("primary"),
        &[],
        &["--metrics-listen", "127.0.0.1:0"],
    )
    .expect("primary starts");
    let w = workspace_on(&primary, dir.path(), "alice", "ws");
    submit_one(&w, "a.txt", "one\n");
    submit_one(&w, "b.txt", "two\n");
    let replica = Server::start_full(
        &dir.path().join("replica"),
        &[],
        &[
            "--replica-of",
            &primary.addr,
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    )
    .expect("replica starts");
    let url = replica.metrics_url().expect("metrics address");
    // The primary's newest committed journal position, from its own metrics.
    let position = |p: &Server| {
        let url = p.metrics_url().expect("primary metrics address");
        value(&scrape(&url), "keel_journal_position", &[])
    };
    let committed = position(&primary);
    assert!(committed > 0.0);

    // Caught up: at least as far as the primary was (it may commit more meanwhile, e.g. a
    // client's access time), level with what it last heard, connected, no lag.
    let caught_up = scrape_until(&url, "the replica catches up", |s| {
        value(s, "keel_replica_applied_position", &[]) >= committed
            && value(s, "keel_replica_connected", &[]) == 1.0
            && value(s, "keel_replica_lag_records", &[]) == 0.0
    });
    let applied = value(&caught_up, "keel_replica_applied_position", &[]);
    assert_eq!(
        value(&caught_up, "keel_replica_primary_position", &[]),
        applied
    );
    assert_eq!(value(&caught_up, "keel_replica_lag_seconds", &[]), 0.0);

    // The primary stops: the replica says so and its lag in seconds keeps growing.
    primary.kill9();
    let down = scrape_until(&url, "the replica sees the primary gone", |s| {
        value(s, "keel_replica_connected", &[]) == 0.0
            && value(s, "keel_replica_lag_seconds", &[]) > 0.0
    });
    let first = value(&down, "keel_replica_lag_seconds", &[]);
    let later = scrape_until(&url, "the lag grows", |s| {
        value(s, "keel_replica_lag_seconds", &[]) > first
    });
    assert_eq!(value(&later, "keel_replica_applied_position", &[]), applied);

    // Back: it reconnects, applies what was committed meanwhile, and the lag returns to 0.
    primary.restart_same_address();
    submit_one(&w, "c.txt", "three\n");
    let on_replica = Client {
        addr: replica.addr.clone(),
        ..w.clone()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !on_replica.run(&["files", "//depot/c.txt"]).status.success() {
        assert!(
            Instant::now() < deadline,
            "the replica applies c.txt: not within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let back = scrape_until(&url, "the lag returns to 0", |s| {
        value(s, "keel_replica_connected", &[]) == 1.0
            && value(s, "keel_replica_lag_records", &[]) == 0.0
            && value(s, "keel_replica_lag_seconds", &[]) == 0.0
    });
    assert!(value(&back, "keel_replica_applied_position", &[]) > applied);
    assert_eq!(
        value(&back, "keel_replica_primary_position", &[]),
        value(&back, "keel_replica_applied_position", &[])
    );
}
