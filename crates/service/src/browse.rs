//! Read-only browsing: files, fstat, filelog, print, diff2, and the have list (`dirs.rs`: dirs).

use crate::args::FileArg;

use crate::fileinfo::{from_revision, set_head, set_opened};
use crate::integrate::edge;
use crate::paging::Cursor;
use crate::{
    Caller, Content, Diff2Result, FileInfo, HaveEntry, OpenedElsewhere, Service, ServiceError,
    SyncMark, error::bad_path,
};
use keel_core::IntegHow;
use keel_core::{DepotPath, Right};
use keel_store::{HaveMark, HaveRow, OpenedRow, PathRange, ReadTxn};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

/// Records `filelog -i` follows back to the file a revision came from.
const FOLLOWED: [IntegHow; 3] = [
    IntegHow::BranchFrom,
    IntegHow::CopyFrom,
    IntegHow::MovedFrom,
];

/// Options of `files` and `filelog`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListOptions {
    /// `files -a`: every revision, not just the selected one.
    pub all_revisions: bool,
    /// At most this many files (`files -m`) or revisions per file (`filelog -m`); 0 = all.
    pub max: u32,
}

fn parse_args(
    snap: &dyn ReadTxn,
    files: &[String],
    ws: Option<&crate::context::WorkspaceCtx>,
) -> Result<Vec<FileArg>, ServiceError> {
    if files.is_empty() {
        return Err(ServiceError::NoFileArguments { command: None });
    }
    files.iter().map(|f| FileArg::parse(f, snap, ws)).collect()
}

fn no_such(text: &str) -> ServiceError {
    ServiceError::NoSuchFiles {
        arg: text.to_string(),
    }
}

impl Service {
    /// `files`: the selected revision of each matching file.
    pub fn files(
        &self,
        caller: &Caller,
        files: &[String],
        opts: ListOptions,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let max = if opts.max == 0 {
            usize::MAX
        } else {
            opts.max as usize
        };
        let mut sent = 0;
        for arg in parse_args(snap.as_ref(), files, ws.as_ref())? {
            // `-m` reads no further than the last file it lists; an argument after that is
            // still checked to match something (its first match is enough).
            let (limit, listing) = if sent < max {
                (max - sent, true)
            } else {
                (1, false)
            };
            let matched = self.for_each_selected_upto::<ServiceError>(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                limit,
                &mut |rev| {
                    if !listing {
                        return Ok(());
                    }
                    if opts.all_revisions {
                        for older in snap
                            .file_revisions(&rev.path)?
                            .into_iter()
                            .filter(|r| r.rev <= rev.rev)
                        {
                            sink(from_revision(&older))?;
                        }
                    } else {
                        sink(from_revision(&rev))?;
                    }
                    sent += 1;
                    Ok(())
                },
            )?;
            if matched == 0 {
                return Err(no_such(&arg.text));
            }
        }
        Ok(())
    }

