//! limits: the scripted check of the server's limits against one hostile address (issue 28,
//! rows 4 and 5). (a) Thousands of idle TCP connections (some sending the HTTP/2 preface and
//! nothing more) from a second loopback address while a legitimate user's `keel files` is
//! timed through the real command line from 127.0.0.1; (b) changes with maximal descriptions,
//! then concurrent `keel changes -l`, with the server's peak resident memory over that phase.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use keel_client::ops::OpenFor;

use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::rpc;
use crate::stats::{Latencies, ms};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Idle connections opened from `from`.
    pub idle: u32,
    /// Of them, how many send the HTTP/2 client preface (and then nothing).
    pub preface: u32,
    /// The hostile client's loopback address (the user runs from 127.0.0.1).
    pub from: [u8; 4],
    /// `keel files` runs timed before and while the connections are held.
    pub runs: u32,
    /// Changes submitted with a description of `description_bytes` each.
    pub descriptions: u32,
    /// Bytes of each description (the server's `max_description_bytes`).
    pub description_bytes: usize,
    /// Concurrent `keel changes -l`.
    pub listers: u32,
    pub server_pid: Option<u32>,
    pub exe: PathBuf,
}

/// The HTTP/2 client preface and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Runs the check against the server at `addr` (plain `HOST:PORT`).
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let open_files = keel_tls::raise_open_files_limit();
    let target: SocketAddr = addr.parse().map_err(|_| {
        BenchError::Check(format!(
            "limits needs a plain HOST:PORT server address, not {addr}"
        ))
    })?;
    let conn = rpc::connect(addr, "limiter", "limits-ws").await?;
    let root = std::env::temp_dir().join("keel-bench-limits");
    rpc::save_workspace(
        &conn,
        "limits-ws",
        &root,
        vec!["//depot/limits/... //limits-ws/...".into()],
    )
    .await?;
    let files: Vec<String> = (0..20).map(|i| format!("f{i:02}.txt")).collect();
    rpc::open(
        &conn,
        OpenFor::Add,
        files.iter().map(|f| format!("//limits-ws/{f}")).collect(),
    )
    .await?;
    let uploads = files
        .iter()
        .map(|f| format!("//depot/limits/{f}"))
        .collect();
    rpc::submit(&conn, "limits: twenty small files", uploads, |path| {
        format!("{path}\n").into_bytes()
    })
    .await?;

    let cli = Cli {
        exe: config.exe.clone(),
        addr: addr.to_string(),
        cwd: std::env::temp_dir(),
    };
    let baseline = cli.time_files(config.runs).await?;

    // (a) The hostile address's connections, held while the user works.
    let opened_at = Instant::now();
    let mut held = Vec::new();
    let mut refused_connects = 0u64;
    for i in 0..config.idle {
        match connect_from(config.from, target).await {
            Ok(tcp) => {
                if i < config.preface {
                    let _ = tcp.try_write(PREFACE);
                }
                held.push(tcp);
            }
            Err(_) => refused_connects += 1,
        }
    }
    let open_ms = ms(opened_at.elapsed());
    // Give the server a moment to close what is past its caps.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = cli.time_files(config.runs).await?;
    let still_open = held.iter().filter(|t| is_open(t)).count() as u64;
    drop(held);

    // (b) Maximal descriptions listed concurrently.
    let pid = config.server_pid;
    let rss_before = pid.and_then(rss_kib).unwrap_or(0);
    let reset = pid.is_some_and(crate::server::reset_peak_rss);
    for d in 0..config.descriptions {
        let name = format!("big{d}.txt");
        rpc::open(&conn, OpenFor::Add, vec![format!("//limits-ws/{name}")]).await?;
        let description = description(d, config.description_bytes);
        let upload = vec![format!("//depot/limits/{name}")];
        rpc::submit(&conn, &description, upload, |path| {
            format!("{path}\n").into_bytes()
        })
        .await?;
    }
    let listed_at = Instant::now();
    let mut listers = Vec::new();
    for _ in 0..config.listers.max(1) {
        let cli = cli.clone();
        listers.push(tokio::task::spawn_blocking(move || {
            cli.run(&["changes", "-l"])
        }));
    }
    let mut listed_bytes = 0u64;
    for lister in listers {
        let out = lister
            .await
            .map_err(|e| BenchError::Check(format!("changes -l task failed: {e}")))??;
        listed_bytes += out.len() as u64;
    }
    let list_ms = ms(listed_at.elapsed());
    let min_expected = (config.descriptions as u64)
        * (config.description_bytes as u64)
        * (config.listers.max(1) as u64);
    if listed_bytes < min_expected {
        return Err(BenchError::Check(format!(
            "changes -l printed {listed_bytes} bytes in all, fewer than the descriptions' {min_expected}"
        )));
    }
    let peak = pid.and_then(crate::server::peak_rss_kib).unwrap_or(0);

    let mut report = Report::new("limits");
    report
        .set("open_files_soft", open_files.now.unwrap_or(0))
        .set("idle_connections", config.idle)
        .set("preface_connections", config.preface.min(config.idle))
        .set("connects_failed", refused_connects)
        .set("connect_ms", open_ms)
        .set("connections_left_open_by_server", still_open)
        .set("files_runs", config.runs)
        .set("files_baseline_p50_ms", ms(baseline.percentile(50.0)))
        .set("files_baseline_max_ms", ms(baseline.max()))
        .set("files_held_p50_ms", ms(during.percentile(50.0)))
        .set("files_held_max_ms", ms(during.max()))
        .set("descriptions", config.descriptions)
        .set("description_bytes", config.description_bytes as u64)
        .set("listers", config.listers)
        .set("changes_l_wall_ms", list_ms)
        .set("changes_l_bytes_printed", listed_bytes)
        .set("server_rss_before_mib", rss_before / 1024)
        .set("peak_rss_reset", reset)
        .set("server_peak_rss_listing_mib", peak / 1024);
    Ok(report)
}

