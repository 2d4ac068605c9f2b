//! `workspace create|edit|show|list|delete`: workspace specs and their Perforce-style form.

use anyhow::{Context, Result, anyhow, bail};
use keel_client::ops::{self, WorkspaceSpec as Workspace};
use keel_core::{Form, View, ViewLine, WorkspaceName, WorkspaceOptions};

use super::spec_form::{self, EditedForm, SpecKind, description_lines, single, with_view};
use crate::cli::{WorkspaceCmd, WorkspaceCreateArgs};
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;

pub async fn run(s: &mut Session, cmd: WorkspaceCmd) -> Result<()> {
    match cmd {
        WorkspaceCmd::Create(args) => create(s, args).await,
        WorkspaceCmd::Edit { name, force } => {
            if force {
                s.override_owner();
            }
            let name = name_or_current(s, name)?;
            spec_form::edit::<Workspace>(s, &name).await
        }
        WorkspaceCmd::Show { name } => {
            let name = name_or_current(s, name)?;
            spec_form::show::<Workspace>(s, &name).await
        }
        WorkspaceCmd::List => spec_form::list::<Workspace>(s).await,
        WorkspaceCmd::Clone(args) => super::workspace_clone::clone(s, args).await,
        WorkspaceCmd::Delete { name, force } => {
            if force {
                s.override_owner();
            }
            spec_form::delete::<Workspace>(s, &name).await
        }
    }
}

fn name_or_current(s: &Session, name: Option<String>) -> Result<String> {
    name.or_else(|| s.settings.workspace.clone())
        .ok_or_else(|| anyhow!(keel_client::Error::NoWorkspace))
}

impl SpecKind for Workspace {
    const TITLE: &'static str = "Workspace";
    const NOUN: &'static str = "workspace";
    const KEY: &'static str = "client";

    fn name(&self) -> &str {
        &self.name
    }

    fn fresh(s: &Session, name: &str) -> Workspace {
        Workspace {
            name: name.to_string(),
            owner: s.settings.user.clone(),
            root: s.cwd.display().to_string(),
            description: spec_form::created_by(s),
            options: WorkspaceOptions::default().to_string(),
            view: vec![format!("//depot/... //{name}/...")],
            ..Default::default()
        }
    }

    /// Perforce `client -o` field names, `View0`, `View1`, ...
    fn record(&self) -> Record {
        let record = Record::new()
            .s("name", &self.name)
            .s("Client", &self.name)
            .s("Owner", &self.owner)
            .s("Host", &self.host)
            .s("Root", &self.root)
            .s("Options", &self.options)
            .s("Description", &self.description)
            .nz("Update", self.updated)
            .nz("Access", self.accessed);
        with_view(record, &self.view)
    }

    fn list_line(&self) -> String {
        format!(
            "Workspace {} {} root {} '{}'",
            self.name,
            date(self.updated),
            self.root,
            first_line(&self.description)
        )
    }

    fn render_form(&self) -> String {
        render_form(self)
    }

    fn parse_form(text: &str, original: &Workspace) -> Result<Workspace> {
        parse_form(text, original)
    }

    async fn fetch(s: &Session, name: &str) -> Result<Workspace> {
        // Shown as a form to read or edit: form-out triggers run.
        Ok(ops::workspace(&s.conn, name, true).await?)
    }

    async fn fetch_all(s: &Session) -> Result<Vec<Workspace>> {
        Ok(ops::workspaces(&s.conn).await?.all().await?)
    }

    async fn store(s: &Session, spec: Workspace, create_only: bool) -> Result<Workspace> {
        Ok(ops::save_workspace(&s.conn, spec, create_only).await?)
    }

    async fn remove(s: &Session, name: &str) -> Result<()> {
        Ok(ops::delete_workspace(&s.conn, name).await?)
    }
}

async fn create(s: &mut Session, args: WorkspaceCreateArgs) -> Result<()> {
    WorkspaceName::parse(&args.name)?;
    if args.force {
        s.override_owner();
    }
    // `--root .` or `--root ws` means a directory here: the spec holds it absolute.
    let root = std::path::absolute(&args.root)
        .map_err(|e| anyhow::anyhow!("workspace root {}: {e}", args.root.display()))?;
    let root = keel_client::paths::normalize(&root);
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
        owner: args.owner.unwrap_or_else(|| s.settings.user.clone()),
        host: args.host.unwrap_or_default(),
        root: root.display().to_string(),
        description: args.description.unwrap_or_else(|| spec_form::created_by(s)),
        options,
        view,
        updated: 0,
        accessed: 0,
    };
    // Like `p4 client -i`, creating over an existing spec replaces it.
    spec_form::save(s, spec, false).await?;
    // The root is made once the server has taken the spec, so a refused spec leaves no
    // directory behind; `cd ROOT` is the next step either way.
    if !root.exists() {
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the workspace root {}", root.display()))?;
        s.out.note(format!("Created directory {}.", root.display()));
    }
    Ok(())
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
