//! `branch create|edit|show|list|delete` and `branches`: branch specs in their Perforce-style
//! form.

use anyhow::{Result, anyhow, bail};
use keel_client::ops::{self, BranchSpec as Branch};
use keel_core::{Form, LineKind, ViewLine, WorkspaceName};

use super::spec_form::{self, EditedForm, SpecKind, description_lines, single, with_view};
use crate::cli::{BranchCmd, BranchCreateArgs};
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;

pub async fn run(s: &mut Session, cmd: BranchCmd) -> Result<()> {
    match cmd {
        BranchCmd::Create(args) => create(s, args).await,
        BranchCmd::Edit { name } => spec_form::edit::<Branch>(s, &name).await,
        BranchCmd::Show { name } => spec_form::show::<Branch>(s, &name).await,
        BranchCmd::List => list(s).await,
        BranchCmd::Delete { name } => spec_form::delete::<Branch>(s, &name).await,
    }
}

/// `branches`.
pub async fn list(s: &mut Session) -> Result<()> {
    spec_form::list::<Branch>(s).await
}

impl SpecKind for Branch {
    const TITLE: &'static str = "Branch";
    const NOUN: &'static str = "branch";
    const KEY: &'static str = "branch";

    fn name(&self) -> &str {
        &self.name
    }

    fn fresh(s: &Session, name: &str) -> Branch {
        Branch {
            name: name.to_string(),
            owner: s.settings.user.clone(),
            description: spec_form::created_by(s),
            options: "unlocked".to_string(),
            view: vec![format!("//depot/main/... //depot/{name}/...")],
            ..Default::default()
        }
    }

    /// Perforce `branch -o` field names, `View0`, `View1`, ...
    fn record(&self) -> Record {
        let record = Record::new()
            .s("branch", &self.name)
            .s("Owner", &self.owner)
            .s("Options", &self.options)
            .s("Description", &self.description)
            .nz("Update", self.updated);
        with_view(record, &self.view)
    }

    fn list_line(&self) -> String {
        format!(
            "Branch {} {} '{}'",
            self.name,
            date(self.updated),
            first_line(&self.description)
        )
    }

    fn render_form(&self) -> String {
        render_form(self)
    }

    fn parse_form(text: &str, original: &Branch) -> Result<Branch> {
        parse_form(text, original)
    }

    async fn fetch(s: &Session, name: &str) -> Result<Branch> {
        // Shown as a form to read or edit: form-out triggers run.
        Ok(ops::branch(&s.conn, name, true).await?)
    }

    async fn fetch_all(s: &Session) -> Result<Vec<Branch>> {
        Ok(ops::branches(&s.conn).await?.all().await?)
    }

    async fn store(s: &Session, spec: Branch, create_only: bool) -> Result<Branch> {
        Ok(ops::save_branch(&s.conn, spec, create_only).await?)
    }

    async fn remove(s: &Session, name: &str) -> Result<()> {
        Ok(ops::delete_branch(&s.conn, name).await?)
    }
}

/// Parses every view line locally, so typos are reported before the server is asked.
fn check_view(view: &[String]) -> Result<()> {
    for text in view {
        let line = ViewLine::parse(text).map_err(|e| anyhow!("{e}"))?;
        if line.kind == LineKind::Overlay {
            bail!("view line {text:?}: overlay (+) lines are not allowed in branch views");
        }
    }
    Ok(())
}

async fn create(s: &mut Session, args: BranchCreateArgs) -> Result<()> {
    WorkspaceName::parse(&args.name)?;
    check_view(&args.view)?;
    let spec = Branch {
        name: args.name,
        owner: s.settings.user.clone(),
        description: args.description.unwrap_or_else(|| spec_form::created_by(s)),
        options: "unlocked".to_string(),
        view: args.view,
        updated: 0,
    };
    spec_form::save(s, spec, true).await
}

fn render_form(spec: &Branch) -> String {
    let mut fields = vec![("Branch".to_string(), vec![spec.name.clone()])];
    if spec.updated > 0 {
        fields.push(("Update".into(), vec![date_time(spec.updated)]));
    }
    fields.extend([
        ("Owner".to_string(), single(&spec.owner)),
        (
            "Description".to_string(),
            description_lines(&spec.description),
        ),
        ("Options".to_string(), single(&spec.options)),
        ("View".to_string(), spec.view.clone()),
    ]);
    format!(
        "# A Keel branch specification.\n\
         #  Branch:      The branch spec name (cannot be changed here).\n\
         #  Owner:       The user who owns the spec.\n\
         #  Description: A short description.\n\
         #  Options:     unlocked or locked (only the owner changes a locked spec).\n\
         #  View:        Lines mapping source depot files to target depot files.\n\n{}",
        Form { fields }.render()
    )
}

fn parse_form(text: &str, original: &Branch) -> Result<Branch> {
    let form = EditedForm::parse(text, "Branch", &original.name, "branch")?;
    let view = form.lines("View");
    check_view(&view)?;
    Ok(Branch {
        name: original.name.clone(),
        owner: form.owner_or(&original.owner),
        description: form.description(),
        options: form.one("Options"),
        view,
        updated: original.updated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_round_trips_and_checks_views() {
        let spec = Branch {
            name: "rel".into(),
            owner: "alice".into(),
            description: "Release branch.".into(),
            options: "unlocked".into(),
            view: vec!["//depot/main/... //depot/rel/...".into()],
            updated: 1_700_000_000,
        };
        assert_eq!(
            parse_form(&render_form(&spec), &spec).expect("parses"),
            spec
        );
        let overlay = render_form(&spec).replace("\t//depot/main", "\t+//depot/main");
        assert!(parse_form(&overlay, &spec).is_err());
    }
}
