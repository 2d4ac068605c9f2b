//! `label -o/-i/-d [-f]`, `labels`, `branch -o/-i/-d`, `branches`: label and branch specs over
//! the service's, in the forms P4 clients edit (with `specdef`, so P4Python's `fetch_label` and
//! `fetch_branch` return spec objects and `save_*` take dicts).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs::cut;
use crate::commands::forms;
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Kind, SpecDef, Values, field, lines, one};
use keel_service::command as rows;
use keel_service::{BranchSpec, DEFAULT_LABEL_VIEW, LabelSpec};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "label",
        row: rows::SAVE_LABEL,
        login: true,
        flags: "o i d f",
        usage: "label [ -f ] [ -d | -o | -i ] labelname",
        run: |c| Box::pin(label(c)),
    },
    Command {
        name: "labels",
        row: rows::LIST_LABELS,
        login: true,
        flags: "e: E: u: m: t",
        usage: "labels [ -t -e|-E nameFilter -u user -m max ]",
        run: |c| Box::pin(labels(c)),
    },
    Command {
        name: "branch",
        row: rows::SAVE_BRANCH,
        login: true,
        flags: "o i d f",
        usage: "branch [ -f ] [ -d | -o | -i ] branchname",
        run: |c| Box::pin(branch(c)),
    },
    Command {
        name: "branches",
        row: rows::LIST_BRANCHES,
        login: true,
        flags: "e: E: u: m: t",
        usage: "branches [ -t -e|-E nameFilter -u user -m max ]",
        run: |c| Box::pin(branches(c)),
    },
];

/// The label form.
pub const LABEL: SpecDef = SpecDef {
    kind: "label",
    comment: "# A Keel label specification.\n#\n#  Label:       The label name.\n#  \
              Update:      The date this specification was last modified.\n#  Owner:       \
              The user who created this label.\n#  Description: A short description of the \
              label (optional).\n#  Options:     Label options: [un]locked\n#  Revision:    \
              Optional revision the label is fixed at (@change).\n#  View:        Lines to \
              select depot files for the label.\n\n",
    fields: &[
        field("Label", 651, Kind::Word, true, true, 32),
        field("Update", 652, Kind::Date, false, true, 20),
        field("Access", 653, Kind::Date, false, true, 20),
        field("Owner", 654, Kind::Word, false, false, 32),
        field("Description", 656, Kind::Text, false, false, 128),
        field("Options", 655, Kind::Line, false, false, 64),
        field("Revision", 657, Kind::Word, false, false, 64),
        field("View", 659, Kind::LineList, false, false, 64),
    ],
};

/// The branch form.
pub const BRANCH: SpecDef = SpecDef {
    kind: "branch",
    comment: "# A Keel branch specification.\n#\n#  Branch:      The branch name.\n#  \
              Update:      The date this specification was last modified.\n#  Owner:       \
              The user who created this branch.\n#  Description: A short description of the \
              branch (optional).\n#  Options:     Branch options: [un]locked\n#  View:        \
              Lines mapping source depot files to target depot files.\n\n",
    fields: &[
        field("Branch", 301, Kind::Word, true, true, 32),
        field("Update", 302, Kind::Date, false, true, 20),
        field("Access", 303, Kind::Date, false, true, 20),
        field("Owner", 304, Kind::Word, false, false, 32),
        field("Description", 306, Kind::Text, false, false, 128),
        field("Options", 309, Kind::Line, false, false, 64),
        field("View", 311, Kind::WordList { words: 2 }, false, false, 64),
    ],
};

fn refused(e: impl std::fmt::Display) -> CmdError {
    CmdError::Report(Report::failed(Generic::Usage, number::FORM, e.to_string()))
}

fn saved(kind: &str, name: &str, what: &str) -> Report {
    Report::info(format!("{kind} {name} {what}."))
}

/// The spec verb's mode and name, or its usage error.
fn mode(cmd: &Cmd, command: &Command) -> Result<(char, String, bool), CmdError> {
    let flags = dispatch::flags(cmd, command)?;
    let modes: Vec<char> = ['o', 'i', 'd']
        .into_iter()
        .filter(|f| flags.has(*f))
        .collect();
    let name = flags.rest.first().cloned().unwrap_or_default();
    match (modes.as_slice(), flags.rest.len()) {
        // No mode: the form goes to the client's editor.
        ([], 1) => Ok(('e', name, flags.has('f'))),
        (['i'], 0) => Ok(('i', name, flags.has('f'))),
        ([m], 1) => Ok((*m, name, flags.has('f'))),
        _ => Err(usage(format!("Usage: {}", command.usage))),
    }
}

