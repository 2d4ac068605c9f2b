//! `protects` (`-a -u -g -h -m`, an optional file), `integrated` and `resolved`: the
//! protections lines that apply (or the highest level, `-m`), the integration records of files
//! in both directions (`branch from`, `branch into`), and the workspace's opened files whose
//! integration is resolved and not yet submitted.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs::{self, Arg};
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use keel_service::command as rows;
use keel_service::{IntegInfo, IntegrateError, ProtectsQuery};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "protects",
        row: rows::PROTECTS,
        login: true,
        flags: "a u: g: h: m",
        usage: "protects [ -a | -g group | -u user ] [ -h host ] [ -m ] [ file ]",
        run: |c| Box::pin(protects(c)),
    },
    Command {
        name: "integrated",
        row: rows::INTEGRATED,
        login: true,
        flags: "r b: s:",
        usage: "integrated [ -r ] file ...",
        run: |c| Box::pin(integrated(c)),
    },
    Command {
        name: "resolved",
        row: rows::RESOLVED,
        login: true,
        flags: "o",
        usage: "resolved [ -o ] [ file ... ]",
        run: |c| Box::pin(resolved(c)),
    },
];

async fn resolved(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("resolved").expect("resolved is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let (args, place) = fileargs::map(cmd, &flags.rest, false).await?;
    let place = fileargs::place_if_any(cmd, place).await;
    let files: Vec<String> = args.into_iter().map(|a| a.keel).collect();
    let found = cmd
        .call(move |svc, caller| svc.resolved(caller, &files))
        .await??;
    for f in found {
        let Some(from) = &f.source_file else { continue };
        let local = fileargs::local_path(place.as_ref(), &f).unwrap_or_default();
        let revs = if f.source_start + 1 >= f.source_end {
            format!("#{}", f.source_end)
        } else {
            format!("#{},#{}", f.source_start + 1, f.source_end)
        };
        if cmd.tagged {
            cmd.stat([
                ("path", local),
                ("toFile", f.depot_file.to_string()),
                ("fromFile", from.to_string()),
                ("startFromRev", f.source_start.to_string()),
                ("endFromRev", f.source_end.to_string()),
            ]);
        } else {
            cmd.info(format!("{local} - resolved from {from}{revs}"));
        }
    }
    Ok(())
}

async fn protects(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("protects").expect("protects is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.len() > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let query = ProtectsQuery {
        all: flags.has('a'),
        user: flags.value('u').map(str::to_string),
        group: flags.value('g').map(str::to_string),
        host: flags.value('h').map(str::to_string),
        path: args.first().map(|a| a.keel.clone()),
    };
    let (lines, max) = cmd
        .call(move |svc, caller| svc.protects(caller, &query))
        .await?
        .map_err(|e| {
            CmdError::Report(Report::failed(
                Generic::Protect,
                number::PROTECTED,
                e.to_string(),
            ))
        })?;
    if flags.has('m') {
        let level = max.map(|l| l.as_str()).unwrap_or("none");
        if cmd.tagged {
            cmd.stat([("permMax", level)]);
        } else {
            cmd.info(level);
        }
        return Ok(());
    }
    for l in lines {
        let kind = if l.is_group { "group" } else { "user" };
        if cmd.tagged {
            let (unmap, path) = match l.path.strip_prefix('-') {
                Some(p) => (true, p.to_string()),
                None => (false, l.path.clone()),
            };
            let mut rec = vec![
                ("perm", l.mode.clone()),
                ("host", l.host.clone()),
                ("user", l.name.clone()),
                ("depotFile", path),
            ];
            if l.is_group {
                rec.push(("isgroup", String::new()));
            }
            if unmap {
                rec.push(("unmap", String::new()));
            }
            cmd.stat(rec);
        } else {
            cmd.info(format!(
                "{} {kind} {} {} {}",
                l.mode, l.name, l.host, l.path
            ));
        }
    }
    Ok(())
}

async fn integrated(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("integrated").expect("integrated is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let reverse_only = flags.has('r');
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    for Arg { given, keel } in args {
        let got = cmd
            .call(move |svc, caller| {
                let mut out: Vec<IntegInfo> = Vec::new();
                let r = svc.integrated(caller, &[keel], &mut |i| {
                    out.push(i);
                    Ok(())
                });
                r.map(|()| out)
            })
            .await?;
        let records = match got {
            Ok(r) => r,
            Err(IntegrateError::NoIntegrations { .. }) => {
                cmd.report(
                    Report::new(
                        crate::wire::report::Severity::Warn,
                        Generic::Empty,
                        number::NO_SUCH_FILES,
                    )
                    .arg("path", &given)
                    .text(" - no file(s) integrated."),
                );
                continue;
            }
            Err(IntegrateError::Service(keel_service::ServiceError::NoSuchFiles { .. })) => {
                cmd.report(fileargs::no_such(&given));
                continue;
            }
            Err(e) => {
                return Err(CmdError::Report(Report::failed(
                    Generic::None,
                    number::SERVICE,
                    e.to_string(),
                )));
            }
        };
        for i in records.into_iter().filter(|i| !reverse_only || i.reverse) {
            let how = if i.reverse {
                i.how.reverse_str()
            } else {
                i.how.as_str()
            };
            let from = if i.start_from_rev >= i.end_from_rev {
                format!("#{}", i.end_from_rev)
            } else {
                format!("#{},#{}", i.start_from_rev, i.end_from_rev)
            };
            if cmd.tagged {
                cmd.stat([
                    ("toFile", i.to_file.to_string()),
                    ("startToRev", format!("#{}", i.to_rev.saturating_sub(1))),
                    ("endToRev", format!("#{}", i.to_rev)),
                    ("fromFile", i.from_file.to_string()),
                    (
                        "startFromRev",
                        format!("#{}", i.start_from_rev.saturating_sub(1)),
                    ),
                    ("endFromRev", format!("#{}", i.end_from_rev)),
                    ("how", how.to_string()),
                    ("change", i.change.to_string()),
                ]);
            } else {
                cmd.info(format!(
                    "{}#{} - {how} {}{from}",
                    i.to_file, i.to_rev, i.from_file
                ));
            }
        }
    }
    Ok(())
}
