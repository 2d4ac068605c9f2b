//! `print [-a -q -k -o localFile] file[revRange]...` (`-a`: every revision in the range, newest
//! first, each with its header), and `print //path@=N` for shelved content:
//! each revision's header (the record `depotFile rev change action type time fileSize`
//! tagged, the line `//depot/a#3 - edit change 7 (text)` untagged; none with `-q`) and then
//! its content, as `client-OutputText` (text) or `client-OutputBinary` (everything else) in
//! chunks, or written to `localFile` through the path files take to the client with `-o`.
//! `+k` files are shown with their keywords expanded unless `-k`.

use crate::cmd::{Cmd, CmdError, CmdResult, usage};
use crate::commands::sync::workspace;
use crate::dispatch::{self, Command};
use crate::filespec::{Place, is_depot_syntax};
use crate::transfer::to_client::{
    self, CHUNK, Outgoing, Piece, Step, ToClient, client_type, is_text, send_content,
};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::keyword::KeywordValues;
use keel_service::FileInfo;
use keel_service::command as rows;
use tokio::sync::mpsc;

pub const COMMANDS: &[Command] = &[Command {
    name: "print",
    row: rows::PRINT,
    login: true,
    flags: "a q k o:",
    usage: "print [ -a -k -q -o localFile ] file[revRange] ...",
    run: |c| Box::pin(print(c)),
}];

/// Takes `--offset=N` and `--size=N` out of the arguments (P4Java sends `--offset=0
/// --size=0`, the whole file); a part of a file is refused, naming the option.
fn take_whole_range(cmd: &mut Cmd) -> CmdResult {
    let mut kept = Vec::with_capacity(cmd.args.len());
    for arg in std::mem::take(&mut cmd.args) {
        match arg.split_once('=') {
            Some((opt @ ("--offset" | "--size"), value)) => {
                if value != "0" {
                    return Err(usage(format!(
                        "{opt}={value}: printing part of a file is not supported; \
                         print the whole file (--offset=0 --size=0, or neither)."
                    )));
                }
            }
            _ => kept.push(arg),
        }
    }
    cmd.args = kept;
    Ok(())
}

