//! Issue 30's commands for P4 clients: `annotate`, `grep` (the server searches stored
//! revisions) and `sizes`, tagged and untagged as P4 clients print them.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::dispatch::{self, Command};
use crate::filespec::{Place, is_depot_syntax};
use keel_core::LineCompare;
use keel_service::command as rows;
use keel_service::{
    AnnotateFollow, AnnotateOptions, AnnotatePart, GrepLineKind, GrepList, GrepOptions, GrepPart,
    SizesOptions,
};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "grep",
        row: rows::GREP,
        login: true,
        flags: "a i n v l L t s F e: A: B: C:",
        usage: "grep [ -a -i -n -A <num> -B <num> -C <num> -t -s (-v|-l|-L) (-F|-G) ] -e <pattern> <filespec>...",
        run: |c| Box::pin(grep(c)),
    },
    Command {
        name: "annotate",
        row: rows::ANNOTATE,
        login: true,
        flags: "a c i I q t u d:",
        usage: "annotate [ -a -c -I -i -q -t -u -db -dw -dl ] file[revRange] ...",
        run: |c| Box::pin(annotate(c)),
    },
    Command {
        name: "sizes",
        row: rows::SIZES,
        login: true,
        flags: "a s z b:",
        usage: "sizes [-a -s -z] [-b blocksize] file[revRange] ...",
        run: |c| Box::pin(sizes(c)),
    },
];

/// The file arguments in the service's syntax: depot syntax as it is, local paths mapped
/// through the caller's workspace.
async fn keel_files(cmd: &mut Cmd, args: &[String]) -> Result<Vec<String>, crate::cmd::CmdError> {
    if args.iter().all(|a| is_depot_syntax(a)) {
        return Ok(args.to_vec());
    }
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
    Ok(place.args_or_all(args)?)
}

async fn sizes(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("sizes").expect("sizes is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let block_size = match flags.value('b') {
        None => 0,
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(usage(format!(
                    "Invalid option value: -b {v} (a block size of at least 1 byte)."
                )));
            }
        },
    };
    let options = SizesOptions {
        all_revisions: flags.has('a'),
        summary: flags.has('s'),
        block_size,
        once: flags.has('z'),
    };
    let files = keel_files(cmd, &flags.rest).await?;
    let entries = cmd
        .call(move |svc, caller| {
            let mut entries = Vec::new();
            svc.sizes(caller, &files, options, &mut |e| {
                entries.push(e);
                Ok(())
            })
            .map(|()| entries)
        })
        .await??;
    for e in entries {
        let blocks = (block_size > 0).then(|| e.blocks.to_string());
        if cmd.tagged {
            let mut fields = match options.summary {
                true => vec![
                    ("path", e.path.clone()),
                    ("fileCount", e.files.to_string()),
                    ("fileSize", e.bytes.to_string()),
                ],
                false => vec![
                    ("depotFile", e.path.clone()),
                    ("rev", e.rev.to_string()),
                    ("fileSize", e.bytes.to_string()),
                ],
            };
            if let Some(b) = blocks {
                fields.push(("blockCount", b));
            }
            cmd.stat(fields);
        } else {
            let blocks = blocks.map(|b| format!(" {b} blocks")).unwrap_or_default();
            cmd.info(match options.summary {
                true => format!("{} {} files {} bytes{blocks}", e.path, e.files, e.bytes),
                false => format!("{}#{} {} bytes{blocks}", e.path, e.rev, e.bytes),
            });
        }
    }
    Ok(())
}

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
    let files = keel_files(cmd, &flags.rest).await?;
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

async fn annotate(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("annotate").expect("annotate is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() || (flags.has('I') && (flags.has('i') || flags.has('a'))) {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let compare = match flags.value('d') {
        None => LineCompare::Exact,
        Some("b") => LineCompare::WhitespaceChanges,
        Some("w") => LineCompare::AllWhitespace,
        Some("l") => LineCompare::LineEndings,
        Some(other) => {
            return Err(usage(format!(
                "Invalid option: -d{other}.\nUsage: {}",
                command.usage
            )));
        }
    };
    let follow = if flags.has('I') {
        AnnotateFollow::All
    } else if flags.has('i') {
        AnnotateFollow::Branches
    } else {
        AnnotateFollow::None
    };
    let opts = AnnotateOptions {
        all: flags.has('a'),
        follow,
        binary_as_text: flags.has('t'),
        compare,
    };
    let files = keel_files(cmd, &flags.rest).await?;
    // Lines as owned values (the service's origins are shared `Rc`s, which stay on its thread).
    enum Out {
        File(Vec<(&'static str, String)>, String),
        Line {
            lower: (u32, u64),
            upper: (u32, u64),
            user: String,
            time: i64,
            text: String,
        },
    }
    let parts = cmd
        .call(move |svc, caller| {
            let mut parts = Vec::new();
            svc.annotate(caller, &files, opts, &mut |p| {
                parts.push(match p {
                    AnnotatePart::File { info, .. } => {
                        let action = info.head_action.map(|a| a.to_string()).unwrap_or_default();
                        let file_type = info.head_type.map(|t| t.to_string()).unwrap_or_default();
                        let change = info.head_change.map_or(0, |c| c.0);
                        let header = format!(
                            "{}#{} - {action} change {change} ({file_type})",
                            info.depot_file, info.head_rev
                        );
                        Out::File(
                            vec![
                                ("depotFile", info.depot_file.to_string()),
                                ("rev", info.head_rev.to_string()),
                                ("change", change.to_string()),
                                ("action", action),
                                ("type", file_type),
                                ("time", info.head_time.to_string()),
                            ],
                            header,
                        )
                    }
                    AnnotatePart::Line(line) => Out::Line {
                        lower: (line.lower.rev, line.lower.change.0),
                        upper: (line.upper.rev, line.upper.change.0),
                        user: line.lower.user.clone(),
                        time: line.lower.time,
                        text: line.text,
                    },
                });
                Ok(())
            })
            .map(|()| parts)
        })
        .await??;
    let by_change = flags.has('c') || follow != AnnotateFollow::None;
    let pick = |(rev, change): (u32, u64)| if by_change { change } else { u64::from(rev) };
    for part in parts {
        match part {
            Out::File(fields, header) => {
                if cmd.tagged {
                    cmd.stat(fields);
                } else if !flags.has('q') {
                    cmd.info(header);
                }
            }
            Out::Line {
                lower,
                upper,
                user,
                time,
                text,
            } => {
                let (lower, upper) = (pick(lower), pick(upper));
                if cmd.tagged {
                    let mut fields = vec![
                        ("lower", lower.to_string()),
                        ("upper", upper.to_string()),
                        ("data", format!("{text}\n")),
                    ];
                    if flags.has('u') {
                        fields.push(("user", user));
                        fields.push(("time", time.to_string()));
                    }
                    cmd.stat(fields);
                } else {
                    let origin = match flags.has('a') {
                        true => format!("{lower}-{upper}"),
                        false => lower.to_string(),
                    };
                    cmd.info(match flags.has('u') {
                        true => format!("{origin}: {user} {} {text}", crate::dates::date(time)),
                        false => format!("{origin}: {text}"),
                    });
                }
            }
        }
    }
    Ok(())
}
