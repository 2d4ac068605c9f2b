//! Size limits on what users store: a change description, each field of a spec form and the
//! form as a whole, a view's lines, the protections and triggers tables' lines. Every save
//! checks before it writes, so a refusal ([`ServiceError::OverLimit`], naming the field, its
//! size and the limit) leaves nothing saved.

use crate::{Service, ServiceError};

/// One field of a form as the size limits see it: its name and its size in bytes.
pub(crate) struct Field<'a> {
    pub(crate) name: &'a str,
    pub(crate) bytes: usize,
}

impl<'a> Field<'a> {
    pub(crate) fn text(name: &'a str, value: &str) -> Field<'a> {
        Field {
            name,
            bytes: value.len(),
        }
    }

    /// A list field (a view, a user list): its lines with their line ends.
    pub(crate) fn lines(name: &'a str, lines: &[String]) -> Field<'a> {
        Field {
            name,
            bytes: lines.iter().map(|l| l.len() + 1).sum(),
        }
    }
}

fn over(
    what: String,
    size: usize,
    limit: usize,
    unit: &'static str,
    knob: &'static str,
) -> Result<(), ServiceError> {
    match size > limit {
        true => Err(ServiceError::OverLimit {
            what,
            size,
            limit,
            unit,
            knob,
        }),
        false => Ok(()),
    }
}

impl Service {
    /// Refuses a change description longer than `max_description_bytes`.
    pub(crate) fn check_description(&self, description: &str) -> Result<(), ServiceError> {
        over(
            "the change description".to_string(),
            description.len(),
            self.config.max_description_bytes,
            "bytes",
            "max_description_bytes",
        )
    }

    /// Refuses a `kind` form (`workspace`, `label`, ...) one of whose fields is longer than
    /// `max_form_field_bytes` (a Description: than `max_description_bytes`), or whose fields
    /// together are longer than `max_form_bytes`.
    pub(crate) fn check_form(&self, kind: &str, fields: &[Field<'_>]) -> Result<(), ServiceError> {
        for field in fields {
            let (limit, knob) = match field.name {
                "Description" => (self.config.max_description_bytes, "max_description_bytes"),
                _ => (self.config.max_form_field_bytes, "max_form_field_bytes"),
            };
            over(
                format!("the {kind} form's {} field", field.name),
                field.bytes,
                limit,
                "bytes",
                knob,
            )?;
        }
        over(
            format!("the {kind} form"),
            fields.iter().map(|f| f.bytes).sum(),
            self.config.max_form_bytes,
            "bytes",
            "max_form_bytes",
        )
    }

    /// Refuses a `kind` spec's View of more than `max_view_lines` lines.
    pub(crate) fn check_view(&self, kind: &str, view: &[String]) -> Result<(), ServiceError> {
        over(
            format!("the {kind} form's View"),
            view.len(),
            self.config.max_view_lines,
            "lines",
            "max_view_lines",
        )
    }

    /// Refuses a protections or triggers table of more than `max_table_lines` lines, or
    /// longer than `max_form_bytes`.
    pub(crate) fn check_table(&self, table: &str, lines: &[String]) -> Result<(), ServiceError> {
        over(
            format!("the {table} table"),
            lines.len(),
            self.config.max_table_lines,
            "lines",
            "max_table_lines",
        )?;
        over(
            format!("the {table} table"),
            Field::lines(table, lines).bytes,
            self.config.max_form_bytes,
            "bytes",
            "max_form_bytes",
        )
    }
}

impl Service {
    pub(crate) fn check_workspace_form(
        &self,
        ws: &crate::WorkspaceSpec,
    ) -> Result<(), ServiceError> {
        self.check_view("workspace", &ws.view)?;
        self.check_form(
            "workspace",
            &[
                Field::text("Client", &ws.name),
                Field::text("Owner", &ws.owner),
                Field::text("Host", &ws.host),
                Field::text("Root", &ws.root),
                Field::text("Options", &ws.options),
                Field::text("Description", &ws.description),
                Field::lines("View", &ws.view),
            ],
        )
    }

    pub(crate) fn check_label_form(&self, label: &crate::LabelSpec) -> Result<(), ServiceError> {
        self.check_view("label", &label.view)?;
        self.check_form(
            "label",
            &[
                Field::text("Label", &label.name),
                Field::text("Owner", &label.owner),
                Field::text("Options", &label.options),
                Field::text("Revision", &label.revision),
                Field::text("Description", &label.description),
                Field::lines("View", &label.view),
            ],
        )
    }

    pub(crate) fn check_branch_form(&self, branch: &crate::BranchSpec) -> Result<(), ServiceError> {
        self.check_view("branch", &branch.view)?;
        self.check_form(
            "branch",
            &[
                Field::text("Branch", &branch.name),
                Field::text("Owner", &branch.owner),
                Field::text("Options", &branch.options),
                Field::text("Description", &branch.description),
                Field::lines("View", &branch.view),
            ],
        )
    }

    pub(crate) fn check_user_form(&self, user: &crate::UserSpec) -> Result<(), ServiceError> {
        self.check_form(
            "user",
            &[
                Field::text("User", &user.name),
                Field::text("Email", &user.email),
                Field::text("FullName", &user.full_name),
                Field::lines("Reviews", &user.reviews),
            ],
        )
    }

    pub(crate) fn check_group_form(&self, group: &crate::GroupSpec) -> Result<(), ServiceError> {
        self.check_form(
            "group",
            &[
                Field::text("Group", &group.name),
                Field::lines("Users", &group.users),
                Field::lines("Subgroups", &group.subgroups),
                Field::lines("Owners", &group.owners),
            ],
        )?;
        let members = group.users.len() + group.subgroups.len() + group.owners.len();
        over(
            "the group form's Users, Subgroups and Owners".to_string(),
            members,
            self.config.max_table_lines,
            "lines",
            "max_table_lines",
        )
    }

    pub(crate) fn check_depot_form(
        &self,
        name: &str,
        description: &str,
    ) -> Result<(), ServiceError> {
        self.check_form(
            "depot",
            &[
                Field::text("Depot", name),
                Field::text("Description", description),
            ],
        )
    }
}
