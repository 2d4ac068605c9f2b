//! `change -o/-i/-d [-f]`: pending changes as P4 clients edit them, in the change form (with
//! its `specdef`, so P4Python's `fetch_change` returns a `P4.Spec` and `save_change` takes
//! one), and what the submit and shelve commands share of it (reading a form's description and
//! files, making a new pending change, listing a change's opened files).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::forms;
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Kind, SpecDef, Values, field, lines, one};
use keel_core::{ChangeNumber, ChangeRef, ChangeStatus};
use keel_service::command as rows;
use keel_service::{DescribePart, FileInfo};

pub const COMMANDS: &[Command] = &[Command {
    name: "change",
    row: rows::SAVE_CHANGE,
    login: true,
    flags: "o i d f s",
    usage: "change [ -f -s ] [ -o | -i | -d ] [ changelist# ]",
    run: |c| Box::pin(change(c)),
}];

/// The change form.
pub const CHANGE: SpecDef = SpecDef {
    kind: "change",
    comment: "# A Keel change specification.\n#\n#  Change:      The change number. 'new' on a \
              new changelist.\n#  Date:        The date this specification was last \
              modified.\n#  Client:      The client on which the changelist was created.  \
              Read-only.\n#  User:        The user who created the changelist.\n#  Status:   \
                 Either 'pending' or 'submitted'. Read-only.\n#  Description: Comments about \
              the changelist.  Required.\n#  Files:       What opened files from the client \
              are to be added to this changelist.\n\n",
    fields: &[
        field("Change", 201, Kind::Word, true, true, 10),
        field("Date", 202, Kind::Date, false, true, 20),
        field("Client", 203, Kind::Word, false, true, 32),
        field("User", 204, Kind::Word, false, true, 32),
        field("Status", 205, Kind::Word, false, true, 10),
        field("Description", 206, Kind::Text, true, false, 128),
        field("Files", 210, Kind::WordList { words: 1 }, false, false, 64),
    ],
};

/// The description a new change's form starts with.
pub(crate) const PLACEHOLDER: &str = "<enter description here>";

/// The refusal of a change form whose description was left as the placeholder.
pub(crate) fn no_description() -> CmdError {
    usage(format!(
        "Error in change specification: the Description is still '{PLACEHOLDER}'; enter one."
    ))
}

pub(crate) fn failed(e: impl std::fmt::Display) -> CmdError {
    CmdError::Report(Report::failed(
        Generic::NotYet,
        number::SERVICE,
        e.to_string(),
    ))
}

pub(crate) fn info_line(cmd: &mut Cmd, text: String) {
    cmd.report(Report::new(Severity::Info, Generic::None, 0).text(text));
}

/// The files opened in `change` of the caller's workspace.
pub(crate) fn opened_in(
    cmd: &Cmd,
    change: ChangeRef,
) -> impl Future<Output = Result<Vec<FileInfo>, CmdError>> + Send + 'static {
    let listed = cmd.call(move |svc, caller| {
        let mut out = Vec::new();
        svc.opened(caller, &[], false, "", Some(change), &mut |f| {
            out.push(f);
            Ok(())
        })
        .map(|()| out)
    });
    async move { listed.await?.map_err(CmdError::from) }
}

/// A new pending change holding `files` (depot paths of opened files).
pub(crate) fn new_change(
    cmd: &Cmd,
    description: String,
    files: Vec<String>,
) -> impl Future<Output = Result<ChangeNumber, CmdError>> + Send + 'static {
    let saved = cmd.call(move |svc, caller| svc.save_change(caller, None, &description, &files));
    async move { Ok(saved.await?.map_err(failed)?.change) }
}

/// The description a form or `-d` gives, ending in a newline as P4 forms keep it.
pub(crate) fn description_of(form: &Values) -> String {
    lines(form, "Description").join("\n")
}

