//! `user [-o|-i|-d] [-f] [NAME]` and `users`: user specs in their Perforce-style form.

use std::io::Read;

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::ops::{self, UserSpec as User};
use keel_core::{Form, UserType};

use super::spec_form::{self, EditedForm, SpecKind, is_not_found, single};
use crate::output::{Record, date, date_time};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct UserArgs {
    /// Print the spec as a form (a user not created yet shows its defaults).
    #[arg(short = 'o', conflicts_with_all = ["input", "delete"])]
    pub output: bool,
    /// Read the spec as a form from stdin and save it.
    #[arg(short = 'i', conflicts_with = "delete")]
    pub input: bool,
    /// Delete the user and every ticket of theirs.
    #[arg(short = 'd')]
    pub delete: bool,
    /// Force: edit, create or delete another user (super users; also creates users at
    /// security level 4).
    #[arg(short = 'f')]
    pub force: bool,
    /// The user (default: you).
    pub name: Option<String>,
}

pub async fn user(s: &mut Session, args: UserArgs) -> Result<()> {
    let name = args.name.clone().unwrap_or_else(|| s.settings.user.clone());
    if args.output {
        let spec = match User::fetch(s, &name).await {
            Ok(spec) => spec,
            Err(e) if is_not_found(&e) => User::fresh(s, &name),
            Err(e) => return Err(e),
        };
        s.out.emit(spec.record(), spec.render_form().trim_end());
        return Ok(());
    }
    if args.delete {
        ops::delete_user(&s.conn, &name, args.force).await?;
        s.out.emit(
            Record::new().s("user", &name).s("action", "deleted"),
            format!("User {name} deleted."),
        );
        return Ok(());
    }
    if args.input {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the user form from stdin")?;
        let form = Form::parse(&text).context("error in user specification")?;
        let named = form.get_one("User").unwrap_or("").trim().to_string();
        if named.is_empty() {
            bail!("error in user specification: no User field");
        }
        let spec = parse_form(&text, &fresh(&named)).context("error in user specification")?;
        return save(s, spec, args.force).await;
    }
    if args.force {
        bail!("-f goes with -i or -d (user -f -i < FORM)");
    }
    spec_form::edit::<User>(s, &name).await
}

/// `users`.
pub async fn users(s: &mut Session) -> Result<()> {
    spec_form::list::<User>(s).await
}

async fn save(s: &Session, spec: User, force: bool) -> Result<()> {
    let saved = ops::save_user(&s.conn, spec, force).await?;
    s.out.emit(
        saved.record().s("action", "saved"),
        format!("User {} saved.", saved.name),
    );
    Ok(())
}

fn fresh(name: &str) -> User {
    User {
        name: name.to_string(),
        email: format!("{name}@localhost"),
        full_name: name.to_string(),
        user_type: UserType::Standard.as_str().to_string(),
        ..Default::default()
    }
}

impl SpecKind for User {
    const TITLE: &'static str = "User";
    const NOUN: &'static str = "user";
    const KEY: &'static str = "User";

    fn name(&self) -> &str {
        &self.name
    }

    fn fresh(_s: &Session, name: &str) -> User {
        fresh(name)
    }

    /// Perforce `user -o` / `users` tagged field names.
    fn record(&self) -> Record {
        let mut record = Record::new()
            .s("User", &self.name)
            .s("Email", &self.email)
            .s("FullName", &self.full_name)
            .s("Type", &self.user_type)
            .nz("Update", self.updated)
            .nz("Access", self.accessed)
            .s("Password", if self.has_password { "enabled" } else { "" });
        // Perforce's tagged form: `Reviews0`, `Reviews1`, ...
        for (i, line) in self.reviews.iter().enumerate() {
            record = record.s(&format!("Reviews{i}"), line);
        }
        record
    }

    fn list_line(&self) -> String {
        format!(
            "{} <{}> ({}) accessed {}",
            self.name,
            self.email,
            self.full_name,
            date(self.accessed)
        )
    }

    fn render_form(&self) -> String {
        let mut fields = vec![("User".to_string(), vec![self.name.clone()])];
        if self.updated > 0 {
            fields.push(("Update".into(), vec![date_time(self.updated)]));
        }
        if self.accessed > 0 {
            fields.push(("Access".into(), vec![date_time(self.accessed)]));
        }
        fields.extend([
            ("Email".to_string(), single(&self.email)),
            ("FullName".to_string(), single(&self.full_name)),
            ("Type".to_string(), single(&self.user_type)),
            ("Reviews".to_string(), self.reviews.clone()),
        ]);
        format!(
            "# A Keel user specification.\n\
             #  User:     The user's name (cannot be changed here).\n\
             #  Update:   When the spec last changed (read-only).\n\
             #  Access:   When the user last ran a command (read-only).\n\
             #  Email:    The user's email address.\n\
             #  FullName: The user's full name.\n\
             #  Type:     standard, service (replicas, proxies) or operator.\n\
             #  Reviews:  Depot paths whose changes you review, one per line (-excludes).\n\
             # The password is set with `keel passwd`.\n\n{}",
            Form { fields }.render()
        )
    }

    fn parse_form(text: &str, original: &User) -> Result<User> {
        parse_form(text, original)
    }

    async fn fetch(s: &Session, name: &str) -> Result<User> {
        Ok(ops::user(&s.conn, name).await?)
    }

    async fn fetch_all(s: &Session) -> Result<Vec<User>> {
        Ok(ops::users(&s.conn).await?.all().await?)
    }

    async fn store(s: &Session, spec: User, _create_only: bool) -> Result<User> {
        Ok(ops::save_user(&s.conn, spec, false).await?)
    }

    async fn remove(s: &Session, name: &str) -> Result<()> {
        Ok(ops::delete_user(&s.conn, name, false).await?)
    }
}

fn parse_form(text: &str, original: &User) -> Result<User> {
    let form = EditedForm::parse(text, "User", &original.name, "user")?;
    let kind = form.one("Type");
    let kind = if kind.is_empty() {
        UserType::Standard
    } else {
        UserType::parse(&kind)?
    };
    Ok(User {
        name: original.name.clone(),
        email: form.one("Email"),
        full_name: form.one("FullName"),
        user_type: kind.as_str().to_string(),
        reviews: form.lines("Reviews"),
        ..original.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_round_trips_and_checks_the_type() {
        let spec = User {
            name: "build".into(),
            email: "build@ci".into(),
            full_name: "Build Farm".into(),
            user_type: "service".into(),
            updated: 1_700_000_000,
            accessed: 1_700_000_100,
            has_password: true,
            reviews: vec!["//depot/src/...".into(), "-//depot/src/gen/...".into()],
        };
        assert_eq!(
            parse_form(&spec.render_form(), &spec).expect("parses"),
            spec
        );
        let robot = spec.render_form().replace("\tservice", "\trobot");
        assert!(parse_form(&robot, &spec).is_err());
        let renamed = spec.render_form().replace("\tbuild\n", "\tother\n");
        assert!(parse_form(&renamed, &spec).is_err());
    }
}
