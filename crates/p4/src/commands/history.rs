//! `filelog` (`-i -m -l -L -t`) and `diff2` (`-q -du`): a file's revisions newest first with
//! their integration records in both directions (`branch from`, `branch into`), and the
//! server-side difference of two revisions.

use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::fileargs::{self, Arg, cut, head_action, head_type, md5};
use crate::dates;
use crate::dispatch::{self, Command};
use keel_service::command as rows;
use keel_service::{FileInfo, IntegInfo, IntegrateError, ServiceError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "filelog",
        row: rows::FILELOG,
        login: true,
        flags: "i l L t m: s h p",
        usage: "filelog [ -i -l -L -t -m max ] file[revRange] ...",
        run: |c| Box::pin(filelog(c)),
    },
    Command {
        name: "diff2",
        row: rows::DIFF2,
        login: true,
        flags: "d: q t u",
        usage: "diff2 [ -d<flags> -q -t -u ] file1 file2",
        run: |c| Box::pin(diff2(c)),
    },
];

/// One integration record of a revision, as filelog shows it.
struct Integ {
    how: &'static str,
    file: String,
    start: u32,
    end: u32,
}

/// `#3` or `#2,#5` (the revisions `(start, end]`), `#none` for an empty start.
fn revs(start: u32, end: u32) -> String {
    if start + 1 >= end {
        format!("#{end}")
    } else {
        format!("#{},#{end}", start + 1)
    }
}

async fn filelog(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("filelog").expect("filelog is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    let max: u32 = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => 0,
    };
    let follow = flags.has('i');
    let length = if flags.has('l') {
        None
    } else if flags.has('L') {
        Some(250)
    } else {
        Some(31)
    };
    let time = flags.has('t');
    let (args, _) = fileargs::map(cmd, &flags.rest, false).await?;
    for Arg { given, keel } in args {
        let got = cmd
            .call(move |svc, caller| {
                let mut revs: Vec<FileInfo> = Vec::new();
                svc.filelog(caller, std::slice::from_ref(&keel), max, follow, &mut |f| {
                    revs.push(f);
                    Ok(())
                })?;
                // The records from each file into others (`branch into`).
                let mut into: Vec<IntegInfo> = Vec::new();
                let mut files: Vec<String> =
                    revs.iter().map(|r| r.depot_file.to_string()).collect();
                files.dedup();
                for file in files {
                    match svc.integrated(caller, &[file], &mut |i| {
                        if i.reverse {
                            into.push(i);
                        }
                        Ok(())
                    }) {
                        Ok(()) | Err(IntegrateError::NoIntegrations { .. }) => {}
                        Err(IntegrateError::Service(e)) => return Err(e),
                        Err(e) => {
                            return Err(ServiceError::BadArgument {
                                arg: keel.clone(),
                                reason: e.to_string(),
                            });
                        }
                    }
                }
                Ok((revs, into))
            })
            .await?;
        let Some((revs, into)) = fileargs::per_arg(cmd, &given, got)? else {
            continue;
        };
        // Consecutive revisions of one file make one record.
        let mut i = 0;
        while i < revs.len() {
            let file = revs[i].depot_file.clone();
            let mut j = i;
            while j < revs.len() && revs[j].depot_file == file {
                j += 1;
            }
            send_file(cmd, &revs[i..j], &into, length, time);
            i = j;
        }
    }
    Ok(())
}

fn integrations(rev: &FileInfo, into: &[IntegInfo]) -> Vec<Integ> {
    let mut out: Vec<Integ> = rev
        .integrations
        .iter()
        .map(|e| Integ {
            how: e.how.as_str(),
            file: e.from_path.clone(),
            start: e.from_start,
            end: e.from_end,
        })
        .collect();
    for i in into
        .iter()
        .filter(|i| i.to_file == rev.depot_file && i.to_rev == rev.head_rev)
    {
        out.push(Integ {
            how: i.how.reverse_str(),
            file: i.from_file.to_string(),
            start: i.start_from_rev.saturating_sub(1),
            end: i.end_from_rev,
        });
    }
    out
}

