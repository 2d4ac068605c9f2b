//! Labels: specs (save with validation, show, list, delete) and the compiled form `@label` and
//! `tag`/`labelsync` use. A label's View lists depot paths (`-` excludes); its Revision, when
//! set (`@N`), makes it an automatic label that selects that change's files in the View.

use crate::context::workspace_name;
use crate::paging::Cursor;
use crate::{Caller, LabelError, LabelSpec, Service, ServiceError};
use keel_core::{ChangeNumber, LineKind, SpecLock, View, ViewLine};
use keel_store::{LabelRow, ReadTxn};

/// The view a label gets when none is given.
pub const DEFAULT_LABEL_VIEW: &str = "//depot/...";

/// A label with its view compiled and its Revision parsed.
pub(crate) struct LabelCtx {
    pub row: LabelRow,
    /// Maps every path in the label's View onto itself.
    pub view: View,
    /// The change an automatic label stands for; `None` for a static label.
    pub revision: Option<ChangeNumber>,
}

impl LabelCtx {
    /// Compiles a stored label; one that can no longer be used is [`ServiceError::BadLabel`].
    pub(crate) fn new(row: LabelRow) -> Result<LabelCtx, ServiceError> {
        let bad = |reason: String| ServiceError::BadLabel {
            name: row.name.clone(),
            reason,
        };
        let view = label_view(&row.view).map_err(bad)?;
        let revision = row.revision;
        Ok(LabelCtx {
            row,
            view,
            revision,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.row.name
    }

    /// Whether a depot file lies in the label's View.
    pub(crate) fn in_view(&self, depot: &str) -> bool {
        self.view.translate(depot).is_some()
    }

    pub(crate) fn locked(&self) -> bool {
        self.row.options == SpecLock::Locked
    }

    /// Refuses changes to a locked label.
    pub(crate) fn check_unlocked(&self) -> Result<(), LabelError> {
        if self.locked() {
            return Err(LabelError::Locked {
                name: self.row.name.clone(),
                owner: self.row.owner.clone(),
            });
        }
        Ok(())
    }

    /// Refuses `tag`/`labelsync` on an automatic label, whose files follow its Revision.
    pub(crate) fn check_static(&self) -> Result<(), LabelError> {
        match self.revision {
            Some(revision) => Err(LabelError::Automatic {
                name: self.row.name.clone(),
                revision,
            }),
            None => Ok(()),
        }
    }
}

/// Loads a named label.
pub(crate) fn load_label(snap: &dyn ReadTxn, name: &str) -> Result<LabelCtx, LabelError> {
    let name = workspace_name(name)?;
    let row = snap.get_label(&name)?.ok_or(LabelError::NoSuch { name })?;
    Ok(LabelCtx::new(row)?)
}

/// `unlocked` (the default, for an empty value) or `locked`.
pub(crate) fn lock_option(text: &str) -> Result<SpecLock, String> {
    SpecLock::parse(text).map_err(|e| e.to_string())
}

/// An automatic label's Revision: empty (static label) or `@N`.
pub(crate) fn parse_revision(text: &str) -> Result<Option<ChangeNumber>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.strip_prefix('@')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u64>().ok())
        .map(|n| Some(ChangeNumber(n)))
        .ok_or_else(|| format!("Revision '{text}' must be a change, e.g. @42"))
}

/// Parses one label View line (`//depot/...`, `-//depot/old/...`, quoted when it has spaces)
/// into a view line that maps the path onto itself.
pub(crate) fn label_view_line(text: &str) -> Result<ViewLine, String> {
    let line = text.trim();
    if line.starts_with('+') {
        return Err(format!(
            "view line '{line}': overlay (+) lines are not allowed in label views"
        ));
    }
    let (exclude, rest) = match line.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, line),
    };
    let path = match rest.strip_prefix('"') {
        Some(quoted) => quoted
            .strip_suffix('"')
            .filter(|p| !p.contains('"'))
            .ok_or_else(|| format!("view line '{line}': unterminated quote"))?,
        None if rest.contains(char::is_whitespace) => {
            return Err(format!(
                "view line '{line}': a label view line is one depot path"
            ));
        }
        None => rest,
    };
    let sign = if exclude { "-" } else { "" };
    let parsed = ViewLine::parse(&format!("{sign}\"{path}\" \"{path}\""))
        .map_err(|e| format!("view line '{line}': {e}"))?;
    Ok(parsed)
}

