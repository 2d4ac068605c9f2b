//! `label create|edit|show|list|delete`, `labels`, `tag` and `labelsync`: label specs in their
//! Perforce-style form and the files a label holds.

use anyhow::Result;
use keel_client::ops::{self, LabelAction, LabelEntry, LabelSpec as Label, TagQuery};
use keel_core::{Form, WorkspaceName};

use super::spec_form::{self, EditedForm, SpecKind, description_lines, single, with_view};
use crate::cli::{LabelCmd, LabelCreateArgs, LabelsyncArgs, TagArgs};
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;

/// The view a new label gets (the server applies the same default).
const DEFAULT_VIEW: &str = "//depot/...";

pub async fn run(s: &mut Session, cmd: LabelCmd) -> Result<()> {
    match cmd {
        LabelCmd::Create(args) => create(s, args).await,
        LabelCmd::Edit { name, force: false } => spec_form::edit::<Label>(s, &name).await,
        LabelCmd::Edit { name, force: true } => edit_forced(s, &name).await,
        LabelCmd::Show { name } => spec_form::show::<Label>(s, &name).await,
        LabelCmd::List => list(s).await,
        LabelCmd::Delete { name, force: false } => spec_form::delete::<Label>(s, &name).await,
        LabelCmd::Delete { name, force: true } => delete_forced(s, &name).await,
    }
}

/// `label edit -f`: a super user edits a label that is not theirs, or a locked one.
async fn edit_forced(s: &Session, name: &str) -> Result<()> {
    WorkspaceName::parse(name)?;
    let spec = Label::fetch(s, name).await?;
    if let Some(updated) = spec_form::edited(s, name, &spec)? {
        let saved = ops::save_label(&s.conn, updated, false, true).await?;
        spec_form::said_saved(s, &saved);
    }
    Ok(())
}

/// `label delete -f`: a super user deletes a label that is not theirs, or a locked one.
async fn delete_forced(s: &Session, name: &str) -> Result<()> {
    ops::delete_label(&s.conn, name, true).await?;
    spec_form::said_deleted::<Label>(s, name);
    Ok(())
}

/// `labels`.
pub async fn list(s: &mut Session) -> Result<()> {
    spec_form::list::<Label>(s).await
}

impl SpecKind for Label {
    const TITLE: &'static str = "Label";
    const NOUN: &'static str = "label";
    const KEY: &'static str = "label";

    fn name(&self) -> &str {
        &self.name
    }

    fn fresh(s: &Session, name: &str) -> Label {
        Label {
            name: name.to_string(),
            owner: s.settings.user.clone(),
            description: spec_form::created_by(s),
            options: "unlocked".to_string(),
            view: vec![DEFAULT_VIEW.to_string()],
            ..Default::default()
        }
    }

    /// Perforce `label -o` field names, `View0`, `View1`, ...
    fn record(&self) -> Record {
        let record = Record::new()
            .s("label", &self.name)
            .s("Owner", &self.owner)
            .s("Options", &self.options)
            .s("Revision", &self.revision)
            .s("Description", &self.description)
            .nz("Update", self.updated);
        with_view(record, &self.view)
    }

    fn list_line(&self) -> String {
        format!(
            "Label {} {} '{}'",
            self.name,
            date(self.updated),
            first_line(&self.description)
        )
    }

    fn render_form(&self) -> String {
        render_form(self)
    }

    fn parse_form(text: &str, original: &Label) -> Result<Label> {
        parse_form(text, original)
    }

    async fn fetch(s: &Session, name: &str) -> Result<Label> {
        // Shown as a form to read or edit: form-out triggers run.
        Ok(ops::label(&s.conn, name, true).await?)
    }

    async fn fetch_all(s: &Session) -> Result<Vec<Label>> {
        Ok(ops::labels(&s.conn).await?.all().await?)
    }

    async fn store(s: &Session, spec: Label, create_only: bool) -> Result<Label> {
        Ok(ops::save_label(&s.conn, spec, create_only, false).await?)
    }

    async fn remove(s: &Session, name: &str) -> Result<()> {
        Ok(ops::delete_label(&s.conn, name, false).await?)
    }
}

