//! `verify [-q] [-m max]` (each revision's stored content checked against its digest),
//! `obliterate [-y]` (report, or remove for good) and `triggers -o/-i` (the triggers table as a
//! form with `specdef`).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs;
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Field, Kind, SpecDef, lines};
use keel_service::command as rows;
use keel_service::{ObliterateError, VerifiedFile, VerifyEvent, VerifyOptions, VerifyOutcome};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "verify",
        row: rows::VERIFY,
        login: true,
        flags: "q m: S s",
        usage: "verify [ -q -S -m max ] file[revRange] ...",
        run: |c| Box::pin(verify(c)),
    },
    Command {
        name: "obliterate",
        row: rows::OBLITERATE,
        login: true,
        flags: "y",
        usage: "obliterate [ -y ] file[revRange] ...",
        run: |c| Box::pin(obliterate(c)),
    },
    Command {
        name: "triggers",
        row: rows::SAVE_TRIGGERS,
        login: true,
        flags: "o i",
        usage: "triggers [ -o | -i ]",
        run: |c| Box::pin(triggers(c)),
    },
];

/// The triggers form.
pub const TRIGGERS: SpecDef = SpecDef {
    kind: "triggers",
    comment: "# Keel's triggers table: one line per trigger,\n#  \
              NAME TYPE PATH \"COMMAND\"\n\n",
    fields: &[Field {
        name: "Triggers",
        code: 551,
        kind: Kind::LineList,
        required: false,
        read_only: false,
        len: 64,
        values: "",
    }],
};

fn send_verified(cmd: &mut Cmd, v: &VerifiedFile) {
    let f = &v.file;
    let status = match &v.outcome {
        VerifyOutcome::Ok => None,
        VerifyOutcome::Bad(_) => Some("BAD!"),
        VerifyOutcome::Missing => Some("MISSING!"),
        VerifyOutcome::NotFetched => Some("NOT FETCHED"),
    };
    let digest = f.digest.to_hex();
    if cmd.tagged {
        let mut rec = vec![
            ("depotFile", f.depot_file.to_string()),
            ("rev", f.rev.to_string()),
            ("change", f.change.to_string()),
            ("action", f.action.as_str().to_string()),
            ("type", f.file_type.to_string()),
            ("digest", digest),
            ("fileSize", f.size.to_string()),
        ];
        if let Some(s) = status {
            rec.push(("status", s.trim_end_matches('!').to_string()));
        }
        cmd.stat(rec);
        return;
    }
    let line = format!(
        "{}#{} - {} change {} ({}) {digest}",
        f.depot_file,
        f.rev,
        f.action.as_str(),
        f.change,
        f.file_type
    );
    match status {
        None => cmd.info(line),
        Some(s) => cmd.report(
            Report::new(Severity::Failed, Generic::None, number::SERVICE)
                .text(line)
                .text(" ")
                .text(s),
        ),
    }
}

async fn verify(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("verify").expect("verify is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let max = match flags.value('m') {
        Some(m) => m
            .parse::<usize>()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => usize::MAX,
    };
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let files: Vec<String> = args.into_iter().map(|a| a.keel).collect();
    let options = VerifyOptions {
        shelved: flags.has('S'),
        problems_only: flags.has('q'),
    };
    let checked = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.verify(caller, &files, options, &mut |e| {
                if let VerifyEvent::File(f) = e
                    && out.len() < max
                {
                    out.push(f);
                }
                Ok(())
            })
            .map(|_| out)
        })
        .await?;
    let checked = match checked {
        Ok(c) => c,
        Err(keel_service::ServiceError::NoSuchFiles { arg }) => {
            cmd.report(fileargs::no_such(&arg));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    for v in &checked {
        send_verified(cmd, v);
    }
    Ok(())
}

async fn obliterate(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("obliterate").expect("obliterate is in the table");
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
            svc.obliterate(caller, &files, execute, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|totals| (out, totals))
        })
        .await?;
    let (purged, totals) = match done {
        Ok(d) => d,
        Err(ObliterateError::Service(keel_service::ServiceError::NoSuchFiles { arg })) => {
            cmd.report(fileargs::no_such(&arg));
            return Ok(());
        }
        Err(e) => {
            return Err(CmdError::Report(Report::failed(
                Generic::None,
                number::SERVICE,
                e.to_string(),
            )));
        }
    };
    for f in &purged {
        if cmd.tagged {
            cmd.stat([
                ("depotFile", f.depot_file.to_string()),
                ("rev", f.head_rev.to_string()),
                ("action", "purged".to_string()),
            ]);
        } else {
            cmd.info(format!("{}#{} - purged", f.depot_file, f.head_rev));
        }
    }
    if !cmd.tagged {
        cmd.info(format!(
            "Deleted {} revision(s), {} integration record(s), {} label entries.",
            totals.revisions, totals.integrations, totals.label_entries
        ));
        if !totals.executed {
            cmd.info("This was report mode.  Use -y to remove files.");
        }
    }
    Ok(())
}

async fn triggers(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("triggers").expect("triggers is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() || flags.has('o') == flags.has('i') {
        return Err(usage(format!(
            "triggers: use -o or -i (this server edits no forms itself).\nUsage: {}",
            command.usage
        )));
    }
    if flags.has('o') {
        let table = cmd.call(|svc, caller| svc.triggers(caller)).await??;
        let lines = table.iter().map(|t| t.render()).collect();
        forms::send(cmd, &TRIGGERS, &vec![("Triggers", lines)]);
        return Ok(());
    }
    let form = forms::receive(cmd, &TRIGGERS).await?;
    let table: Vec<String> = lines(&form, "Triggers")
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    cmd.call(move |svc, caller| svc.save_triggers(caller, &table))
        .await??;
    cmd.info("Triggers saved.");
    Ok(())
}
