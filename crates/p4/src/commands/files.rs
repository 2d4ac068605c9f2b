//! `files` (`-a -e -m`), `dirs` (`-D`) and `fstat` (`-T -Ol -Op -Ro -Rh -e -m`): the depot's
//! files and directories and each file's head, have and open state. An argument that matches
//! nothing is a warning (`//depot/x - no such file(s).`) and the others still run.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::fileargs::{self, Arg, head_action, head_type, md5};
use crate::commands::open::work_rev;
use crate::dispatch::{self, Command};
use crate::filespec::Place;
use keel_core::View;
use keel_service::command as rows;
use keel_service::{DirsOptions, FileInfo, ListOptions};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "files",
        row: rows::FILES,
        login: true,
        flags: "a A e m: U",
        usage: "files [ -a -e ] [ -m max ] file[revRange] ...",
        run: |c| Box::pin(files(c)),
    },
    Command {
        name: "dirs",
        row: rows::DIRS,
        login: true,
        flags: "C D H",
        usage: "dirs [ -D ] dir[revRange] ...",
        run: |c| Box::pin(dirs(c)),
    },
    Command {
        name: "fstat",
        row: rows::FSTAT,
        login: true,
        flags: "F: T: O: R: e: m: s",
        usage: "fstat [ -F filter -T fields -m max -e change -Ol -Op -Ro -Rh ] file[rev] ...",
        run: |c| Box::pin(fstat(c)),
    },
];

fn max_of(value: Option<&str>) -> Result<usize, crate::cmd::CmdError> {
    match value {
        Some(m) => m
            .parse::<usize>()
            .map(|m| if m == 0 { usize::MAX } else { m })
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number"))),
        None => Ok(usize::MAX),
    }
}

async fn files(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("files").expect("files is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let max = max_of(flags.value('m'))?;
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let all = flags.has('a');
    let no_deleted = flags.has('e');
    let mut sent = 0usize;
    for Arg { given, keel } in args {
        if sent >= max {
            break;
        }
        let left = max - sent;
        let got = cmd
            .call(move |svc, caller| {
                let mut out = Vec::new();
                // The service stops at `-m` itself unless `-e` leaves some files out.
                let cap = match (no_deleted, u32::try_from(left)) {
                    (false, Ok(n)) => n,
                    _ => 0,
                };
                let opts = ListOptions {
                    all_revisions: all,
                    max: cap,
                };
                svc.files(caller, &[keel], opts, &mut |f| {
                    if out.len() < left
                        && !(no_deleted && f.head_action.is_some_and(|a| a.is_delete()))
                    {
                        out.push(f);
                    }
                    Ok(())
                })
                .map(|()| out)
            })
            .await?;
        let Some(found) = fileargs::per_arg(cmd, &given, got)? else {
            continue;
        };
        for f in found {
            sent += 1;
            if cmd.tagged {
                cmd.stat([
                    ("depotFile", f.depot_file.to_string()),
                    ("rev", f.head_rev.to_string()),
                    ("change", change_of(&f)),
                    ("action", head_action(&f)),
                    ("type", head_type(&f)),
                    ("time", f.head_time.to_string()),
                ]);
            } else {
                cmd.info(format!(
                    "{}#{} - {} change {} ({})",
                    f.depot_file,
                    f.head_rev,
                    head_action(&f),
                    change_of(&f),
                    head_type(&f)
                ));
            }
        }
    }
    Ok(())
}

fn change_of(f: &FileInfo) -> String {
    f.head_change.map(|c| c.to_string()).unwrap_or_default()
}

/// An argument in depot syntax: as given when it is, else through the workspace's view.
fn to_depot(place: Option<&Place>, view: Option<&View>, arg: &Arg) -> Option<String> {
    if arg.given.starts_with("//")
        && place.is_none_or(|p| !arg.given.starts_with(&format!("//{}/", p.workspace)))
    {
        return Some(arg.given.clone());
    }
    let (path, rev) = crate::filespec::split_rev(&arg.keel);
    Some(format!("{}{rev}", view?.translate_back(path)?))
}

fn workspace_view(cmd: &Cmd) -> impl Future<Output = Option<View>> + Send + 'static {
    let name = cmd.caller.workspace.clone();
    let lookup =
        (!name.is_empty()).then(|| cmd.call(move |svc, caller| svc.get_workspace(caller, &name)));
    async move {
        let ws = lookup?.await.ok()?.ok()?;
        View::parse_lines(&ws.view).ok()
    }
}

