//! `shelve [-c N | -i] [-r] [-f] [-d -c N] [file ...]`: the opened files of a pending change
//! stored on the server, their content sent by the client (`client-SendFile`, see
//! [`crate::upload`]) into the service's shelve step; `-d` deletes shelved files. Given
//! neither `-c` nor `-i`, the default changelist's files go into a new change whose form the
//! user fills in in the client's editor.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::change::{
    CHANGE, PLACEHOLDER, description_of, failed, form_files, info_line, new_change, no_description,
    opened_in,
};
use crate::commands::forms;
use crate::commands::open::work_rev;
use crate::commands::workspace::{Work, change_arg};
use crate::dispatch::{self, Command};
use crate::upload::{self, files_to_send};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::one;
use keel_core::{ChangeNumber, ChangeRef, FileAction};
use keel_service::ShelveSession;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[Command {
    name: "shelve",
    row: rows::SHELVE,
    login: true,
    flags: "c: d r f i a:",
    usage: "shelve [ -a option ] [ -c changelist# | -i ] [ -f | -r ] [ -d -c changelist# ] [ file ... ]",
    run: |c| Box::pin(shelve(c)),
}];

async fn shelve(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("shelve").expect("shelve is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if let Some(option) = flags.value('a')
        && option != "submitunchanged"
    {
        return Err(usage(format!(
            "-a {option}: this server shelves files unchanged or not alike (submitunchanged)."
        )));
    }
    cmd.caller.force = flags.has('f');
    let work = Work::load(cmd).await?;
    let files = if flags.rest.is_empty() {
        Vec::new()
    } else {
        work.place.args_or_all(&flags.rest)?
    };
    if flags.has('d') {
        let n = change_arg(flags.value('c'))?
            .and_then(ChangeRef::numbered)
            .ok_or_else(|| usage("shelve -d needs -c changelist#."))?;
        let deleted = cmd
            .call(move |svc, caller| svc.delete_shelved(caller, n, &files))
            .await?
            .map_err(failed)?;
        if cmd.tagged {
            for f in &deleted {
                cmd.stat([
                    ("depotFile", f.depot_file.to_string()),
                    ("change", n.to_string()),
                ]);
            }
        } else {
            for f in &deleted {
                info_line(cmd, format!("{} - shelved file deleted", f.depot_file));
            }
            info_line(cmd, format!("Shelved change {n} deleted."));
        }
        return Ok(());
    }
    let change = if flags.has('i') || flags.value('c').is_none() {
        let form = if flags.has('i') {
            forms::receive(cmd, &CHANGE).await?
        } else {
            // No change named: the default changelist's files in a new change whose form
            // the user fills in in the client's editor.
            crate::commands::submit::edited_form(cmd, &work, &files, flags.rest.is_empty()).await?
        };
        let description = description_of(&form);
        let listed = form_files(&form);
        match one(&form, "Change").as_str() {
            "new" | "" => {
                if description.trim() == PLACEHOLDER {
                    return Err(no_description());
                }
                if description.trim().is_empty() {
                    return Err(usage("Change description missing.  You must enter one."));
                }
                let n = new_change(cmd, description, listed).await?;
                // Tagged, the records that follow carry the change (P4Python's
                // `save_shelve(spec)[0]['change']`); the line is for people.
                if !cmd.tagged {
                    info_line(cmd, format!("Change {n} created."));
                }
                n
            }
            n => {
                let n = ChangeNumber(
                    n.parse::<u64>()
                        .map_err(|_| usage(format!("Change '{n}': not a change number.")))?,
                );
                cmd.call(move |svc, caller| {
                    svc.save_change(caller, Some(n), &description, &listed)
                })
                .await?
                .map_err(failed)?;
                n
            }
        }
    } else {
        change_arg(flags.value('c'))?
            .and_then(ChangeRef::numbered)
            .ok_or_else(|| {
                usage("shelve needs a numbered change: -c changelist# or -i (a change form).")
            })?
    };
    let replace = flags.has('r');
    let opened = opened_in(cmd, ChangeRef::Numbered(change)).await?;
    let mut session: ShelveSession = cmd
        .call(move |svc, caller| {
            svc.shelve_begin(caller, ChangeRef::Numbered(change), &files, replace)
        })
        .await?
        .map_err(failed)?;
    let expected: Vec<String> = session.uploads().expected().map(str::to_string).collect();
    let to_send = files_to_send(&work, &opened, &expected)?;
    if !cmd.tagged {
        info_line(cmd, format!("Shelving files for change {change}."));
    }
    let session = upload::receive(cmd, session, ShelveSession::uploads, &to_send).await?;
    let (n, shelved) = cmd
        .call(move |svc, _| session.commit(svc))
        .await?
        .map_err(failed)?;
    for f in &shelved {
        let action = f.action.unwrap_or(FileAction::Edit);
        if cmd.tagged {
            cmd.stat([
                ("change", n.to_string()),
                ("depotFile", f.depot_file.to_string()),
                ("rev", work_rev(f).to_string()),
                ("action", action.to_string()),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .text(format!("{action} "))
                    .arg("depotFile", f.depot_file.as_str())
                    .text(format!("#{}", work_rev(f))),
            );
        }
    }
    if !cmd.tagged {
        info_line(cmd, format!("Change {n} files shelved."));
    }
    Ok(())
}