async fn print(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("print").expect("print is in the table");
    take_whole_range(cmd)?;
    let flags = dispatch::flags(cmd, command)?;
    if flags.rest.is_empty() {
        return Err(usage(format!(
            "Missing file argument.\nUsage: {}",
            command.usage
        )));
    }
    let quiet = flags.has('q');
    let raw = flags.has('k');
    let all = flags.has('a');
    let cwd = cmd.req.text("cwd").unwrap_or_default();
    let target = flags.value('o').map(|o| absolute(&cwd, o));
    // Local and client-syntax arguments need the workspace; depot paths do not.
    let place: Option<Place> = if flags.rest.iter().all(|a| is_depot_syntax(a)) {
        None
    } else {
        Some(workspace(cmd).await?.1)
    };
    let files = flags
        .rest
        .iter()
        .map(|a| match &place {
            Some(p) => p.to_keel(a),
            None => Ok(a.clone()),
        })
        .collect::<Result<Vec<_>, _>>()?;

    let (tx, mut rx) = mpsc::channel::<Piece<FileInfo>>(16);
    let service = cmd.service().clone();
    let caller = cmd.caller.clone();
    let producer = tokio::task::spawn_blocking(move || {
        let print = if all {
            keel_service::Service::print_all
        } else {
            keel_service::Service::print
        };
        print(&service, &caller, &files, &mut |info, content| {
            let what = format!("{}#{}", info.depot_file, info.head_rev);
            let which = info
                .head_type
                .filter(|_| !raw)
                .map(|t| t.expanded_keywords())
                .unwrap_or_default();
            let depot = info.depot_file.to_string();
            let user = info.user.clone();
            let (rev, change, time) = (
                info.head_rev,
                info.head_change.map(|c| c.0).unwrap_or_default(),
                info.head_time,
            );
            let keywords = (which != keel_core::Keywords::None).then(|| {
                (
                    which,
                    KeywordValues {
                        depot_file: &depot,
                        rev,
                        change,
                        time,
                        author: &user,
                    },
                )
            });
            send_content(&tx, info, &what, content, "", keywords)
        })
    });

    let mut out = ToClient::new();
    let mut text = true;
    let mut failure: Option<CmdError> = None;
    'recv: while let Some(pieces) = rx.recv().await {
        for piece in pieces.steps() {
            let step = async {
                match piece {
                    Step::Head { head, size, md5 } => {
                        text = head.head_type.as_ref().is_none_or(is_text);
                        let type_code = head.head_type.as_ref().map(client_type).unwrap_or("0");
                        if !quiet {
                            header(cmd, &head);
                        }
                        if let Some(local) = &target {
                            out.open(
                                cmd,
                                &Outgoing {
                                    local: local.clone(),
                                    type_code,
                                    writable: true,
                                    time: None,
                                    noclobber: false,
                                    size,
                                    md5,
                                },
                            );
                        }
                    }
                    Step::Data(data) => match &target {
                        Some(_) => out.write(cmd, &data).await?,
                        None => {
                            for chunk in data.chunks(CHUNK) {
                                let func = if text {
                                    "client-OutputText"
                                } else {
                                    "client-OutputBinary"
                                };
                                let m = Message::new().with("data", chunk).with("func", func);
                                cmd.conn.send(&m);
                            }
                            if cmd.conn.queued() >= 256 * 1024 {
                                cmd.conn.flush().await?;
                            }
                        }
                    },
                    Step::End => {
                        if target.is_some() {
                            out.close(cmd, &Vec::new()).await?;
                        }
                    }
                }
                Ok::<(), CmdError>(())
            };
            if let Err(e) = step.await {
                failure = Some(e);
                break 'recv;
            }
        }
    }
    drop(rx);
    let produced = producer
        .await
        .map_err(|e| to_client::transfer_failed(format!("print failed inside the server: {e}")))?;
    if let Some(e) = failure {
        return Err(e);
    }
    out.finish(cmd).await?;
    produced?;
    Ok(())
}

/// `path` made absolute against the client's `cwd` (a `-o` target as the user typed it).
fn absolute(cwd: &str, path: &str) -> String {
    let windows_abs = path.as_bytes().get(1) == Some(&b':') || path.starts_with('\\');
    if path.starts_with('/') || windows_abs || cwd.is_empty() {
        path.to_string()
    } else {
        let sep = if cwd.contains('\\') { '\\' } else { '/' };
        format!("{}{sep}{path}", cwd.trim_end_matches(['/', '\\']))
    }
}

/// The revision's header: a record tagged, a line untagged.
fn header(cmd: &mut Cmd, info: &FileInfo) {
    let action = info.head_action.map(|a| a.as_str()).unwrap_or("edit");
    let change = info.head_change.map(|c| c.0).unwrap_or_default();
    let file_type = info.head_type.map(|t| t.to_string()).unwrap_or_default();
    if cmd.tagged {
        cmd.stat([
            ("depotFile", info.depot_file.to_string()),
            ("rev", info.head_rev.to_string()),
            ("change", change.to_string()),
            ("action", action.to_string()),
            ("type", file_type),
            ("time", info.head_time.to_string()),
            ("fileSize", info.head_size.to_string()),
        ]);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("depotFile", info.depot_file.as_str())
                .text("#")
                .arg("rev", info.head_rev.to_string())
                .text(" - ")
                .arg("action", action)
                .text(" change ")
                .arg("change", change.to_string())
                .text(" (")
                .arg("type", file_type)
                .text(")"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_targets_are_made_absolute_against_cwd() {
        assert_eq!(absolute("/w/ws", "out.txt"), "/w/ws/out.txt");
        assert_eq!(absolute("/w/ws/", "/tmp/o"), "/tmp/o");
        assert_eq!(absolute("C:\\ws", "o.txt"), "C:\\ws\\o.txt");
        assert_eq!(absolute("C:\\ws", "D:\\o.txt"), "D:\\o.txt");
    }
}
