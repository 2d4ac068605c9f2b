//! `sync [-f -k -n -p -q] [file[revRange]...]` and `flush` (`sync -k`): the workspace brought
//! to the revisions asked for, files written to the client through [`crate::transfer::to_client`]
//! and the have list recorded only for the files the client confirmed it wrote (or deleted).
//!
//! Output as P4 users and scripts read it: `//depot/a#2 - updating /ws/a`, ` - added as `,
//! ` - deleted as `, ` - refreshing `; nothing to do is the warning `... - file(s)
//! up-to-date.`; tagged, one record per file (`depotFile clientFile rev action fileSize
//! change`, the first also `totalFileSize totalFileCount`).

use crate::cmd::{Cmd, CmdError, CmdResult, number};
use crate::dispatch::{self, Command};
use crate::filespec::Place;
use crate::transfer::to_client::{
    self, Echo, Outgoing, Piece, Step, ToClient, client_type, echoed, send_content,
};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::WorkspaceOptions;
use keel_core::keyword::KeywordValues;
use keel_service::command as rows;
use keel_service::{
    HaveEntry, HaveUpdate, ServiceError, SyncAction, SyncItem, SyncOptions, SyncTotals,
    WorkspaceSpec,
};
use tokio::sync::mpsc;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "sync",
        row: rows::SYNC,
        login: true,
        flags: "f k n p q",
        usage: "sync [ -f -k -n -p -q ] [ file[revRange] ... ]",
        run: |c| Box::pin(sync(c, false)),
    },
    Command {
        name: "flush",
        row: rows::SYNC,
        login: true,
        flags: "f n q",
        usage: "flush [ -f -n -q ] [ file[revRange] ... ]",
        run: |c| Box::pin(sync(c, true)),
    },
];

/// The caller's workspace: its spec (root and options) and the place its paths map in.
pub async fn workspace(cmd: &mut Cmd) -> Result<(WorkspaceSpec, Place), CmdError> {
    let name = cmd.caller.workspace.clone();
    let lookup = name.clone();
    let spec = cmd
        .call(move |svc, caller| svc.get_workspace(caller, &lookup))
        .await??;
    let place = Place {
        workspace: name,
        root: spec.root.clone(),
        cwd: cmd.req.text("cwd").unwrap_or_default(),
    };
    Ok((spec, place))
}

/// The local path of a path the service gives relative to the workspace root (or in
/// workspace syntax).
pub fn local_of(place: &Place, client_file: &str) -> String {
    let full = if client_file.starts_with("//") {
        client_file.to_string()
    } else {
        format!("//{}/{}", place.workspace, client_file)
    };
    place.local(&full).unwrap_or(full)
}

/// The file arguments of a command that works in the workspace, in the service's syntax:
/// `//...` (every depot, which the service has no name for) is the workspace's whole view,
/// which is all such a command can touch.
pub fn workspace_args(place: &Place, rest: &[String]) -> Result<Vec<String>, CmdError> {
    let mut args = place.args_or_all(rest)?;
    for a in &mut args {
        if let Some(rev) = a.strip_prefix("//...") {
            *a = format!("//{}/...{rev}", place.workspace);
        }
    }
    Ok(args)
}

/// The untagged wording of a sync action.
fn wording(action: SyncAction) -> &'static str {
    match action {
        SyncAction::Added => " - added as ",
        SyncAction::Updated => " - updating ",
        SyncAction::Refreshed => " - refreshing ",
        SyncAction::Deleted => " - deleted as ",
        SyncAction::Resolve => {
            " - is opened and not being changed; must resolve before submitting: "
        }
    }
}

/// Runs `sync` (or `flush`) with the arguments in `cmd.args` (`clean` restores files so).
pub(crate) async fn run(cmd: &mut Cmd, flush: bool) -> CmdResult {
    sync(cmd, flush).await
}

