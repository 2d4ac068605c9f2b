//! `user -o/-i/-d [-f]` and `users`: user specs over the service's users (the password is never
//! shown; `passwd` sets it).

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::forms;
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use crate::wire::specdef::{Kind, SpecDef, Values, field, one};
use keel_core::UserType;
use keel_service::UserSpec;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "user",
        row: rows::SAVE_USER,
        login: true,
        flags: "o i d f",
        usage: "user [ -f ] [ -d | -o | -i ] [ user ]",
        run: |c| Box::pin(user(c)),
    },
    Command {
        name: "users",
        row: rows::LIST_USERS,
        login: true,
        flags: "m:",
        usage: "users [ -m max ] [ user ... ]",
        run: |c| Box::pin(users(c)),
    },
];

/// The user form.
pub const USER: SpecDef = SpecDef {
    kind: "user",
    comment: "# A Keel user specification.\n#\n#  User:        The user's user name.\n#  \
              Type:        Either 'service', 'operator', or 'standard'.\n#  Email:       The \
              user's email address.\n#  Update:      The date this specification was last \
              modified.\n#  Access:      The date this user was last active.  Read only.\n#  \
              FullName:    The user's real name.\n\n",
    fields: &[
        field("User", 651, Kind::Word, true, true, 32),
        field("Type", 659, Kind::Word, false, true, 10),
        field("Email", 652, Kind::Word, true, false, 32),
        field("Update", 653, Kind::Date, false, true, 20),
        field("Access", 654, Kind::Date, false, true, 20),
        field("FullName", 655, Kind::Line, true, false, 32),
    ],
};

fn values(u: &UserSpec) -> Values {
    let mut v: Values = vec![
        ("User", vec![u.name.clone()]),
        ("Type", vec![u.user_type.as_str().to_string()]),
        ("Email", vec![u.email.clone()]),
    ];
    if u.updated > 0 {
        v.push(("Update", vec![dates::date_time(u.updated)]));
        v.push(("Access", vec![dates::date_time(u.accessed)]));
    }
    v.push(("FullName", vec![u.full_name.clone()]));
    v
}

async fn user(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("user").expect("user is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let modes = ['o', 'i', 'd'].iter().filter(|f| flags.has(**f)).count();
    if modes > 1 || flags.rest.len() > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let force = flags.has('f');
    let name = flags
        .rest
        .first()
        .cloned()
        .unwrap_or_else(|| cmd.caller.user.clone());
    if flags.has('d') {
        let target = name.clone();
        cmd.call(move |svc, caller| svc.delete_user(caller, &target, force))
            .await??;
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .text("User ")
                .arg("user", &name)
                .text(" deleted."),
        );
        return Ok(());
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &USER).await?;
        return save(cmd, form, force).await;
    }
    // `-o`, or no flag (the form goes to the client's editor).
    let lookup = name.clone();
    let found = cmd
        .call(move |svc, caller| svc.get_user(caller, &lookup))
        .await?;
    let spec = match found {
        Ok(u) => u,
        Err(keel_service::AuthError::NoSuchUser { .. }) => UserSpec {
            name: name.clone(),
            email: format!("{name}@{}", cmd.caller.host),
            full_name: name.clone(),
            ..UserSpec::default()
        },
        Err(e) => return Err(e.into()),
    };
    // A user created on first use has no Email or FullName yet: the form offers defaults.
    let mut spec = spec;
    if spec.email.is_empty() {
        spec.email = format!("{}@{}", spec.name, cmd.caller.host);
    }
    if spec.full_name.is_empty() {
        spec.full_name = spec.name.clone();
    }
    let values = values(&spec);
    if flags.has('o') {
        forms::send(cmd, &USER, &values);
        return Ok(());
    }
    match forms::edit(cmd, &USER, &values).await? {
        forms::Edited::Changed(form) => save(cmd, form, force).await,
        forms::Edited::Same => {
            cmd.info(format!("User {} not changed.", spec.name));
            Ok(())
        }
    }
}

/// Saves a user form (from `-i` or the editor).
async fn save(cmd: &mut Cmd, form: Values, force: bool) -> CmdResult {
    let user_type = UserType::parse(&one(&form, "Type")).map_err(|e| usage(e.to_string()))?;
    let spec = UserSpec {
        name: one(&form, "User"),
        email: one(&form, "Email"),
        full_name: one(&form, "FullName"),
        user_type,
        ..UserSpec::default()
    };
    let saved = cmd
        .call(move |svc, caller| svc.save_user(caller, spec, force))
        .await??;
    cmd.report(
        Report::new(Severity::Info, Generic::None, 0)
            .text("User ")
            .arg("user", &saved.name)
            .text(" saved."),
    );
    Ok(())
}

async fn users(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("users").expect("users is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max: Option<usize> = match flags.value('m') {
        Some(m) => Some(
            m.parse()
                .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        ),
        None => None,
    };
    let wanted = flags.rest.clone();
    let listed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.list_users(caller, &mut |u| {
                if wanted.is_empty() || wanted.contains(&u.name) {
                    out.push(u);
                }
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for u in listed.into_iter().take(max.unwrap_or(usize::MAX)) {
        if cmd.tagged {
            cmd.stat([
                ("User", u.name.clone()),
                ("Type", u.user_type.as_str().to_string()),
                ("Email", u.email.clone()),
                ("Update", u.updated.to_string()),
                ("Access", u.accessed.to_string()),
                ("FullName", u.full_name.clone()),
            ]);
        } else {
            cmd.info(format!(
                "{} <{}> ({}) accessed {}",
                u.name,
                u.email,
                u.full_name,
                dates::date(u.accessed)
            ));
        }
    }
    Ok(())
}
