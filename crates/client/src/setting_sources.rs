//! Where each client setting in effect came from (`keel set`, like `p4 set`): a command-line
//! flag, a `KEEL_*` environment variable, the nearest `.keel` file, or the default.

use std::path::Path;

use crate::config::{DEFAULT_SERVER, Overrides, find_config_file, parse_config};
use crate::error::{IoContext, Result};

/// One setting, its value and its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingSource {
    /// The variable's name (`KEEL_SERVER`, ...).
    pub name: &'static str,
    pub value: String,
    /// `flag`, `env`, `config FILE`, or `default` (with what the default came from).
    pub source: String,
}

/// The settings `resolve_with` would use, with their sources; `env` looks variables up.
pub fn setting_sources(
    overrides: &Overrides,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<SettingSource>> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let (file_values, file) = match find_config_file(cwd) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).at(&path)?;
            (parse_config(&text, &path)?, Some(path))
        }
        None => (Default::default(), None),
    };
    let from_file = |key: &str| {
        let value = file_values.get(key)?;
        let path = file.as_ref()?;
        Some((value.clone(), format!("config {}", path.display())))
    };
    let pick = |flag: Option<&String>, key: &str| -> Option<(String, String)> {
        flag.filter(|v| !v.trim().is_empty())
            .map(|v| (v.clone(), "flag".to_string()))
            .or_else(|| env(key).map(|v| (v, "env".to_string())))
            .or_else(|| from_file(key))
    };
    let mut out = Vec::new();
    let mut push = |name: &'static str, found: Option<(String, String)>| {
        if let Some((value, source)) = found {
            out.push(SettingSource {
                name,
                value,
                source,
            });
        }
    };
    push(
        "KEEL_SERVER",
        pick(overrides.server.as_ref(), "KEEL_SERVER")
            .or_else(|| Some((DEFAULT_SERVER.to_string(), "default".to_string()))),
    );
    push(
        "KEEL_USER",
        pick(overrides.user.as_ref(), "KEEL_USER")
            .or_else(|| env("USER").map(|u| (u, "default (USER)".to_string())))
            .or_else(|| {
                crate::config::os_user().map(|u| (u, "default (the system's user)".to_string()))
            }),
    );
    push(
        "KEEL_WORKSPACE",
        pick(overrides.workspace.as_ref(), "KEEL_WORKSPACE"),
    );
    push("KEEL_HOST", pick(None, "KEEL_HOST"));
    for name in ["KEEL_TICKETS", "KEEL_TRUST", "KEEL_BIND"] {
        push(name, env(name).map(|v| (v, "env".to_string())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_env_beat_the_keel_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join(".keel"),
            "KEEL_SERVER=file:1\nKEEL_WORKSPACE=ws-file\nKEEL_HOST=box\n",
        )
        .expect("write .keel");
        let env = |name: &str| match name {
            "KEEL_SERVER" => Some("env:1".to_string()),
            "KEEL_USER" => Some("envuser".to_string()),
            _ => None,
        };
        let overrides = Overrides {
            user: Some("flaguser".into()),
            ..Overrides::default()
        };
        let got = setting_sources(&overrides, dir.path(), &env).expect("sources");
        let file = format!("config {}", dir.path().join(".keel").display());
        let want = [
            ("KEEL_SERVER", "env:1", "env"),
            ("KEEL_USER", "flaguser", "flag"),
            ("KEEL_WORKSPACE", "ws-file", file.as_str()),
            ("KEEL_HOST", "box", file.as_str()),
        ];
        let got: Vec<(&str, &str, &str)> = got
            .iter()
            .map(|s| (s.name, s.value.as_str(), s.source.as_str()))
            .collect();
        assert_eq!(got, want);
    }
}