async fn sync(cmd: &mut Cmd, flush: bool) -> CmdResult {
    let command = dispatch::find(if flush { "flush" } else { "sync" }).expect("in the table");
    let flags = dispatch::flags(cmd, command)?;
    let opts = SyncOptions {
        preview: flags.has('n'),
        force: flags.has('f'),
        have_only: flush || flags.has('k'),
        populate_only: flags.has('p'),
    };
    if opts.have_only && opts.populate_only {
        return Err(crate::cmd::usage(format!(
            "-k and -p cannot be combined: one records the have list without files, the other \
             writes files without the have list.\nUsage: {}",
            command.usage
        )));
    }
    let quiet = flags.has('q');
    let (spec, place) = workspace(cmd).await?;
    let options = WorkspaceOptions::parse(&spec.options).unwrap_or_default();
    let mut args = workspace_args(&place, &flags.rest)?;
    // A bare sync from the root (or from outside it) is the whole view: the service's
    // fastest form (its have-list mark applies).
    if flags.rest.is_empty() && args == [format!("//{}/...", place.workspace)] {
        args.clear();
    }

    // Tagged output gives the totals in the first record, and a client showing progress (its
    // `progress` variable) is told the count first: a preview pass counts them. Under -q a
    // client showing progress gets a record of the totals alone (P4Python's progress
    // handlers read it); without progress -q sends no record.
    let progress = cmd
        .req
        .text("progress")
        .is_some_and(|p| !p.is_empty() && p != "0")
        && !opts.preview;
    let mut totals_first = None;
    if (cmd.tagged && !quiet) || progress {
        let files = args.clone();
        let preview = SyncOptions {
            preview: true,
            ..opts
        };
        let t = cmd
            .call(move |svc, caller| svc.sync(caller, &files, preview, &mut |_| Ok(())))
            .await??;
        totals_first = Some((t.files, t.bytes));
        if quiet && progress && cmd.tagged && t.files > 0 {
            cmd.stat([
                ("totalFileSize", t.bytes.to_string()),
                ("totalFileCount", t.files.to_string()),
            ]);
        }
        if progress && t.files > 0 {
            progress_update(cmd, &[("type", "3"), ("desc", "sync"), ("units", "2")]);
            progress_update(cmd, &[("total", &t.files.to_string())]);
        }
    }

    let (tx, mut rx) = mpsc::channel::<Piece<SyncItem>>(64);
    let service = cmd.service().clone();
    let caller = cmd.caller.clone();
    let files = args.clone();
    let transfer = !opts.preview && !opts.have_only;
    let producer =
        tokio::task::spawn_blocking(move || -> Result<SyncTotals, keel_service::ServiceError> {
            service.sync(&caller, &files, opts, &mut |event| {
                let item = event.item;
                match event.content.filter(|_| transfer) {
                    Some(content) => {
                        let what = format!("{}#{}", item.depot_file, item.rev);
                        let which = item
                            .file_type
                            .map(|t| t.expanded_keywords())
                            .unwrap_or_default();
                        let depot = item.depot_file.to_string();
                        let author = item.author.clone();
                        let (rev, change, time) = (item.rev, item.change, item.time);
                        let md5 = item.md5.clone();
                        let keywords = (which != keel_core::Keywords::None).then(|| {
                            (
                                which,
                                KeywordValues {
                                    depot_file: &depot,
                                    rev,
                                    change,
                                    time,
                                    author: &author,
                                },
                            )
                        });
                        send_content(&tx, item, &what, content, &md5, keywords)
                    }
                    None => {
                        tx.blocking_send(Piece::Head {
                            head: item,
                            size: 0,
                            md5: None,
                        })
                        .map_err(|_| keel_service::ServiceError::Cancelled)?;
                        tx.blocking_send(Piece::End)
                            .map_err(|_| keel_service::ServiceError::Cancelled)
                    }
                }
            })
        });

    let mut out = ToClient::new();
    // Files recorded without a transfer (`-k`).
    let mut recorded: Vec<HaveEntry> = Vec::new();
    let mut count = 0u64;
    let mut current: Option<(SyncItem, bool)> = None;
    let mut failure: Option<CmdError> = None;
    // Confirmed files go into the have list in batches while the transfer goes on (as the
    // native client records them), one batch in flight; the rest and the mark at the end.
    let batching = !opts.populate_only && !opts.preview;
    let mut have = HaveBatches::default();
    'recv: while let Some(pieces) = rx.recv().await {
        for piece in pieces.steps() {
            let step = async {
                match piece {
                    Step::Head { head, size, md5 } => {
                        count += 1;
                        let local = local_of(&place, &head.client_file);
                        if !quiet {
                            announce(cmd, &head, &local, count == 1, totals_first);
                        }
                        let mut writing = false;
                        if opts.preview || head.action == SyncAction::Resolve {
                            // Nothing to transfer or record.
                        } else if opts.have_only {
                            recorded.push(HaveEntry {
                                depot_file: head.depot_file.to_string(),
                                rev: head.rev,
                            });
                        } else if head.action == SyncAction::Deleted {
                            out.delete(
                                cmd,
                                &local,
                                !options.clobber,
                                options.rmdir,
                                &echo_of(&head),
                            )
                            .await?;
                        } else if let Some(t) = head.file_type {
                            let f = Outgoing {
                                local,
                                type_code: client_type(&t),
                                writable: options.allwrite || t.writable,
                                time: (options.modtime || t.modtime)
                                    .then_some(head.kept_mod_time()),
                                noclobber: !options.clobber,
                                size,
                                md5,
                            };
                            out.open(cmd, &f);
                            writing = true;
                        }
                        current = Some((head, writing));
                    }
                    Step::Data(data) => {
                        if let Some((_, true)) = &current {
                            out.write(cmd, &data).await?;
                        }
                    }
                    Step::End => {
                        if let Some((head, true)) = current.take() {
                            out.close(cmd, &echo_of(&head)).await?;
                        }
                        // After the file's own transfer, whose progress the client also shows.
                        if progress {
                            progress_update(cmd, &[("update", &count.to_string())]);
                        }
                    }
                }
                Ok::<(), CmdError>(())
            };
            if let Err(e) = step.await {
                failure = Some(e);
                break 'recv;
            }
            if batching && out.confirmed.len() >= HAVE_BATCH {
                let batch = out
                    .confirmed
                    .drain(..)
                    .filter_map(|e| have_entry(&e))
                    .collect();
                if let Err(e) = have.wait().await {
                    failure = Some(e);
                    break 'recv;
                }
                have.start(cmd, batch);
            }
        }
    }
    drop(rx);
    let produced = producer.await.map_err(|e| {
        to_client::transfer_failed(format!("the sync failed inside the server: {e}"))
    })?;
    if let Some(CmdError::Conn(e)) = failure {
        return Err(CmdError::Conn(e));
    }
    out.finish(cmd).await?;
    if progress && totals_first.is_some_and(|(files, _)| files > 0) {
        let failed = if failure.is_some() { "1" } else { "0" };
        progress_update(cmd, &[("done", failed)]);
    }
    let earlier = have.finish().await?;

    // The have list: what the client confirmed (and `-k`'s files), never a declined file.
    let mut entries = recorded;
    if !opts.populate_only && !opts.preview {
        for echo in &out.confirmed {
            if let Some(entry) = have_entry(echo) {
                entries.push(entry);
            }
        }
    }
    let mark = match &produced {
        Ok(t) if out.declined.is_empty() && failure.is_none() => t.mark.clone(),
        _ => None,
    };
    if !entries.is_empty() || mark.is_some() {
        cmd.call(move |svc, caller| svc.update_have(caller, entries, mark, earlier))
            .await??;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let totals = produced?;
    if totals.files == 0 {
        up_to_date(cmd, &flags.rest);
    }
    Ok(())
}

