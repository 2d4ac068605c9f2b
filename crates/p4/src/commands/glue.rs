//! The commands scripts call: `keys [-e filter] [-m max]` and `key [-d | -i] name [value]`
//! over the service's keys (the counters' own name space), and `typemap -o/-i`, the typemap
//! as a form with a `specdef` (P4Python's `fetch_typemap`/`save_typemap`); `lock`/`unlock`
//! of opened files (`//depot/a#1 - locked`), `cstat` (which changes the workspace has),
//! `review` (changes after a change or counter), `reviews` (who reviews files) and
//! `interchanges` (changes not yet integrated from a source to a target).

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::counters::{list_space, one_value};
use crate::commands::fileargs;
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::report::Severity;
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Field, Kind, SpecDef, Values, lines};
use keel_core::{ChangeNumber, ChangeRef, CounterSpace};
use keel_service::command as rows;
use keel_service::{FileInfo, IntegrateError, IntegrateRequest, Interchange, ReviewFrom};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "keys",
        row: rows::LIST_COUNTERS,
        login: true,
        flags: "e: m:",
        usage: "keys [ -e nameFilter -m max ]",
        run: |c| Box::pin(keys(c)),
    },
    Command {
        name: "key",
        row: rows::UPDATE_COUNTER,
        login: true,
        flags: "d i v",
        usage: "key [ -d | -i ] name [ value ]",
        run: |c| Box::pin(key(c)),
    },
    Command {
        name: "typemap",
        row: rows::SAVE_TYPEMAP,
        login: true,
        flags: "o i",
        usage: "typemap [ -o | -i ]",
        run: |c| Box::pin(typemap(c)),
    },
    Command {
        name: "lock",
        row: rows::LOCK,
        login: true,
        flags: "c:",
        usage: "lock [ -c changelist# ] [ file ... ]",
        run: |c| Box::pin(lock(c)),
    },
    Command {
        name: "unlock",
        row: rows::UNLOCK,
        login: true,
        flags: "c: f",
        usage: "unlock [ -c changelist# ] [ -f ] [ file ... ]",
        run: |c| Box::pin(unlock(c)),
    },
    Command {
        name: "cstat",
        row: rows::CSTAT,
        login: true,
        flags: "",
        usage: "cstat [ file[revRange] ... ]",
        run: |c| Box::pin(cstat(c)),
    },
    Command {
        name: "review",
        row: rows::REVIEW,
        login: true,
        flags: "c: t:",
        usage: "review [ -c changelist# ] [ -t counter ]",
        run: |c| Box::pin(review(c)),
    },
    Command {
        name: "reviews",
        row: rows::REVIEWS,
        login: true,
        flags: "c:",
        usage: "reviews [ -c changelist# ] [ file ... ]",
        run: |c| Box::pin(reviews(c)),
    },
    Command {
        name: "interchanges",
        row: rows::INTERCHANGES,
        login: true,
        flags: "b: r l f",
        usage: "interchanges [ -f -l -r ] { fromFile toFile | -b branch [ toFile ... ] }",
        run: |c| Box::pin(interchanges(c)),
    },
];

/// The typemap form.
pub const TYPEMAP: SpecDef = SpecDef {
    kind: "typemap",
    comment: "# A Keel typemap: the type a file added without -t gets.\n#\n#  TypeMap: \
              Lines of 'type pattern'; the last line that matches wins, '-pattern' \
              excludes.\n\n",
    fields: &[Field {
        name: "TypeMap",
        code: 601,
        kind: Kind::WordList { words: 2 },
        required: false,
        read_only: false,
        len: 64,
        values: "",
    }],
};

async fn keys(cmd: &mut Cmd) -> CmdResult {
    let listed = list_space(cmd, "keys", CounterSpace::Key).await?;
    for (name, value) in listed {
        if cmd.tagged {
            cmd.stat([("key", name), ("value", value)]);
        } else {
            cmd.info(format!("{name} = {value}"));
        }
    }
    Ok(())
}

async fn key(cmd: &mut Cmd) -> CmdResult {
    one_value(cmd, "key", CounterSpace::Key).await
}

