//! `have` and `where`: the workspace's have list (`depotFile clientFile path haveRev`) and each
//! path in its three syntaxes (depot, client, local) through the workspace's view.

use crate::cmd::{Cmd, CmdError, CmdResult, number};
use crate::commands::fileargs;
use crate::dispatch::{self, Command};
use crate::filespec::{Place, split_rev};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::View;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "have",
        row: rows::HAVE,
        login: true,
        flags: "",
        usage: "have [ file ... ]",
        run: |c| Box::pin(have(c)),
    },
    Command {
        name: "where",
        row: rows::GET_WORKSPACE,
        login: true,
        flags: "",
        usage: "where [ file ... ]",
        run: |c| Box::pin(where_(c)),
    },
];

async fn have(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("have").expect("have is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let place = Place::of(cmd).await?;
    let args: Vec<(String, String)> = match flags.rest.is_empty() {
        true => Vec::new(),
        false => flags
            .rest
            .iter()
            .map(|a| Ok((a.clone(), place.to_keel(a)?)))
            .collect::<Result<_, CmdError>>()?,
    };
    let batches: Vec<(String, Vec<String>)> = match args.is_empty() {
        true => vec![(String::new(), Vec::new())],
        false => args.into_iter().map(|(g, k)| (g, vec![k])).collect(),
    };
    for (given, keel) in batches {
        let got = cmd
            .call(move |svc, caller| {
                let mut out = Vec::new();
                svc.have_list(caller, &keel, &mut |f| {
                    out.push(f);
                    Ok(())
                })
                .map(|()| out)
            })
            .await??;
        if got.is_empty() && !given.is_empty() {
            cmd.report(
                Report::new(Severity::Warn, Generic::Empty, number::NO_SUCH_FILES)
                    .arg("path", &given)
                    .text(" - file(s) not on client."),
            );
        }
        for f in got {
            let local = fileargs::local_path(Some(&place), &f).unwrap_or_default();
            let client = fileargs::client_syntax(Some(&place), "", &f).unwrap_or_default();
            if cmd.tagged {
                cmd.stat([
                    ("depotFile", f.depot_file.to_string()),
                    ("clientFile", client),
                    ("path", local),
                    ("haveRev", f.have_rev.to_string()),
                ]);
            } else {
                cmd.info(format!("{}#{} - {local}", f.depot_file, f.have_rev));
            }
        }
    }
    Ok(())
}

/// One argument's three syntaxes, or `None` when the view does not map it.
fn locate(place: &Place, view: &View, given: &str) -> Result<Option<[String; 3]>, CmdError> {
    let client_prefix = format!("//{}/", place.workspace);
    let (depot, client) = if given.starts_with("//") && !given.starts_with(&client_prefix) {
        let (path, _) = split_rev(given);
        match view.translate(path) {
            Some(c) => (path.to_string(), c),
            None => return Ok(None),
        }
    } else {
        let keel = place.to_keel(given)?;
        let (path, _) = split_rev(&keel);
        match view.translate_back(path) {
            Some(d) => (d, path.to_string()),
            None => return Ok(None),
        }
    };
    let local = place.local(&client).unwrap_or_default();
    Ok(Some([depot, client, local]))
}

async fn where_(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("where").expect("where is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let place = Place::of(cmd).await?;
    let name = place.workspace.clone();
    let ws = cmd
        .call(move |svc, caller| svc.get_workspace(caller, &name))
        .await??;
    let view = View::parse_lines(&ws.view).map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Config,
            number::FORM,
            format!("The view of client {}: {e}", ws.name),
        ))
    })?;
    let args = match flags.rest.is_empty() {
        true => place.args_or_all(&[])?,
        false => flags.rest.clone(),
    };
    for given in args {
        match locate(&place, &view, &given)? {
            Some([depot, client, local]) => {
                if cmd.tagged {
                    cmd.stat([
                        ("depotFile", depot),
                        ("clientFile", client),
                        ("path", local),
                    ]);
                } else {
                    cmd.info(format!("{depot} {client} {local}"));
                }
            }
            None => cmd.report(
                Report::new(Severity::Warn, Generic::Empty, number::NOT_IN_VIEW)
                    .arg("path", &given)
                    .text(" - file(s) not in client view."),
            ),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_located_in_all_three_syntaxes() {
        let place = Place {
            workspace: "ws".into(),
            root: "/r".into(),
            cwd: "/r/src".into(),
        };
        let view = View::parse_lines(["//depot/main/... //ws/..."]).unwrap();
        assert_eq!(
            locate(&place, &view, "//depot/main/src/a.c").unwrap(),
            Some([
                "//depot/main/src/a.c".to_string(),
                "//ws/src/a.c".to_string(),
                "/r/src/a.c".to_string()
            ])
        );
        assert_eq!(
            locate(&place, &view, "a.c").unwrap().unwrap()[0],
            "//depot/main/src/a.c"
        );
        assert_eq!(locate(&place, &view, "//depot/other/x").unwrap(), None);
    }
}