/// One step of the sync's progress indicator on the client (`client-Progress`: its type,
/// description and units first, then the total, each file's position, and done).
fn progress_update(cmd: &mut Cmd, fields: &[(&str, &str)]) {
    let mut m = Message::new().with("handle", "sync");
    for (k, v) in fields {
        m.set(k, v);
    }
    m.set("func", "client-Progress");
    cmd.conn.send(&m);
}

/// Confirmed files recorded in the have list per batch while a sync goes on.
const HAVE_BATCH: usize = 1000;

/// The have-list batches of one sync: the one being recorded and how many wrote before it.
#[derive(Default)]
struct HaveBatches {
    pending: Option<tokio::task::JoinHandle<Result<Result<HaveUpdate, ServiceError>, CmdError>>>,
    /// Batches recorded that wrote the have list (the mark allows for the sync's own writes).
    earlier: u64,
}

impl HaveBatches {
    /// Starts recording `batch` (after [`Self::wait`]: one batch at a time, in order).
    fn start(&mut self, cmd: &Cmd, batch: Vec<HaveEntry>) {
        let earlier = self.earlier;
        let call = cmd.call(move |svc, caller| svc.update_have(caller, batch, None, earlier));
        self.pending = Some(tokio::spawn(call));
    }

    /// Waits until the batch being recorded is recorded.
    async fn wait(&mut self) -> Result<(), CmdError> {
        if let Some(p) = self.pending.take() {
            let done = p.await.map_err(|e| {
                to_client::transfer_failed(format!("recording the have list failed: {e}"))
            })???;
            self.earlier += u64::from(done.wrote);
        }
        Ok(())
    }

