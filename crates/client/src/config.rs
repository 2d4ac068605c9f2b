//! Settings resolution: explicit flags, then `KEEL_*` environment variables, then a `.keel` file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::tickets::TicketFile;

/// The name of the per-directory settings file, searched from the current directory upwards.
pub const CONFIG_FILE_NAME: &str = ".keel";
/// Server address used when nothing else is configured.
pub const DEFAULT_SERVER: &str = "127.0.0.1:1666";

/// Values given explicitly on the command line (highest precedence).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub server: Option<String>,
    pub user: Option<String>,
    pub workspace: Option<String>,
}

/// The resolved settings of one client invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub server: String,
    pub user: String,
    pub workspace: Option<String>,
    pub host: String,
    /// The `.keel` file that contributed settings, if one was found.
    pub config_file: Option<PathBuf>,
    /// The tickets file (`KEEL_TICKETS`, else `~/.keel_tickets`), when one can be named.
    pub tickets: Option<TicketFile>,
    /// The login ticket sent with every request: a trigger's `KEEL_TICKET` when the server and
    /// user are its run's (`KEEL_SERVER`, `KEEL_USER`), else the tickets file's for this server
    /// and user.
    pub ticket: Option<String>,
    /// The trust file holding `ssl:` servers' fingerprints (`KEEL_TRUST`, else
    /// `~/.keel_trust`); `None` when neither is set, which trusts no TLS server.
    pub trust_file: Option<PathBuf>,
    /// The local address connections are made from (`KEEL_BIND`), when not the system's
    /// choice: a machine with several addresses picks the one the server should see.
    pub bind: Option<std::net::IpAddr>,
    /// The ignore files setting (`P4IGNORE`, else `KEEL_IGNORE`, else the `.keel` file's
    /// `KEEL_IGNORE` or `P4IGNORE`); `None` means `.p4ignore`
    /// (`ignore_rules::IgnoreConfig::from_setting`).
    pub ignore: Option<String>,
}

impl Settings {
    /// Resolves settings from the real process environment and file system.
    /// `/etc/hostname` and the password database are read only when nothing else names the
    /// host or the user (a small command's fixed cost).
    pub fn resolve(overrides: &Overrides, cwd: &Path) -> Result<Settings> {
        Settings::resolve_asking(overrides, cwd, &os_user)
    }

    /// [`Settings::resolve`], asking `os_user` for the user when nothing else names one.
    pub fn resolve_asking(
        overrides: &Overrides,
        cwd: &Path,
        os_user: &dyn Fn() -> Option<String>,
    ) -> Result<Settings> {
        resolve_with(
            overrides,
            cwd,
            &|name| std::env::var(name).ok(),
            &|| std::fs::read_to_string("/etc/hostname").ok(),
            os_user,
        )
    }
}

/// The name of the user running this process, from the password database (`getpwuid`): what
/// the user is when neither a flag, `KEEL_USER`, a `.keel` file nor `$USER` names one.
#[cfg(unix)]
pub fn os_user() -> Option<String> {
    uzers::get_current_username()
        .and_then(|name| name.into_string().ok())
        .filter(|name| !name.is_empty())
}

/// No password database to ask: the environment (`USERNAME`) is the only source.
#[cfg(not(unix))]
pub fn os_user() -> Option<String> {
    None
}

