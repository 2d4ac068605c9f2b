//! `diff [-d<flags>] [-f] [-sa | -se] [file ...]`: the client's files against the revisions
//! the workspace has, compared where the files are, on the client.
//!
//! A content diff sends the had revision to the client as a diff file (`client-OpenDiff`,
//! `client-WriteDiff`, `client-CloseDiff`), and the client runs its diff with the `-d` flags
//! and prints it. `-sa` (opened files that differ or are missing) and `-se` (unopened files
//! that differ) list names only: the client compares each local file with the had revision's
//! MD5 digest (`client-CheckFile` with `digest`) and says `same`, `exists` (different) or
//! `missing`.

use crate::client_ops::{self, BATCH};
use crate::cmd::{Cmd, CmdResult, usage};
use crate::commands::workspace::Work;
use crate::dispatch::{self, Command};
use crate::transfer::to_client::client_type;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::{FileAction, FileType};
use keel_service::FileInfo;
use keel_service::command as rows;
use std::collections::HashMap;
use std::io::Read;

pub const COMMANDS: &[Command] = &[Command {
    name: "diff",
    row: rows::PRINT,
    login: true,
    flags: "d: f s: t m:",
    usage: "diff [ -d<flags> -f -m max -Od -s<flag> -t ] [ file[rev] ... ]",
    run: |c| Box::pin(diff(c)),
}];

/// Bytes of a had revision sent per `client-WriteDiff`.
const CHUNK: usize = 64 * 1024;

/// What `diff` compares: a file the workspace has, opened or not.
struct Had {
    info: FileInfo,
    local: String,
}

async fn diff(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("diff").expect("diff is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let select = flags.value('s').map(str::to_string);
    if let Some(s) = &select
        && !matches!(s.as_str(), "a" | "e")
    {
        return Err(usage(format!(
            "-s{s}: this server lists -sa (opened files that differ or are missing) and -se \
             (unopened files that differ)."
        )));
    }
    let max: usize = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => usize::MAX,
    };
    let work = Work::load(cmd).await?;
    let files = work.place.args_or_all(&flags.rest)?;
    let every = flags.has('f') || select.as_deref() == Some("e");
    let (files2, files3) = (files.clone(), files.clone());
    let had = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.have_list(caller, &files2, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    let opened = cmd
        .call(move |svc, caller| {
            let mut out = HashMap::new();
            svc.opened(caller, &files3, false, "", None, &mut |f| {
                out.insert(
                    f.depot_file.to_string(),
                    f.action.unwrap_or(FileAction::Edit),
                );
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    let mut chosen: Vec<Had> = Vec::new();
    for info in had {
        let action = opened.get(info.depot_file.as_str()).copied();
        let wanted = match select.as_deref() {
            Some("a") => action.is_some_and(|a| !a.is_delete()),
            Some(_) => action.is_none(),
            None => every || action.is_some_and(|a| !a.is_delete()),
        };
        let Some(rel) = info.client_file.clone() else {
            continue;
        };
        if wanted && chosen.len() < max {
            chosen.push(Had {
                local: work.local_of_rel(&rel),
                info,
            });
        }
    }
    match select {
        Some(_) => list_differing(cmd, &chosen, flags.value('s') == Some("a")).await,
        None => {
            let diff_flags = flags.value('d').unwrap_or_default().to_string();
            for h in &chosen {
                content_diff(cmd, h, &diff_flags).await?;
            }
            Ok(())
        }
    }
}

/// `-sa` / `-se`: the names of the chosen files that differ (and, with `missing_too`, those
/// missing) from their had revision.
async fn list_differing(cmd: &mut Cmd, chosen: &[Had], missing_too: bool) -> CmdResult {
    const CONFIRM: &str = "dm-KeelCompared";
    for batch in chosen.chunks(BATCH) {
        let msgs: Vec<Message> = batch
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let t = h.info.head_type.unwrap_or(FileType::TEXT);
                Message::new()
                    .with("path", &h.local)
                    .with("type", client_type(&t))
                    .with("digest", h.info.head_md5.to_ascii_uppercase())
                    .with("keelKey", i.to_string())
                    .with("confirm", CONFIRM)
                    .with("func", "client-CheckFile")
            })
            .collect();
        for reply in client_ops::exchange(cmd, &msgs).await? {
            if reply.func().as_deref() != Some(CONFIRM) {
                continue;
            }
            let status = reply.text("status").unwrap_or_default();
            let differs = status == "exists" || (missing_too && status == "missing");
            let Some(h) = reply
                .text("keelKey")
                .and_then(|k| k.parse::<usize>().ok())
                .and_then(|i| batch.get(i))
            else {
                continue;
            };
            if !differs {
                continue;
            }
            if cmd.tagged {
                cmd.stat([
                    ("depotFile", h.info.depot_file.to_string()),
                    ("clientFile", h.local.clone()),
                    ("rev", h.info.have_rev.to_string()),
                    (
                        "type",
                        h.info.head_type.unwrap_or(FileType::TEXT).to_string(),
                    ),
                ]);
            } else {
                cmd.report(Report::new(Severity::Info, Generic::None, 0).arg("path", &h.local));
            }
        }
    }
    Ok(())
}

/// One file's content diff: the header line, then the had revision as the client's diff file.
async fn content_diff(cmd: &mut Cmd, h: &Had, diff_flags: &str) -> CmdResult {
    let t = h.info.head_type.unwrap_or(FileType::TEXT);
    let rev = h.info.have_rev;
    if cmd.tagged {
        cmd.stat([
            ("depotFile", h.info.depot_file.to_string()),
            ("clientFile", h.local.clone()),
            ("rev", rev.to_string()),
            ("type", t.to_string()),
        ]);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .text("==== ")
                .arg("depotFile", h.info.depot_file.as_str())
                .text(format!("#{rev} - "))
                .arg("localPath", &h.local)
                .text(" ===="),
        );
    }
    if h.info.head_md5.is_empty() {
        // A had revision without content (deleted): nothing to compare.
        return Ok(());
    }
    let spec = format!("{}#{rev}", h.info.depot_file);
    let content = cmd
        .call(move |svc, caller| {
            let mut bytes = Vec::new();
            svc.print(caller, std::slice::from_ref(&spec), &mut |_, content| {
                let mut reader = content.blob.into_content_reader().map_err(|e| {
                    keel_service::ServiceError::BadArgument {
                        arg: spec.clone(),
                        reason: e.to_string(),
                    }
                })?;
                reader.read_to_end(&mut bytes).map_err(|e| {
                    keel_service::ServiceError::BadArgument {
                        arg: spec.clone(),
                        reason: e.to_string(),
                    }
                })?;
                Ok(())
            })
            .map(|()| bytes)
        })
        .await??;
    const HANDLE: &str = "keelDiff";
    cmd.conn.send(
        &Message::new()
            .with("path", &h.local)
            .with("handle", HANDLE)
            .with("type", client_type(&t))
            .with("diffFlags", diff_flags)
            .with("func", "client-OpenDiff"),
    );
    for chunk in content.chunks(CHUNK) {
        cmd.conn.send(
            &Message::new()
                .with("handle", HANDLE)
                .with("data", chunk)
                .with("func", "client-WriteDiff"),
        );
    }
    cmd.conn.send(
        &Message::new()
            .with("handle", HANDLE)
            .with("func", "client-CloseDiff"),
    );
    // The client prints the diff itself; the fence keeps the next file's lines after it.
    client_ops::exchange(cmd, &[]).await.map(|_| ())
}