    /// Waits for the last batch; the batches that wrote.
    async fn finish(mut self) -> Result<u64, CmdError> {
        self.wait().await?;
        Ok(self.earlier)
    }
}

fn echo_of(item: &SyncItem) -> Echo {
    let rev = match item.action {
        SyncAction::Deleted => 0,
        _ => item.rev,
    };
    vec![
        ("keelFile".to_string(), item.depot_file.to_string()),
        ("keelRev".to_string(), rev.to_string()),
    ]
}

fn have_entry(echo: &Echo) -> Option<HaveEntry> {
    Some(HaveEntry {
        depot_file: echoed(echo, "keelFile")?.to_string(),
        rev: echoed(echo, "keelRev")?.parse().ok()?,
    })
}

/// The file's record (tagged) or line (untagged).
fn announce(cmd: &mut Cmd, item: &SyncItem, local: &str, first: bool, totals: Option<(u64, u64)>) {
    if cmd.tagged {
        let mut fields = vec![
            ("depotFile", item.depot_file.to_string()),
            ("clientFile", local.to_string()),
            ("rev", item.rev.to_string()),
            ("action", item.action.as_str().to_string()),
        ];
        if item.action != SyncAction::Deleted {
            fields.push(("fileSize", item.size.to_string()));
            fields.push(("change", item.change.to_string()));
        }
        if first && let Some((files, bytes)) = totals {
            fields.push(("totalFileSize", bytes.to_string()));
            fields.push(("totalFileCount", files.to_string()));
        }
        cmd.stat(fields);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .arg("depotFile", item.depot_file.as_str())
                .text("#")
                .arg("rev", item.rev.to_string())
                .text(wording(item.action))
                .arg("clientFile", local),
        );
    }
}

/// The warning for a sync with nothing to do.
fn up_to_date(cmd: &mut Cmd, args: &[String]) {
    if args.is_empty() {
        cmd.report(
            Report::new(Severity::Warn, Generic::Empty, number::UP_TO_DATE)
                .text("File(s) up-to-date."),
        );
    }
    for arg in args {
        cmd.report(
            Report::new(Severity::Warn, Generic::Empty, number::UP_TO_DATE)
                .arg("argc", arg)
                .text(" - file(s) up-to-date."),
        );
    }
}
