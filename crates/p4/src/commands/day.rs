//! Issue 30's commands for P4 clients: `grep` (the server searches stored revisions), tagged
//! and untagged as P4 clients print them.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::dispatch::{self, Command};
use crate::filespec::{Place, is_depot_syntax};
use keel_service::command as rows;
use keel_service::{GrepLineKind, GrepList, GrepOptions, GrepPart};

pub const COMMANDS: &[Command] = &[Command {
    name: "grep",
    row: rows::GREP,
    login: true,
    flags: "a i n v l L t s F e: A: B: C:",
    usage: "grep [ -a -i -n -A <num> -B <num> -C <num> -t -s (-v|-l|-L) (-F|-G) ] -e <pattern> <filespec>...",
    run: |c| Box::pin(grep(c)),
}];

/// A context count (`-A 3`), refused naming the flag when it is not a number.
fn count(flags: &crate::flags::Flags, c: char) -> Result<Option<u32>, crate::cmd::CmdError> {
    match flags.value(c) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            usage(format!(
                "Invalid option value: -{c} {v} (a number of lines)."
            ))
        }),
    }
}

async fn grep(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("grep").expect("grep is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let Some(pattern) = flags.value('e') else {
        return Err(usage(format!("Usage: {}", command.usage)));
    };
    if flags.rest.is_empty() || (flags.has('l') && flags.has('L')) {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let context = count(&flags, 'C')?.unwrap_or(0);
    let opts = GrepOptions {
        patterns: vec![pattern.to_string()],
        fixed_strings: flags.has('F'),
        ignore_case: flags.has('i'),
        invert: flags.has('v'),
        list: if flags.has('l') {
            GrepList::WithMatches
        } else if flags.has('L') {
            GrepList::WithoutMatch
        } else {
            GrepList::Lines
        },
        all_revisions: flags.has('a'),
        before: count(&flags, 'B')?.unwrap_or(context),
        after: count(&flags, 'A')?.unwrap_or(context),
        binary_as_text: flags.has('t'),
    };
    let files = if flags.rest.iter().all(|a| is_depot_syntax(a)) {
        flags.rest.clone()
    } else {
        // `Place::of` holds the command across its await, which a handler's future (Send)
        // cannot: the same lookup, with only owned values held.
        let workspace = cmd.caller.workspace.clone();
        let cwd = cmd.req.text("cwd").unwrap_or_default();
        let lookup = workspace.clone();
        let spec = cmd
            .call(move |svc, caller| svc.get_workspace(caller, &lookup))
            .await??;
        let place = Place {
            workspace,
            root: spec.root,
            cwd,
        };
        flags
            .rest
            .iter()
            .map(|a| place.to_keel(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| usage(e.to_string()))?
    };
    let parts = cmd
        .call(move |svc, caller| {
            let mut parts = Vec::new();
            svc.grep(caller, &files, &opts, &mut |p| {
                parts.push(p);
                Ok(())
            })
            .map(|()| parts)
        })
        .await??;
    let numbers = flags.has('n');
    for part in parts {
        match part {
            GrepPart::Line {
                path,
                rev,
                line,
                kind,
                text,
            } => {
                if cmd.tagged {
                    let mut fields = vec![
                        ("depotFile", path),
                        ("rev", rev.to_string()),
                        ("line", line.to_string()),
                        ("matchedLine", text),
                    ];
                    match kind {
                        GrepLineKind::Match => {}
                        GrepLineKind::Before => fields.push(("type", "before".into())),
                        GrepLineKind::After => fields.push(("type", "after".into())),
                    }
                    cmd.stat(fields);
                } else {
                    let sep = if kind == GrepLineKind::Match {
                        ':'
                    } else {
                        '-'
                    };
                    cmd.info(match numbers {
                        true => format!("{path}#{rev}{sep}{line}{sep}{text}"),
                        false => format!("{path}#{rev}{sep}{text}"),
                    });
                }
            }
            GrepPart::File { path, rev } => {
                if cmd.tagged {
                    cmd.stat([("depotFile", path), ("rev", rev.to_string())]);
                } else {
                    cmd.info(format!("{path}#{rev}"));
                }
            }
            // Revisions not searched (binary without -t, too large) are left out, as `-s`
            // would; the native CLI reports them.
            GrepPart::Skipped { .. } => {}
        }
    }
    Ok(())
}