/// Files of a form's `Files` field (the depot path, a trailing `# action` comment dropped).
pub(crate) fn form_files(form: &Values) -> Vec<String> {
    lines(form, "Files")
        .iter()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

async fn change(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("change").expect("change is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['o', 'i', 'd'].iter().filter(|f| flags.has(**f)).count();
    if modes > 1 || flags.rest.len() > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    cmd.caller.force = flags.has('f');
    let number = match flags.rest.first() {
        Some(n) => Some(
            n.parse::<u64>()
                .map_err(|_| usage(format!("Invalid changelist number '{n}'.")))?,
        ),
        None => None,
    };
    if flags.has('d') {
        let n = number.ok_or_else(|| usage("change -d needs a changelist number."))?;
        cmd.call(move |svc, caller| svc.delete_change(caller, ChangeNumber(n)))
            .await?
            .map_err(failed)?;
        info_line(cmd, format!("Change {n} deleted."));
        return Ok(());
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &CHANGE).await?;
        return save(cmd, form).await;
    }
    let values = match number {
        None => {
            let opened = opened_in(cmd, ChangeRef::Default).await?;
            let mut v: Values = vec![("Change", vec!["new".to_string()])];
            v.push(("Client", vec![cmd.caller.workspace.clone()]));
            v.push(("User", vec![cmd.caller.user.clone()]));
            v.push(("Status", vec!["new".to_string()]));
            v.push(("Description", vec![PLACEHOLDER.to_string()]));
            v.push((
                "Files",
                opened.iter().map(|f| f.depot_file.to_string()).collect(),
            ));
            v
        }
        Some(n) => {
            let parts = cmd
                .call(move |svc, caller| {
                    let mut parts = Vec::new();
                    svc.describe(caller, ChangeNumber(n), true, &mut |p| {
                        parts.push(p);
                        Ok(())
                    })
                    .map(|()| parts)
                })
                .await??;
            let mut v: Values = Vec::new();
            let mut files = Vec::new();
            for p in parts {
                match p {
                    DescribePart::Change(c) => {
                        v.push(("Change", vec![c.change.to_string()]));
                        v.push(("Date", vec![dates::date_time(c.time)]));
                        v.push(("Client", vec![c.workspace.clone()]));
                        v.push(("User", vec![c.user.clone()]));
                        v.push((
                            "Status",
                            vec![
                                match c.status {
                                    ChangeStatus::Pending => "pending",
                                    _ => "submitted",
                                }
                                .to_string(),
                            ],
                        ));
                        v.push((
                            "Description",
                            c.description.lines().map(str::to_string).collect(),
                        ));
                    }
                    DescribePart::File(f) => files.push(f.depot_file.to_string()),
                    DescribePart::Diff(_) => {}
                }
            }
            v.push(("Files", files));
            v
        }
    };
    if flags.has('o') {
        forms::send(cmd, &CHANGE, &values);
        return Ok(());
    }
    match forms::edit(cmd, &CHANGE, &values).await? {
        forms::Edited::Changed(form) => save(cmd, form).await,
        forms::Edited::Same if number.is_none() => Err(no_description()),
        forms::Edited::Same => {
            info_line(cmd, format!("Change {} unchanged.", number.unwrap_or(0)));
            Ok(())
        }
    }
}

/// Saves a change form (from `-i` or the editor).
async fn save(cmd: &mut Cmd, form: Values) -> CmdResult {
    let description = description_of(&form);
    if description.trim() == PLACEHOLDER {
        return Err(no_description());
    }
    let files = form_files(&form);
    let target = match one(&form, "Change").as_str() {
        "new" | "" => None,
        n => Some(ChangeNumber(n.parse::<u64>().map_err(|_| {
            usage(format!("Change '{n}': not a change number."))
        })?)),
    };
    let saved = cmd
        .call(move |svc, caller| svc.save_change(caller, target, &description, &files))
        .await?
        .map_err(failed)?;
    let verb = if target.is_some() {
        "updated"
    } else {
        "created"
    };
    info_line(cmd, format!("Change {} {verb}.", saved.change));
    Ok(())
}
