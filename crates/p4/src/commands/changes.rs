//! `changes` (`-m -s pending|submitted|shelved -l -L -t -u -c --me`, file arguments with `@a,@b` ranges) and `describe`
//! (`-s -S -du`): changes listed newest first and described with their files, tagged
//! (`change time user client status changeType desc`, `depotFile0 action0 ...`) or as the lines
//! P4 clients print.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs::{self, cut};
use crate::dates;
use crate::dispatch::{self, Command};
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{ChangeNumber, ChangeStatus};
use keel_service::command as rows;
use keel_service::{ChangeInfo, ChangesQuery, DescribePart, FileInfo, ServiceError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "changes",
        row: rows::CHANGES,
        login: true,
        flags: "i l L t m: s: u: c:",
        usage: "changes [-i -t -l -L] [-c client] [-m max] [-s status] [-u user | --me] \
                [file[revRange] ...]",
        run: |c| Box::pin(changes(c)),
    },
    Command {
        name: "changelists",
        row: rows::CHANGES,
        login: true,
        flags: "i l L t m: s: u: c:",
        usage: "changelists [-i -t -l -L] [-c client] [-m max] [-s status] [-u user | --me] \
                [file[revRange] ...]",
        run: |c| Box::pin(changes(c)),
    },
    Command {
        name: "describe",
        row: rows::DESCRIBE,
        login: true,
        flags: "s S f d:",
        usage: "describe [-d<flags> -s -S -f] changelist# ...",
        run: |c| Box::pin(describe(c)),
    },
];

/// Characters of a description `changes` shows without `-l` (and with `-L`).
const SHORT: usize = 31;
const LONG: usize = 250;

/// A file argument with a range (`//depot/...@5,@9`): the argument with the upper end (for
/// the service) and the lowest change the range admits.
fn split_range(arg: &str) -> Result<(String, Option<u64>), CmdError> {
    let Some(at) = arg.find(['#', '@']) else {
        return Ok((arg.to_string(), None));
    };
    let (path, revs) = arg.split_at(at);
    let Some((lo, hi)) = revs.split_once(',') else {
        return Ok((arg.to_string(), None));
    };
    let marker = &lo[..1];
    let hi = if hi.starts_with(['#', '@']) {
        hi.to_string()
    } else {
        format!("{marker}{hi}")
    };
    let low = match lo {
        "#1" | "#none" | "@0" => None,
        _ => match lo.strip_prefix('@').and_then(|n| n.parse::<u64>().ok()) {
            Some(n) => Some(n),
            None => {
                return Err(usage(format!(
                    "{arg} - the lower end of a range must be a change number (@N) here."
                )));
            }
        },
    };
    Ok((format!("{path}{hi}"), low))
}