/// Compiles a label's View lines (blank lines are skipped).
pub(crate) fn label_view(lines: &[String]) -> Result<View, String> {
    let parsed = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| label_view_line(l))
        .collect::<Result<Vec<_>, _>>()?;
    View::new(parsed).map_err(|e| e.to_string())
}

/// A label View line as stored and shown: `[-]PATH`, quoted when it has spaces.
fn render_view_line(line: &ViewLine) -> String {
    let sign = if line.kind == LineKind::Exclude {
        "-"
    } else {
        ""
    };
    if line.left.contains(char::is_whitespace) {
        format!("{sign}\"{}\"", line.left)
    } else {
        format!("{sign}{}", line.left)
    }
}

/// The depot a depot path (`//NAME/...`) names.
pub(crate) fn depot_of(path: &str) -> &str {
    path.trim_start_matches("//")
        .split('/')
        .next()
        .unwrap_or("")
}

fn spec(row: LabelRow) -> LabelSpec {
    LabelSpec {
        name: row.name,
        owner: row.owner,
        description: row.description,
        options: row.options.to_string(),
        revision: row.revision.map(|c| format!("@{c}")).unwrap_or_default(),
        view: row.view,
        updated: row.updated,
    }
}

/// Checks a spec and returns it normalised.
fn validate(
    snap: &dyn ReadTxn,
    caller: &Caller,
    mut label: LabelSpec,
) -> Result<LabelSpec, LabelError> {
    label.name = workspace_name(&label.name)?;
    let bad = |reason: String| LabelError::Invalid {
        name: label.name.clone(),
        reason,
    };
    if label.owner.is_empty() {
        label.owner = caller.user.clone();
    }
    label.options = lock_option(&label.options).map_err(bad)?.to_string();
    label.revision = match parse_revision(&label.revision).map_err(bad)? {
        Some(change) => format!("@{change}"),
        None => String::new(),
    };
    if label.view.iter().all(|l| l.trim().is_empty()) {
        label.view = vec![DEFAULT_LABEL_VIEW.to_string()];
    }
    let view = label_view(&label.view).map_err(bad)?;
    for line in view.lines() {
        let depot = depot_of(&line.left);
        if snap.get_depot(depot)?.is_none() {
            return Err(LabelError::NoSuchDepot {
                name: label.name,
                line: render_view_line(line),
                depot: depot.to_string(),
            });
        }
    }
    label.view = view.lines().iter().map(render_view_line).collect();
    Ok(label)
}

/// Whether saving `new` over `old` is allowed for `user` (a super user with `-f` may
/// always): only the owner changes a label's spec, and a locked label's only to unlock it.
fn check_locked_save(old: &LabelRow, new: &LabelSpec, user: &str) -> Result<(), LabelError> {
    if old.owner != user {
        return Err(LabelError::NotOwner {
            name: old.name.clone(),
            owner: old.owner.clone(),
        });
    }
    if old.options != SpecLock::Locked {
        return Ok(());
    }
    if new.options == "locked" {
        return Err(LabelError::StaysLocked {
            name: old.name.clone(),
        });
    }
    Ok(())
}

impl Service {
    /// Whether `force` (`-f`) may be used: only by a super user.
    fn label_force(&self, caller: &Caller, name: &str, force: bool) -> Result<bool, LabelError> {
        if force && !self.is_super(caller)? {
            return Err(LabelError::ForceNeedsSuper {
                name: name.to_string(),
            });
        }
        Ok(force)
    }

    /// Creates or replaces a label spec (its files are kept). Only the owner changes an
    /// existing label (a locked one only to unlock it); a super user may with `force`.
    pub fn save_label(
        &self,
        caller: &Caller,
        label: LabelSpec,
        create_only: bool,
        force: bool,
    ) -> Result<LabelSpec, LabelError> {
        self.check_label_form(&label)?;
        self.touch_user(caller)?;
        let force = self.label_force(caller, &label.name, force)?;
        let label = validate(self.meta.snapshot()?.as_ref(), caller, label)?;
        self.form_save(caller, &label)?;
        let bad = |reason: String| LabelError::Invalid {
            name: label.name.clone(),
            reason,
        };
        let options = lock_option(&label.options).map_err(bad)?;
        let revision = parse_revision(&label.revision).map_err(bad)?;
        let now = self.now();
        let user = caller.user.clone();
        let saved = keel_store::write(self.meta.as_ref(), move |txn| {
            let existing = txn.get_label(&label.name)?;
            if let Some(old) = &existing {
                if create_only {
                    return Err(LabelError::Exists { name: label.name });
                }
                if !force {
                    check_locked_save(old, &label, &user)?;
                }
            }
            let row = LabelRow {
                name: label.name,
                owner: label.owner,
                description: label.description,
                options,
                revision,
                view: label.view,
                created: existing.as_ref().map(|e| e.created).unwrap_or(now),
                updated: now,
            };
            txn.put_label(&row)?;
            Ok(row)
        })?;
        Ok(spec(saved))
    }

