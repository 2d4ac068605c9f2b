//! `workspace create|edit|show|list|delete`: workspace specs and their Perforce-style form.

use anyhow::{Context, Result, anyhow, bail};
use keel_core::{Form, View, ViewLine, WorkspaceName, WorkspaceOptions};
use keel_proto::v1::{
    DeleteWorkspaceRequest, GetWorkspaceRequest, ListWorkspacesRequest, SaveWorkspaceRequest,
    Workspace,
};

use super::spec_form::{EditedForm, description_lines, single, with_view};
use crate::cli::{WorkspaceCmd, WorkspaceCreateArgs};
use crate::editor::edit_text;
use crate::output::{Record, date, date_time};
use crate::session::Session;

pub async fn run(s: &mut Session, cmd: WorkspaceCmd) -> Result<()> {
    match cmd {
        WorkspaceCmd::Create(args) => create(s, args).await,
        WorkspaceCmd::Edit { name } => {
            let name = name_or_current(s, name)?;
            edit(s, &name).await
        }
        WorkspaceCmd::Show { name } => {
            let name = name_or_current(s, name)?;
            let spec = get(s, &name).await?;
            s.out
                .emit(spec_record(&spec), render_form(&spec).trim_end());
            Ok(())
        }
        WorkspaceCmd::List => list(s).await,
        WorkspaceCmd::Delete { name } => {
            s.check(
                s.client()
                    .delete_workspace(DeleteWorkspaceRequest {
                        caller: s.caller(),
                        name: name.clone(),
                    })
                    .await,
            )?;
            s.out.emit(
                Record::new().s("client", &name).s("action", "deleted"),
                format!("Workspace {name} deleted."),
            );
            Ok(())
        }
    }
}

fn name_or_current(s: &Session, name: Option<String>) -> Result<String> {
    name.or_else(|| s.settings.workspace.clone())
        .ok_or_else(|| anyhow!(keel_client::Error::NoWorkspace))
}

async fn get(s: &Session, name: &str) -> Result<Workspace> {
    Ok(s.check(
        s.client()
            .get_workspace(GetWorkspaceRequest {
                caller: s.caller(),
                name: name.to_string(),
            })
            .await,
    )?)
}

async fn save(s: &Session, spec: Workspace, create_only: bool) -> Result<()> {
    let saved = s.check(
        s.client()
            .save_workspace(SaveWorkspaceRequest {
                caller: s.caller(),
                workspace: Some(spec),
                create_only,
            })
            .await,
    )?;
    s.out.emit(
        spec_record(&saved).s("action", "saved"),
        format!("Workspace {} saved.", saved.name),
    );
    Ok(())
}

async fn create(s: &mut Session, args: WorkspaceCreateArgs) -> Result<()> {
    WorkspaceName::parse(&args.name)?;
    if !args.root.is_absolute() {
        bail!(
            "workspace root {} must be an absolute path",
            args.root.display()
        );
    }
    let root = keel_client::paths::normalize(&args.root);
    let view = if args.view.is_empty() {
        vec![format!("//depot/... //{}/...", args.name)]
    } else {
        args.view
    };
    check_view(&args.name, &view)?;
    let options = match args.options {
        Some(text) => WorkspaceOptions::parse(&text)?.to_string(),
        None => WorkspaceOptions::default().to_string(),
    };
    let spec = Workspace {
        name: args.name,
        owner: s.settings.user.clone(),
        host: args.host.unwrap_or_default(),
        root: root.display().to_string(),
        description: args
            .description
            .unwrap_or_else(|| format!("Created by {}.", s.settings.user)),
        options,
        view,
        updated: 0,
        accessed: 0,
    };
    // Like `p4 client -i`, creating over an existing spec replaces it.
    save(s, spec, false).await
}

