//! `keel admin log-report` through the real binary: on a command log a real server wrote, and
//! on a written one whose numbers are known; `--html` writes one self-contained page whose
//! charts a real headless browser draws (required under KEEL_SLOW_TESTS=1, which
//! scripts/test.sh sets after installing Debian's `chromium`).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn line(time: &str, user: &str, command: &str, lapse: f64, wait: f64, result: &str) -> String {
    serde_json::json!({
        "time": time, "id": 1, "user": user, "workspace": format!("{user}-ws"),
        "command": command, "args": "", "lapse_ms": lapse, "writer_wait_ms": wait,
        "writer_hold_ms": 1.0, "rows_written": 2, "files_sent": 0, "files_received": 0,
        "bytes_sent": 100, "bytes_received": 10, "result": result,
        "code": if result == "ok" { "OK" } else { "NOT_FOUND" },
        "error": if result == "ok" { "" } else { "//depot/x - no such file(s)" },
    })
    .to_string()
}

/// A log with a build account that dominates 10:01, and a line that is not a record.
fn known_log(dir: &Path) -> PathBuf {
    let lines = [
        line("2026-11-25T10:00:01.000Z", "ann", "Fstat", 4.0, 0.0, "ok"),
        line("2026-11-25T10:00:30.000Z", "ann", "Submit", 40.0, 3.0, "ok"),
        line(
            "2026-11-25T10:01:05.000Z",
            "build",
            "Sync",
            9000.0,
            0.0,
            "ok",
        ),
        line(
            "2026-11-25T10:01:07.000Z",
            "build",
            "Submit",
            800.0,
            700.0,
            "ok",
        ),
        line(
            "2026-11-25T10:01:09.000Z",
            "ann",
            "Fstat",
            6.0,
            0.0,
            "error",
        ),
        "not json".to_string(),
        line("2026-11-25T10:05:00.000Z", "ann", "Fstat", 5.0, 0.0, "ok"),
    ];
    let path = dir.join("commands.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write log");
    path
}

fn keel(args: &[&str]) -> std::process::Output {
    Command::new(KEEL).args(args).output().expect("run keel")
}

#[test]
fn log_report_ranks_users_commands_and_minutes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = known_log(dir.path());
    let out = keel(&[
        "--json",
        "admin",
        "log-report",
        "--since",
        "2026-11-25 10:00",
        "--until",
        "2026-11-25T10:02",
        log.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let section = |name: &str| -> Vec<&serde_json::Value> {
        records
            .iter()
            .filter(|r| str_field(r, "section") == name)
            .collect()
    };
    let summary = section("summary")[0];
    assert_eq!(
        field(summary, "commands").as_u64(),
        Some(5),
        "the 10:05 line is outside"
    );
    assert_eq!(field(summary, "unreadable_lines").as_u64(), Some(1));
    assert_eq!(str_field(section("by_user")[0], "name"), "build");
    assert_eq!(str_field(section("by_workspace")[0], "name"), "build-ws");
    assert_eq!(str_field(section("by_total")[0], "name"), "Sync");
    assert_eq!(str_field(section("writer")[0], "name"), "Submit");
    assert_eq!(
        field(section("writer")[0], "writer_wait_ms").as_f64(),
        Some(703.0)
    );
    assert_eq!(
        field(section("slowest")[0], "lapse_ms").as_f64(),
        Some(9000.0)
    );
    let errors = section("errors");
    assert_eq!(errors.len(), 1);
    assert_eq!(str_field(errors[0], "code"), "NOT_FOUND");
    let minutes = section("minute");
    assert_eq!(minutes.len(), 2);
    assert_eq!(str_field(minutes[1], "minute"), "2026-11-25T10:01");
    assert_eq!(field(minutes[1], "commands").as_u64(), Some(3));
    assert_eq!(field(minutes[1], "p99_ms").as_f64(), Some(9000.0));

    // Text output names the same leader; a missing file is an error naming it.
    let text = keel(&["admin", "log-report", log.to_str().expect("utf-8")]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("Users by total time\n"));
    let missing = keel(&["admin", "log-report", "/nonexistent/commands.jsonl"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/commands.jsonl"));
}

#[test]
fn log_report_reads_what_a_server_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_at(&dir.path().join("root")).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    write(&a.cwd, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "one"]);
    let log = server.root.join("logs/commands.jsonl");
    // The writer appends off the request path: wait (bounded) for the submit's line.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("\"Submit\"")
    {
        assert!(std::time::Instant::now() < deadline, "no Submit line");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = keel(&[
        "--json",
        "admin",
        "log-report",
        log.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let users: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .filter(|r| str_field(r, "section") == "by_user")
        .collect();
    assert!(
        users.iter().any(|u| str_field(u, "name") == "alice"),
        "{text}"
    );
}

/// A headless browser to render with: `KEEL_BROWSER`, else `chromium` on the path.
fn browser() -> Option<PathBuf> {
    if let Ok(b) = std::env::var("KEEL_BROWSER") {
        return Some(PathBuf::from(b));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    })
}

#[test]
fn log_report_html_is_self_contained_and_its_charts_draw() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = known_log(dir.path());
    let page = dir.path().join("report.html");
    let out = keel(&[
        "admin",
        "log-report",
        "--html",
        page.to_str().expect("utf-8"),
        log.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("page written");
    // The one address in it is the SVG namespace's name, which is never fetched.
    let rest = html.replace("'http://www.w3.org/2000/svg'", "");
    for fetch in [
        "http:",
        "https:",
        " src=",
        "href=",
        "url(",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(
            !rest.contains(fetch),
            "the page would fetch something: {fetch}"
        );
    }
    assert!(html.contains("id=\"data\""));

    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("KEEL_SLOW_TESTS").is_none(),
            "no headless browser: scripts/test.sh installs Debian's chromium (or set KEEL_BROWSER)"
        );
        return;
    };
    let profile = dir.path().join("profile");
    let rendered = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run the browser");
    let dom = String::from_utf8_lossy(&rendered.stdout);
    assert!(
        dom.contains("data-drawn=\"3\""),
        "charts not drawn ({}):\n{}",
        String::from_utf8_lossy(&rendered.stderr),
        &dom[..dom.len().min(2000)]
    );
    // Each chart drew the three minutes of the log, and the tables were filled.
    assert_eq!(dom.matches("data-points=\"3\"").count(), 3, "{dom}");
    assert!(dom.contains("<td>build</td>"), "{dom}");
}
