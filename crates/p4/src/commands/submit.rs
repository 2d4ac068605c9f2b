//! `submit`, `change` and `shelve`: pending changes as P4 clients edit them (the change form
//! with its `specdef`), and content sent by the client (`client-SendFile`, see
//! [`crate::upload`]) into the service's submit and shelve steps.
//!
//! A submit of the default changelist first makes it a numbered change (as P4 servers do), so
//! a refused submit leaves a pending change the user resubmits with `submit -c N`; a client
//! that breaks off or sends content that does not match its digest leaves that change pending
//! with nothing of it submitted.

use crate::client_ops;
use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::forms;
use crate::commands::open::work_rev;
use crate::commands::workspace::{Work, change_arg};
use crate::dates;
use crate::dispatch::{self, Command};
use crate::upload::{self, ToSend};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Field, Kind, SpecDef, Values, lines, one};
use keel_core::{ChangeNumber, ChangeRef, ChangeStatus, FileAction, FileType};
use keel_service::command as rows;
use keel_service::{DescribePart, FileInfo, ShelveSession, SubmitSession};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "submit",
        row: rows::SUBMIT,
        login: true,
        flags: "d: i c: f: r",
        usage: "submit [ -d description | -i | -c changelist# ] [ -f submitoption -r ] [ file ]",
        run: |c| Box::pin(submit(c)),
    },
    Command {
        name: "change",
        row: rows::SAVE_CHANGE,
        login: true,
        flags: "o i d f s",
        usage: "change [ -f -s ] [ -o | -i | -d ] [ changelist# ]",
        run: |c| Box::pin(change(c)),
    },
    Command {
        name: "shelve",
        row: rows::SHELVE,
        login: true,
        flags: "c: d r f i a:",
        usage: "shelve [ -a option ] [ -c changelist# | -i ] [ -f | -r ] [ -d -c changelist# ] [ file ... ]",
        run: |c| Box::pin(shelve(c)),
    },
];

const fn field(name: &'static str, code: u16, kind: Kind, rq: bool, ro: bool, len: u16) -> Field {
    Field {
        name,
        code,
        kind,
        required: rq,
        read_only: ro,
        len,
        values: "",
    }
}

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

fn failed(e: impl std::fmt::Display) -> CmdError {
    CmdError::Report(Report::failed(
        Generic::NotYet,
        number::SERVICE,
        e.to_string(),
    ))
}

fn info_line(cmd: &mut Cmd, text: String) {
    cmd.report(Report::new(Severity::Info, Generic::None, 0).text(text));
}

/// The files opened in `change` of the caller's workspace.
fn opened_in(
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
fn new_change(
    cmd: &Cmd,
    description: String,
    files: Vec<String>,
) -> impl Future<Output = Result<ChangeNumber, CmdError>> + Send + 'static {
    let saved = cmd.call(move |svc, caller| svc.save_change(caller, None, &description, &files));
    async move { Ok(saved.await?.map_err(failed)?.change) }
}

/// The description a form or `-d` gives, ending in a newline as P4 forms keep it.
fn description_of(form: &Values) -> String {
    lines(form, "Description").join("\n")
}

/// Files of a form's `Files` field (the depot path, a trailing `# action` comment dropped).
fn form_files(form: &Values) -> Vec<String> {
    lines(form, "Files")
        .iter()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

async fn submit(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("submit").expect("submit is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['d', 'i', 'c'].iter().filter(|f| flags.has(**f)).count();
    if modes > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    if modes == 0 {
        return Err(usage(
            "submit needs its description: -d description, -i (a change form) or -c changelist#.",
        ));
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
        let (description, from_form, numbered) = if flags.has('i') {
            let form = forms::receive(cmd, &CHANGE).await?;
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
                let chosen: Vec<String> = default
                    .iter()
                    .filter(|f| {
                        wanted.iter().any(|w| {
                            w == f.depot_file.as_str()
                                || f.client_file.as_deref().is_some_and(|rel| {
                                    *w == format!("//{}/{}", work.place.workspace, rel)
                                })
                                || pattern_matches(w, f, &work.place.workspace)
                        })
                    })
                    .map(|f| f.depot_file.to_string())
                    .collect();
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
    match result {
        Err(CmdError::Report(r)) => {
            cmd.report(r);
            Err(CmdError::Report(Report::failed(
                Generic::NotYet,
                number::SERVICE,
                format!("Submit failed -- fix problems above then use 'p4 submit -c {number}'."),
            )))
        }
        other => other,
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
        .map_err(failed)?;
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
        .map_err(failed)?;
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

/// The local file and type of each depot file the service expects content for.
fn files_to_send(
    work: &Work,
    opened: &[FileInfo],
    expected: &[String],
) -> Result<Vec<ToSend>, CmdError> {
    expected
        .iter()
        .map(|depot| {
            let f = opened
                .iter()
                .find(|f| f.depot_file.as_str() == depot)
                .ok_or_else(|| failed(format!("{depot} - not opened in this change")))?;
            let rel = f
                .client_file
                .as_deref()
                .ok_or_else(|| failed(format!("{depot} - file(s) not in client view.")))?;
            Ok(ToSend {
                depot_file: depot.clone(),
                local: work.local_of_rel(rel),
                file_type: f.file_type.unwrap_or(FileType::TEXT),
            })
        })
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
        let description = description_of(&form);
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
        return Ok(());
    }
    let values = match number {
        None => {
            let opened = opened_in(cmd, ChangeRef::Default).await?;
            let mut v: Values = vec![("Change", vec!["new".to_string()])];
            v.push(("Client", vec![cmd.caller.workspace.clone()]));
            v.push(("User", vec![cmd.caller.user.clone()]));
            v.push(("Status", vec!["new".to_string()]));
            v.push(("Description", vec!["<enter description here>".to_string()]));
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
    forms::send(cmd, &CHANGE, &values);
    Ok(())
}

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
    let change = if flags.has('i') {
        let form = forms::receive(cmd, &CHANGE).await?;
        let description = description_of(&form);
        let listed = form_files(&form);
        match one(&form, "Change").as_str() {
            "new" | "" => {
                if description.trim().is_empty() {
                    return Err(usage("Change description missing.  You must enter one."));
                }
                let n = new_change(cmd, description, listed).await?;
                info_line(cmd, format!("Change {n} created."));
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
