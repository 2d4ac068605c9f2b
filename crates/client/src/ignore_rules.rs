//! Ignore files in `.p4ignore` syntax: which new workspace files `add`, `reconcile`, `status`
//! and `clean` leave alone. Each directory of a workspace may hold an ignore file whose rules
//! apply to that directory and below, the nearest file's rules first; a file named by an
//! absolute path applies to the whole workspace, after every directory's own. Matching is the
//! `ignore` crate's gitignore matcher (globs, `**`, `!` negation, directory-only patterns, `/`
//! anchoring); a directory that is ignored is ignored with everything under it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::{Error, Result};

/// The ignore file name used when no setting names one.
pub const DEFAULT_IGNORE_FILE: &str = ".p4ignore";

/// Which ignore files apply: names looked for in every directory of the workspace, and files
/// named by an absolute path that apply to all of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreConfig {
    names: Vec<String>,
    globals: Vec<PathBuf>,
}

impl IgnoreConfig {
    /// No ignore files at all (`-I`): every file is considered.
    pub fn none() -> IgnoreConfig {
        IgnoreConfig::default()
    }

    /// The ignore files a setting (`P4IGNORE`, `KEEL_IGNORE` or the `.keel` file's) names:
    /// one or more names separated by `;` (or `:` on Unix); `$home` (or `~/`) at the start of
    /// an entry stands for `home`. An entry that is an absolute path is one file for the whole
    /// workspace; any other is a name looked for in each directory. No setting means
    /// `.p4ignore`.
    pub fn from_setting(setting: Option<&str>, home: Option<&Path>) -> IgnoreConfig {
        let Some(setting) = setting.map(str::trim).filter(|s| !s.is_empty()) else {
            return IgnoreConfig {
                names: vec![DEFAULT_IGNORE_FILE.to_string()],
                globals: Vec::new(),
            };
        };
        let mut config = IgnoreConfig::default();
        let separators: &[char] = if cfg!(unix) { &[';', ':'] } else { &[';'] };
        for entry in setting.split(separators).map(str::trim) {
            if entry.is_empty() {
                continue;
            }
            let expanded = match (
                home,
                entry.strip_prefix("$home").or(entry.strip_prefix("~")),
            ) {
                (Some(home), Some(rest)) => home.join(rest.trim_start_matches(['/', '\\'])),
                _ => PathBuf::from(entry),
            };
            if expanded.is_absolute() {
                config.globals.push(expanded);
            } else if !config.names.iter().any(|n| n == entry) {
                config.names.push(entry.to_string());
            }
        }
        config
    }

    /// Whether no ignore file can apply.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.globals.is_empty()
    }

    /// The names looked for in each directory.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether `name` is one of the names looked for in each directory.
    pub fn is_ignore_file_name(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// One rule of an ignore file: its line and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub line: usize,
    pub pattern: String,
}

/// One ignore file, parsed.
#[derive(Debug)]
pub struct IgnoreFile {
    /// Where the file is.
    pub path: PathBuf,
    /// The directory its rules apply to, relative to the workspace root (`/`-separated, empty
    /// for the root).
    pub dir: String,
    /// Its rules, in order.
    pub rules: Vec<Rule>,
    matcher: Gitignore,
}

impl IgnoreFile {
    /// Parses `text`, the content of the ignore file at `path` whose rules apply to `dir`.
    /// A pattern that is not a valid glob is an error naming the file and the line.
    pub fn parse(path: &Path, dir: &str, text: &str) -> Result<IgnoreFile> {
        let mut builder = GitignoreBuilder::new(path.parent().unwrap_or(path));
        builder.allow_unclosed_class(false);
        let mut rules = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            builder
                .add_line(Some(path.to_path_buf()), line)
                .map_err(|e| Error::IgnoreFile {
                    file: path.to_path_buf(),
                    line: index + 1,
                    message: glob_error(&e),
                })?;
            rules.push(Rule {
                line: index + 1,
                pattern: trimmed.to_string(),
            });
        }
        let matcher = builder.build().map_err(|e| Error::IgnoreFile {
            file: path.to_path_buf(),
            line: 0,
            message: glob_error(&e),
        })?;
        Ok(IgnoreFile {
            path: path.to_path_buf(),
            dir: dir.to_string(),
            rules,
            matcher,
        })
    }

    /// Reads and parses the ignore file at `path`; None when there is no such file.
    pub fn load(path: &Path, dir: &str) -> Result<Option<IgnoreFile>> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                IgnoreFile::parse(path, dir, &text).map(Some)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::IsADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// What this file says of `rel` (relative to the workspace root, under `self.dir`).
    fn verdict(&self, rel: &str, is_dir: bool) -> Option<Verdict> {
        let below = if self.dir.is_empty() {
            rel
        } else {
            rel.strip_prefix(self.dir.as_str())?.strip_prefix('/')?
        };
        let glob = match self.matcher.matched(below, is_dir) {
            ignore::Match::None => return None,
            ignore::Match::Ignore(glob) | ignore::Match::Whitelist(glob) => glob,
        };
        // The last rule with this text is the one that decided (later rules win).
        let line = self
            .rules
            .iter()
            .rev()
            .find(|r| r.pattern == glob.original())
            .map_or(0, |r| r.line);
        Some(Verdict {
            ignored: !glob.is_whitelist(),
            file: self.path.clone(),
            line,
            pattern: glob.original().to_string(),
        })
    }
}