/// Resolves settings with an injectable environment lookup, `/etc/hostname` content and OS
/// user name (the password database's entry for this process's uid); the last two are asked
/// for only when needed.
pub fn resolve_with(
    overrides: &Overrides,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    hostname_file: &dyn Fn() -> Option<String>,
    os_user: &dyn Fn() -> Option<String>,
) -> Result<Settings> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let (file_values, config_file) = match find_config_file(cwd) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).at(&path)?;
            (parse_config(&text, &path)?, Some(path))
        }
        None => (HashMap::new(), None),
    };
    let pick = |flag: &Option<String>, key: &str| -> Option<String> {
        flag.clone()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| env(key))
            .or_else(|| file_values.get(key).cloned())
    };
    let server = pick(&overrides.server, "KEEL_SERVER").unwrap_or_else(|| DEFAULT_SERVER.into());
    let user = pick(&overrides.user, "KEEL_USER")
        .or_else(|| env("USER"))
        .or_else(|| env("USERNAME"))
        .or_else(os_user)
        .ok_or(Error::NoUser)?;
    let workspace = pick(&overrides.workspace, "KEEL_WORKSPACE");
    let host = pick(&None, "KEEL_HOST")
        .or_else(|| {
            hostname_file()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .or_else(|| env("HOSTNAME"))
        .unwrap_or_else(|| "localhost".into());
    let tickets = TicketFile::locate(&env);
    // A trigger's run ticket (`KEEL_TICKET`) goes only to the server and user its run names,
    // never to one a flag or config file chose instead.
    let run_ticket = env("KEEL_TICKET").filter(|_| {
        env("KEEL_SERVER").as_deref() == Some(server.as_str())
            && env("KEEL_USER").as_deref() == Some(user.as_str())
    });
    let ticket = match (run_ticket, &tickets) {
        (Some(ticket), _) => Some(ticket),
        (None, Some(file)) => file.get(&server, &user)?,
        (None, None) => None,
    };
    let trust_file = keel_tls::TrustFile::default_path(&|name| env(name)).ok();
    let bind = match env("KEEL_BIND") {
        None => None,
        Some(text) => Some(text.trim().parse().map_err(|_| Error::BadArgument {
            arg: format!("KEEL_BIND={text}"),
            reason: "expected an IP address of this machine to connect from".to_string(),
        })?),
    };
    let ignore = env("P4IGNORE")
        .or_else(|| env("KEEL_IGNORE"))
        .or_else(|| file_values.get("KEEL_IGNORE").cloned())
        .or_else(|| file_values.get("P4IGNORE").cloned());
    Ok(Settings {
        ignore,
        server,
        user,
        workspace,
        host,
        config_file,
        tickets,
        ticket,
        trust_file,
        bind,
    })
}

/// Finds the nearest `.keel` file in `start` or one of its ancestors.
pub fn find_config_file(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE_NAME))
        .find(|candidate| candidate.is_file())
}

