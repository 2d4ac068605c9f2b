//! `client -o/-i/-d [-f]` and `clients [-e -u -m]`: workspace specs over the service's
//! workspaces, in the client form P4 clients edit. `SubmitOptions` and `LineEnd` are shown with
//! the only values Keel has (`submitunchanged`, `local`); a form asking for others is refused
//! naming the field.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::forms;
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Kind, SpecDef, Values, field, lines, one};
use keel_core::WorkspaceOptions;
use keel_service::WorkspaceSpec;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "client",
        row: rows::SAVE_WORKSPACE,
        login: true,
        flags: "o i d f t:",
        usage: "client [ -f ] [ -d | -o | -i ] [ -t template ] [ client ]",
        run: |c| Box::pin(client(c)),
    },
    Command {
        name: "clients",
        row: rows::LIST_WORKSPACES,
        login: true,
        flags: "e: E: u: m:",
        usage: "clients [ -e|-E nameFilter -m max -u user ]",
        run: |c| Box::pin(clients(c)),
    },
];

/// Keel's fixed answers for the fields it does not vary.
const SUBMIT_OPTIONS: &str = "submitunchanged";
const LINE_END: &str = "local";

/// The client form.
pub const CLIENT: SpecDef = SpecDef {
    kind: "client",
    comment: "# A Keel client (workspace) specification.\n#\n#  Client:      The client name.\n#  \
              Update:      The date this specification was last modified.\n#  Access:      \
              The date this client was last used in any way.\n#  Owner:       The user who \
              created this client.\n#  Host:        If set, restricts access to the named \
              host.\n#  Description: A short description of the client (optional).\n#  Root:   \
              The base directory of the client workspace.\n#  Options:     Client options:\n#  \
                           [no]allwrite [no]clobber [no]compress\n#                 \
              [un]locked [no]modtime [no]rmdir\n#  SubmitOptions: submitunchanged\n#  \
              LineEnd:     local\n#  View:        Lines to map depot files into the client \
              workspace.\n\n",
    fields: &[
        field("Client", 301, Kind::Word, true, true, 32),
        field("Update", 302, Kind::Date, false, true, 20),
        field("Access", 303, Kind::Date, false, true, 20),
        field("Owner", 304, Kind::Word, false, false, 32),
        field("Host", 305, Kind::Word, false, false, 32),
        field("Description", 306, Kind::Text, false, false, 128),
        field("Root", 307, Kind::Line, true, false, 64),
        field("Options", 309, Kind::Line, false, false, 64),
        field("SubmitOptions", 313, Kind::Select, false, false, 25),
        field("LineEnd", 310, Kind::Select, false, false, 12),
        field("View", 311, Kind::WordList { words: 2 }, false, false, 64),
    ],
};

/// Keel's options as P4 clients write them.
fn p4_options(options: &str) -> String {
    let o = WorkspaceOptions::parse(options).unwrap_or_default();
    let no = |on: bool| if on { "" } else { "no" };
    format!(
        "{}allwrite {}clobber {}compress {} {}modtime {}rmdir",
        no(o.allwrite),
        no(o.clobber),
        no(o.compress),
        if o.locked { "locked" } else { "unlocked" },
        no(o.modtime),
        no(o.rmdir)
    )
}

/// P4 options as Keel reads them (`nocompress`, the default, dropped).
fn keel_options(options: &str) -> String {
    options
        .split_whitespace()
        .filter(|w| *w != "nocompress")
        .collect::<Vec<_>>()
        .join(" ")
}

fn unsupported(name: &str, field: &str, value: &str) -> CmdError {
    CmdError::Report(Report::failed(
        Generic::Usage,
        number::FORM,
        format!(
            "Error in client specification {name}: {field} '{value}' is not supported by this \
             server."
        ),
    ))
}

fn values(ws: &WorkspaceSpec) -> Values {
    let mut v: Values = vec![("Client", vec![ws.name.clone()])];
    if ws.updated > 0 {
        v.push(("Update", vec![dates::date_time(ws.updated)]));
        v.push(("Access", vec![dates::date_time(ws.accessed)]));
    }
    v.push(("Owner", vec![ws.owner.clone()]));
    if !ws.host.is_empty() {
        v.push(("Host", vec![ws.host.clone()]));
    }
    v.push((
        "Description",
        ws.description.lines().map(str::to_string).collect(),
    ));
    v.push(("Root", vec![ws.root.clone()]));
    v.push(("Options", vec![p4_options(&ws.options)]));
    v.push(("SubmitOptions", vec![SUBMIT_OPTIONS.to_string()]));
    v.push(("LineEnd", vec![LINE_END.to_string()]));
    v.push(("View", ws.view.clone()));
    v
}

