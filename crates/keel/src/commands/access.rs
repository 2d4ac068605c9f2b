//! `group`, `groups`, `protect` and `protects`: groups and the protections table in their
//! Perforce-style forms.

use std::io::Read;

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::ops::{self, GroupSpec as Group, ProtectsQuery};
use keel_core::protect::parse_table;
use keel_core::{Form, Limit};

use super::spec_form::{self, EditedForm, SpecKind};
use crate::editor::edit_text;
use crate::output::{Record, date_time};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct GroupArgs {
    /// Print the group's form instead of editing it.
    #[arg(short = 'o', conflicts_with_all = ["input", "delete"])]
    pub output: bool,
    /// Read the group's form from standard input instead of an editor.
    #[arg(short = 'i', conflicts_with = "delete")]
    pub input: bool,
    /// Delete the group.
    #[arg(short = 'd')]
    pub delete: bool,
    pub name: String,
}

#[derive(Debug, Args)]
pub struct GroupsArgs {
    /// Only the groups this user belongs to (subgroups followed).
    pub user: Option<String>,
}

#[derive(Debug, Args)]
pub struct ProtectArgs {
    /// Print the table instead of editing it.
    #[arg(short = 'o', conflicts_with = "input")]
    pub output: bool,
    /// Read the table (a `Protections:` form) from standard input.
    #[arg(short = 'i')]
    pub input: bool,
}

#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ProtectsArgs {
    /// Every line of the table (super users only).
    #[arg(short = 'a')]
    pub all: bool,
    /// The lines that apply to this user (super users only, for another user).
    #[arg(short = 'u', value_name = "USER")]
    pub user: Option<String>,
    /// The lines that apply to members of this group (super users only).
    #[arg(short = 'g', value_name = "GROUP")]
    pub group: Option<String>,
    /// As if connecting from this IP address.
    #[arg(short = 'h', value_name = "HOST")]
    pub host: Option<String>,
    /// Only lines that can concern this file or pattern.
    pub path: Option<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// `keel maxresults` (and the other limits' topics) typed as a command: an error pointing at
/// `keel help maxresults`, which clap answers from the hidden subcommand's text.
pub fn limit_help(command: &crate::cli::Command) -> Result<()> {
    let name = match command {
        crate::cli::Command::MaxResults => "maxresults",
        crate::cli::Command::MaxScanRows => "maxscanrows",
        crate::cli::Command::MaxLockTime => "maxlocktime",
        _ => "maxopenfiles",
    };
    // These names exist so that `keel help maxresults` explains a limit's refusal (as
    // `p4 help maxresults` does); typed as a command, each would run and succeed doing nothing.
    anyhow::bail!("{name} is a help topic, not a command: run `keel help {name}`")
}

/// `group [-o|-i|-d] NAME`.
pub async fn group(s: &mut Session, args: GroupArgs) -> Result<()> {
    if args.delete {
        return spec_form::delete::<Group>(s, &args.name).await;
    }
    if args.output {
        let group = fetch_or_fresh(s, &args.name).await?;
        s.out.emit(group.record(), group.render_form().trim_end());
        return Ok(());
    }
    if args.input {
        let original = fetch_or_fresh(s, &args.name).await?;
        let text = read_stdin()?;
        let group = Group::parse_form(&text, &original).context("error in group specification")?;
        return spec_form::save(s, group, false).await;
    }
    spec_form::edit::<Group>(s, &args.name).await
}

async fn fetch_or_fresh(s: &Session, name: &str) -> Result<Group> {
    match Group::fetch(s, name).await {
        Ok(g) => Ok(g),
        Err(e) if spec_form::is_not_found(&e) => Ok(Group::fresh(s, name)),
        Err(e) => Err(e),
    }
}

fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the form from standard input")?;
    Ok(text)
}

/// `groups [USER]`.
pub async fn groups(s: &mut Session, args: GroupsArgs) -> Result<()> {
    let mut found = ops::groups(&s.conn, args.user.as_deref()).await?;
    while let Some(group) = found.next().await? {
        s.out.emit(group.record(), group.list_line());
    }
    Ok(())
}

fn limit_field(value: &str) -> Vec<String> {
    vec![if value.is_empty() {
        "unset".into()
    } else {
        value.to_string()
    }]
}

impl SpecKind for Group {
    const TITLE: &'static str = "Group";
    const NOUN: &'static str = "group";
    const KEY: &'static str = "group";