    /// The named label's spec.
    pub fn get_label(&self, caller: &Caller, name: &str) -> Result<LabelSpec, LabelError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        Ok(spec(load_label(snap.as_ref(), name)?.row))
    }

    /// Every label, in name order.
    pub fn list_labels(
        &self,
        caller: &Caller,
        sink: &mut dyn FnMut(LabelSpec) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.list_labels(after, page)?)),
            |l: &LabelRow| l.name.as_str(),
            page,
        );
        while let Some(row) = cursor.next_row()? {
            sink(spec(row))?;
        }
        Ok(())
    }

    /// Deletes a label and its files: its owner an unlocked one, a super user with `force`
    /// any.
    pub fn delete_label(&self, caller: &Caller, name: &str, force: bool) -> Result<(), LabelError> {
        self.touch_user(caller)?;
        let name = workspace_name(name)?;
        let force = self.label_force(caller, &name, force)?;
        let user = caller.user.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let row = txn
                .get_label(&name)?
                .ok_or_else(|| LabelError::NoSuch { name: name.clone() })?;
            if !force {
                if row.owner != user {
                    return Err(LabelError::NotOwner {
                        name: row.name,
                        owner: row.owner,
                    });
                }
                LabelCtx::new(row)?.check_unlocked()?;
            }
            txn.delete_label(&name)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_view_lines_map_paths_onto_themselves() {
        let view = label_view(&[
            "//depot/...".to_string(),
            "-//depot/old/...".to_string(),
            "\"//depot/with space/...\"".to_string(),
        ])
        .expect("valid view");
        assert!(view.translate("//depot/a.txt").is_some());
        assert!(view.translate("//depot/old/a.txt").is_none());
        assert!(view.translate("//depot/with space/x").is_some());
        let shown: Vec<String> = view.lines().iter().map(render_view_line).collect();
        assert_eq!(
            shown,
            [
                "//depot/...",
                "-//depot/old/...",
                "\"//depot/with space/...\""
            ]
        );
    }

    #[test]
    fn label_view_lines_are_refused_with_the_line() {
        for (line, want) in [
            ("+//depot/...", "overlay"),
            ("//depot/a //depot/b", "one depot path"),
            ("depot/...", "depot/..."),
            ("\"//depot/x", "unterminated"),
        ] {
            let err = label_view_line(line).expect_err(line);
            assert!(err.contains(want), "{line}: {err}");
        }
    }

    #[test]
    fn revisions_and_options() {
        assert_eq!(parse_revision(""), Ok(None));
        assert_eq!(parse_revision("@42"), Ok(Some(ChangeNumber(42))));
        assert!(parse_revision("42").is_err());
        assert!(parse_revision("@x").is_err());
        assert_eq!(lock_option(""), Ok(SpecLock::Unlocked));
        assert_eq!(lock_option("locked"), Ok(SpecLock::Locked));
        assert!(lock_option("sealed").is_err());
    }

    #[test]
    fn only_the_owner_changes_a_label_and_unlocks_a_locked_one() {
        let old = LabelRow {
            name: "rel".into(),
            owner: "alice".into(),
            description: String::new(),
            options: SpecLock::Locked,
            revision: None,
            view: vec![DEFAULT_LABEL_VIEW.into()],
            created: 0,
            updated: 0,
        };
        let mut new = spec(old.clone());
        assert!(check_locked_save(&old, &new, "alice").is_err());
        new.options = "unlocked".into();
        assert!(check_locked_save(&old, &new, "bob").is_err());
        assert!(check_locked_save(&old, &new, "alice").is_ok());
        let unlocked = LabelRow {
            options: SpecLock::Unlocked,
            ..old
        };
        assert!(check_locked_save(&unlocked, &new, "bob").is_err());
        assert!(check_locked_save(&unlocked, &new, "alice").is_ok());
    }
}
