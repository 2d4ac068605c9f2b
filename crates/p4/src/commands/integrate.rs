//! `integrate`, `merge` and `copy` (`[-n] [-c change] FROM TO` or `-b branch [-r] [file...]`):
//! target files opened for branch, integrate or delete as the service plans them, and the
//! content of branched and copied files written to the client (writable, as opened files
//! are); a target deleted by the integration leaves the workspace. Lines as P4 users read
//! them: `//depot/b#1 - branch/sync from //depot/a#1,#2`,
//! `//depot/b#2 - integrate from //depot/a#3`.

use crate::cmd::{Cmd, CmdResult, number, usage};
use crate::commands::sync::{local_of, workspace, workspace_args};
use crate::dispatch::{self, Command};
use crate::transfer::to_client::{Echo, Job, Outgoing, ToClient, client_type, write_files};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{FileAction, View, WorkspaceOptions};
use keel_service::command as rows;
use keel_service::{ContentOf, FileInfo, IntegrateMode, IntegrateRequest};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "integrate",
        row: rows::INTEGRATE,
        login: true,
        flags: "n r b: c:",
        usage: "integrate [ -n -c changelist# ] [ -b branch [ -r ] [ toFile ... ] | fromFile toFile ]",
        run: |c| Box::pin(integrate(c, "integrate", IntegrateMode::Integrate)),
    },
    // The short name P4 clients accept (`p4 integ`, P4Python's `run_integ`).
    Command {
        name: "integ",
        row: rows::INTEGRATE,
        login: true,
        flags: "n r b: c:",
        usage: "integ [ -n -c changelist# ] [ -b branch [ -r ] [ toFile ... ] | fromFile toFile ]",
        run: |c| Box::pin(integrate(c, "integrate", IntegrateMode::Integrate)),
    },
    Command {
        name: "merge",
        row: rows::INTEGRATE,
        login: true,
        flags: "n r b: c:",
        usage: "merge [ -n -c changelist# ] [ -b branch [ -r ] [ toFile ... ] | fromFile toFile ]",
        run: |c| Box::pin(integrate(c, "merge", IntegrateMode::Integrate)),
    },
    Command {
        name: "copy",
        row: rows::INTEGRATE,
        login: true,
        flags: "n r b: c:",
        usage: "copy [ -n -c changelist# ] [ -b branch [ -r ] [ toFile ... ] | fromFile toFile ]",
        run: |c| Box::pin(integrate(c, "copy", IntegrateMode::Copy)),
    },
];

/// `arg` in depot syntax: a path in the workspace's own syntax (`//WS/dir/...`, as P4
/// clients give integrate's files) mapped back through its view; any other argument, or one
/// the view does not map, as given (the service names what is wrong with it).
fn depot_side(view: &[String], workspace: &str, arg: String) -> String {
    let (path, rev) = crate::filespec::split_rev(&arg);
    if !path.starts_with(&format!("//{workspace}/")) {
        return arg;
    }
    match View::parse_lines(view)
        .ok()
        .and_then(|v| v.translate_back(path))
    {
        Some(depot) => format!("{depot}{rev}"),
        None => arg,
    }
}

async fn integrate(cmd: &mut Cmd, verb: &'static str, mode: IntegrateMode) -> CmdResult {
    let command = dispatch::find(verb).expect("in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = match flags.value('c') {
        None | Some("default") => 0,
        Some(n) => n
            .parse()
            .map_err(|_| usage(format!("-c {n}: the changelist must be a number")))?,
    };
    let (spec, place) = workspace(cmd).await?;
    let options = WorkspaceOptions::parse(&spec.options).unwrap_or_default();
    let mut req = IntegrateRequest {
        reverse: flags.has('r'),
        preview: flags.has('n'),
        change,
        ..IntegrateRequest::default()
    };
    match (flags.value('b'), flags.rest.as_slice()) {
        (Some(branch), rest) => {
            req.branch = branch.to_string();
            if !rest.is_empty() {
                req.files = workspace_args(&place, rest)?;
            }
        }
        (None, [from, to]) if !flags.has('r') => {
            req.from = depot_side(&spec.view, &place.workspace, place.to_keel(from)?);
            req.to = depot_side(&spec.view, &place.workspace, place.to_keel(to)?);
        }
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    }
    let preview = req.preview;
    let records = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.integrate(caller, mode, req, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await?
        .map_err(crate::cmd::refused)?;
    if records.is_empty() {
        cmd.report(
            Report::new(Severity::Warn, Generic::Empty, number::NOTHING_TO_INTEGRATE)
                .text("All revision(s) already integrated."),
        );
        return Ok(());
    }
    let mut out = ToClient::new();
    let mut jobs = Vec::new();
    for f in &records {
        let local = f
            .client_file
            .as_deref()
            .map(|c| local_of(&place, c))
            .unwrap_or_default();
        announce(cmd, f, &local);
        if preview || local.is_empty() {
            continue;
        }
        let echo: Echo = vec![("keelFile".into(), f.depot_file.to_string())];
        if f.action == Some(FileAction::Delete) {
            out.delete(cmd, &local, false, options.rmdir, &echo).await?;
        } else if let (Some(digest), Some(source)) = (f.lazy_digest, &f.source_file) {
            let t = f.file_type.or(f.head_type);
            jobs.push(Job {
                file: Outgoing {
                    local,
                    type_code: t.as_ref().map(client_type).unwrap_or("0"),
                    writable: true,
                    ..Outgoing::default()
                },
                digest,
                size: f.head_size,
                of: Some(ContentOf {
                    depot_file: source.to_string(),
                    rev: f.source_end,
                }),
                echo,
                keywords: None,
            });
        }
    }
    write_files(cmd, &mut out, jobs).await?;
    out.finish(cmd).await
}

/// `#5` for one revision, `#2,#5` for a range (`start` is the revision before the first).
fn range(start: u32, end: u32) -> String {
    if start + 1 >= end {
        format!("#{end}")
    } else {
        format!("#{},#{end}", start + 1)
    }
}

fn announce(cmd: &mut Cmd, f: &FileInfo, local: &str) {
    let action = f.action.unwrap_or(FileAction::Integrate);
    let how = match action {
        FileAction::Branch => "branch/sync",
        FileAction::Delete => "delete",
        _ if !f.unresolved => "sync/integrate",
        _ => "integrate",
    };
    let source = f
        .source_file
        .as_ref()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let work_rev = if action == FileAction::Branch {
        1
    } else {
        f.have_rev
    };
    if cmd.tagged {
        cmd.stat([
            ("depotFile", f.depot_file.to_string()),
            ("clientFile", local.to_string()),
            ("workRev", work_rev.to_string()),
            ("action", action.as_str().to_string()),
            ("fromFile", source),
            ("startFromRev", (f.source_start + 1).to_string()),
            ("endFromRev", f.source_end.to_string()),
        ]);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("depotFile", f.depot_file.as_str())
                .text("#")
                .arg("workRev", work_rev.to_string())
                .text(" - ")
                .arg("how", how)
                .text(" from ")
                .arg("fromFile", source)
                .arg("range", range(f.source_start, f.source_end)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ranges_read_like_p4s() {
        assert_eq!(range(0, 1), "#1");
        assert_eq!(range(0, 3), "#1,#3");
        assert_eq!(range(2, 3), "#3");
    }
}