    fn name(&self) -> &str {
        &self.name
    }

    fn fresh(s: &Session, name: &str) -> Group {
        let unset = Limit::Unset.to_string();
        Group {
            name: name.to_string(),
            owners: vec![s.settings.user.clone()],
            max_results: unset.clone(),
            max_scan_rows: unset.clone(),
            max_lock_time: unset.clone(),
            max_open_files: unset.clone(),
            timeout: unset,
            ..Default::default()
        }
    }

    /// Perforce `group -o` field names (`Users0`, `Owners0`, `Subgroups0`, ...).
    fn record(&self) -> Record {
        let mut record = Record::new()
            .s("group", &self.name)
            .s("MaxResults", &self.max_results)
            .s("MaxScanRows", &self.max_scan_rows)
            .s("MaxLockTime", &self.max_lock_time)
            .s("MaxOpenFiles", &self.max_open_files)
            .s("Timeout", &self.timeout)
            .nz("Update", self.updated);
        for (field, list) in [
            ("Subgroups", &self.subgroups),
            ("Owners", &self.owners),
            ("Users", &self.users),
        ] {
            for (i, name) in list.iter().enumerate() {
                record = record.s(&format!("{field}{i}"), name);
            }
        }
        record
    }

    fn list_line(&self) -> String {
        self.name.clone()
    }

    fn render_form(&self) -> String {
        let mut fields = vec![("Group".to_string(), vec![self.name.clone()])];
        if self.updated > 0 {
            fields.push(("Update".into(), vec![date_time(self.updated)]));
        }
        fields.extend([
            ("MaxResults".to_string(), limit_field(&self.max_results)),
            ("MaxScanRows".to_string(), limit_field(&self.max_scan_rows)),
            ("MaxLockTime".to_string(), limit_field(&self.max_lock_time)),
            (
                "MaxOpenFiles".to_string(),
                limit_field(&self.max_open_files),
            ),
            ("Timeout".to_string(), limit_field(&self.timeout)),
            ("Subgroups".to_string(), self.subgroups.clone()),
            ("Owners".to_string(), self.owners.clone()),
            ("Users".to_string(), self.users.clone()),
        ]);
        format!(
            "# A Keel group specification.\n\
             #  Group:        The group's name (cannot be changed here).\n\
             #  MaxResults:   Most rows a member's command may return (unset, unlimited or N).\n\
             #  MaxScanRows:  Most rows a member's command may scan.\n\
             #  MaxLockTime:  Most milliseconds a member's command may hold the writer.\n\
             #  MaxOpenFiles: Most files a member may open in one command.\n\
             #  Timeout:      Seconds a member's login lasts.\n\
             #  Subgroups:    Groups whose members are members of this one.\n\
             #  Owners:       Users who may change this group.\n\
             #  Users:        The members, one per line.\n\
             # Of a user's groups the most permissive limit applies.\n\n{}",
            Form { fields }.render()
        )
    }

    fn parse_form(text: &str, original: &Group) -> Result<Group> {
        let form = EditedForm::parse(text, "Group", &original.name, "group")?;
        let limit = |field: &str| -> Result<String> {
            let value = form.one(field);
            match Limit::parse(&value) {
                Ok(limit) => Ok(limit.to_string()),
                Err(e) => bail!("{field}: {e}"),
            }
        };
        Ok(Group {
            name: original.name.clone(),
            users: form.lines("Users"),
            subgroups: form.lines("Subgroups"),
            owners: form.lines("Owners"),
            max_results: limit("MaxResults")?,
            max_scan_rows: limit("MaxScanRows")?,
            max_lock_time: limit("MaxLockTime")?,
            max_open_files: limit("MaxOpenFiles")?,
            timeout: limit("Timeout")?,
            updated: original.updated,
        })
    }

    async fn fetch(s: &Session, name: &str) -> Result<Group> {
        Ok(ops::group(&s.conn, name).await?)
    }

    async fn fetch_all(s: &Session) -> Result<Vec<Group>> {
        Ok(ops::groups(&s.conn, None).await?.all().await?)
    }

    async fn store(s: &Session, spec: Group, _create_only: bool) -> Result<Group> {
        Ok(ops::save_group(&s.conn, spec).await?)
    }

    async fn remove(s: &Session, name: &str) -> Result<()> {
        Ok(ops::delete_group(&s.conn, name).await?)
    }
}