async fn dirs(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("dirs").expect("dirs is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let (args, place) = fileargs::map(cmd, &flags.rest, false).await?;
    let place = fileargs::place_if_any(cmd, place).await;
    let view = match args
        .iter()
        .any(|a| !a.keel.starts_with("//") || a.given != a.keel)
        || place.is_some()
    {
        true => workspace_view(cmd).await,
        false => None,
    };
    let opts = DirsOptions {
        include_deleted: flags.has('D'),
    };
    for arg in &args {
        let Some(depot) = to_depot(place.as_ref(), view.as_ref(), arg) else {
            cmd.report(fileargs::no_such(&arg.given));
            continue;
        };
        let got = cmd
            .call(move |svc, caller| {
                let mut out = Vec::new();
                svc.dirs(caller, &[depot], opts, &mut |d| {
                    out.push(d);
                    Ok(())
                })
                .map(|()| out)
            })
            .await?;
        let Some(found) = fileargs::per_arg(cmd, &arg.given, got)? else {
            continue;
        };
        if found.is_empty() {
            cmd.report(fileargs::no_such(&arg.given));
        }
        for d in found {
            if cmd.tagged {
                cmd.stat([("dir", d)]);
            } else {
                cmd.info(d);
            }
        }
    }
    Ok(())
}

/// What `fstat`'s flags select and show.
struct FstatShow {
    fields: Option<Vec<String>>,
    sizes: bool,
    local: bool,
    opened_only: bool,
    have_only: bool,
    change: Option<u64>,
    /// `-F`: only the files whose fields pass.
    filter: Option<keel_core::record_filter::RecordFilter>,
}

async fn fstat(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("fstat").expect("fstat is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let mut show = FstatShow {
        fields: flags.value('T').map(|t| {
            t.split([',', ' '])
                .filter(|f| !f.is_empty())
                .map(str::to_string)
                .collect()
        }),
        sizes: false,
        local: false,
        opened_only: false,
        have_only: false,
        change: None,
        filter: flags
            .value('F')
            .map(|text| {
                keel_core::record_filter::RecordFilter::parse(text)
                    .map_err(|e| usage(format!("-F {text}: {e}")))
            })
            .transpose()?,
    };
    for o in flags.values('O') {
        for c in o.chars() {
            match c {
                'l' => show.sizes = true,
                'p' => show.local = true,
                // Attributes, resolve records and the like: Keel has none to add.
                'a' | 'r' | 'i' | 'd' | 's' | 'e' | 'h' => {}
                other => return Err(usage(format!("-O{other}: unknown output option."))),
            }
        }
    }
    for r in flags.values('R') {
        for c in r.chars() {
            match c {
                'o' => show.opened_only = true,
                'h' => show.have_only = true,
                other => return Err(usage(format!("-R{other}: unknown file selection."))),
            }
        }
    }
    if let Some(e) = flags.value('e') {
        show.change = Some(
            e.trim_start_matches('@')
                .parse()
                .map_err(|_| usage(format!("-e {e}: a change number is needed here.")))?,
        );
    }
    let max = max_of(flags.value('m'))?;
    let (args, place) = fileargs::map(cmd, &flags.rest, false).await?;
    let place = fileargs::place_if_any(cmd, place).await;
    let mut sent = 0usize;
    for Arg { given, keel } in args {
        if sent >= max {
            break;
        }
        let got = cmd
            .call(move |svc, caller| {
                let mut out = Vec::new();
                svc.fstat(caller, &[keel], &mut |f| {
                    out.push(f);
                    Ok(())
                })
                .map(|()| out)
            })
            .await?;
        let Some(found) = fileargs::per_arg(cmd, &given, got)? else {
            continue;
        };
        let mut shown = 0;
        for f in found {
            if sent >= max {
                break;
            }
            if (show.opened_only && f.action.is_none())
                || (show.have_only && f.have_rev == 0)
                || show
                    .change
                    .is_some_and(|c| f.head_change.is_none_or(|h| h.0 != c))
            {
                continue;
            }
            let Some(record) = fstat_record(&f, place.as_ref(), &cmd.caller.workspace, &show)
            else {
                continue;
            };
            cmd.stat(record);
            sent += 1;
            shown += 1;
        }
        if shown == 0
            && (show.opened_only
                || show.have_only
                || show.change.is_some()
                || show.filter.is_some())
        {
            let mut r = fileargs::no_such(&given);
            if show.opened_only {
                r = crate::wire::report::Report::new(
                    crate::wire::report::Severity::Warn,
                    crate::wire::report::Generic::Empty,
                    crate::cmd::number::NOT_OPENED,
                )
                .arg("path", &given)
                .text(" - file(s) not opened on this client.");
            }
            cmd.report(r);
        }
    }
    Ok(())
}

/// The file's fstat record, or `None` when `-F` filters it out (the filter sees every field,
/// `-T` then picks the ones shown).
fn fstat_record(
    f: &FileInfo,
    place: Option<&Place>,
    workspace: &str,
    show: &FstatShow,
) -> Option<Vec<(String, String)>> {
    let mut rec: Vec<(&str, String)> = vec![("depotFile", f.depot_file.to_string())];
    let local = fileargs::local_path(place, f);
    let client = fileargs::client_syntax(place, workspace, f);
    if let Some(path) = local.clone().or(client) {
        rec.push(("clientFile", path));
    }
    if f.client_file.is_some() {
        rec.push(("isMapped", String::new()));
    }
    if show.local
        && let Some(path) = local
    {
        rec.push(("path", path));
    }
    if f.head_rev > 0 {
        rec.push(("headAction", head_action(f)));
        rec.push(("headType", head_type(f)));
        rec.push(("headTime", f.head_time.to_string()));
        rec.push(("headRev", f.head_rev.to_string()));
        rec.push(("headChange", change_of(f)));
        rec.push(("headModTime", f.kept_mod_time().to_string()));
    }
    if f.have_rev > 0 {
        rec.push(("haveRev", f.have_rev.to_string()));
    }
    if let Some(action) = f.action {
        rec.push(("action", action.as_str().to_string()));
        rec.push(("change", f.change.to_string()));
        rec.push((
            "type",
            f.file_type.map(|t| t.to_string()).unwrap_or_default(),
        ));
        rec.push(("actionOwner", f.user.clone()));
        // The revision the open works on (`#1` for a new add), as in `add` and `opened`.
        rec.push(("workRev", work_rev(f).to_string()));
        if f.unresolved {
            rec.push(("unresolved", String::new()));
        }
        if f.locked {
            rec.push(("ourLock", String::new()));
        }
        if let Some(m) = &f.move_file {
            rec.push(("movedFile", m.to_string()));
        }
    }
    let mut numbered: Vec<(String, String)> = Vec::new();
    if !f.others_open.is_empty() {
        for (i, o) in f.others_open.iter().enumerate() {
            numbered.push((
                format!("otherOpen{i}"),
                format!("{}@{}", o.user, o.workspace),
            ));
            numbered.push((format!("otherAction{i}"), o.action.as_str().to_string()));
        }
        rec.push(("otherOpen", f.others_open.len().to_string()));
        if f.exclusive_held {
            rec.push(("otherLock", String::new()));
        }
    }
    if show.sizes && f.head_digest.is_some() {
        rec.push(("fileSize", f.head_size.to_string()));
        rec.push(("digest", md5(f)));
    }
    let all = rec
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain(numbered);
    let all: Vec<(String, String)> = all.collect();
    if show.filter.as_ref().is_some_and(|f| !f.matches(&all)) {
        return None;
    }
    let all = all.into_iter();
    Some(match &show.fields {
        Some(keep) => all
            .filter(|(k, _)| {
                keep.iter().any(|want| {
                    k == want
                        || k.strip_prefix(want.as_str())
                            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
                })
            })
            .collect(),
        None => all.collect(),
    })
}
