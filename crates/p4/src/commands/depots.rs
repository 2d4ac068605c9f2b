//! `depots`: the depots, tagged (`name`, `time`, `type`, `map`, `desc`) or as lines; `depot
//! -o/-i/-d [NAME]` (or the form in the client's editor): a depot's form. Keel's depots are
//! local depots whose files live under their own name, so a form asking for another type or
//! map is refused naming the field, an existing depot's form is only shown (Keel does not
//! change depots), and `-d` is refused (a depot's files go with `obliterate`).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::forms;
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Kind, SpecDef, Values, field, lines, one};
use keel_service::DepotInfo;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "depots",
        row: rows::LIST_DEPOTS,
        login: true,
        flags: "",
        usage: "depots",
        run: |c| Box::pin(depots(c)),
    },
    Command {
        name: "depot",
        row: rows::CREATE_DEPOT,
        login: true,
        flags: "o i d f t:",
        usage: "depot [ -d -f | -o | -i ] [ -t type ] depotname",
        run: |c| Box::pin(depot(c)),
    },
];

/// The depot form.
pub const DEPOT: SpecDef = SpecDef {
    kind: "depot",
    comment: "# A Keel depot specification.\n#\n#  Depot:       The name of the depot.\n#  \
              Owner:       The user who created this depot.\n#  Date:        The date this \
              specification was last modified.\n#  Description: A short description of the \
              depot (optional).\n#  Type:        local (the only type Keel has).\n#  Map:   \
                    Where its files live: NAME/...\n\n",
    fields: &[
        field("Depot", 251, Kind::Word, true, true, 32),
        field("Owner", 252, Kind::Word, false, false, 32),
        field("Date", 253, Kind::Date, false, true, 20),
        field("Description", 254, Kind::Text, false, false, 128),
        field("Type", 255, Kind::Word, true, false, 10),
        field("Map", 258, Kind::Line, true, false, 64),
    ],
};

fn refused(text: impl Into<String>) -> CmdError {
    CmdError::Report(Report::failed(Generic::Usage, number::FORM, text.into()))
}

fn depot_values(d: &DepotInfo) -> Values {
    let mut v: Values = vec![
        ("Depot", vec![d.name.clone()]),
        ("Owner", vec![d.owner.clone()]),
    ];
    if d.created > 0 {
        v.push(("Date", vec![dates::date_time(d.created)]));
    }
    v.push((
        "Description",
        d.description.lines().map(str::to_string).collect(),
    ));
    v.push(("Type", vec![d.kind.clone()]));
    v.push(("Map", vec![format!("{}/...", d.name)]));
    v
}

async fn depot(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("depot").expect("depot is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let name = flags.rest.first().cloned().unwrap_or_default();
    let mode = match (
        flags.has('o'),
        flags.has('i'),
        flags.has('d'),
        flags.rest.len(),
    ) {
        (true, false, false, 1) => 'o',
        (false, true, false, 0) => 'i',
        (false, false, true, 1) => 'd',
        (false, false, false, 1) => 'e',
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    };
    if let Some(t) = flags.value('t').filter(|t| *t != "local") {
        return Err(refused(format!(
            "-t {t}: Keel has local depots only (no stream, remote, spec, archive, unload or \
             graph depots)"
        )));
    }
    if mode == 'd' {
        return Err(refused(format!(
            "Depot {name} not deleted: Keel does not delete depots; obliterate its files \
             instead ('obliterate -y //{name}/...')."
        )));
    }
    if mode == 'i' {
        let form = forms::receive(cmd, &DEPOT).await?;
        return save(cmd, form).await;
    }
    let existing = existing(cmd, &name).await?;
    let values = depot_values(existing.as_ref().unwrap_or(&DepotInfo {
        name: name.clone(),
        kind: "local".to_string(),
        owner: cmd.caller.user.clone(),
        description: format!("Created by {}.", cmd.caller.user),
        created: 0,
    }));
    if mode == 'o' {
        forms::send(cmd, &DEPOT, &values);
        return Ok(());
    }
    match forms::edit(cmd, &DEPOT, &values).await? {
        forms::Edited::Changed(form) => save(cmd, form).await,
        forms::Edited::Same if existing.is_none() => save(cmd, values).await,
        forms::Edited::Same => {
            cmd.info(format!("Depot {name} not changed."));
            Ok(())
        }
    }
}

/// The depot named `name`, when it exists.
async fn existing(cmd: &mut Cmd, name: &str) -> Result<Option<DepotInfo>, CmdError> {
    let name = name.to_string();
    let depots = cmd.call(|svc, caller| svc.list_depots(caller)).await??;
    Ok(depots.into_iter().find(|d| d.name == name))
}

/// Creates the depot a form describes; an existing depot's form saves only unchanged.
async fn save(cmd: &mut Cmd, form: Values) -> CmdResult {
    let name = one(&form, "Depot");
    let kind = one(&form, "Type");
    if kind != "local" {
        return Err(refused(format!(
            "Type: {kind}: Keel has local depots only (no stream, remote, spec, archive, \
             unload or graph depots)"
        )));
    }
    let map = one(&form, "Map");
    if !map.is_empty() && map != format!("{name}/...") {
        return Err(refused(format!(
            "Map: {map}: a Keel depot's files live under its name ('{name}/...')"
        )));
    }
    let description = lines(&form, "Description").join("\n");
    if let Some(d) = existing(cmd, &name).await? {
        if d.description.trim_end() == description.trim_end() {
            cmd.info(format!("Depot {name} not changed."));
            return Ok(());
        }
        return Err(refused(format!(
            "Depot {name} exists: Keel does not change a depot's form once it is created."
        )));
    }
    let asked = name.clone();
    cmd.call(move |svc, caller| svc.create_depot(caller, &asked, &description))
        .await?
        .map_err(|e| refused(e.to_string()))?;
    cmd.report(Report::info(format!("Depot {name} saved.")));
    Ok(())
}

async fn depots(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("depots").expect("depots is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let depots = cmd.call(|svc, caller| svc.list_depots(caller)).await??;
    for d in depots {
        let map = format!("{}/...", d.name);
        let desc = if d.description.ends_with('\n') {
            d.description.clone()
        } else {
            format!("{}\n", d.description)
        };
        if cmd.tagged {
            cmd.stat([
                ("name", d.name.clone()),
                ("time", d.created.to_string()),
                ("type", d.kind.clone()),
                ("map", map),
                ("desc", desc),
            ]);
        } else {
            cmd.info(format!(
                "Depot {} {} {} {} '{}'",
                d.name,
                dates::date(d.created),
                d.kind,
                map,
                desc.lines().next().unwrap_or("")
            ));
        }
    }
    Ok(())
}
