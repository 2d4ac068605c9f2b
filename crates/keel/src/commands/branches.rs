//! `branch create|edit|show|list|delete` and `branches`: branch specs in their Perforce-style
//! form.

use anyhow::{Context, Result, anyhow, bail};
use keel_core::{Form, LineKind, ViewLine, WorkspaceName};
use keel_proto::v1::{
    Branch, DeleteBranchRequest, GetBranchRequest, ListBranchesRequest, SaveBranchRequest,
};

use super::spec_form::{EditedForm, description_lines, single, with_view};
use crate::cli::{BranchCmd, BranchCreateArgs};
use crate::editor::edit_text;
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;

pub async fn run(s: &mut Session, cmd: BranchCmd) -> Result<()> {
    match cmd {
        BranchCmd::Create(args) => create(s, args).await,
        BranchCmd::Edit { name } => edit(s, &name).await,
        BranchCmd::Show { name } => {
            let spec = get(s, &name).await?;
            s.out
                .emit(spec_record(&spec), render_form(&spec).trim_end());
            Ok(())
        }
        BranchCmd::List => list(s).await,
        BranchCmd::Delete { name } => {
            s.check(
                s.client()
                    .delete_branch(DeleteBranchRequest {
                        caller: s.caller(),
                        name: name.clone(),
                    })
                    .await,
            )?;
            s.out.emit(
                Record::new().s("branch", &name).s("action", "deleted"),
                format!("Branch {name} deleted."),
            );
            Ok(())
        }
    }
}

/// Whether a failed request was refused as NotFound.
pub(super) fn is_not_found(e: &anyhow::Error) -> bool {
    e.downcast_ref::<keel_client::Error>()
        .and_then(keel_client::Error::code)
        == Some(tonic::Code::NotFound)
}

async fn get(s: &Session, name: &str) -> Result<Branch> {
    Ok(s.check(
        s.client()
            .get_branch(GetBranchRequest {
                caller: s.caller(),
                name: name.to_string(),
            })
            .await,
    )?)
}

async fn save(s: &Session, spec: Branch, create_only: bool) -> Result<()> {
    let saved = s.check(
        s.client()
            .save_branch(SaveBranchRequest {
                caller: s.caller(),
                branch: Some(spec),
                create_only,
            })
            .await,
    )?;
    s.out.emit(
        spec_record(&saved).s("action", "saved"),
        format!("Branch {} saved.", saved.name),
    );
    Ok(())
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
        description: args
            .description
            .unwrap_or_else(|| format!("Created by {}.", s.settings.user)),
        options: "unlocked".to_string(),
        view: args.view,
        updated: 0,
    };
    save(s, spec, true).await
}

async fn edit(s: &mut Session, name: &str) -> Result<()> {
    WorkspaceName::parse(name)?;
    let spec = match get(s, name).await {
        Ok(spec) => spec,
        Err(e) if is_not_found(&e) => Branch {
            name: name.to_string(),
            owner: s.settings.user.clone(),
            description: format!("Created by {}.", s.settings.user),
            options: "unlocked".to_string(),
            view: vec![format!("//depot/main/... //depot/{name}/...")],
            ..Default::default()
        },
        Err(e) => return Err(e),
    };
    let original = render_form(&spec);
    let edited = edit_text(&original, name)?;
    if edited == original {
        s.out.emit(
            Record::new().s("branch", name).s("action", "unchanged"),
            format!("Branch {name} not changed."),
        );
        return Ok(());
    }
    let updated = parse_form(&edited, &spec).context("error in branch specification")?;
    save(s, updated, false).await
}

pub async fn list(s: &mut Session) -> Result<()> {
    let specs = s
        .all(
            s.client()
                .list_branches(ListBranchesRequest { caller: s.caller() })
                .await,
        )
        .await?;
    for spec in specs {
        s.out.emit(
            spec_record(&spec),
            format!(
                "Branch {} {} '{}'",
                spec.name,
                date(spec.updated),
                first_line(&spec.description)
            ),
        );
    }
    Ok(())
}

/// The JSON form of a spec (Perforce `branch -o` field names, `View0`, `View1`, ...).
fn spec_record(spec: &Branch) -> Record {
    let record = Record::new()
        .s("branch", &spec.name)
        .s("Owner", &spec.owner)
        .s("Options", &spec.options)
        .s("Description", &spec.description)
        .nz("Update", spec.updated);
    with_view(record, &spec.view)
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
