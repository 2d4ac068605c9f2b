//! `submit [-d desc | -i | -c N] [file ...]`: a pending change committed with the content the
//! client sends (`client-SendFile`, see [`crate::upload`]), its files read-only afterwards.
//! Given none of `-d`, `-i`, `-c`, the change form goes to the client's editor first.
//!
//! A submit of the default changelist first makes it a numbered change (as P4 servers do), so
//! a refused submit leaves a pending change the user resubmits with `submit -c N`; a client
//! that breaks off or sends content that does not match its digest leaves that change pending
//! with nothing of it submitted.

use crate::client_ops;
use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::change::{
    CHANGE, PLACEHOLDER, description_of, failed, form_files, info_line, new_change, no_description,
    opened_in,
};
use crate::commands::forms;
use crate::commands::workspace::{Work, change_arg};
use crate::dispatch::{self, Command};
use crate::upload::{self, files_to_send};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Values, one};
use keel_core::{ChangeNumber, ChangeRef, FileAction, FileType};
use keel_service::command as rows;
use keel_service::{FileInfo, SubmitError, SubmitSession};

pub const COMMANDS: &[Command] = &[Command {
    name: "submit",
    row: rows::SUBMIT,
    login: true,
    flags: "d: i c: f: r",
    usage: "submit [ -d description | -i | -c changelist# ] [ -f submitoption -r ] [ file ]",
    run: |c| Box::pin(submit(c)),
}];