fn send_file(
    cmd: &mut Cmd,
    revs: &[FileInfo],
    into: &[IntegInfo],
    length: Option<usize>,
    time: bool,
) {
    let Some(first) = revs.first() else { return };
    if cmd.tagged {
        let mut rec: Vec<(String, String)> =
            vec![("depotFile".into(), first.depot_file.to_string())];
        for (n, r) in revs.iter().enumerate() {
            let change = r.head_change.map(|c| c.to_string()).unwrap_or_default();
            rec.push((format!("rev{n}"), r.head_rev.to_string()));
            rec.push((format!("change{n}"), change));
            rec.push((format!("action{n}"), head_action(r)));
            rec.push((format!("type{n}"), head_type(r)));
            rec.push((format!("time{n}"), r.head_time.to_string()));
            rec.push((format!("user{n}"), r.user.clone()));
            rec.push((format!("client{n}"), r.workspace.clone()));
            rec.push((format!("desc{n}"), cut(&r.description, length, false)));
            if r.head_digest.is_some() {
                rec.push((format!("digest{n}"), md5(r)));
                rec.push((format!("fileSize{n}"), r.head_size.to_string()));
            }
            for (m, i) in integrations(r, into).iter().enumerate() {
                rec.push((format!("how{n},{m}"), i.how.to_string()));
                rec.push((format!("file{n},{m}"), i.file.clone()));
                let srev = match i.start {
                    0 => "#none".to_string(),
                    s => format!("#{s}"),
                };
                rec.push((format!("srev{n},{m}"), srev));
                rec.push((format!("erev{n},{m}"), format!("#{}", i.end)));
            }
        }
        cmd.stat(rec);
        return;
    }
    let mut text = first.depot_file.to_string();
    for r in revs {
        let when = if time {
            dates::date_time(r.head_time)
        } else {
            dates::date(r.head_time)
        };
        let change = r.head_change.map(|c| c.to_string()).unwrap_or_default();
        text.push_str(&format!(
            "\n... #{} change {change} {} on {when} by {}@{} ({}) '{}'",
            r.head_rev,
            head_action(r),
            r.user,
            r.workspace,
            head_type(r),
            cut(&r.description, length, length.is_some())
        ));
        for i in integrations(r, into) {
            text.push_str(&format!(
                "\n... ... {} {}{}",
                i.how,
                i.file,
                revs_text(i.start, i.end)
            ));
        }
    }
    cmd.info(text);
}

fn revs_text(start: u32, end: u32) -> String {
    revs(start, end)
}

async fn diff2(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("diff2").expect("diff2 is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if let Some(d) = flags.value('d')
        && !matches!(d, "u" | "n" | "c" | "s" | "w" | "b" | "l")
    {
        return Err(usage(format!("-d{d}: unknown diff flag.")));
    }
    let [left, right] = flags.rest.as_slice() else {
        return Err(usage(format!("Usage: {}", command.usage)));
    };
    let (args, _) = fileargs::map(cmd, &[left.clone(), right.clone()], false).await?;
    let (l, r) = (args[0].keel.clone(), args[1].keel.clone());
    let result = cmd
        .call(move |svc, caller| svc.diff2(caller, &l, &r))
        .await?;
    let d = match result {
        Ok(d) => d,
        Err(ServiceError::NoSuchFiles { arg }) => {
            let given = args
                .iter()
                .find(|a| a.keel == arg)
                .map_or(arg.clone(), |a| a.given.clone());
            cmd.report(fileargs::no_such(&given));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let status = if d.identical {
        "identical"
    } else if d.left.head_type != d.right.head_type {
        "types"
    } else {
        "content"
    };
    if flags.has('q') && d.identical {
        return Ok(());
    }
    if cmd.tagged {
        cmd.stat([
            ("status", status.to_string()),
            ("depotFile", d.left.depot_file.to_string()),
            ("rev", d.left.head_rev.to_string()),
            ("type", head_type(&d.left)),
            ("depotFile2", d.right.depot_file.to_string()),
            ("rev2", d.right.head_rev.to_string()),
            ("type2", head_type(&d.right)),
        ]);
    } else {
        cmd.info(format!(
            "==== {}#{} ({}) - {}#{} ({}) ==== {status}",
            d.left.depot_file,
            d.left.head_rev,
            head_type(&d.left),
            d.right.depot_file,
            d.right.head_rev,
            head_type(&d.right)
        ));
    }
    if !flags.has('q') && !d.diff.is_empty() {
        cmd.info(d.diff.trim_end_matches('\n'));
    }
    if !flags.has('q') && d.binary && !d.identical {
        cmd.info("(binary files differ)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_ranges_read_as_filelog_prints_them() {
        assert_eq!(revs(0, 1), "#1");
        assert_eq!(revs(1, 3), "#2,#3");
        assert_eq!(revs(2, 3), "#3");
    }
}