async fn create(s: &mut Session, args: LabelCreateArgs) -> Result<()> {
    WorkspaceName::parse(&args.name)?;
    let view = if args.view.is_empty() {
        vec![DEFAULT_VIEW.to_string()]
    } else {
        args.view
    };
    let spec = Label {
        name: args.name,
        owner: s.settings.user.clone(),
        description: args.description.unwrap_or_else(|| spec_form::created_by(s)),
        options: if args.locked { "locked" } else { "unlocked" }.to_string(),
        revision: args.revision.unwrap_or_default(),
        view,
        updated: 0,
    };
    spec_form::save(s, spec, true).await
}

pub async fn tag(s: &mut Session, args: TagArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let query = TagQuery {
        label: args.label.clone(),
        files,
        delete: args.delete,
        preview: args.preview,
    };
    let changed = ops::tag(&s.conn, query).await?.all().await?;
    report(s, &args.label, &changed);
    Ok(())
}

pub async fn labelsync(s: &mut Session, args: LabelsyncArgs) -> Result<()> {
    let files = s.file_args(&args.files).await?;
    let changed = ops::labelsync(&s.conn, &args.label, files, args.preview)
        .await?
        .all()
        .await?;
    report(s, &args.label, &changed);
    Ok(())
}

/// `added`, `updated` or `deleted`.
fn label_action_word(action: Option<LabelAction>) -> &'static str {
    match action {
        Some(LabelAction::Added) => "added",
        Some(LabelAction::Updated) => "updated",
        Some(LabelAction::Deleted) => "deleted",
        None => "unspecified",
    }
}

/// Prints `//depot/x#3 - added` per changed entry (or that nothing changed).
fn report(s: &Session, label: &str, changed: &[LabelEntry]) {
    if changed.is_empty() {
        s.out.note(format!("Label {label} is up to date."));
    }
    for file in changed {
        s.out.emit(
            Record::new()
                .s("label", label)
                .s("depotFile", &file.depot_file)
                .n("rev", u64::from(file.rev))
                .s("action", label_action_word(file.action)),
            format!(
                "{}#{} - {}",
                file.depot_file,
                file.rev,
                label_action_word(file.action)
            ),
        );
    }
}

fn render_form(spec: &Label) -> String {
    let mut fields = vec![("Label".to_string(), vec![spec.name.clone()])];
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
        ("Revision".to_string(), single(&spec.revision)),
        ("View".to_string(), spec.view.clone()),
    ]);
    format!(
        "# A Keel label specification.\n\
         #  Label:       The label name (cannot be changed here).\n\
         #  Owner:       The user who owns the label.\n\
         #  Description: A short description.\n\
         #  Options:     unlocked or locked (a locked label refuses tag, labelsync,\n\
         #               edit and delete until its owner unlocks it).\n\
         #  Revision:    Empty for a static label; @N makes an automatic label of change N.\n\
         #  View:        Depot paths the label may hold (-//depot/path/... excludes).\n\n{}",
        Form { fields }.render()
    )
}

fn parse_form(text: &str, original: &Label) -> Result<Label> {
    let form = EditedForm::parse(text, "Label", &original.name, "label")?;
    Ok(Label {
        name: original.name.clone(),
        owner: form.owner_or(&original.owner),
        description: form.description(),
        options: form.one("Options"),
        revision: form.one("Revision"),
        view: form.lines("View"),
        updated: original.updated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_round_trips() {
        let spec = Label {
            name: "rel-1".into(),
            owner: "alice".into(),
            description: "Release one.\nSecond line.".into(),
            options: "locked".into(),
            revision: "@12".into(),
            view: vec!["//depot/...".into(), "-//depot/tmp/...".into()],
            updated: 1_700_000_000,
        };
        let parsed = parse_form(&render_form(&spec), &spec).expect("parses");
        assert_eq!(parsed, spec);
        let renamed = render_form(&spec).replace("Label:\trel-1", "Label:\tother");
        assert!(parse_form(&renamed, &spec).is_err());
    }
}