async fn client(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("client").expect("client is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['o', 'i', 'd'].iter().filter(|f| flags.has(**f)).count();
    if modes > 1 || flags.rest.len() > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    cmd.caller.force = flags.has('f');
    let name = flags
        .rest
        .first()
        .cloned()
        .unwrap_or_else(|| cmd.caller.workspace.clone());
    if name.is_empty() && !flags.has('i') {
        return Err(usage("No client named: set P4CLIENT or name one."));
    }
    if flags.has('d') {
        let target = name.clone();
        cmd.call(move |svc, caller| svc.delete_workspace(caller, &target))
            .await?
            .map_err(|e| usage(e.to_string()))?;
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .text("Client ")
                .arg("client", &name)
                .text(" deleted."),
        );
        return Ok(());
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &CLIENT).await?;
        return save(cmd, form).await;
    }
    let lookup = name.clone();
    let found = cmd
        .call(move |svc, caller| svc.get_workspace(caller, &lookup))
        .await?;
    let template = flags.value('t').map(str::to_string);
    let ws = match found {
        Ok(_) if template.is_some() => {
            return Err(usage(format!(
                "Client {name} already exists; -t copies a template only into a new client."
            )));
        }
        Ok(ws) => ws,
        Err(keel_service::ServiceError::NoSuchWorkspace { .. }) if template.is_some() => {
            let template = template.unwrap_or_default();
            let lookup = template.clone();
            let source = cmd
                .call(move |svc, caller| svc.get_workspace(caller, &lookup))
                .await?
                .map_err(|e| match e {
                    keel_service::ServiceError::NoSuchWorkspace { .. } => {
                        usage(format!("Client template {template} doesn't exist."))
                    }
                    other => other.into(),
                })?;
            from_template(&source, &name, cmd)
        }
        Err(keel_service::ServiceError::NoSuchWorkspace { .. }) => WorkspaceSpec {
            name: name.clone(),
            owner: cmd.caller.user.clone(),
            host: cmd.caller.host.clone(),
            root: cmd.req.text("cwd").unwrap_or_default(),
            description: "Created by ".to_string() + &cmd.caller.user + ".",
            options: "noallwrite noclobber normdir nomodtime".to_string(),
            view: vec![format!("//depot/... //{name}/...")],
            ..WorkspaceSpec::default()
        },
        Err(e) => return Err(e.into()),
    };
    let values = values(&ws);
    if flags.has('o') {
        forms::send(cmd, &CLIENT, &values);
        return Ok(());
    }
    match forms::edit(cmd, &CLIENT, &values).await? {
        forms::Edited::Changed(form) => save(cmd, form).await,
        // A new client is saved as the editor left it, as the form is the client's start.
        forms::Edited::Same if ws.updated == 0 => save(cmd, values).await,
        forms::Edited::Same => {
            cmd.info(format!("Client {name} not changed."));
            Ok(())
        }
    }
}

/// A new client `name` made from `template` (`client -t`): the template's options and its
/// view, whose workspace side names the new client; owner, host and root are the caller's.
fn from_template(template: &WorkspaceSpec, name: &str, cmd: &Cmd) -> WorkspaceSpec {
    let from = format!("//{}/", template.name);
    let to = format!("//{name}/");
    WorkspaceSpec {
        name: name.to_string(),
        owner: cmd.caller.user.clone(),
        host: cmd.caller.host.clone(),
        root: cmd.req.text("cwd").unwrap_or_default(),
        description: "Created by ".to_string() + &cmd.caller.user + ".",
        options: template.options.clone(),
        view: template
            .view
            .iter()
            .map(|line| line.replace(&from, &to))
            .collect(),
        ..WorkspaceSpec::default()
    }
}