/// A description of `bytes` bytes: lines of text, distinct per change.
fn description(n: u32, bytes: usize) -> String {
    let line = format!("change {n}: a long description line of the limits check.\n");
    let mut text = String::with_capacity(bytes);
    while text.len() + line.len() <= bytes {
        text.push_str(&line);
    }
    while text.len() < bytes {
        text.push('.');
    }
    text
}

/// A TCP connection to `to` from the loopback address `from`.
async fn connect_from(from: [u8; 4], to: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    tokio::time::timeout(Duration::from_secs(5), socket.connect(to))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

/// Whether the server still holds `tcp` open (no end of input, no reset).
fn is_open(tcp: &tokio::net::TcpStream) -> bool {
    let mut buf = [0u8; 1024];
    loop {
        match tcp.try_read(&mut buf) {
            Ok(0) => return false,
            // The server's SETTINGS to a preface: read past them.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}

/// Resident memory of process `pid` now, in KiB (Linux `VmRSS`).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The real command line as the legitimate user (from 127.0.0.1).
#[derive(Clone)]
struct Cli {
    exe: PathBuf,
    addr: String,
    cwd: PathBuf,
}

impl Cli {
    /// Runs `keel ARGS`; its stdout, or an error unless it exits 0.
    fn run(&self, args: &[&str]) -> Result<String> {
        let mut cmd = Command::new(&self.exe);
        for (key, _) in std::env::vars() {
            if key.starts_with("KEEL_") {
                cmd.env_remove(key);
            }
        }
        let what = format!("keel {}", args.join(" "));
        let mut child = cmd
            .args(args)
            .current_dir(&self.cwd)
            .env("KEEL_SERVER", &self.addr)
            .env("KEEL_USER", "limits-user")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::io(format!("starting {what}"), e))?;
        let mut out = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_string(&mut out);
        }
        let mut err = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        let status = child
            .wait()
            .map_err(|e| BenchError::io(format!("waiting for {what}"), e))?;
        if !status.success() {
            return Err(BenchError::Check(format!(
                "{what} failed ({status}): {}",
                err.trim()
            )));
        }
        Ok(out)
    }

    /// Times `runs` runs of `keel files //depot/limits/...`.
    async fn time_files(&self, runs: u32) -> Result<Latencies> {
        let cli = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut latencies = Latencies::default();
            for _ in 0..runs.max(1) {
                let began = Instant::now();
                let out = cli.run(&["files", "//depot/limits/..."])?;
                latencies.push(began.elapsed());
                if out.lines().count() < 20 {
                    return Err(BenchError::Check(format!(
                        "keel files listed fewer than the 20 files: {out}"
                    )));
                }
            }
            Ok(latencies)
        })
        .await
        .map_err(|e| BenchError::Check(format!("keel files task failed: {e}")))?
    }
}