    /// `fstat`: head, have and open state of each matching file.
    pub fn fstat(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        for arg in parse_args(snap.as_ref(), files, ws.as_ref())? {
            // The caller's files opened with no revisions yet (a new add, a branch or move
            // target): listed among the depot's files in path order, as fstat shows them.
            let mut unsubmitted = match &ws {
                Some(w) if arg.rev.is_none() => {
                    self.unsubmitted_opens(snap.as_ref(), &who, w, &arg)?
                }
                _ => VecDeque::new(),
            };
            let mut flush_before = |upto: Option<&str>,
                                    sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>|
             -> Result<usize, ServiceError> {
                let mut sent = 0;
                while unsubmitted
                    .front()
                    .is_some_and(|o| upto.is_none_or(|p| o.path.as_str() < p))
                {
                    let open = unsubmitted.pop_front().expect("a front row");
                    who.result()?;
                    sink(crate::fileinfo::from_opened(&open, ws.as_ref()))?;
                    sent += 1;
                }
                Ok(sent)
            };
            let mut early = 0;
            let mut matched = self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |rev| {
                    early += flush_before(Some(rev.path.as_str()), sink)?;
                    let mut info = from_revision(&rev);
                    for open in snap.opened_file(&rev.path)? {
                        if ws.as_ref().is_some_and(|w| w.name() == open.workspace) {
                            set_opened(&mut info, &open);
                        } else {
                            // fstat's otherLock: a +l open or a lock held elsewhere.
                            info.exclusive_held |= open.file_type.exclusive || open.locked;
                            info.others_open.push(OpenedElsewhere {
                                user: open.user,
                                workspace: open.workspace,
                                action: open.action,
                            });
                        }
                    }
                    if let Some(ws) = &ws {
                        info.client_file = ws.client_file(&rev.path);
                        info.have_rev = self.have.get(ws.name(), &rev.path)?;
                    }
                    sink(info)
                },
            )?;
            matched += early + flush_before(None, sink)?;
            if matched == 0 {
                // A file opened for add has no revisions yet, but fstat still knows it.
                let exact = arg
                    .exact_file()
                    .and_then(|e| DepotPath::parse_owned(e).ok());
                let mine = ws.as_ref().zip(exact).and_then(|(w, exact)| {
                    snap.opened_file(&exact)
                        .ok()?
                        .into_iter()
                        .find(|o| o.workspace == w.name())
                });
                match mine {
                    Some(open) => sink(crate::fileinfo::from_opened(&open, ws.as_ref()))?,
                    None => return Err(no_such(&arg.text)),
                }
            }
        }
        Ok(())
    }

    /// The files `ws` has open that `arg` selects, `who` may list and the depot has no
    /// revision of, in path order.
    fn unsubmitted_opens(
        &self,
        snap: &dyn ReadTxn,
        who: &crate::access::Access,
        ws: &crate::context::WorkspaceCtx,
        arg: &FileArg,
    ) -> Result<VecDeque<OpenedRow>, ServiceError> {
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.opened_in_workspace(ws.name(), after, page)?)),
            |o: &OpenedRow| o.path.as_str(),
            page,
        );
        let mut out = VecDeque::new();
        while let Some(open) = cursor.next_row()? {
            who.scan()?;
            if arg.matches(open.path.as_str())
                && who.lists(open.path.as_str())
                && snap.head_revision(&open.path)?.is_none()
            {
                out.push_back(open);
            }
        }
        Ok(out)
    }

    /// `filelog`: every revision of each matching file, newest first, with its change.
    /// With `follow` (`filelog -i`), a file branched, copied or moved from another also lists the
    /// source's revisions up to the point it was taken from, and so on back.
    pub fn filelog(
        &self,
        caller: &Caller,
        files: &[String],
        max: u32,
        follow: bool,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let mut changes: HashMap<u64, (String, String, String)> = HashMap::new();
        for arg in parse_args(snap.as_ref(), files, ws.as_ref())? {
            let matched = self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |head| {
                    // (path, newest revision to list), following sources when asked.
                    let mut todo = vec![(head.path.clone(), head.rev)];
                    let mut seen = std::collections::HashSet::new();
                    while let Some((path, upto)) = todo.pop() {
                        if !seen.insert(path.clone())
                            || seen.len() > self.config.max_follow
                            || !who.lists(path.as_str())
                        {
                            continue;
                        }
                        // Records whose source the caller may not list are left out, so
                        // neither the listing nor `-i` names it.
                        let mut records = snap.integrations_into(&path)?;
                        records.retain(|r| who.lists(r.from_path.as_str()));
                        if follow {
                            let origin = records
                                .iter()
                                .filter(|r| r.to_rev <= upto && FOLLOWED.contains(&r.how))
                                .min_by_key(|r| r.to_rev);
                            if let Some(origin) = origin {
                                todo.push((origin.from_path.clone(), origin.from_end));
                            }
                        }
                        self.filelog_one(
                            snap.as_ref(),
                            &path,
                            upto,
                            max,
                            &records,
                            &mut changes,
                            sink,
                        )?;
                    }
                    Ok(())
                },
            )?;
            if matched == 0 {
                return Err(no_such(&arg.text));
            }
        }
        Ok(())
    }

    /// One file's revisions up to `upto`, newest first, each with its change and its
    /// integration records (`branch from //depot/main/a#1,#3`) in `message`.
    #[allow(clippy::too_many_arguments)]
    fn filelog_one(
        &self,
        snap: &dyn ReadTxn,
        path: &DepotPath,
        upto: u32,
        max: u32,
        records: &[keel_store::IntegRow],
        changes: &mut HashMap<u64, (String, String, String)>,
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let revs = snap
            .file_revisions(path)?
            .into_iter()
            .filter(|r| r.rev <= upto);
        let limit = if max == 0 { usize::MAX } else { max as usize };
        for rev in revs.take(limit) {
            let mut info = from_revision(&rev);
            info.integrations = records
                .iter()
                .filter(|r| r.to_rev == rev.rev)
                .map(|r| edge(r.clone()))
                .collect();
            let (description, user, workspace) = match changes.entry(rev.change.0) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => {
                    let c = snap.get_change(rev.change)?;
                    slot.insert(
                        c.map(|c| (c.description, c.user, c.workspace))
                            .unwrap_or_default(),
                    )
                }
            };
            info.description = description.clone();
            info.user = user.clone();
            info.workspace = workspace.clone();
            sink(info)?;
        }
        Ok(())
    }

    /// `print`: each selected revision's record and stored content.
    pub fn print(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(FileInfo, Content) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let (shelved, files): (Vec<String>, Vec<String>) =
            files.iter().cloned().partition(|f| f.contains("@="));
        for text in &shelved {
            self.print_shelved(caller, text, sink)?;
        }
        if files.is_empty() && !shelved.is_empty() {
            return Ok(());
        }
        for arg in parse_args(snap.as_ref(), &files, ws.as_ref())? {
            let mut printed = 0;
            self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |rev| {
                    if rev.action.is_delete() {
                        return Ok(());
                    }
                    who.require(Right::Read, rev.path.as_str())?;
                    printed += 1;
                    let mut info = from_revision(&rev);
                    // A keyword-expanded file's `$Author$`: who submitted the revision.
                    if rev.file_type.expanded_keywords() != keel_core::Keywords::None {
                        info.user = snap
                            .get_change(rev.change)?
                            .map(|c| c.user)
                            .unwrap_or_default();
                    }
                    sink(info, self.content_of(&rev)?)
                },
            )?;
            if printed == 0 {
                return Err(no_such(&arg.text));
            }
        }
        Ok(())
    }

    /// `diff2`: unified diff of two revisions.
    pub fn diff2(
        &self,
        caller: &Caller,
        left: &str,
        right: &str,
    ) -> Result<Diff2Result, ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let one = |text: &str| -> Result<keel_store::RevisionRow, ServiceError> {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            let mut found = None;
            self.for_each_selected(
                snap.as_ref(),
                &who,
                &arg,
                ws.as_ref().map(|w| w.name()),
                &mut |rev| {
                    if found.is_some() {
                        return Err(ServiceError::OneFilePerSide {
                            arg: text.to_string(),
                        });
                    }
                    found = Some(rev);
                    Ok(())
                },
            )?;
            found.ok_or_else(|| no_such(text))
        };
        let (a, b) = (one(left)?, one(right)?);
        who.require(Right::Read, a.path.as_str())?;
        who.require(Right::Read, b.path.as_str())?;
        let binary = !a.file_type.base.is_line_text() || !b.file_type.base.is_line_text();
        let identical = a.digest == b.digest;
        let diff = if identical || binary {
            String::new()
        } else {
            self.revision_diff(Some(&a), Some(&b))?
        };
        Ok(Diff2Result {
            left: from_revision(&a),
            right: from_revision(&b),
            diff,
            identical,
            binary,
        })
    }

    /// `have`: the workspace's have list (optionally limited to file arguments).
    pub fn have_list(
        &self,
        caller: &Caller,
        files: &[String],
        sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let scopes: Vec<PathRange> = if args.is_empty() {
            vec![PathRange::prefix("//")]
        } else {
            args.iter().flat_map(|a| a.scopes.clone()).collect()
        };
        let page = self.config.page_size;
        for scope in scopes {
            let mut after: Option<DepotPath> = None;
            loop {
                let rows = self.have.page(
                    ws.name(),
                    &scope,
                    after.as_ref().map(DepotPath::as_str),
                    page,
                )?;
                let mut shown = Vec::with_capacity(rows.len());
                for have in &rows {
                    who.scan()?;
                    if (!args.is_empty() && !args.iter().any(|a| a.matches(have.path.as_str())))
                        || !who.lists(have.path.as_str())
                    {
                        continue;
                    }
                    who.result()?;
                    shown.push(have);
                }
                send_have_rows(snap.as_ref(), &ws, &shown, sink)?;
                let full = rows.len() == page;
                after = rows.last().map(|r| r.path.clone());
                if !full {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Records what the client now has (after a sync wrote the files). Rev 0 forgets a file.
    ///
    /// `mark`, handed out by a whole-view sync (`SyncTotals::mark`), comes with the client's
    /// last batch once every file of that sync is recorded; `earlier` counts the batches of
    /// the same call already recorded, the sync's own writes. The mark is set only when no
    /// other write reached the have list since the sync began.
    pub fn update_have(
        &self,
        caller: &Caller,
        entries: Vec<HaveEntry>,
        mark: Option<SyncMark>,
        earlier: u64,
    ) -> Result<HaveUpdate, ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let count = entries.len() as u64;
        let mut rows = Vec::with_capacity(entries.len());
        for entry in entries {
            let path = DepotPath::parse_owned(entry.depot_file).map_err(bad_path)?;
            let client = ws.client_file(&path).unwrap_or_default();
            rows.push(HaveRow {
                path,
                rev: entry.rev,
                client,
            });
        }
        drop(snap);
        let wrote = !rows.is_empty();
        if wrote {
            self.have.apply(ws.name(), &rows)?;
        }
        let marked = match mark {
            Some(m) => {
                let writes = m.writes + earlier + u64::from(wrote);
                let mark = HaveMark {
                    change: m.change,
                    removed: m.removed,
                    view: m.view,
                };
                self.have.set_mark(ws.name(), &mark, writes)?
            }
            None => false,
        };
        Ok(HaveUpdate {
            updated: count,
            wrote,
            marked,
        })
    }
}

/// What one have-list update did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HaveUpdate {
    /// Entries recorded.
    pub updated: u64,
    /// Whether it wrote the have list (a batch with entries).
    pub wrote: bool,
    /// Whether it set the mark it carried.
    pub marked: bool,
}

/// Sends have entries `shown` of workspace `ws` (path order) as `have` describes them: each with
/// its revision's head fields (the page's revisions looked up in one query), the have revision
/// and the client file through `ws`'s view. `snap` must be taken after the entries were read,
/// so that it holds every revision they name.
pub(crate) fn send_have_rows(
    snap: &dyn ReadTxn,
    ws: &crate::context::WorkspaceCtx,
    shown: &[&HaveRow],
    sink: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
) -> Result<(), ServiceError> {
    let wanted: Vec<(&str, u32)> = shown.iter().map(|h| (h.path.as_str(), h.rev)).collect();
    let mut revisions = snap.revisions_at(&wanted)?.into_iter().peekable();
    for have in shown {
        let mut info = FileInfo::new(have.path.clone());
        if let Some(rev) = revisions.next_if(|r| r.path == have.path) {
            set_head(&mut info, &rev);
            // A keyword-expanded file's `$Author$` in the workspace: who submitted the
            // revision (as `print` gives it).
            if rev.file_type.expanded_keywords() != keel_core::Keywords::None {
                info.user = snap
                    .get_change(rev.change)?
                    .map(|c| c.user)
                    .unwrap_or_default();
            }
        }
        info.have_rev = have.rev;
        info.client_file = ws.client_file(&have.path);
        sink(info)?;
    }
    Ok(())
}