/// Parses `KEY=VALUE` lines; blank lines and `#` comments are ignored.
pub fn parse_config(text: &str, file: &Path) -> Result<HashMap<String, String>> {
    let mut values = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(Error::Config {
                file: file.to_path_buf(),
                line: index + 1,
                message: format!("expected KEY=VALUE, found {line:?}"),
            });
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(Error::Config {
                file: file.to_path_buf(),
                line: index + 1,
                message: format!("missing key in {line:?}"),
            });
        }
        let value = value.trim().trim_matches('"');
        values.insert(key.to_string(), value.to_string());
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn precedence_table() {
        struct Case {
            name: &'static str,
            flags: Overrides,
            env: &'static [(&'static str, &'static str)],
            file: Option<&'static str>,
            hostname: Option<&'static str>,
            want: (
                &'static str,
                &'static str,
                Option<&'static str>,
                &'static str,
            ),
        }
        let cases = vec![
            Case {
                name: "defaults: the password database's user",
                flags: Overrides::default(),
                env: &[],
                file: None,
                hostname: None,
                want: ("127.0.0.1:1666", "osuser", None, "localhost"),
            },
            Case {
                name: "os user and hostname",
                flags: Overrides::default(),
                env: &[("USER", "alice"), ("HOSTNAME", "envhost")],
                file: None,
                hostname: Some("boxy\n"),
                want: ("127.0.0.1:1666", "alice", None, "boxy"),
            },
            Case {
                name: "USERNAME fallback and HOSTNAME",
                flags: Overrides::default(),
                env: &[("USERNAME", "win"), ("HOSTNAME", "envhost")],
                file: None,
                hostname: None,
                want: ("127.0.0.1:1666", "win", None, "envhost"),
            },
            Case {
                name: "file only",
                flags: Overrides::default(),
                env: &[("USER", "alice")],
                file: Some(
                    "# comment\nKEEL_SERVER=10.0.0.1:1777\n\nKEEL_USER = bob\nKEEL_WORKSPACE=ws1\n",
                ),
                hostname: Some("h"),
                want: ("10.0.0.1:1777", "bob", Some("ws1"), "h"),
            },
            Case {
                name: "env beats file",
                flags: Overrides::default(),
                env: &[("KEEL_SERVER", "e:1"), ("KEEL_WORKSPACE", "envws")],
                file: Some("KEEL_SERVER=f:1\nKEEL_WORKSPACE=filews\nKEEL_USER=fileuser\n"),
                hostname: Some("h"),
                want: ("e:1", "fileuser", Some("envws"), "h"),
            },
            Case {
                name: "flags beat env and file",
                flags: Overrides {
                    server: Some("flag:1".into()),
                    user: Some("flaguser".into()),
                    workspace: Some("flagws".into()),
                },
                env: &[("KEEL_SERVER", "e:1"), ("KEEL_USER", "envuser")],
                file: Some("KEEL_WORKSPACE=filews\n"),
                hostname: Some("h"),
                want: ("flag:1", "flaguser", Some("flagws"), "h"),
            },
        ];
        for case in cases {
            let dir = tempfile::tempdir().unwrap();
            let nested = dir.path().join("a/b");
            std::fs::create_dir_all(&nested).unwrap();
            if let Some(text) = case.file {
                std::fs::write(dir.path().join(CONFIG_FILE_NAME), text).unwrap();
            }
            let got = resolve_with(
                &case.flags,
                &nested,
                &env_of(case.env),
                &|| case.hostname.map(String::from),
                &|| Some("osuser".to_string()),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            let want = case.want;
            assert_eq!(got.server, want.0, "{}", case.name);
            assert_eq!(got.user, want.1, "{}", case.name);
            assert_eq!(got.workspace.as_deref(), want.2, "{}", case.name);
            assert_eq!(got.host, want.3, "{}", case.name);
            assert_eq!(
                got.config_file.is_some(),
                case.file.is_some(),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn no_user_anywhere_is_an_error_not_a_made_up_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_with(
            &Overrides::default(),
            dir.path(),
            &env_of(&[]),
            &|| None,
            &|| None,
        )
        .unwrap_err();
        assert!(matches!(err, Error::NoUser), "{err}");
        assert!(err.to_string().contains("-u NAME"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn os_user_is_this_process_owner() {
        // The password database names the uid this test runs as (root in a container, a
        // developer's login elsewhere); it is never the made-up "keel".
        let name = os_user().expect("the running uid has a password entry");
        let entry = uzers::get_user_by_name(&name).expect("the name maps back to a user");
        assert_eq!(entry.uid(), uzers::get_current_uid());
    }

    #[test]
    fn a_run_ticket_goes_only_to_its_server_and_user() {
        let dir = tempfile::tempdir().unwrap();
        const RUN: &[(&str, &str)] = &[
            ("KEEL_SERVER", "127.0.0.1:9"),
            ("KEEL_USER", "alice"),
            ("KEEL_TICKET", "T1"),
            ("KEEL_TICKETS", "/nonexistent/tickets"),
        ];
        let flags = |server: Option<&str>, user: Option<&str>| Overrides {
            server: server.map(String::from),
            user: user.map(String::from),
            workspace: None,
        };
        let cases = [
            (flags(None, None), Some("T1")),
            (flags(Some("127.0.0.1:9"), Some("alice")), Some("T1")),
            (flags(Some("127.0.0.1:10"), None), None),
            (flags(None, Some("bob")), None),
        ];
        for (overrides, want) in cases {
            let got =
                resolve_with(&overrides, dir.path(), &env_of(RUN), &|| None, &|| None).unwrap();
            assert_eq!(got.ticket.as_deref(), want, "{overrides:?}");
        }
    }

    #[test]
    fn bad_config_line_names_file_and_line() {
        let err = parse_config("KEEL_USER=bob\nnonsense\n", Path::new("/x/.keel")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/x/.keel:2: expected KEY=VALUE, found \"nonsense\""
        );
    }
}
