//! `istat` (whether a branch's target needs changes from its source and the source from the
//! target: a branch spec stands for a stream, its source side for the parent) and
//! `prune [-y] file...` (remove unmodified branched files; a report without -y).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use keel_service::command as rows;
use keel_service::{IntegStatus, IntegrateError, IstatRequest, PruneError, ServiceError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "istat",
        row: rows::ISTAT,
        login: true,
        flags: "a r b:",
        usage: "istat [ -a | -r ] { branch | -b branch | fromFile toFile }",
        run: |c| Box::pin(istat(c)),
    },
    Command {
        name: "prune",
        row: rows::PRUNE,
        login: true,
        flags: "y",
        usage: "prune [ -y ] file ...",
        run: |c| Box::pin(prune(c)),
    },
];

fn failed(text: String) -> CmdError {
    CmdError::Report(Report::failed(Generic::None, number::SERVICE, text))
}

async fn istat(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("istat").expect("istat is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let mut req = IstatRequest::default();
    match (flags.value('b'), flags.rest.as_slice()) {
        (Some(branch), []) => req.branch = branch.to_string(),
        (None, [branch]) => req.branch = branch.clone(),
        (None, [_, _]) => {
            let (mapped, _) = fileargs::map(cmd, &flags.rest, false).await?;
            req.from = mapped[0].keel.clone();
            req.to = mapped[1].keel.clone();
        }
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    }
    let status: IntegStatus = cmd
        .call(move |svc, caller| svc.istat(caller, &req))
        .await?
        .map_err(|e| match e {
            IntegrateError::Service(s) => s.into(),
            other => failed(other.to_string()),
        })?;
    // p4 reports the way up to the parent by default, -r the way down, -a both.
    let (up, down) = match (flags.has('a'), flags.has('r')) {
        (true, _) => (true, true),
        (false, r) => (!r, r),
    };
    let yes_no = |b: bool| if b { "true" } else { "false" };
    if cmd.tagged {
        let mut rec = vec![
            ("stream", status.target.clone()),
            ("parent", status.source.clone()),
            ("type", "branch".to_string()),
            ("firmerThanParent", "false".to_string()),
            ("changeFlowsToParent", "true".to_string()),
            ("changeFlowsFromParent", "true".to_string()),
        ];
        if up {
            let f = status.to_source;
            rec.push(("integToParent", yes_no(f.needed()).to_string()));
            rec.push(("integToParentHow", "copy".to_string()));
            rec.push(("toParentChanges", f.changes.to_string()));
            rec.push(("toResult", f.newest.map_or(0, |c| c.0).to_string()));
        }
        if down {
            let f = status.from_source;
            rec.push(("integFromParent", yes_no(f.needed()).to_string()));
            rec.push(("integFromParentHow", "merge".to_string()));
            rec.push(("fromParentChanges", f.changes.to_string()));
            rec.push(("fromResult", f.newest.map_or(0, |c| c.0).to_string()));
        }
        cmd.stat(rec);
        return Ok(());
    }
    let line = |what: &str, f: keel_service::PendingFlow, from: &str, to: &str| match f.newest {
        Some(newest) => format!(
            "{to} - needs {} change(s) from {from} ({what}; newest change {})",
            f.changes, newest.0
        ),
        None => format!("{to} - nothing to integrate from {from}"),
    };
    if up {
        let text = line("copy", status.to_source, &status.target, &status.source);
        cmd.info(text);
    }
    if down {
        let text = line("merge", status.from_source, &status.source, &status.target);
        cmd.info(text);
    }
    Ok(())
}

async fn prune(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("prune").expect("prune is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let files: Vec<String> = args.into_iter().map(|a| a.keel).collect();
    let execute = flags.has('y');
    let done = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.prune(caller, &files, execute, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|_| out)
        })
        .await?;
    let pruned = match done {
        Ok(d) => d,
        Err(PruneError::Service(ServiceError::NoSuchFiles { arg })) => {
            cmd.report(fileargs::no_such(&arg));
            return Ok(());
        }
        Err(PruneError::Service(e)) => return Err(e.into()),
        Err(e) => return Err(failed(e.to_string())),
    };
    let what = if execute { "pruned" } else { "would be pruned" };
    for f in &pruned {
        if cmd.tagged {
            cmd.stat([
                ("depotFile", f.path.to_string()),
                ("rev", f.rev.to_string()),
                ("action", what.to_string()),
                ("fromFile", f.from.to_string()),
                ("fromRev", f.from_rev.to_string()),
            ]);
        } else {
            cmd.info(format!("{}#{} - {what}", f.path, f.rev));
        }
    }
    if !cmd.tagged && !execute {
        cmd.info("This was report mode.  Use -y to remove files.");
    }
    Ok(())
}
