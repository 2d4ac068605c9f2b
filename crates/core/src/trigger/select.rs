//! Which triggers of the table run: lines sharing a name make one trigger; a change trigger
//! runs when its lines select any of the change's files (the last line matching a file
//! decides, a `-` line excludes it), a form trigger when its path names the form's type.

use super::line::{FormType, TriggerKind, TriggerLine};
use crate::pattern::PathPattern;

/// One trigger of a kind: its name, its command and the patterns of its lines.
#[derive(Clone, Debug)]
pub struct Trigger {
    pub name: String,
    pub kind: TriggerKind,
    pub command: String,
    /// (excludes, pattern) per line, in table order; form triggers keep their form types.
    lines: Vec<(bool, Selector)>,
}

#[derive(Clone, Debug)]
enum Selector {
    Files(PathPattern),
    Form(FormType),
}

impl Trigger {
    /// Whether the trigger selects depot file `path` (change triggers).
    pub fn selects_file(&self, path: &str) -> bool {
        let mut selected = false;
        for (excludes, selector) in &self.lines {
            if let Selector::Files(pattern) = selector
                && pattern.matches(path)
            {
                selected = !excludes;
            }
        }
        selected
    }

    /// Whether the trigger runs for forms of `form` (form triggers).
    pub fn selects_form(&self, form: FormType) -> bool {
        self.lines
            .iter()
            .any(|(_, s)| matches!(s, Selector::Form(t) if *t == form))
    }
}

/// The triggers of `kind` in the table, in the order their names first appear. Lines that no
/// longer parse as patterns (the table is checked when saved) select nothing.
pub fn triggers_of(table: &[TriggerLine], kind: TriggerKind) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    for line in table.iter().filter(|l| l.kind == kind) {
        let selector = if kind.is_change() {
            let text = line.path.strip_prefix('-').unwrap_or(&line.path);
            PathPattern::parse(text).ok().map(Selector::Files)
        } else {
            FormType::parse(&line.path).map(Selector::Form)
        };
        let index = match triggers.iter().position(|t| t.name == line.name) {
            Some(i) => i,
            None => {
                triggers.push(Trigger {
                    name: line.name.clone(),
                    kind,
                    command: line.command.clone(),
                    lines: Vec::new(),
                });
                triggers.len() - 1
            }
        };
        if let Some(selector) = selector {
            triggers[index].lines.push((line.excludes(), selector));
        }
    }
    triggers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trigger::parse_table;

    fn table(lines: &[&str]) -> Vec<TriggerLine> {
        parse_table(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn change_triggers_select_files_like_a_view() {
        let t = table(&[
            "a change-submit //depot/... x",
            "a change-submit -//depot/tmp/... x",
            "a change-submit //depot/tmp/keep/... x",
            "b change-submit //depot/*.c y",
            "c change-commit //depot/... z",
        ]);
        let submit = triggers_of(&t, TriggerKind::ChangeSubmit);
        assert_eq!(
            submit.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let cases = [
            ("//depot/main/x.c", true, false),
            ("//depot/tmp/x", false, false),
            ("//depot/tmp/keep/x", true, false),
            ("//depot/top.c", true, true),
            ("//other/x", false, false),
        ];
        for (path, a, b) in cases {
            assert_eq!(submit[0].selects_file(path), a, "a {path}");
            assert_eq!(submit[1].selects_file(path), b, "b {path}");
        }
        assert_eq!(triggers_of(&t, TriggerKind::ChangeCommit).len(), 1);
        assert!(triggers_of(&t, TriggerKind::FormOut).is_empty());
    }

    #[test]
    fn form_triggers_select_form_types() {
        let t = table(&["f form-save client x", "f form-save label x"]);
        let save = triggers_of(&t, TriggerKind::FormSave);
        assert_eq!(save.len(), 1);
        assert!(save[0].selects_form(FormType::Workspace));
        assert!(save[0].selects_form(FormType::Label));
        assert!(!save[0].selects_form(FormType::Branch));
    }
}