async fn changes(cmd: &mut Cmd) -> CmdResult {
    let me = cmd.args.iter().any(|a| a == "--me");
    cmd.args.retain(|a| a != "--me");
    let command = dispatch::find(&cmd.name).expect("changes is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max: u32 = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => 0,
    };
    let status = match flags.value('s') {
        None => None,
        Some("pending") => Some(ChangeStatus::Pending),
        // `-s shelved`: pending changes, those with a shelf kept below.
        Some("submitted") => Some(ChangeStatus::Submitted),
        Some("shelved") => Some(ChangeStatus::Pending),
        Some(other) => {
            return Err(usage(format!(
                "-s {other}: the status must be pending, submitted or shelved."
            )));
        }
    };
    let shelved_only = flags.value('s') == Some("shelved");
    let user = match (me, flags.value('u')) {
        (true, Some(_)) => return Err(usage("--me and -u cannot be used together.")),
        (true, None) => cmd.caller.user.clone(),
        (false, u) => u.unwrap_or_default().to_string(),
    };
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let mut files = Vec::new();
    let mut lowest: Option<u64> = None;
    for a in &args {
        let (upper, low) = split_range(&a.keel)?;
        files.push(upper);
        lowest = match (lowest, low) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    let query = ChangesQuery {
        files,
        // A lower bound and `-s shelved` are applied here, so the service lists them all.
        max: if lowest.is_some() || shelved_only {
            0
        } else {
            max
        },
        status,
        user,
        workspace: flags.value('c').unwrap_or_default().to_string(),
    };
    let limit = if max == 0 { usize::MAX } else { max as usize };
    let listed = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.changes(caller, &query, &mut |c| {
                if lowest.is_none_or(|l| c.change.0 >= l) && (shelved_only || out.len() < limit) {
                    out.push(c);
                }
                Ok(())
            })?;
            if shelved_only {
                // A shelved change: a pending one with files on its shelf.
                let mut kept = Vec::new();
                for c in out {
                    if kept.len() >= limit {
                        break;
                    }
                    let mut files = 0usize;
                    svc.describe_shelved(caller, c.change, true, &mut |p| {
                        files += usize::from(matches!(p, DescribePart::File(_)));
                        Ok(())
                    })?;
                    if files > 0 {
                        kept.push(c);
                    }
                }
                out = kept;
            }
            Ok(out)
        })
        .await?;
    let listed = match listed {
        Ok(l) => l,
        Err(ServiceError::NoSuchFiles { arg }) => {
            cmd.report(fileargs::no_such(&arg));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let long = flags.has('l');
    let length = if long {
        None
    } else if flags.has('L') {
        Some(LONG)
    } else {
        Some(SHORT)
    };
    for c in listed {
        if cmd.tagged {
            cmd.stat(change_record(&c, length));
        } else {
            cmd.info(change_line(&c, length, long, flags.has('t')));
        }
    }
    Ok(())
}

/// A change's tagged record.
fn change_record(c: &ChangeInfo, length: Option<usize>) -> Vec<(&'static str, String)> {
    vec![
        ("change", c.change.to_string()),
        ("time", c.time.to_string()),
        ("user", c.user.clone()),
        ("client", c.workspace.clone()),
        ("status", c.status.as_str().to_string()),
        ("changeType", "public".to_string()),
        (
            "desc",
            full_line(cut(&c.description, length, false), length),
        ),
    ]
}

/// A whole description ends with a newline, as P4 clients read it.
fn full_line(desc: String, length: Option<usize>) -> String {
    match length {
        None if !desc.ends_with('\n') => desc + "\n",
        _ => desc,
    }
}

/// `Change 2 on 2026/11/22 by alice@ws 'first line'` (with `-l` the whole description below).
fn change_line(c: &ChangeInfo, length: Option<usize>, long: bool, time: bool) -> String {
    let when = if time {
        dates::date_time(c.time)
    } else {
        dates::date(c.time)
    };
    let pending = match c.status {
        ChangeStatus::Pending => " *pending*",
        ChangeStatus::Submitted => "",
    };
    let head = format!(
        "Change {} on {when} by {}@{}{pending}",
        c.change, c.user, c.workspace
    );
    if long {
        let body: String = c.description.lines().map(|l| format!("\t{l}\n")).collect();
        format!("{head}\n\n{body}")
    } else {
        format!("{head} '{}'", cut(&c.description, length, true))
    }
}

async fn describe(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("describe").expect("describe is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if let Some(d) = flags.value('d')
        && !matches!(d, "u" | "n" | "c" | "s" | "w" | "b" | "l")
    {
        return Err(usage(format!("-d{d}: unknown diff flag.")));
    }
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let summary = flags.has('s');
    let shelved = flags.has('S');
    for arg in flags.rest.clone() {
        let Ok(number) = arg.trim_start_matches('@').parse::<u64>() else {
            return Err(usage(format!("{arg} - a change number is needed here.")));
        };
        let parts = cmd
            .call(move |svc, caller| {
                let mut parts = Vec::new();
                let sink = &mut |p| {
                    parts.push(p);
                    Ok(())
                };
                let r = match shelved {
                    true => svc.describe_shelved(caller, ChangeNumber(number), summary, sink),
                    false => svc.describe(caller, ChangeNumber(number), summary, sink),
                };
                r.map(|()| parts)
            })
            .await?;
        let parts = match parts {
            Ok(p) => p,
            Err(ServiceError::NoSuchChange { .. }) => {
                return Err(CmdError::Report(
                    Report::new(Severity::Failed, Generic::Unknown, number::NO_SUCH_CHANGE)
                        .text("Change ")
                        .arg("change", number.to_string())
                        .text(" unknown."),
                ));
            }
            Err(e) => return Err(e.into()),
        };
        send_description(cmd, &parts, shelved);
    }
    Ok(())
}

/// One described change: a tagged record with its files numbered, or the text.
fn send_description(cmd: &mut Cmd, parts: &[DescribePart], shelved: bool) {
    let mut header: Option<&ChangeInfo> = None;
    let mut files: Vec<&FileInfo> = Vec::new();
    let mut diffs: Vec<&str> = Vec::new();
    for p in parts {
        match p {
            DescribePart::Change(c) => header = Some(c),
            DescribePart::File(f) => files.push(f),
            DescribePart::Diff(d) => diffs.push(d),
        }
    }
    let Some(c) = header else { return };
    if cmd.tagged {
        let mut rec = change_record(c, None);
        if shelved {
            rec.push(("shelved", String::new()));
        }
        let mut fields: Vec<(String, String)> =
            rec.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        for (i, f) in files.iter().enumerate() {
            let action = f
                .action
                .or(f.head_action)
                .map(|a| a.as_str().to_string())
                .unwrap_or_default();
            let ty = f
                .file_type
                .or(f.head_type)
                .map(|t| t.to_string())
                .unwrap_or_default();
            fields.push((format!("depotFile{i}"), f.depot_file.to_string()));
            fields.push((format!("action{i}"), action));
            fields.push((format!("type{i}"), ty));
            fields.push((format!("rev{i}"), f.head_rev.to_string()));
            if f.head_digest.is_some() {
                fields.push((format!("fileSize{i}"), f.head_size.to_string()));
                fields.push((format!("digest{i}"), fileargs::md5(f)));
            }
        }
        cmd.stat(fields);
        for d in diffs {
            cmd.info(d);
        }
        return;
    }
    let pending = match c.status {
        ChangeStatus::Pending => " *pending*",
        ChangeStatus::Submitted => "",
    };
    let mut text = format!(
        "Change {} by {}@{} on {}{pending}\n\n",
        c.change,
        c.user,
        c.workspace,
        dates::date_time(c.time)
    );
    for l in c.description.lines() {
        text.push_str(&format!("\t{l}\n"));
    }
    text.push_str(if shelved {
        "\nShelved files ...\n\n"
    } else {
        "\nAffected files ...\n\n"
    });
    for f in &files {
        let action = f
            .action
            .or(f.head_action)
            .map(|a| a.as_str())
            .unwrap_or_default();
        text.push_str(&format!("... {}#{} {action}\n", f.depot_file, f.head_rev));
    }
    if !diffs.is_empty() {
        text.push_str("\nDifferences ...\n");
        for d in diffs {
            text.push('\n');
            text.push_str(d);
        }
    }
    cmd.info(text.trim_end_matches('\n'));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_into_the_upper_end_and_the_lowest_change() {
        assert_eq!(
            split_range("//depot/...@3,@7").unwrap(),
            ("//depot/...@7".to_string(), Some(3))
        );
        assert_eq!(
            split_range("//depot/...@3,7").unwrap(),
            ("//depot/...@7".to_string(), Some(3))
        );
        assert_eq!(
            split_range("//depot/a#head").unwrap(),
            ("//depot/a#head".to_string(), None)
        );
        assert!(split_range("//depot/...@lbl,@7").is_err());
    }

    #[test]
    fn change_lines_read_as_clients_print_them() {
        let c = ChangeInfo {
            change: ChangeNumber(2),
            status: ChangeStatus::Submitted,
            user: "alice".into(),
            workspace: "ws".into(),
            description: "first line\nsecond\n".into(),
            time: 1_795_869_296,
        };
        assert_eq!(
            change_line(&c, Some(SHORT), false, false),
            "Change 2 on 2026/11/28 by alice@ws 'first line second'"
        );
        assert_eq!(
            change_line(&c, None, true, true),
            "Change 2 on 2026/11/28 12:34:56 by alice@ws\n\n\tfirst line\n\tsecond\n"
        );
    }
}