async fn edit(s: &mut Session, name: &str) -> Result<()> {
    let spec = match get(s, name).await {
        Ok(spec) => spec,
        Err(e) if is_not_found(&e) => Workspace {
            name: name.to_string(),
            owner: s.settings.user.clone(),
            root: s.cwd.display().to_string(),
            description: format!("Created by {}.", s.settings.user),
            options: WorkspaceOptions::default().to_string(),
            view: vec![format!("//depot/... //{name}/...")],
            ..Default::default()
        },
        Err(e) => return Err(e),
    };
    let original = render_form(&spec);
    let edited = edit_text(&original, name)?;
    if edited == original {
        s.out.emit(
            Record::new().s("client", name).s("action", "unchanged"),
            format!("Workspace {name} not changed."),
        );
        return Ok(());
    }
    let updated = parse_form(&edited, &spec).context("error in workspace specification")?;
    save(s, updated, false).await
}

fn is_not_found(e: &anyhow::Error) -> bool {
    e.downcast_ref::<keel_client::Error>()
        .and_then(keel_client::Error::code)
        == Some(tonic::Code::NotFound)
}

async fn list(s: &mut Session) -> Result<()> {
    let specs = s
        .all(
            s.client()
                .list_workspaces(ListWorkspacesRequest { caller: s.caller() })
                .await,
        )
        .await?;
    for spec in specs {
        s.out.emit(
            spec_record(&spec),
            format!(
                "Workspace {} {} root {} '{}'",
                spec.name,
                date(spec.updated),
                spec.root,
                crate::output::first_line(&spec.description)
            ),
        );
    }
    Ok(())
}

/// The JSON form of a spec (Perforce `client -o` field names, `View0`, `View1`, ...).
fn spec_record(spec: &Workspace) -> Record {
    let record = Record::new()
        .s("name", &spec.name)
        .s("Client", &spec.name)
        .s("Owner", &spec.owner)
        .s("Host", &spec.host)
        .s("Root", &spec.root)
        .s("Options", &spec.options)
        .s("Description", &spec.description)
        .nz("Update", spec.updated)
        .nz("Access", spec.accessed);
    with_view(record, &spec.view)
}

/// Parses view lines and checks every right side lies in workspace `name`.
fn check_view(name: &str, view: &[String]) -> Result<()> {
    let prefix = format!("//{name}/");
    for text in view {
        let line = ViewLine::parse(text).with_context(|| format!("invalid view line {text:?}"))?;
        if !line.right.starts_with(&prefix) {
            bail!(
                "view line {text:?}: the right side {} must start with {prefix}",
                line.right
            );
        }
    }
    View::parse_lines(view).context("invalid view")?;
    Ok(())
}

fn render_form(spec: &Workspace) -> String {
    let mut fields = vec![("Client".to_string(), vec![spec.name.clone()])];
    if spec.updated > 0 {
        fields.push(("Update".into(), vec![date_time(spec.updated)]));
    }
    if spec.accessed > 0 {
        fields.push(("Access".into(), vec![date_time(spec.accessed)]));
    }
    fields.extend([
        ("Owner".to_string(), single(&spec.owner)),
        ("Host".to_string(), single(&spec.host)),
        (
            "Description".to_string(),
            description_lines(&spec.description),
        ),
        ("Root".to_string(), vec![spec.root.clone()]),
        ("Options".to_string(), vec![spec.options.clone()]),
        ("View".to_string(), spec.view.clone()),
    ]);
    format!(
        "# A Keel workspace specification.\n\
         #  Client:      The workspace name (cannot be changed here).\n\
         #  Owner:       The user who owns the workspace.\n\
         #  Host:        If set, the workspace can only be used from this host.\n\
         #  Description: A short description.\n\
         #  Root:        The local directory holding the workspace files.\n\
         #  Options:     [no]allwrite [no]clobber [no]rmdir [no]modtime\n\
         #  View:        Lines mapping depot files into the workspace.\n\n{}",
        Form { fields }.render()
    )
}

fn parse_form(text: &str, original: &Workspace) -> Result<Workspace> {
    let form = EditedForm::parse(text, "Client", &original.name, "workspace")?;
    let root = form.one("Root");
    if root.is_empty() {
        bail!("missing required field Root");
    }
    let options = WorkspaceOptions::parse(&form.one("Options"))?.to_string();
    let view = form.lines("View");
    check_view(&original.name, &view)?;
    Ok(Workspace {
        name: original.name.clone(),
        owner: form.owner_or(&original.owner),
        host: form.one("Host"),
        root,
        description: form.description(),
        options,
        view,
        updated: original.updated,
        accessed: original.accessed,
    })
}