async fn typemap(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("typemap").expect("typemap is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.has('o') == flags.has('i') || !flags.rest.is_empty() {
        return Err(usage(format!(
            "typemap: this server edits no forms itself; use -o or -i.\nUsage: {}",
            command.usage
        )));
    }
    if flags.has('i') {
        let form = forms::receive(cmd, &TYPEMAP).await?;
        // Blank lines stay: the refusal of a bad line names its number in the form.
        let table: Vec<String> = lines(&form, "TypeMap");
        cmd.call(move |svc, caller| svc.save_typemap(caller, &table))
            .await??;
        cmd.info("Typemap saved.");
        return Ok(());
    }
    let table = cmd.call(|svc, caller| svc.typemap(caller)).await??;
    let values: Values = vec![("TypeMap", table.iter().map(|l| l.to_string()).collect())];
    forms::send(cmd, &TYPEMAP, &values);
    Ok(())
}

/// The `-c` of `lock`/`unlock`: a change number or `default`.
fn change_flag(value: Option<&str>) -> Result<Option<ChangeRef>, CmdError> {
    Ok(match value {
        None => None,
        Some("default") => Some(ChangeRef::Default),
        Some(n) => Some(ChangeRef::from_number(n.parse().map_err(|_| {
            usage(format!(
                "-c {n}: the changelist must be a number or 'default'"
            ))
        })?)),
    })
}

/// A change number flag (`-c N`), refused by name when it is not one.
fn number_flag(value: Option<&str>, flag: char) -> Result<Option<ChangeNumber>, CmdError> {
    value
        .map(|n| {
            n.parse()
                .map(ChangeNumber)
                .map_err(|_| usage(format!("-{flag} {n}: not a change number")))
        })
        .transpose()
}

/// The depot paths the file arguments name (depot syntax needs no workspace).
async fn depot_args(cmd: &mut Cmd, args: &[String]) -> Result<Vec<String>, CmdError> {
    let (mapped, _) = fileargs::map(cmd, args, false).await?;
    Ok(mapped.into_iter().map(|a| a.keel).collect())
}

/// `//depot/a#1 - locked` (tagged: `depotFile`, `rev`, `action`): the revision the file was
/// opened at (an opened record's `head_rev`), `none` for an add.
fn announce_lock(cmd: &mut Cmd, f: &FileInfo, what: &str) {
    let rev = match f.head_rev {
        0 => "none".to_string(),
        n => n.to_string(),
    };
    if cmd.tagged {
        cmd.stat([
            ("depotFile", f.depot_file.to_string()),
            ("rev", rev),
            ("action", what.to_string()),
        ]);
    } else {
        cmd.info(format!("{}#{rev} - {what}", f.depot_file));
    }
}

/// The warning that nothing the arguments name is opened (or locked).
fn nothing(cmd: &mut Cmd, args: &[String], what: &str) {
    let path = if args.is_empty() {
        "[all files]".to_string()
    } else {
        args.join(" ")
    };
    cmd.report(
        Report::new(Severity::Warn, Generic::Empty, number::NOT_OPENED)
            .arg("path", path)
            .text(format!(" - {what}")),
    );
}