async fn submit(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("submit").expect("submit is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['d', 'i', 'c'].iter().filter(|f| flags.has(**f)).count();
    if modes > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    if let Some(option) = flags.value('f')
        && option != "submitunchanged"
    {
        return Err(usage(format!(
            "-f {option}: this server submits files unchanged or not alike (submitunchanged)."
        )));
    }
    let work = Work::load(cmd).await?;
    let file_args = work.place.args_or_all(&flags.rest)?;
    // The change to submit: a numbered one (made from the default changelist when needed).
    let (change, description) = if let Some(c) = flags.value('c') {
        let n = change_arg(Some(c))?.unwrap_or_default();
        if n == ChangeRef::Default {
            return Err(usage("-c default: name a numbered change."));
        }
        (n, String::new())
    } else {
        let (description, from_form, numbered) = if flags.has('i') || !flags.has('d') {
            let form = if flags.has('i') {
                forms::receive(cmd, &CHANGE).await?
            } else {
                edited_form(cmd, &work, &file_args, flags.rest.is_empty()).await?
            };
            let numbered = match one(&form, "Change").as_str() {
                "new" | "" => None,
                n => Some(
                    n.parse::<u64>()
                        .map_err(|_| usage(format!("Change '{n}': not a change number.")))?,
                ),
            };
            (description_of(&form), Some(form_files(&form)), numbered)
        } else {
            (flags.value('d').unwrap_or_default().to_string(), None, None)
        };
        if description.trim() == PLACEHOLDER {
            return Err(no_description());
        }
        if description.trim().is_empty() {
            return Err(usage("Change description missing.  You must enter one."));
        }
        match numbered {
            Some(n) => {
                let (d, files) = (description.clone(), from_form.clone().unwrap_or_default());
                cmd.call(move |svc, caller| {
                    svc.save_change(caller, Some(ChangeNumber(n)), &d, &files)
                })
                .await?
                .map_err(failed)?;
                (ChangeRef::from_number(n), description)
            }
            None => {
                let default = opened_in(cmd, ChangeRef::Default).await?;
                let wanted: Vec<String> = match (&from_form, flags.rest.is_empty()) {
                    (Some(listed), _) => listed.clone(),
                    (None, true) => default.iter().map(|f| f.depot_file.to_string()).collect(),
                    (None, false) => file_args.clone(),
                };
                let chosen = choose(&default, &wanted, &work.place.workspace);
                if chosen.is_empty() {
                    return Err(failed("No files to submit from the default changelist."));
                }
                let n = new_change(cmd, description.clone(), chosen.clone()).await?;
                info_line(
                    cmd,
                    format!("Change {n} created with {} open file(s).", chosen.len()),
                );
                (ChangeRef::from_number(n.0), description)
            }
        }
    };
    let number = change.number();
    let result = submit_change(cmd, &work, change, description).await;
    let again = format!("Submit failed -- fix problems above then use 'p4 submit -c {number}'.");
    match result {
        // Files still to resolve: each named, then one error saying so, as scripts (and
        // P4Python's `str(exception)`) read it.
        Err(CmdError::Report(r)) if r.number == number::MERGES_PENDING => {
            cmd.info(r.rendered());
            Err(CmdError::Report(Report::failed(
                Generic::NotYet,
                number::MERGES_PENDING,
                format!("Merges still pending -- use 'resolve' to merge files.\n{again}"),
            )))
        }
        Err(CmdError::Report(r)) => {
            cmd.report(r);
            Err(CmdError::Report(Report::failed(
                Generic::NotYet,
                number::SERVICE,
                again,
            )))
        }
        other => other,
    }
}

/// A refused submit as the client shows it; a file still to resolve is told apart (the caller
/// words it as P4 clients expect).
fn submit_failed(e: SubmitError) -> CmdError {
    match e {
        SubmitError::MustResolve { path } => CmdError::Report(Report::failed(
            Generic::NotYet,
            number::MERGES_PENDING,
            format!("{path} - must resolve before submitting"),
        )),
        e => failed(e),
    }
}

/// The depot paths of the files of `default` that `wanted` (depot, client or wildcard paths)
/// names.
fn choose(default: &[FileInfo], wanted: &[String], workspace: &str) -> Vec<String> {
    default
        .iter()
        .filter(|f| {
            wanted.iter().any(|w| {
                w == f.depot_file.as_str()
                    || f.client_file
                        .as_deref()
                        .is_some_and(|rel| *w == format!("//{workspace}/{rel}"))
                    || pattern_matches(w, f, workspace)
            })
        })
        .map(|f| f.depot_file.to_string())
        .collect()
}

/// The change form of a submit given no description, as the user left it in the client's
/// editor (`P4EDITOR`): the default changelist's files (those the arguments name).
pub(crate) async fn edited_form(
    cmd: &mut Cmd,
    work: &Work,
    file_args: &[String],
    all: bool,
) -> Result<Values, CmdError> {
    let default = opened_in(cmd, ChangeRef::Default).await?;
    let files = if all {
        default.iter().map(|f| f.depot_file.to_string()).collect()
    } else {
        choose(&default, file_args, &work.place.workspace)
    };
    if files.is_empty() {
        return Err(failed("No files to submit from the default changelist."));
    }
    let values: Values = vec![
        ("Change", vec!["new".to_string()]),
        ("Client", vec![cmd.caller.workspace.clone()]),
        ("User", vec![cmd.caller.user.clone()]),
        ("Status", vec!["new".to_string()]),
        ("Description", vec![PLACEHOLDER.to_string()]),
        ("Files", files),
    ];
    match forms::edit(cmd, &CHANGE, &values).await? {
        forms::Edited::Changed(form) => Ok(form),
        forms::Edited::Same => Err(no_description()),
    }
}

/// Whether a wildcard argument (`//ws/dir/...`) selects `f`.
fn pattern_matches(arg: &str, f: &FileInfo, workspace: &str) -> bool {
    let Some(prefix) = arg.strip_suffix("...") else {
        return false;
    };
    f.depot_file.as_str().starts_with(prefix)
        || f.client_file
            .as_deref()
            .is_some_and(|rel| format!("//{workspace}/{rel}").starts_with(prefix))
}

/// Submits numbered `change`: the client sends what must be sent, the change commits, and
/// the client's files become read-only (unless `allwrite` or `+w`).
async fn submit_change(
    cmd: &mut Cmd,
    work: &Work,
    change: ChangeRef,
    description: String,
) -> CmdResult {
    let opened = opened_in(cmd, change).await?;
    let session = cmd
        .call(move |svc, caller| svc.submit_begin(caller, change, &description))
        .await?
        .map_err(submit_failed)?;
    let mut session: SubmitSession = session;
    let n = change.number();
    if !cmd.tagged {
        info_line(cmd, format!("Submitting change {n}."));
        info_line(cmd, format!("Locking {} files ...", opened.len()));
    } else {
        cmd.stat([
            ("change", n.to_string()),
            ("openFiles", opened.len().to_string()),
            ("locked", opened.len().to_string()),
        ]);
    }
    let expected: Vec<String> = session.uploads().expected().map(str::to_string).collect();
    let to_send = files_to_send(work, &opened, &expected)?;
    let session = upload::receive(cmd, session, SubmitSession::uploads, &to_send).await?;
    let (result, files) = cmd
        .call(move |svc, _| {
            let mut files = Vec::new();
            session
                .commit_with(svc, &mut |_, page| {
                    files.extend(page);
                    true
                })
                .map(|r| (r, files))
        })
        .await?
        .map_err(submit_failed)?;
    for f in &files {
        let action = f.action.unwrap_or(FileAction::Edit);
        if !action.is_delete()
            && let Some(rel) = &f.client_file
        {
            let t = f.file_type.unwrap_or(FileType::TEXT);
            let local = work.local_of_rel(rel);
            client_ops::chmod(cmd, &local, t, client_ops::perms(t, work.allwrite));
        }
        if cmd.tagged {
            cmd.stat([
                ("depotFile", f.depot_file.to_string()),
                ("rev", f.head_rev.to_string()),
                ("action", action.to_string()),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .text(format!("{action} "))
                    .arg("depotFile", f.depot_file.as_str())
                    .text(format!("#{}", f.head_rev)),
            );
        }
    }
    let submitted = result.change.0;
    if cmd.tagged {
        let mut fields = vec![("submittedChange", submitted.to_string())];
        if let Some(from) = result.renamed_from {
            fields.push(("renamedChange", from.0.to_string()));
        }
        cmd.stat(fields);
    } else if let Some(from) = result.renamed_from {
        info_line(
            cmd,
            format!("Change {from} renamed change {submitted} and submitted."),
        );
    } else {
        info_line(cmd, format!("Change {submitted} submitted."));
    }
    for failure in &result.trigger_failures {
        cmd.report(
            Report::new(Severity::Warn, Generic::None, number::SERVICE)
                .text(format!("{failure:?}")),
        );
    }
    Ok(())
}