fn label_values(l: &LabelSpec) -> Values {
    let mut v: Values = vec![("Label", vec![l.name.clone()])];
    if l.updated > 0 {
        v.push(("Update", vec![dates::date_time(l.updated)]));
        v.push(("Access", vec![dates::date_time(l.updated)]));
    }
    v.push(("Owner", vec![l.owner.clone()]));
    v.push((
        "Description",
        l.description.lines().map(str::to_string).collect(),
    ));
    v.push(("Options", vec![l.options.clone()]));
    if !l.revision.is_empty() {
        v.push(("Revision", vec![l.revision.clone()]));
    }
    v.push(("View", l.view.clone()));
    v
}

async fn label(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("label").expect("label is in the table");
    let (mode, name, force) = mode(cmd, command)?;
    match mode {
        'd' => {
            let target = name.clone();
            cmd.call(move |svc, caller| svc.delete_label(caller, &target, force))
                .await?
                .map_err(refused)?;
            cmd.report(saved("Label", &name, "deleted"));
        }
        'i' => {
            let form = forms::receive(cmd, &LABEL).await?;
            save_label(cmd, form, force).await?;
        }
        _ => {
            let lookup = name.clone();
            let found = cmd
                .call(move |svc, caller| svc.get_label(caller, &lookup))
                .await?;
            let spec = match found {
                Ok(l) => l,
                Err(keel_service::LabelError::NoSuch { .. }) => LabelSpec {
                    name,
                    owner: cmd.caller.user.clone(),
                    description: "Created by ".to_string() + &cmd.caller.user + ".",
                    options: "unlocked".to_string(),
                    revision: String::new(),
                    view: vec![DEFAULT_LABEL_VIEW.to_string()],
                    updated: 0,
                },
                Err(e) => return Err(refused(e)),
            };
            let values = label_values(&spec);
            if mode == 'o' {
                forms::send(cmd, &LABEL, &values);
            } else {
                let form = match forms::edit(cmd, &LABEL, &values).await? {
                    forms::Edited::Changed(form) => form,
                    // A new label is saved as the editor left it.
                    forms::Edited::Same if spec.updated == 0 => values,
                    forms::Edited::Same => {
                        cmd.info(format!("Label {} not changed.", spec.name));
                        return Ok(());
                    }
                };
                save_label(cmd, form, force).await?;
            }
        }
    }
    Ok(())
}

/// Saves a label form (from `-i` or the editor).
async fn save_label(cmd: &mut Cmd, form: Values, force: bool) -> CmdResult {
    let name = one(&form, "Label");
    let owner = match one(&form, "Owner") {
        o if o.is_empty() => cmd.caller.user.clone(),
        o => o,
    };
    let spec = LabelSpec {
        name: name.clone(),
        owner,
        description: lines(&form, "Description").join("\n"),
        options: match one(&form, "Options") {
            o if o.is_empty() => "unlocked".to_string(),
            o => o,
        },
        revision: one(&form, "Revision"),
        view: lines(&form, "View")
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .collect(),
        updated: 0,
    };
    cmd.call(move |svc, caller| svc.save_label(caller, spec, false, force))
        .await?
        .map_err(refused)?;
    cmd.report(saved("Label", &name, "saved"));
    Ok(())
}

fn branch_values(b: &BranchSpec) -> Values {
    let mut v: Values = vec![("Branch", vec![b.name.clone()])];
    if b.updated > 0 {
        v.push(("Update", vec![dates::date_time(b.updated)]));
        v.push(("Access", vec![dates::date_time(b.updated)]));
    }
    v.push(("Owner", vec![b.owner.clone()]));
    v.push((
        "Description",
        b.description.lines().map(str::to_string).collect(),
    ));
    v.push(("Options", vec![b.options.clone()]));
    v.push(("View", b.view.clone()));
    v
}

async fn branch(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("branch").expect("branch is in the table");
    let (mode, name, _force) = mode(cmd, command)?;
    match mode {
        'd' => {
            let target = name.clone();
            cmd.call(move |svc, caller| svc.delete_branch(caller, &target))
                .await?
                .map_err(refused)?;
            cmd.report(saved("Branch", &name, "deleted"));
        }
        'i' => {
            let form = forms::receive(cmd, &BRANCH).await?;
            save_branch(cmd, form).await?;
        }
        _ => {
            let lookup = name.clone();
            let found = cmd
                .call(move |svc, caller| svc.get_branch(caller, &lookup))
                .await?;
            let spec = match found {
                Ok(b) => b,
                Err(keel_service::SpecError::NoSuch { .. }) => BranchSpec {
                    name: name.clone(),
                    owner: cmd.caller.user.clone(),
                    description: "Created by ".to_string() + &cmd.caller.user + ".",
                    options: "unlocked".to_string(),
                    view: vec![format!("//depot/... //depot/{name}/...")],
                    updated: 0,
                },
                Err(e) => return Err(refused(e)),
            };
            let values = branch_values(&spec);
            if mode == 'o' {
                forms::send(cmd, &BRANCH, &values);
            } else {
                let form = match forms::edit(cmd, &BRANCH, &values).await? {
                    forms::Edited::Changed(form) => form,
                    // A new branch is saved as the editor left it.
                    forms::Edited::Same if spec.updated == 0 => values,
                    forms::Edited::Same => {
                        cmd.info(format!("Branch {} not changed.", spec.name));
                        return Ok(());
                    }
                };
                save_branch(cmd, form).await?;
            }
        }
    }
    Ok(())
}

