//! `keel bench` end to end at tiny sizes: every workload runs through the real binary against a
//! `keel serve` child it starts itself, and its JSON report is consistent with what was asked.

use std::process::Command;

use serde_json::Value;

const KEEL: &str = env!("CARGO_BIN_EXE_keel");

/// Runs `keel --json bench ARGS` and parses its one-line report.
fn bench(args: &[&str]) -> Value {
    let out = Command::new(KEEL)
        .arg("--json")
        .arg("bench")
        .args(args)
        .env_remove("KEEL_SERVER")
        .output()
        .expect("run keel bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "keel bench {args:?} failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("a report line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn n(report: &Value, key: &str) -> f64 {
    report
        .get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number '{key}' in {report}"))
}

#[test]
fn browse_reports_browses_and_rates() {
    let r = bench(&[
        "browse",
        "--files",
        "300",
        "--seconds",
        "1",
        "--clients",
        "2",
    ]);
    assert_eq!(r["workload"], "browse");
    assert!(n(&r, "browses") > 0.0, "{r}");
    assert!(n(&r, "unique_paths") <= 300.0 && n(&r, "unique_paths") > 0.0);
    // Five dirs levels, one fstat and one filelog per browse.
    assert!(n(&r, "dirs_calls") >= 5.0 * n(&r, "browses"));
    assert!(n(&r, "fstat_calls") >= n(&r, "browses"));
    assert!(n(&r, "max_dirs_per_s") > 0.0 && n(&r, "max_filelog_per_s") > 0.0);
}

/// `--p4`: the same clients browse through the P4 listener too, and the report shows both.
#[test]
fn browse_through_the_p4_listener_reports_beside_native() {
    let r = bench(&[
        "browse",
        "--files",
        "300",
        "--seconds",
        "1",
        "--clients",
        "2",
        "--p4",
    ]);
    assert!(n(&r, "browses") > 0.0, "{r}");
    assert!(n(&r, "p4_browses") > 0.0, "{r}");
    assert!(n(&r, "p4_dirs_calls") >= 5.0 * n(&r, "p4_browses"), "{r}");
    assert!(n(&r, "p4_fstat_calls") >= n(&r, "p4_browses"), "{r}");
    assert!(n(&r, "p4_filelog_p50_ms") > 0.0, "{r}");
    assert!(n(&r, "p4_vs_native_browses") > 0.0, "{r}");
}

#[test]
fn ping_counts_every_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("raw.jsonl");
    let r = bench(&[
        "ping",
        "--seconds",
        "1",
        "--clients",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r["workload"], "ping");
    assert!(n(&r, "calls") > 0.0, "{r}");
    assert!(n(&r, "max_calls_per_s") > 0.0 && n(&r, "call_p50_ms") > 0.0);
    assert!(n(&r, "call_p99_ms") >= n(&r, "call_p50_ms"));
    // One raw sample per call, then the summary.
    let raw = std::fs::read_to_string(&out).expect("raw results");
    let calls = raw.lines().filter(|l| l.contains(r#""op":"info""#)).count();
    assert_eq!(calls as f64, n(&r, "calls"));
    assert!(
        raw.lines()
            .last()
            .unwrap()
            .contains(r#""mean_calls_per_s""#)
    );
}

#[test]
fn branchsubmit_submits_every_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("raw.csv");
    let r = bench(&[
        "branchsubmit",
        "--files",
        "500",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(n(&r, "files"), 500.0);
    assert!(n(&r, "commit_files_per_s") > 0.0);
    assert!(n(&r, "elapsed_ms") >= n(&r, "commit_ms"));
    // The started server's peak memory while generating, and from then on while branching.
    assert!(n(&r, "setup_peak_rss_mib") > 0.0);
    assert!(n(&r, "branch_peak_rss_mib") > 0.0);
    let csv = std::fs::read_to_string(&out).expect("raw results");
    assert_eq!(
        csv.lines().count(),
        1 + 4,
        "header + integrate/submit twice:\n{csv}"
    );
}

#[test]
fn sync_writes_the_whole_dataset() {
    let r = bench(&[
        "sync",
        "--files",
        "120",
        "--file-size",
        "2000",
        "--clients",
        "2",
        "--rounds",
        "2",
    ]);
    assert_eq!(n(&r, "files"), 120.0);
    assert!(n(&r, "bytes") > 0.0);
    assert_eq!(n(&r, "concurrent_syncs"), 4.0);
    assert!(n(&r, "concurrent_files") > 0.0);
    assert!(n(&r, "sync_p99_ms") >= n(&r, "sync_p50_ms"));
}

/// `--p4`: the same full and concurrent syncs through the P4 listener write the same files.
#[test]
fn sync_through_the_p4_listener_writes_the_same_dataset() {
    let r = bench(&[
        "sync",
        "--files",
        "120",
        "--file-size",
        "2000",
        "--clients",
        "2",
        "--rounds",
        "2",
        "--p4",
    ]);
    assert_eq!(n(&r, "p4_files"), n(&r, "files"), "{r}");
    assert_eq!(n(&r, "p4_bytes"), n(&r, "bytes"), "{r}");
    // Full syncs alternate between the ways; each way's median lies within its range.
    assert_eq!(n(&r, "full_syncs"), n(&r, "p4_full_syncs"), "{r}");
    assert!(n(&r, "p4_full_syncs") >= 3.0, "{r}");
    for way in ["", "p4_"] {
        let (min, median, max) = (
            n(&r, &format!("{way}full_sync_min_ms")),
            n(&r, &format!("{way}full_sync_ms")),
            n(&r, &format!("{way}full_sync_max_ms")),
        );
        assert!(0.0 < min && min <= median && median <= max, "{way}: {r}");
    }
    assert_eq!(n(&r, "p4_concurrent_syncs"), 4.0, "{r}");
    assert!(n(&r, "p4_concurrent_files") > 0.0, "{r}");
    assert!(n(&r, "p4_sync_p99_ms") >= n(&r, "p4_sync_p50_ms"), "{r}");
}

#[test]
fn loop_times_status_edit_submit_and_update_through_the_cli() {
    let r = bench(&[
        "loop",
        "--files",
        "200",
        "--file-size",
        "500",
        "--edits",
        "10",
        "--rounds",
        "1",
    ]);
    assert_eq!(r["workload"], "loop");
    assert_eq!(n(&r, "files"), 200.0);
    assert_eq!(n(&r, "edits"), 10.0);
    assert_eq!(n(&r, "rounds"), 1.0);
    for key in [
        "status_p50_ms",
        "edit_submit_p50_ms",
        "update_p50_ms",
        "first_status_ms",
    ] {
        assert!(n(&r, key) > 0.0, "{key}: {r}");
    }
    assert!(n(&r, "status_rss_mib") > 0.0, "{r}");
}

#[test]
fn replica_reports_lag_and_sync_throughput() {
    let r = bench(&[
        "replica",
        "--files",
        "120",
        "--file-size",
        "2000",
        "--clients",
        "2",
        "--submits",
        "5",
    ]);
    assert_eq!(r["workload"], "replica");
    assert_eq!(n(&r, "files"), 120.0);
    assert_eq!(n(&r, "submits"), 5.0);
    assert!(n(&r, "catchup_changes") > 0.0 && n(&r, "catchup_ms") > 0.0);
    assert!(n(&r, "lag_p99_ms") >= n(&r, "lag_p50_ms"));
    assert!(n(&r, "lag_max_ms") >= n(&r, "lag_p99_ms"));
    // Both clients wrote the whole tree from the replica.
    assert_eq!(n(&r, "sync_bytes"), 2.0 * n(&r, "tree_bytes"));
    assert!(n(&r, "sync_mb_per_s") > 0.0);
    assert!(n(&r, "submits_during_sync") >= 1.0);
    assert!(n(&r, "sync_lag_p99_ms") >= n(&r, "sync_lag_p50_ms"));
}

#[test]
fn proxy_warm_phase_takes_no_content_from_the_server() {
    let r = bench(&[
        "proxy",
        "--files",
        "120",
        "--file-size",
        "2000",
        "--clients",
        "3",
        "--runs",
        "2",
    ]);
    assert_eq!(n(&r, "files"), 120.0);
    assert_eq!(n(&r, "runs"), 2.0);
    let direct = n(&r, "direct_primary_bytes");
    assert!(direct > 0.0);
    // Three clients directly: three copies; through a cold proxy: one; warm: none.
    assert_eq!(n(&r, "cold_primary_bytes") * 3.0, direct);
    assert_eq!(n(&r, "warm_primary_bytes"), 0.0);
    assert!(n(&r, "warm_sync_p99_ms") >= n(&r, "warm_sync_p50_ms"));
    // The started server's and proxy's CPU time per phase; a direct phase leaves the proxy idle.
    assert!(n(&r, "direct_server_cpu_ms") >= 0.0 && n(&r, "warm_proxy_cpu_ms") >= 0.0);
}

#[test]
fn deltas_preview_every_file() {
    let r = bench(&["deltas", "--files", "300"]);
    assert_eq!(n(&r, "files"), 300.0);
    assert!(n(&r, "integrate_preview_ms") > 0.0 && n(&r, "sync_preview_ms") > 0.0);
}

#[test]
fn lockjam_probes_while_writing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let raw = dir.path().join("raw.jsonl");
    let r = bench(&[
        "lockjam",
        "--files",
        "300",
        "--branch-files",
        "200",
        "--submits",
        "3",
        "--out",
        raw.to_str().expect("utf-8 path"),
    ]);
    assert!(n(&r, "probe_loops") > 0.0, "{r}");
    assert!(n(&r, "probe_max_ms") >= n(&r, "probe_p50_ms"));
    assert_eq!(n(&r, "branch_files"), 200.0);
    assert!(n(&r, "submit_ratio") > 0.0);
    assert!(n(&r, "long_reads_completed") + n(&r, "probe_loops_during_long_read") > 0.0);
    assert!(n(&r, "checkpoints_completed") >= 1.0, "{r}");
    assert!(n(&r, "checkpoint_submit_ratio") > 0.0, "{r}");
    assert!(n(&r, "checkpoint_submit_ratio_to_first_quiet") > 0.0, "{r}");
    assert!(n(&r, "submit_p50_before_checkpoint_ms") > 0.0, "{r}");
    assert!(n(&r, "probe_max_during_checkpoint_ms") >= n(&r, "probe_p99_during_checkpoint_ms"));

    // The raw results time every probe loop, each of its five calls, and the branch's phases.
    let text = std::fs::read_to_string(&raw).expect("raw results written");
    let samples: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON sample"))
        .collect();
    let count = |op: &str| samples.iter().filter(|s| s["op"] == op).count();
    let loops = count("probe");
    assert_eq!(loops as f64, n(&r, "probe_loops"));
    for call in [
        "probe_info",
        "probe_changes",
        "probe_fstat",
        "probe_sync_n",
        "probe_opened",
    ] {
        assert_eq!(count(call), loops, "{call} samples in {text}");
    }
    assert_eq!(count("branch_integrate"), 1);
    assert_eq!(count("branch_commit"), 1);
    assert_eq!(
        count("submit_checkpoint") as f64,
        n(&r, "submits_during_checkpoint")
    );
    assert!(n(&r, "submits_during_checkpoint") >= 3.0);
    assert_eq!(count("submit_before_checkpoint"), 3);
}

#[test]
fn checkpoint_writes_and_restores_every_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = bench(&[
        "checkpoint",
        "--files",
        "300",
        "--work-dir",
        dir.path().to_str().expect("utf-8 path"),
    ]);
    assert_eq!(r["workload"], "checkpoint");
    // Three revisions per file, at least: every one is a record of the checkpoint.
    assert!(n(&r, "checkpoint_records") >= 900.0, "{r}");
    assert_eq!(n(&r, "restore_records"), n(&r, "checkpoint_records"), "{r}");
    assert!(n(&r, "checkpoint_bytes") > 0.0 && n(&r, "restore_peak_rss_mib") > 0.0);
}

#[test]
fn verify_checks_every_file_beside_a_raw_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let raw = dir.path().join("raw.jsonl");
    let r = bench(&[
        "verify",
        "--files",
        "60",
        "--file-size",
        "3000",
        "--rounds",
        "2",
        "--out",
        raw.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(r["workload"], "verify");
    assert_eq!(n(&r, "files"), 60.0);
    assert_eq!(n(&r, "content_bytes"), n(&r, "generated_bytes"));
    // The generated text compresses: fewer bytes on disk than in the revisions.
    assert!(n(&r, "stored_bytes") > 0.0 && n(&r, "stored_bytes") < n(&r, "content_bytes"));
    assert!(n(&r, "raw_read_warm_mb_per_s") > 0.0, "{r}");
    assert!(n(&r, "verify_warm_mb_per_s") > 0.0 && n(&r, "verify_warm_stored_mb_per_s") > 0.0);
    // Without --drop-caches there is no cold phase.
    assert_eq!(r["cold"], false);
    assert!(r.get("verify_cold_mb_per_s").is_none(), "{r}");
    let text = std::fs::read_to_string(&raw).expect("raw results written");
    for op in ["raw_read_warm", "verify_warm"] {
        let samples = text
            .lines()
            .filter(|l| l.contains(&format!(r#""op":"{op}""#)));
        assert_eq!(samples.count(), 2, "{op} in {text}");
    }
}

#[test]
fn generate_then_reuse_with_skip_generate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let root = root.to_str().expect("utf-8 path");
    let g = bench(&[
        "generate",
        "--shape",
        "branchsubmit",
        "--files",
        "200",
        "--root",
        root,
    ]);
    assert_eq!(n(&g, "files"), 200.0);
    assert_eq!(n(&g, "revisions"), 200.0);
    let r = bench(&[
        "branchsubmit",
        "--files",
        "200",
        "--root",
        root,
        "--skip-generate",
        "--runs",
        "1",
    ]);
    assert_eq!(n(&r, "files"), 200.0);
}

/// `--access secure`: the clients log in (security 3, a protections table) and the workload
/// still sees every file; the server then refuses clients without a ticket, and a later run
/// reuses the logins kept in the tickets file.
#[test]
fn secure_access_authenticates_every_client() {
    let server = crate::common::Server::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let tickets = dir.path().join("tickets");
    let tickets = tickets.to_str().expect("utf-8 path");
    let browse = |extra: &[&str]| {
        let mut args = vec![
            "browse",
            "--files",
            "300",
            "--seconds",
            "1",
            "--clients",
            "2",
            "--server",
            server.addr.as_str(),
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = browse(&["--access", "secure", "--tickets", tickets]);
    let r = bench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r["access"], "secure");
    assert!(n(&r, "browses") > 0.0, "{r}");
    assert!(n(&r, "fstat_calls") >= n(&r, "browses"));
    let saved = std::fs::read_to_string(dir.path().join("tickets")).expect("tickets file");
    assert_eq!(saved.lines().count(), 2, "{saved}");

    // Without a ticket the secured server refuses the workload's first call.
    let open = browse(&["--skip-generate"]);
    let out = Command::new(KEEL)
        .arg("bench")
        .args(&open)
        .env_remove("KEEL_SERVER")
        .output()
        .expect("run keel bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an open run was let in: {stderr}");
    assert!(stderr.contains("browser0"), "{stderr}");

    // The kept tickets are still valid: no login (a login would replace them), same results.
    let again = browse(&[
        "--skip-generate",
        "--access",
        "secure",
        "--tickets",
        tickets,
    ]);
    let r = bench(&again.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(n(&r, "browses") > 0.0, "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tickets")).expect("tickets file"),
        saved
    );

    let s = bench(&[
        "sync",
        "--files",
        "60",
        "--file-size",
        "500",
        "--clients",
        "2",
        "--rounds",
        "1",
        "--access",
        "secure",
    ]);
    assert_eq!(s["access"], "secure");
    assert_eq!(n(&s, "files"), 60.0);
    assert_eq!(n(&s, "concurrent_syncs"), 2.0);
}

#[test]
fn log_report_reads_a_generated_log() {
    let r = bench(&["log-report", "--lines", "2000"]);
    assert_eq!(r["workload"], "log-report");
    assert_eq!(n(&r, "lines"), 2000.0);
    assert!(n(&r, "lines_per_s") > 0.0, "{r}");
    assert!(n(&r, "report_peak_rss_mib") > 0.0, "{r}");
}
