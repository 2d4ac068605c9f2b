//! Running one trigger command: no shell, a minimal environment, a fresh empty working
//! directory, stdout and stderr read together (bounded), and a time limit after which the
//! command and its whole process group are killed.

use crate::error::{TriggerFailure, TriggerFailureReason};
use keel_core::TriggerVars;
use keel_core::trigger::{Trigger, split_command};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How one run goes: the limits (`ServiceConfig`) and the server the trigger talks back to.
pub(crate) struct RunLimits {
    pub timeout: Duration,
    pub output_bytes: usize,
}

/// The environment a trigger sees besides `PATH` and `HOME`: the server, the caller and a
/// ticket of this run, so `keel` commands in the script reach this server as the user who ran
/// the command, at any security level.
pub(crate) struct TriggerEnv<'a> {
    pub server: &'a str,
    pub user: &'a str,
    pub workspace: &'a str,
    /// `KEEL_TICKET`: valid for `user`, on this server, while this run lasts.
    pub ticket: &'a str,
}

/// Runs `trigger` in `dir` (an empty directory the caller owns) with `vars` as argv words
/// (`TriggerVars::argv`). Ok when it exited 0 (its output is dropped); otherwise the failure, with
/// its output.
pub(crate) fn run(
    trigger: &Trigger,
    subject: &str,
    change: Option<u64>,
    vars: &TriggerVars,
    env: &TriggerEnv,
    dir: &Path,
    limits: &RunLimits,
) -> Result<(), Box<TriggerFailure>> {
    let failure = |reason: TriggerFailureReason, output: String| {
        Box::new(TriggerFailure {
            name: trigger.name.clone(),
            kind: trigger.kind,
            subject: subject.to_string(),
            change,
            reason,
            output,
        })
    };
    // The table was checked when saved, so the command splits. Values are argv words, never
    // script text (`TriggerVars::argv`).
    let argv = vars.argv(&split_command(&trigger.command).unwrap_or_default());
    let Some((program, args)) = argv.split_first() else {
        return Err(failure(
            TriggerFailureReason::CannotRun {
                program: String::new(),
                error: "the command is empty".into(),
            },
            String::new(),
        ));
    };
    let cannot_run = |e: std::io::Error| {
        failure(
            TriggerFailureReason::CannotRun {
                program: program.clone(),
                error: e.to_string(),
            },
            String::new(),
        )
    };
    let (reader, writer) = std::io::pipe().map_err(cannot_run)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("KEEL_SERVER", env.server)
        .env("KEEL_USER", env.user)
        .env("KEEL_WORKSPACE", env.workspace)
        .env("KEEL_TICKET", env.ticket)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer.try_clone().map_err(cannot_run)?)
        .stderr(writer)
        // Its own process group, so a time-out kills whatever it started too.
        .process_group(0);
    if let Some(home) = std::env::var_os("HOME") {
        command.env("HOME", home);
    }
    // On a TLS server, a trigger's `keel` call must trust the server like any client: it
    // uses the server user's trust file (`HOME`'s, or the one `KEEL_TRUST` names).
    if let Some(trust) = std::env::var_os("KEEL_TRUST") {
        command.env("KEEL_TRUST", trust);
    }
    let child = command.spawn();
    // The command holds the parent's ends of the pipe's write side: drop them, so the
    // reader sees the end of the output when the trigger's processes are gone.
    drop(command);
    let mut child = child.map_err(cannot_run)?;
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + limits.timeout;

    let output = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    {
        let output = output.clone();
        let limit = limits.output_bytes;
        std::thread::spawn(move || {
            read_bounded(reader, &output, limit);
            let _ = done_tx.send(());
        });
    }
    let (exit_tx, exit_rx) = mpsc::channel::<std::io::Result<ExitStatus>>();
    std::thread::spawn(move || {
        let _ = exit_tx.send(child.wait());
    });

    let status = match exit_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(status) => Some(status),
        Err(_) => {
            kill_group(pid);
            // The kill ends it; its status no longer matters.
            let _ = exit_rx.recv();
            None
        }
    };
    // Output still held open by something it started in the background is waited for until
    // the deadline, then that process group is killed too.
    if done_rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .is_err()
    {
        kill_group(pid);
    }
    let text = take_output(&output, limits.output_bytes);
    match status {
        None => Err(failure(
            TriggerFailureReason::TimedOut {
                limit_ms: limits.timeout.as_millis() as u64,
            },
            text,
        )),
        Some(Err(e)) => Err(failure(
            TriggerFailureReason::CannotRun {
                program: program.clone(),
                error: e.to_string(),
            },
            text,
        )),
        Some(Ok(status)) if status.success() => Ok(()),
        Some(Ok(status)) => {
            let reason = match (status.code(), status.signal()) {
                (Some(code), _) => TriggerFailureReason::Exit(code),
                (None, Some(signal)) => TriggerFailureReason::Signal(signal),
                (None, None) => TriggerFailureReason::Exit(-1),
            };
            Err(failure(reason, text))
        }
    }
}