/// Saves a client form (from `-i` or the editor).
async fn save(cmd: &mut Cmd, form: Values) -> CmdResult {
    let name = one(&form, "Client");
    for (field, only) in [("SubmitOptions", SUBMIT_OPTIONS), ("LineEnd", LINE_END)] {
        let value = one(&form, field);
        if !value.is_empty() && value != only {
            return Err(unsupported(&name, field, &value));
        }
    }
    let owner = match one(&form, "Owner") {
        o if o.is_empty() => cmd.caller.user.clone(),
        o => o,
    };
    let ws = WorkspaceSpec {
        name: name.clone(),
        owner,
        host: one(&form, "Host"),
        root: one(&form, "Root"),
        description: lines(&form, "Description").join("\n"),
        options: keel_options(&one(&form, "Options")),
        view: lines(&form, "View")
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .collect(),
        ..WorkspaceSpec::default()
    };
    cmd.call(move |svc, caller| svc.save_workspace(caller, ws, false))
        .await?
        .map_err(|e| {
            CmdError::Report(Report::failed(Generic::Usage, number::FORM, e.to_string()))
        })?;
    cmd.report(
        Report::new(Severity::Info, Generic::None, 0)
            .text("Client ")
            .arg("client", &name)
            .text(" saved."),
    );
    Ok(())
}

/// Whether `name` matches a `clients -e` filter (`*` any run of characters).
pub(crate) fn matches(filter: &str, name: &str, fold: bool) -> bool {
    let (f, n) = if fold {
        (filter.to_lowercase(), name.to_lowercase())
    } else {
        (filter.to_string(), name.to_string())
    };
    let parts: Vec<&str> = f.split('*').collect();
    if parts.len() == 1 {
        return f == n;
    }
    let mut rest = n.as_str();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

async fn clients(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("clients").expect("clients is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max: Option<usize> = match flags.value('m') {
        Some(m) => Some(
            m.parse()
                .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        ),
        None => None,
    };
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let filter = flags
        .value('e')
        .map(|f| (f.to_string(), false))
        .or_else(|| flags.value('E').map(|f| (f.to_string(), true)));
    let owner = flags.value('u').map(str::to_string);
    let limit = max.unwrap_or(usize::MAX);
    let listed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.list_workspaces(caller, &mut |ws| {
                let named = filter
                    .as_ref()
                    .is_none_or(|(f, fold)| matches(f, &ws.name, *fold));
                let owned = owner.as_ref().is_none_or(|o| *o == ws.owner);
                if named && owned && out.len() < limit {
                    out.push(ws);
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for ws in listed {
        let description = if ws.description.ends_with('\n') {
            ws.description.clone()
        } else {
            format!("{}\n", ws.description)
        };
        if cmd.tagged {
            let mut fields = vec![
                ("client", ws.name.clone()),
                ("Update", ws.updated.to_string()),
                ("Access", ws.accessed.to_string()),
                ("Owner", ws.owner.clone()),
                ("Options", p4_options(&ws.options)),
                ("SubmitOptions", SUBMIT_OPTIONS.to_string()),
                ("LineEnd", LINE_END.to_string()),
                ("Root", ws.root.clone()),
            ];
            if !ws.host.is_empty() {
                fields.push(("Host", ws.host.clone()));
            }
            fields.push(("Description", description));
            cmd.stat(fields);
        } else {
            cmd.info(format!(
                "Client {} {} root {} '{}'",
                ws.name,
                dates::date(ws.updated),
                ws.root,
                description.lines().next().unwrap_or("")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_filters_match_like_clients_e() {
        assert!(matches("ws*", "ws1", false));
        assert!(matches("*_ws", "alice_ws", false));
        assert!(matches("a*w*s", "alice_ws", false));
        assert!(!matches("b*", "alice_ws", false));
        assert!(matches("ALICE*", "alice_ws", true));
        assert!(!matches("ALICE*", "alice_ws", false));
        assert!(matches("exact", "exact", false));
    }

    #[test]
    fn options_translate_both_ways() {
        assert_eq!(
            p4_options("noallwrite clobber normdir modtime"),
            "noallwrite clobber nocompress unlocked modtime normdir"
        );
        assert_eq!(
            keel_options("noallwrite noclobber nocompress unlocked nomodtime normdir"),
            "noallwrite noclobber unlocked nomodtime normdir"
        );
        assert_eq!(keel_options("allwrite compress"), "allwrite compress");
        assert_eq!(
            p4_options("allwrite noclobber normdir nomodtime compress"),
            "allwrite noclobber compress unlocked nomodtime normdir"
        );
    }
}