async fn lock(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("lock").expect("lock is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = change_flag(flags.value('c'))?;
    let files = depot_args(cmd, &flags.rest).await?;
    let locked = cmd
        .call(move |svc, caller| svc.lock(caller, &files, change))
        .await??;
    if locked.is_empty() {
        nothing(cmd, &flags.rest, "file(s) not opened on this client.");
    }
    for f in &locked {
        announce_lock(cmd, f, "locked");
    }
    Ok(())
}

async fn unlock(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("unlock").expect("unlock is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = change_flag(flags.value('c'))?;
    let files = depot_args(cmd, &flags.rest).await?;
    let force = flags.has('f');
    let unlocked = cmd
        .call(move |svc, caller| svc.unlock(caller, &files, change, force))
        .await??;
    if unlocked.is_empty() {
        nothing(cmd, &flags.rest, "file(s) not locked.");
    }
    for f in &unlocked {
        announce_lock(cmd, f, "unlocked");
    }
    Ok(())
}

async fn cstat(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("cstat").expect("cstat is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let args = if flags.rest.is_empty() {
        vec!["//...".to_string()]
    } else {
        flags.rest.clone()
    };
    let files = depot_args(cmd, &args).await?;
    let found = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.cstat(caller, &files, &mut |change, sync| {
                out.push((change, sync));
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for (change, sync) in found {
        if cmd.tagged {
            cmd.stat([
                ("change", change.0.to_string()),
                ("status", sync.as_str().to_string()),
            ]);
        } else {
            cmd.info(format!(
                "... change {}\n... status {}",
                change.0,
                sync.as_str()
            ));
        }
    }
    Ok(())
}

async fn review(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("review").expect("review is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let from = match (number_flag(flags.value('c'), 'c')?, flags.value('t')) {
        (Some(_), Some(_)) => return Err(usage("-c and -t cannot be used together.")),
        (Some(n), None) => ReviewFrom::Change(n),
        (None, Some(counter)) => ReviewFrom::Counter(counter.to_string()),
        (None, None) => ReviewFrom::All,
    };
    let found = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.review_changes(caller, from, &mut |c| {
                out.push(c);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for c in found {
        if cmd.tagged {
            cmd.stat([
                ("change", c.change.0.to_string()),
                ("user", c.user.clone()),
                ("email", c.email.clone()),
                ("name", c.full_name.clone()),
            ]);
        } else {
            cmd.info(format!(
                "Change {} {} <{}> ({})",
                c.change.0, c.user, c.email, c.full_name
            ));
        }
    }
    Ok(())
}

async fn reviews(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("reviews").expect("reviews is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change = number_flag(flags.value('c'), 'c')?;
    let files = depot_args(cmd, &flags.rest).await?;
    let found = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.reviewers(caller, change, &files, &mut |u| {
                out.push(u);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    for u in found {
        if cmd.tagged {
            cmd.stat([
                ("user", u.name.clone()),
                ("email", u.email.clone()),
                ("name", u.full_name.clone()),
            ]);
        } else {
            cmd.info(format!("{} <{}> ({})", u.name, u.email, u.full_name));
        }
    }
    Ok(())
}

async fn interchanges(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("interchanges").expect("interchanges is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let mut req = IntegrateRequest {
        reverse: flags.has('r'),
        preview: true,
        ..IntegrateRequest::default()
    };
    match (flags.value('b'), flags.rest.as_slice()) {
        (Some(branch), rest) => {
            req.branch = branch.to_string();
            req.files = depot_args(cmd, rest).await?;
        }
        (None, [_, _]) if !flags.has('r') => {
            let paths = depot_args(cmd, &flags.rest).await?;
            req.from = paths[0].clone();
            req.to = paths[1].clone();
        }
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    }
    let with_files = flags.has('f');
    let found = cmd
        .call(move |svc, caller| {
            let mut out: Vec<Interchange> = Vec::new();
            svc.interchanges(caller, &req, with_files, &mut |i| {
                out.push(i);
                Ok(())
            })
            .map(|()| out)
        })
        .await?
        .map_err(|e| match e {
            IntegrateError::Service(s) => s.into(),
            other => CmdError::Report(Report::failed(
                Generic::Usage,
                number::SERVICE,
                other.to_string(),
            )),
        })?;
    let long = flags.has('l');
    for i in found {
        let c = &i.change;
        if cmd.tagged {
            let mut rec = vec![
                ("change".to_string(), c.change.0.to_string()),
                ("time".to_string(), c.time.to_string()),
                ("user".to_string(), c.user.clone()),
                ("client".to_string(), c.workspace.clone()),
                ("status".to_string(), "submitted".to_string()),
                (
                    "desc".to_string(),
                    fileargs::cut(&c.description, None, false),
                ),
            ];
            for (n, (path, rev)) in i.files.iter().enumerate() {
                rec.push((format!("depotFile{n}"), path.to_string()));
                rec.push((format!("rev{n}"), rev.to_string()));
            }
            cmd.stat(rec);
            continue;
        }
        let head = format!(
            "Change {} on {} by {}@{}",
            c.change.0,
            crate::dates::date(c.time),
            c.user,
            c.workspace
        );
        let mut text = if long {
            let body: String = c.description.lines().map(|l| format!("\n\t{l}")).collect();
            format!("{head}\n{body}\n")
        } else {
            format!("{head} '{}'", fileargs::cut(&c.description, Some(31), true))
        };
        for (path, rev) in &i.files {
            text.push_str(&format!("\n{path}#{rev}"));
        }
        cmd.info(text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::dispatch::{find, row_of};

    #[test]
    fn reading_a_key_runs_the_reading_row() {
        let key = find("key").expect("key is in the table");
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(row_of(key, &args(&["build"])).name, "GetCounter");
        assert_eq!(row_of(key, &args(&["build", "3"])).name, "UpdateCounter");
        assert_eq!(row_of(key, &args(&["-d", "build"])).name, "UpdateCounter");
        assert_eq!(
            row_of(find("typemap").expect("typemap"), &args(&["-o"])).name,
            "GetTypemap"
        );
    }
}
