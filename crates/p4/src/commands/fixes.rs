//! `fixes [-i] [-m max] [-c change] [-j job] [file...]`: the jobs changes fix, tagged (`Job
//! Change Date User Client Status`) and untagged (`JOB fixed by change N on DATE by
//! USER@CLIENT (STATUS)`). P4Java lists a change's fixes when it refreshes or submits one.

use crate::cmd::{Cmd, CmdError, CmdResult, usage};
use crate::dates;
use crate::dispatch::{self, Command};
use crate::filespec::Place;
use crate::wire::report::{Generic, Report};
use keel_service::command as rows;
use keel_service::{FixRow, FixesQuery};

pub const COMMANDS: &[Command] = &[Command {
    name: "fixes",
    row: rows::LIST_FIXES,
    login: true,
    flags: "i m: c: j:",
    usage: "fixes [ -i -m max -c changelist# -j jobName ] [ file[revRange] ... ]",
    run: |c| Box::pin(fixes(c)),
}];

async fn fixes(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("fixes").expect("fixes is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let number = |flag: char, what: &str| -> Result<u64, CmdError> {
        match flags.value(flag) {
            None => Ok(0),
            Some(v) => v
                .parse()
                .map_err(|_| usage(format!("'{v}' is not a {what} (-{flag})."))),
        }
    };
    let change = number('c', "change number")?;
    let max = u32::try_from(number('m', "number")?).map_err(|_| usage("-m is too large."))?;
    let files = if flags.rest.is_empty() {
        Vec::new()
    } else {
        let place = Place::of(cmd).await?;
        flags
            .rest
            .iter()
            .map(|a| place.to_keel(a))
            .collect::<Result<Vec<_>, _>>()?
    };
    let query = FixesQuery {
        job: flags.value('j').unwrap_or_default().to_string(),
        change,
        files,
        max,
    };
    let found = cmd
        .call(move |svc, caller| {
            let mut rows: Vec<FixRow> = Vec::new();
            svc.fixes(caller, &query, &mut |f| {
                rows.push(f);
                Ok(())
            })
            .map(|()| rows)
        })
        .await?
        .map_err(|e| {
            CmdError::Report(Report::failed(
                Generic::None,
                crate::cmd::number::SERVICE,
                e.to_string(),
            ))
        })?;
    for f in found {
        if cmd.tagged {
            cmd.stat([
                ("Job", f.job.clone()),
                ("Change", f.change.0.to_string()),
                ("Date", f.date.to_string()),
                ("User", f.user.clone()),
                ("Client", f.workspace.clone()),
                ("Status", f.status.clone()),
            ]);
        } else {
            cmd.info(format!(
                "{} fixed by change {} on {} by {}@{} ({})",
                f.job,
                f.change.0,
                dates::date(f.date),
                f.user,
                f.workspace,
                f.status
            ));
        }
    }
    Ok(())
}