fn render_protections(lines: &[String]) -> String {
    format!(
        "# The Keel protections table: one line per grant, later lines override earlier ones.\n\
         #  MODE user|group NAME HOST [-]PATH\n\
         #  MODE: list read open write admin super, or one right =read =open =write =branch.\n\
         #  HOST: * or a client address (10.1.*, 10.1.0.0/16, [2001:db8::]/32).\n\
         #  A leading - on PATH takes the mode (and every level above it) away there.\n\n{}",
        Form {
            fields: vec![("Protections".to_string(), lines.to_vec())],
        }
        .render()
    )
}

/// The table's lines from an edited form, each checked here first so a typo is reported
/// with its line before the server is asked.
fn parse_protections(text: &str) -> Result<Vec<String>> {
    let form = Form::parse(text)?;
    let lines: Vec<String> = form
        .get("Protections")
        .unwrap_or(&[])
        .iter()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    parse_table(&lines)?;
    Ok(lines)
}

/// `protect [-o|-i]`.
pub async fn protect(s: &mut Session, args: ProtectArgs) -> Result<()> {
    let table = ops::protections(&s.conn).await?;
    if args.output {
        let mut record = Record::new().b("exists", table.exists);
        for (i, line) in table.lines.iter().enumerate() {
            record = record.s(&format!("Protections{i}"), line);
        }
        s.out
            .emit(record, render_protections(&table.lines).trim_end());
        return Ok(());
    }
    let original = render_protections(&table.lines);
    let text = if args.input {
        read_stdin()?
    } else {
        let edited = edit_text(&original, "protect")?;
        if edited == original && table.exists {
            s.out.emit(
                Record::new().s("action", "unchanged"),
                "Protections not changed.",
            );
            return Ok(());
        }
        edited
    };
    let lines = parse_protections(&text).context("error in protections table")?;
    let saved = ops::save_protections(&s.conn, lines).await?;
    s.out.emit(
        Record::new()
            .s("action", "saved")
            .n("lines", u64::from(saved)),
        format!("Protections saved ({saved} lines)."),
    );
    Ok(())
}

/// `protects [-a] [-u USER] [-g GROUP] [-h HOST] [FILESPEC]`.
pub async fn protects(s: &mut Session, args: ProtectsArgs) -> Result<()> {
    let query = ProtectsQuery {
        all: args.all,
        user: args.user,
        group: args.group,
        host: args.host,
        path: args.path,
    };
    let lines = ops::protects(&s.conn, query).await?;
    for line in &lines {
        let kind = if line.is_group { "group" } else { "user" };
        s.out.emit(
            Record::new()
                .s("perm", &line.mode)
                .s(kind, &line.name)
                .b("isgroup", line.is_group)
                .s("host", &line.host)
                .s("depotFile", &line.path),
            format!(
                "{} {kind} {} {} {}",
                line.mode, line.name, line.host, line.path
            ),
        );
    }
    if !s.out.json && lines.is_empty() {
        s.out.note("No protections apply.");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_form_round_trips_and_checks_limits() {
        let group = Group {
            name: "dev".into(),
            users: vec!["ann".into(), "bob".into()],
            subgroups: vec!["interns".into()],
            owners: vec!["ann".into()],
            max_results: "50000".into(),
            max_scan_rows: "unset".into(),
            max_lock_time: "unlimited".into(),
            max_open_files: "100".into(),
            timeout: "43200".into(),
            updated: 1_700_000_000,
        };
        assert_eq!(
            Group::parse_form(&group.render_form(), &group).expect("parses"),
            group
        );
        let bad = group.render_form().replace("50000", "lots");
        let err = Group::parse_form(&bad, &group).unwrap_err().to_string();
        assert!(err.contains("MaxResults"), "{err}");
    }

    #[test]
    fn protections_form_round_trips_and_names_a_bad_line() {
        let lines = vec![
            "write group dev * //depot/...".to_string(),
            "list user * 10.0.0.0/8 -//depot/secret/...".to_string(),
            "super user admin * //...".to_string(),
        ];
        assert_eq!(
            parse_protections(&render_protections(&lines)).unwrap(),
            lines
        );
        let bad = render_protections(&lines).replace("list user", "lst user");
        let err = parse_protections(&bad).unwrap_err().to_string();
        assert!(err.contains("protections line 2"), "{err}");
    }
}