/// Reads until the end, keeping at most `limit` bytes (one more marks that it was cut).
fn read_bounded(mut reader: std::io::PipeReader, output: &Mutex<Vec<u8>>, limit: usize) {
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut kept = output.lock().expect("output lock is never poisoned");
                let room = (limit + 1).saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// The output kept so far, as text, saying when it was cut.
fn take_output(output: &Mutex<Vec<u8>>, limit: usize) -> String {
    let kept = output.lock().expect("output lock is never poisoned");
    let mut text = String::from_utf8_lossy(&kept[..kept.len().min(limit)]).into_owned();
    if kept.len() > limit {
        text.push_str(&format!("\n... (output cut at {limit} bytes)"));
    }
    text
}

/// Kills the trigger `pid` and its process group (everything it started that stayed in it).
fn kill_group(pid: libc::pid_t) {
    // SAFETY: kill(2) only sends a signal (a negative pid: to that process group); it touches
    // no memory of this process.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_core::TriggerKind;
    use keel_core::trigger::{parse_table, triggers_of};

    fn trigger(command: &str) -> Trigger {
        let table = parse_table(&[format!("t change-submit //depot/... {command}")]).unwrap();
        triggers_of(&table, TriggerKind::ChangeSubmit).remove(0)
    }

    fn run_one(
        command: &str,
        vars: &TriggerVars,
        output_bytes: usize,
    ) -> Result<(), Box<TriggerFailure>> {
        let dir = tempfile::tempdir().unwrap();
        let env = TriggerEnv {
            server: "127.0.0.1:1666",
            user: "alice",
            workspace: "ws",
            ticket: "T",
        };
        let limits = RunLimits {
            timeout: Duration::from_secs(20),
            output_bytes,
        };
        run(
            &trigger(command),
            "change 1",
            Some(1),
            vars,
            &env,
            dir.path(),
            &limits,
        )
    }

    #[test]
    fn exit_status_output_and_its_bound() {
        let vars = TriggerVars::default();
        assert!(run_one("true", &vars, 100).is_ok());
        let failed = run_one("sh -c 'echo out; echo err >&2; exit 4'", &vars, 100).unwrap_err();
        assert_eq!(failed.reason, TriggerFailureReason::Exit(4));
        assert_eq!(failed.output, "out\nerr\n");
        let long = run_one(
            "sh -c 'head -c 100000 /dev/zero | tr \"\\0\" x; exit 1'",
            &vars,
            10,
        )
        .unwrap_err();
        assert_eq!(long.output, "xxxxxxxxxx\n... (output cut at 10 bytes)");
        let missing = run_one("/nonexistent/program", &vars, 10).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "change-submit trigger 't' failed on change 1 (cannot run '/nonexistent/program': \
             No such file or directory (os error 2))"
        );
    }

    #[test]
    fn minimal_environment_and_whole_word_arguments() {
        let vars = TriggerVars {
            user: "two words".into(),
            ..TriggerVars::default()
        };
        // `$#` counts the words the substituted %user% made; the environment is the minimal one.
        let failed = run_one(
            "sh -c 'echo $# \"$1\"; env | cut -d= -f1 | sort | tr \"\\n\" \" \"; exit 1' sh %user%",
            &vars,
            1000,
        )
        .unwrap_err();
        let mut lines = failed.output.lines();
        assert_eq!(lines.next(), Some("1 two words"));
        let names = lines.next().unwrap_or_default();
        for name in [
            "KEEL_SERVER",
            "KEEL_TICKET",
            "KEEL_USER",
            "KEEL_WORKSPACE",
            "PATH",
        ] {
            assert!(names.contains(name), "{name} in {names}");
        }
        for name in names.split_whitespace() {
            assert!(
                [
                    "HOME",
                    "KEEL_SERVER",
                    "KEEL_TICKET",
                    "KEEL_TRUST",
                    "KEEL_USER",
                    "KEEL_WORKSPACE",
                    "PATH",
                    "PWD",
                    "SHLVL",
                    "_"
                ]
                .contains(&name),
                "unexpected {name} in {names}"
            );
        }
    }

    #[test]
    fn hostile_values_reach_a_shell_script_as_exact_bytes_and_run_nothing() {
        let marker_dir = tempfile::tempdir().unwrap();
        let marker = marker_dir.path().join("injected");
        let m = marker.display();
        let vars = TriggerVars {
            client: format!("w;touch {m};$(touch {m})`touch {m}`|touch {m}&<>'\"\\ x\n${{IFS}}*"),
            user: format!("u'; touch {m}; '\"; touch {m}; \""),
            change: "-n".into(),
            ..TriggerVars::default()
        };
        let shells: Vec<&str> = ["sh", "bash", "dash", "zsh", "ksh"]
            .into_iter()
            .filter(|sh| {
                Command::new(sh)
                    .args(["-c", "exit 0"])
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .collect();
        assert!(shells.contains(&"sh"));
        for shell in shells {
            // The same values bare, inside "...", inside '...', and through `$0` arguments.
            let failed = run_one(
                &format!(
                    r#"{shell} -c 'printf "<%s>" %client% "%client%" '"'%user%'"' %change%; exit 1'"#
                ),
                &vars,
                10_000,
            )
            .unwrap_err();
            assert_eq!(
                failed.output,
                format!("<{}><{}><{}><-n>", vars.client, vars.client, vars.user),
                "{shell}"
            );
            assert!(!marker.exists(), "{shell} ran an injected command");
        }
    }
}