/// The error text of a pattern that does not parse, without the crate's own wrapping.
fn glob_error(e: &ignore::Error) -> String {
    match e {
        ignore::Error::Glob { glob, err } => match glob {
            Some(glob) => format!("bad pattern {glob:?}: {err}"),
            None => format!("bad pattern: {err}"),
        },
        other => other.to_string(),
    }
}

/// Why a path is or is not ignored: the rule that decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// True for an ignoring rule, false for a `!` rule that keeps the path.
    pub ignored: bool,
    pub file: PathBuf,
    pub line: usize,
    pub pattern: String,
}

#[derive(Debug)]
struct Node {
    file: IgnoreFile,
    parent: Option<Arc<Node>>,
}

/// The ignore rules in effect in one directory of a workspace: its own ignore files' and its
/// ancestors', nearest first. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    chain: Option<Arc<Node>>,
}

impl Rules {
    /// The rules in effect at the workspace root: the global files (absolute paths) and the
    /// root's own ignore files.
    pub fn at_root(config: &IgnoreConfig, root: &Path) -> Result<Rules> {
        Rules::globals(config)?.enter(config, root, "", |_| true)
    }

    /// The rules of the global files (absolute paths) alone: the rules above the root.
    pub fn globals(config: &IgnoreConfig) -> Result<Rules> {
        let mut rules = Rules::default();
        for global in &config.globals {
            if let Some(file) = IgnoreFile::load(global, "")? {
                rules = rules.with(file);
            }
        }
        Ok(rules)
    }

    /// The rules in effect in the directory at `path` (`rel` below the root), given the rules
    /// of its parent: the parent's, and the directory's own ignore files when `present(name)`
    /// says a file of that name is there (a walk that has read the directory knows).
    pub fn enter(
        &self,
        config: &IgnoreConfig,
        path: &Path,
        rel: &str,
        present: impl Fn(&str) -> bool,
    ) -> Result<Rules> {
        let mut rules = self.clone();
        for name in config.names() {
            if !present(name) {
                continue;
            }
            if let Some(file) = IgnoreFile::load(&path.join(name), rel)? {
                rules = rules.with(file);
            }
        }
        Ok(rules)
    }

    fn with(self, file: IgnoreFile) -> Rules {
        Rules {
            chain: Some(Arc::new(Node {
                file,
                parent: self.chain,
            })),
        }
    }

    /// Whether no rule applies here (the common case: no ignore file anywhere).
    pub fn is_empty(&self) -> bool {
        self.chain.is_none()
    }

    /// The rule that decides whether `rel` (a path below the root, in this directory) is
    /// ignored: the nearest file's last matching rule. None when no rule matches.
    pub fn verdict(&self, rel: &str, is_dir: bool) -> Option<Verdict> {
        let mut node = self.chain.as_deref();
        while let Some(n) = node {
            if let Some(verdict) = n.file.verdict(rel, is_dir) {
                return Some(verdict);
            }
            node = n.parent.as_deref();
        }
        None
    }

    /// Whether `rel` (a path in this directory) is ignored.
    pub fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        !self.is_empty() && self.verdict(rel, is_dir).is_some_and(|v| v.ignored)
    }

    /// The ignore files in effect, the root's first.
    pub fn files(&self) -> Vec<&IgnoreFile> {
        let mut files = Vec::new();
        let mut node = self.chain.as_deref();
        while let Some(n) = node {
            files.push(&n.file);
            node = n.parent.as_deref();
        }
        files.reverse();
        files
    }
}