/// Saves a branch form (from `-i` or the editor).
async fn save_branch(cmd: &mut Cmd, form: Values) -> CmdResult {
    let name = one(&form, "Branch");
    let owner = match one(&form, "Owner") {
        o if o.is_empty() => cmd.caller.user.clone(),
        o => o,
    };
    let spec = BranchSpec {
        name: name.clone(),
        owner,
        description: lines(&form, "Description").join("\n"),
        options: match one(&form, "Options") {
            o if o.is_empty() => "unlocked".to_string(),
            o => o,
        },
        view: lines(&form, "View")
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .collect(),
        updated: 0,
    };
    cmd.call(move |svc, caller| svc.save_branch(caller, spec, false))
        .await?
        .map_err(refused)?;
    cmd.report(saved("Branch", &name, "saved"));
    Ok(())
}

/// What `labels` and `branches` list: name filter, owner, count.
struct Listing {
    filter: Option<(String, bool)>,
    owner: Option<String>,
    max: usize,
}

fn listing(cmd: &Cmd, command: &Command) -> Result<Listing, CmdError> {
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!(
            "{}: file arguments are not supported by this server.\nUsage: {}",
            command.name, command.usage
        )));
    }
    let max = match flags.value('m') {
        Some(m) => m
            .parse::<usize>()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => usize::MAX,
    };
    Ok(Listing {
        filter: flags
            .value('e')
            .map(|f| (f.to_string(), false))
            .or_else(|| flags.value('E').map(|f| (f.to_string(), true))),
        owner: flags.value('u').map(str::to_string),
        max,
    })
}

impl Listing {
    fn admits(&self, name: &str, owner: &str, count: usize) -> bool {
        count < self.max
            && self.owner.as_ref().is_none_or(|o| o == owner)
            && self
                .filter
                .as_ref()
                .is_none_or(|(f, fold)| crate::commands::clients::matches(f, name, *fold))
    }
}

fn desc_line(desc: &str) -> String {
    cut(desc, Some(31), true)
}

/// One label or branch spec as `labels` and `branches` list it.
struct Listed {
    name: String,
    updated: i64,
    owner: String,
    options: String,
    /// A label's `Revision` field (branches have none).
    revision: Option<String>,
    description: String,
}

impl From<LabelSpec> for Listed {
    fn from(l: LabelSpec) -> Listed {
        Listed {
            name: l.name,
            updated: l.updated,
            owner: l.owner,
            options: l.options,
            revision: Some(l.revision),
            description: l.description,
        }
    }
}

impl From<BranchSpec> for Listed {
    fn from(b: BranchSpec) -> Listed {
        Listed {
            name: b.name,
            updated: b.updated,
            owner: b.owner,
            options: b.options,
            revision: None,
            description: b.description,
        }
    }
}

/// Sends the specs `labels` or `branches` listed: tagged under `key` (`label`, `branch`),
/// untagged as `Word NAME DATE 'description'`.
fn report_listed(cmd: &mut Cmd, key: &'static str, word: &str, found: Vec<Listed>) {
    for l in found {
        if cmd.tagged {
            let mut fields = vec![
                (key, l.name.clone()),
                ("Update", l.updated.to_string()),
                ("Access", l.updated.to_string()),
                ("Owner", l.owner.clone()),
                ("Options", l.options.clone()),
            ];
            if let Some(revision) = &l.revision {
                fields.push(("Revision", revision.clone()));
            }
            fields.push(("Description", format!("{}\n", l.description.trim_end())));
            cmd.stat(fields);
        } else {
            cmd.info(format!(
                "{word} {} {} '{}'",
                l.name,
                dates::date(l.updated),
                desc_line(&l.description)
            ));
        }
    }
}

async fn labels(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("labels").expect("labels is in the table");
    let which = listing(cmd, command)?;
    let found = cmd
        .call(move |svc, caller| {
            let mut out: Vec<Listed> = Vec::new();
            svc.list_labels(caller, &mut |l| {
                if which.admits(&l.name, &l.owner, out.len()) {
                    out.push(l.into());
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    report_listed(cmd, "label", "Label", found);
    Ok(())
}

async fn branches(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("branches").expect("branches is in the table");
    let which = listing(cmd, command)?;
    let found = cmd
        .call(move |svc, caller| {
            let mut out: Vec<Listed> = Vec::new();
            svc.list_branches(caller, &mut |b| {
                if which.admits(&b.name, &b.owner, out.len()) {
                    out.push(b.into());
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    report_listed(cmd, "branch", "Branch", found);
    Ok(())
}
