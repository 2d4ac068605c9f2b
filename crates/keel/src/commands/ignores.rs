//! `ignores`: the ignore rules in effect in a directory, or whether (and why) paths are ignored.

use anyhow::Result;
use keel_client::ignore_rules::{self, Verdict};
use keel_client::paths;

use crate::cli::IgnoresArgs;
use crate::output::Record;
use crate::session::Session;

pub async fn ignores(s: &mut Session, args: IgnoresArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let config = s.ignore_config(true);
    let paths_given = if args.paths.is_empty() {
        vec![s.cwd.display().to_string()]
    } else {
        args.paths.clone()
    };
    for arg in &paths_given {
        let local = paths::absolute_local(arg, &s.cwd);
        let rel = paths::relative_to_root(&local, &ws.root)?;
        if args.check {
            let verdict = ignore_rules::check_path(&config, &ws.root, &rel)?;
            report_check(
                s,
                &local.display().to_string(),
                verdict.as_ref(),
                args.verbose,
            );
            continue;
        }
        // The rules in effect in the directory: those of the files above it and its own.
        let inside = if rel.is_empty() {
            "-".to_string()
        } else {
            format!("{rel}/-")
        };
        let (rules, _) = ignore_rules::rules_for(&config, &ws.root, &inside)?;
        let mut any = false;
        for file in rules.files() {
            let dir = if file.dir.is_empty() {
                ws.root.clone()
            } else {
                ws.root.join(&file.dir)
            };
            for rule in &file.rules {
                any = true;
                let record = Record::new()
                    .s("dir", dir.display().to_string())
                    .s("ignoreFile", file.path.display().to_string())
                    .n("line", rule.line as u64)
                    .s("rule", &rule.pattern);
                let text = if args.verbose {
                    format!(
                        "{} ({}:{})",
                        rule_text(&dir.display().to_string(), &rule.pattern),
                        file.path.display(),
                        rule.line
                    )
                } else {
                    rule_text(&dir.display().to_string(), &rule.pattern)
                };
                s.out.emit(record, text);
            }
        }
        if !any {
            s.out
                .note(format!("{} - no ignore rules in effect.", local.display()));
        }
    }
    Ok(())
}

/// A rule shown with the directory it applies to: `DIR/.../PATTERN` for a pattern that
/// matches at any depth, `DIR/PATTERN` for one anchored to its directory; a `!` rule keeps
/// its mark in front.
fn rule_text(dir: &str, pattern: &str) -> String {
    let (keep, pattern) = match pattern.strip_prefix('!') {
        Some(rest) => ("!", rest),
        None => ("", pattern),
    };
    let anchored = pattern.trim_end_matches('/').contains('/');
    let pattern = pattern.trim_start_matches('/');
    if anchored {
        format!("{keep}{dir}/{pattern}")
    } else {
        format!("{keep}{dir}/.../{pattern}")
    }
}

fn report_check(s: &Session, local: &str, verdict: Option<&Verdict>, verbose: bool) {
    let ignored = verdict.is_some_and(|v| v.ignored);
    let mut record = Record::new().s("path", local).b("ignored", ignored);
    if let Some(v) = verdict {
        record = record
            .s("ignoreFile", v.file.display().to_string())
            .n("line", v.line as u64)
            .s("rule", &v.pattern);
    }
    let text = match (verdict, verbose) {
        (Some(v), true) if v.ignored => format!(
            "{local} ignored by rule '{}' ({}:{})",
            v.pattern,
            v.file.display(),
            v.line
        ),
        (Some(v), true) => format!(
            "{local} not ignored: kept by rule '{}' ({}:{})",
            v.pattern,
            v.file.display(),
            v.line
        ),
        (None, true) => format!("{local} not ignored: no rule matches"),
        (_, false) if ignored => local.to_string(),
        (_, false) => String::new(),
    };
    if s.out.json || !text.is_empty() {
        s.out.emit(record, text);
    }
}
