//! `populate [-d description] [-f -n -o] [-m max] fromFile[rev] toFile | -b branch [-r]
//! [toFile...]`: files branched straight into the depot as one submitted change, with no
//! workspace and nothing opened (the service's `populate`). Untagged: `3 files branched
//! (change 4).`, with `-o` (or `-n`) a line per file first; tagged: a record per file with
//! `-o`/`-n`, then one with the change and the count.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::fileargs;
use crate::dispatch::{self, Command};
use keel_core::FileAction;
use keel_service::PopulateRequest;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "populate",
    row: rows::POPULATE,
    login: true,
    flags: "d: f n o m: b: r",
    usage: "populate [ -d description ] [ -f -n -o ] [ -m max ] [ -b branch [ -r ] [ toFile ... ] | fromFile[rev] toFile ]",
    run: |c| Box::pin(populate(c)),
}];

async fn populate(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("populate").expect("in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max = match flags.value('m') {
        None => None,
        Some(m) => Some(
            m.parse::<usize>()
                .ok()
                .filter(|&m| m > 0)
                .ok_or_else(|| usage(format!("-m {m}: the maximum must be a positive number")))?,
        ),
    };
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let mut req = PopulateRequest {
        reverse: flags.has('r'),
        preview: flags.has('n'),
        force: flags.has('f'),
        description: flags.value('d').unwrap_or_default().to_string(),
        max,
        ..PopulateRequest::default()
    };
    match (flags.value('b'), args.as_slice()) {
        (Some(branch), rest) => {
            req.branch = branch.to_string();
            req.files = rest.iter().map(|a| a.keel.clone()).collect();
        }
        (None, [from, to]) if !flags.has('r') => {
            req.from = from.keel.clone();
            req.to = to.keel.clone();
        }
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    }
    let (done, files) = cmd
        .call(move |svc, caller| {
            let mut files = Vec::new();
            svc.populate(caller, &req, &mut |f| {
                files.push(f);
                Ok(())
            })
            .map(|done| (done, files))
        })
        .await?
        .map_err(crate::cmd::refused)?;
    let change = done.change.map_or(0, |c| c.0);
    if flags.has('o') || flags.has('n') {
        for f in &files {
            let (action, verb) = match f.action {
                FileAction::Delete => ("delete", "delete from"),
                _ => ("branch", "branch from"),
            };
            let line = format!(
                "{}#{} - {verb} {}#{}",
                f.target, f.target_rev, f.source, f.source_rev
            );
            let mut record = vec![
                ("depotFile", f.target.to_string()),
                ("rev", f.target_rev.to_string()),
                ("fromFile", f.source.to_string()),
                ("startFromRev", f.source_rev.to_string()),
                ("action", action.to_string()),
            ];
            if change != 0 {
                record.push(("change", change.to_string()));
            }
            if cmd.tagged {
                cmd.stat(record);
            } else {
                cmd.info(line);
            }
        }
    }
    let summary = if flags.has('n') {
        format!("{} files would be branched.", done.files)
    } else {
        format!("{} files branched (change {change}).", done.files)
    };
    if cmd.tagged {
        let mut record = vec![("files", done.files.to_string())];
        if change != 0 {
            record.push(("change", change.to_string()));
        }
        cmd.stat(record);
    } else {
        cmd.info(summary);
    }
    Ok(())
}