/// Why the file `rel` (below the workspace `root`, `/`-separated) is ignored, or the rule
/// that keeps it, or None when no rule matches: the rules of every directory from the root
/// down, an ignored directory deciding for everything under it.
pub fn check_path(config: &IgnoreConfig, root: &Path, rel: &str) -> Result<Option<Verdict>> {
    let (rules, verdict) = rules_for(config, root, rel)?;
    if verdict.is_some() {
        return Ok(verdict);
    }
    Ok(rules.verdict(rel, root.join(rel).is_dir()))
}

/// The rules in effect in the directory holding `rel`, and the verdict of the first
/// directory on the way there that is ignored.
pub fn rules_for(
    config: &IgnoreConfig,
    root: &Path,
    rel: &str,
) -> Result<(Rules, Option<Verdict>)> {
    let mut rules = Rules::at_root(config, root)?;
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let mut dir = String::new();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        if !dir.is_empty() {
            dir.push('/');
        }
        dir.push_str(part);
        if let Some(verdict) = rules.verdict(&dir, true).filter(|v| v.ignored) {
            return Ok((rules, Some(verdict)));
        }
        rules = rules.enter(config, &root.join(&dir), &dir, |_| true)?;
    }
    Ok((rules, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &str, text: &str) -> IgnoreFile {
        IgnoreFile::parse(Path::new("/ws/x/.p4ignore"), dir, text).unwrap()
    }

    #[test]
    fn patterns_follow_p4ignore_syntax() {
        let rules = Rules::default().with(file(
            "",
            "# build output\n*.o\n!keep.o\nbin/\n/top.txt\ndocs/**/*.tmp\n\\#lit\n",
        ));
        let cases: &[(&str, bool, bool)] = &[
            ("a.o", false, true),
            ("deep/dir/a.o", false, true),
            ("keep.o", false, false),
            ("deep/keep.o", false, false),
            ("bin", true, true),
            ("bin", false, false),
            ("src/bin", true, true),
            ("top.txt", false, true),
            ("sub/top.txt", false, false),
            ("docs/a/b/c.tmp", false, true),
            ("docs/c.tmp", false, true),
            ("other/c.tmp", false, false),
            ("#lit", false, true),
            ("main.c", false, false),
        ];
        for (path, is_dir, ignored) in cases {
            assert_eq!(
                rules.ignores(path, *is_dir),
                *ignored,
                "{path} dir={is_dir}"
            );
        }
    }

    #[test]
    fn the_nearest_file_decides_and_names_its_line() {
        let root = Rules::default().with(file("", "*.log\n"));
        let sub = root.clone().with(file("sub", "\n!keep.log\n"));
        assert!(sub.ignores("sub/a.log", false));
        assert!(!sub.ignores("sub/keep.log", false));
        let verdict = sub.verdict("sub/keep.log", false).unwrap();
        assert_eq!((verdict.ignored, verdict.line), (false, 2));
        assert_eq!(verdict.pattern, "!keep.log");
        assert_eq!(root.verdict("x.log", false).unwrap().line, 1);
        // A file's rules stop at its own directory.
        let other = Rules::default().with(file("sub", "*.c\n"));
        assert!(!other.ignores("subx/a.c", false));
        assert!(other.ignores("sub/a.c", false));
    }

    #[test]
    fn a_broken_pattern_names_the_file_and_line() {
        let err = IgnoreFile::parse(Path::new("/ws/.p4ignore"), "", "ok\n# c\nbad[\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/ws/.p4ignore"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("bad["), "{err}");
    }

    #[test]
    fn the_setting_names_files_per_directory_or_for_the_whole_workspace() {
        let home = Path::new("/home/u");
        assert_eq!(
            IgnoreConfig::from_setting(None, Some(home)).names(),
            [".p4ignore"]
        );
        let config = IgnoreConfig::from_setting(Some(".gitignore;$home/.myignore"), Some(home));
        assert_eq!(config.names(), [".gitignore"]);
        assert_eq!(config.globals, [PathBuf::from("/home/u/.myignore")]);
        assert!(config.is_ignore_file_name(".gitignore"));
        assert!(IgnoreConfig::none().is_empty());
    }
}
