//! Form triggers: a spec written as its Perforce form into `%formfile%`; `form-save` runs
//! before a spec is saved and may refuse it, `form-out` runs before a spec is shown for
//! editing and may rewrite the file, whose form then replaces what is shown.

use super::{EachRun, Stage};
use crate::error::{TriggerFailure, TriggerFailureReason};
use crate::{BranchSpec, Caller, LabelSpec, Service, ServiceError, WorkspaceSpec};
use keel_core::trigger::{TriggerVars, triggers_of};
use keel_core::{Form, FormType, TriggerKind};

/// The file name of the form inside a trigger's working directory.
const FORM_FILE: &str = "form.txt";

/// A spec that form triggers see as a form.
pub trait FormSpec: Sized {
    const TYPE: FormType;
    fn name(&self) -> &str;
    /// The spec's form, Perforce's field names.
    fn to_form(&self) -> Form;
    /// The spec a (rewritten) form describes; its name field must still name `original`.
    fn from_form(form: &Form, original: &Self) -> Result<Self, String>;
}

/// A form's fields read back, checking the name field.
struct Fields<'a>(&'a Form);

impl<'a> Fields<'a> {
    fn named(form: &'a Form, field: &str, name: &str) -> Result<Fields<'a>, String> {
        let fields = Fields(form);
        let found = fields.one(field);
        if found != name {
            return Err(format!("{field} field '{found}' does not match '{name}'"));
        }
        Ok(fields)
    }

    fn one(&self, field: &str) -> String {
        self.0.get_one(field).unwrap_or("").trim().to_string()
    }

    fn lines(&self, field: &str) -> Vec<String> {
        self.0
            .get(field)
            .unwrap_or(&[])
            .iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    fn text(&self, field: &str) -> String {
        self.0.get(field).unwrap_or(&[]).join("\n")
    }
}

fn single(value: &str) -> Vec<String> {
    if value.is_empty() {
        Vec::new()
    } else {
        vec![value.to_string()]
    }
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(String::from).collect()
}

impl FormSpec for WorkspaceSpec {
    const TYPE: FormType = FormType::Workspace;
    fn name(&self) -> &str {
        &self.name
    }
    fn to_form(&self) -> Form {
        Form {
            fields: vec![
                ("Client".into(), single(&self.name)),
                ("Owner".into(), single(&self.owner)),
                ("Host".into(), single(&self.host)),
                ("Description".into(), lines(&self.description)),
                ("Root".into(), single(&self.root)),
                ("Options".into(), single(&self.options)),
                ("View".into(), self.view.clone()),
            ],
        }
    }
    fn from_form(form: &Form, original: &Self) -> Result<Self, String> {
        let f = Fields::named(form, "Client", &original.name)?;
        Ok(WorkspaceSpec {
            owner: f.one("Owner"),
            host: f.one("Host"),
            description: f.text("Description"),
            root: f.one("Root"),
            options: f.one("Options"),
            view: f.lines("View"),
            ..original.clone()
        })
    }
}

impl FormSpec for LabelSpec {
    const TYPE: FormType = FormType::Label;
    fn name(&self) -> &str {
        &self.name
    }
    fn to_form(&self) -> Form {
        Form {
            fields: vec![
                ("Label".into(), single(&self.name)),
                ("Owner".into(), single(&self.owner)),
                ("Description".into(), lines(&self.description)),
                ("Options".into(), single(&self.options)),
                ("Revision".into(), single(&self.revision)),
                ("View".into(), self.view.clone()),
            ],
        }
    }
    fn from_form(form: &Form, original: &Self) -> Result<Self, String> {
        let f = Fields::named(form, "Label", &original.name)?;
        Ok(LabelSpec {
            owner: f.one("Owner"),
            description: f.text("Description"),
            options: f.one("Options"),
            revision: f.one("Revision"),
            view: f.lines("View"),
            ..original.clone()
        })
    }
}

impl FormSpec for BranchSpec {
    const TYPE: FormType = FormType::Branch;
    fn name(&self) -> &str {
        &self.name
    }
    fn to_form(&self) -> Form {
        Form {
            fields: vec![
                ("Branch".into(), single(&self.name)),
                ("Owner".into(), single(&self.owner)),
                ("Description".into(), lines(&self.description)),
                ("Options".into(), single(&self.options)),
                ("View".into(), self.view.clone()),
            ],
        }
    }
    fn from_form(form: &Form, original: &Self) -> Result<Self, String> {
        let f = Fields::named(form, "Branch", &original.name)?;
        Ok(BranchSpec {
            owner: f.one("Owner"),
            description: f.text("Description"),
            options: f.one("Options"),
            view: f.lines("View"),
            ..original.clone()
        })
    }
}

impl Service {
    /// Runs the `form-save` triggers of the spec's form type; the first that fails refuses
    /// the save.
    pub(crate) fn form_save<S: FormSpec>(
        &self,
        caller: &Caller,
        spec: &S,
    ) -> Result<(), ServiceError> {
        let table = self.meta.snapshot()?.triggers()?;
        let triggers: Vec<_> = triggers_of(&table, TriggerKind::FormSave)
            .into_iter()
            .filter(|t| t.selects_form(S::TYPE))
            .collect();
        if triggers.is_empty() {
            return Ok(());
        }
        let text = spec.to_form().render();
        let subject = format!("{} {}", S::TYPE, spec.name());
        self.run_form_triggers(
            caller,
            &triggers,
            spec.name(),
            S::TYPE,
            &mut |t, dir, stage| {
                if stage == Stage::Before {
                    write_form(t, &subject, dir, &text)?;
                }
                Ok(())
            },
        )
    }

    /// The spec as `form-out` triggers of its form type leave it: each may rewrite the form
    /// file, and the next sees the rewritten form. A form that no longer parses, or names
    /// another spec, fails the command.
    pub fn form_out<S: FormSpec>(&self, caller: &Caller, spec: S) -> Result<S, ServiceError> {
        let table = self.meta.snapshot()?.triggers()?;
        let triggers: Vec<_> = triggers_of(&table, TriggerKind::FormOut)
            .into_iter()
            .filter(|t| t.selects_form(S::TYPE))
            .collect();
        if triggers.is_empty() {
            return Ok(spec);
        }
        let name = spec.name().to_string();
        let subject = format!("{} {name}", S::TYPE);
        let mut current = spec;
        self.run_form_triggers(
            caller,
            &triggers,
            &name,
            S::TYPE,
            &mut |trigger, dir, stage| {
                let path = dir.join(FORM_FILE);
                match stage {
                    Stage::Before => {
                        write_form(trigger, &subject, dir, &current.to_form().render())
                    }
                    Stage::After => {
                        let bad_form = |reason: String| {
                            Box::new(TriggerFailure {
                                name: trigger.name.clone(),
                                kind: trigger.kind,
                                subject: subject.clone(),
                                change: None,
                                reason: TriggerFailureReason::BadForm { reason },
                                output: String::new(),
                            })
                        };
                        let text = std::fs::read_to_string(&path)
                            .map_err(|e| bad_form(format!("reading {}: {e}", path.display())))?;
                        let form = Form::parse(&text).map_err(|e| bad_form(e.to_string()))?;
                        current = S::from_form(&form, &current).map_err(bad_form)?;
                        Ok(())
                    }
                }
            },
        )?;
        Ok(current)
    }

    fn run_form_triggers(
        &self,
        caller: &Caller,
        triggers: &[keel_core::trigger::Trigger],
        name: &str,
        form_type: FormType,
        each: &mut EachRun,
    ) -> Result<(), ServiceError> {
        // Every run gets its own directory: `run_triggers` makes this name the file in it.
        let vars = TriggerVars {
            user: caller.user.clone(),
            client: caller.workspace.clone(),
            formfile: FORM_FILE.to_string(),
            formname: name.to_string(),
            formtype: form_type.as_str().to_string(),
            ..TriggerVars::default()
        };
        self.run_triggers(
            caller,
            triggers,
            &format!("{form_type} {name}"),
            None,
            &vars,
            each,
        )
        .map_err(ServiceError::TriggerFailed)
    }
}

/// Writes the form into a trigger's working directory.
fn write_form(
    trigger: &keel_core::trigger::Trigger,
    subject: &str,
    dir: &std::path::Path,
    text: &str,
) -> Result<(), Box<TriggerFailure>> {
    std::fs::write(dir.join(FORM_FILE), text).map_err(|e| {
        Box::new(TriggerFailure {
            name: trigger.name.clone(),
            kind: trigger.kind,
            subject: subject.to_string(),
            change: None,
            reason: TriggerFailureReason::CannotRun {
                program: trigger.command.clone(),
                error: format!("writing the form file: {e}"),
            },
            output: String::new(),
        })
    })
}
