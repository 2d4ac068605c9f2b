//! `annotate`: each line of a file revision with the revision (or change) that added it,
//! following branch and integration history into source files when asked.
//!
//! A file's revisions in the range are read oldest first and pushed through one
//! [`keel_core::Annotation`] (one line diff per revision). With [`AnnotateFollow`], a
//! revision that came from other files also diffs against the annotations of the sources it
//! records (each annotated once per source revision, at most `max_follow` of them per file),
//! so lines it took from a source keep the source's origin. Sources the caller may not read
//! are not followed and are never named.

use std::collections::HashMap;
use std::rc::Rc;

use crate::access::Access;
use crate::args::FileArg;
use crate::fileinfo::from_revision;
use crate::rev_range::RangeArg;
use crate::{Caller, FileInfo, Service, ServiceError};
use keel_core::{
    Annotation, BaseType, ChangeNumber, DepotPath, IntegHow, LineCompare, LineTable, Right,
};
use keel_store::{ReadTxn, RevisionRow};

/// Which integration records `annotate` follows into their sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnnotateFollow {
    /// The file's own revisions only.
    #[default]
    None,
    /// `-i`: also the files it was branched, copied or moved from.
    Branches,
    /// `-I`: every integration (merges and edits too).
    All,
}

impl AnnotateFollow {
    fn follows(self, how: IntegHow) -> bool {
        match self {
            AnnotateFollow::None => false,
            AnnotateFollow::Branches => matches!(
                how,
                IntegHow::BranchFrom | IntegHow::CopyFrom | IntegHow::MovedFrom
            ),
            AnnotateFollow::All => !matches!(how, IntegHow::Ignored | IntegHow::DeleteFrom),
        }
    }
}

/// Options of `annotate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotateOptions {
    /// `-a`: also the lines later revisions removed, each with the range of revisions that had it.
    pub all: bool,
    pub follow: AnnotateFollow,
    /// `-t`: annotate binary files as text too.
    pub binary_as_text: bool,
    /// `-db`, `-dw`, `-dl`: which differences between lines are not changes. A line then
    /// keeps the origin of the first revision that had it in any such form, and shows the
    /// text of the annotated revision.
    pub compare: LineCompare,
}

/// The revision a line came from (or, for an annotation's upper end, the last that had it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineOrigin {
    pub path: DepotPath,
    pub rev: u32,
    pub change: ChangeNumber,
    /// The change's user.
    pub user: String,
    /// When the revision was submitted (seconds since the epoch).
    pub time: i64,
}

/// One annotated line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotatedText {
    pub lower: Rc<LineOrigin>,
    pub upper: Rc<LineOrigin>,
    /// The line without its terminator.
    pub text: String,
}

/// What `annotate` streams: each file's header, then its lines.
#[derive(Clone, Debug)]
pub enum AnnotatePart {
    /// The annotated revision; `binary` when its lines are left out (a binary file without `-t`).
    File {
        info: Box<FileInfo>,
        binary: bool,
    },
    Line(AnnotatedText),
}

/// The state of one file's annotation: the lines met, the revisions tagged, the sources
/// already annotated.
struct Walk<'a> {
    snap: &'a dyn ReadTxn,
    who: &'a Access,
    opts: AnnotateOptions,
    table: LineTable,
    origins: Vec<Rc<LineOrigin>>,
    users: HashMap<ChangeNumber, String>,
    sources: HashMap<(DepotPath, u32), Rc<Annotation<usize>>>,
    followed: usize,
}

impl Service {
    /// `annotate`: for each file argument (a revision or a range `#a,#b`/`@a,@b`), the selected
    /// revision's header and its lines, each with the revision that added it (the range's first
    /// revision for lines older than the range).
    pub fn annotate(
        &self,
        caller: &Caller,
        files: &[String],
        opts: AnnotateOptions,
        sink: &mut dyn FnMut(AnnotatePart) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        if files.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("annotate"),
            });
        }
        let ranges = files
            .iter()
            .map(|f| RangeArg::parse(f))
            .collect::<Result<Vec<_>, _>>()?;
        for range in ranges {
            let arg = FileArg::parse(&range.upper, snap.as_ref(), ws.as_ref())?;
            let mut annotated = 0;
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
                    let mut revs = snap.file_revisions(&rev.path)?;
                    revs.reverse();
                    revs.retain(|r| r.rev <= rev.rev);
                    let Some(first) = range.first_rev(&revs, rev.rev)? else {
                        return Ok(());
                    };
                    annotated += 1;
                    let binary = rev.file_type.base == BaseType::Binary && !opts.binary_as_text;
                    sink(AnnotatePart::File {
                        info: Box::new(from_revision(&rev)),
                        binary,
                    })?;
                    if binary {
                        return Ok(());
                    }
                    let mut walk = Walk {
                        snap: snap.as_ref(),
                        who: &who,
                        opts,
                        table: LineTable::comparing(opts.compare),
                        origins: Vec::new(),
                        users: HashMap::new(),
                        sources: HashMap::new(),
                        followed: 0,
                    };
                    let follow = range.lower.is_none();
                    let ann = self.annotate_revs(&mut walk, &revs, first, opts.all, follow)?;
                    // Lines that compare equal share the text first met: the annotated
                    // revision's own lines are shown as it has them.
                    let own = match opts.compare {
                        LineCompare::Exact => None,
                        _ => self.revision_text(Some(&rev))?,
                    };
                    let mut own_lines = own
                        .as_deref()
                        .map(|t| t.strip_suffix('\n').unwrap_or(t).split('\n'));
                    for line in ann.lines() {
                        let mine = match own_lines.as_mut() {
                            Some(lines) if line.alive => lines.next(),
                            _ => None,
                        };
                        let text = mine.unwrap_or_else(|| walk.table.text(line.line));
                        sink(AnnotatePart::Line(AnnotatedText {
                            lower: walk.origins[line.lower].clone(),
                            upper: walk.origins[line.upper].clone(),
                            text: text.to_string(),
                        }))?;
                    }
                    Ok(())
                },
            )?;
            if annotated == 0 {
                if range.lower.is_some() {
                    return Err(ServiceError::BadArgument {
                        arg: range.text.clone(),
                        reason: format!("{} - no revision(s) in that range", range.text),
                    });
                }
                return Err(ServiceError::NoSuchFiles { arg: range.text });
            }
        }
        Ok(())
    }

    /// The annotation of `revs` (one file's, oldest first) from revision `first` on; with
    /// `follow`, revisions that came from other files diff against their sources too.
    fn annotate_revs(
        &self,
        walk: &mut Walk<'_>,
        revs: &[RevisionRow],
        first: u32,
        keep_deleted: bool,
        follow: bool,
    ) -> Result<Annotation<usize>, ServiceError> {
        let mut ann = Annotation::new(keep_deleted);
        let Some(path) = revs.first().map(|r| r.path.clone()) else {
            return Ok(ann);
        };
        let records = if follow && walk.opts.follow != AnnotateFollow::None {
            let mut records = walk.snap.integrations_into(&path)?;
            records.retain(|r| {
                walk.opts.follow.follows(r.how) && walk.who.allows_read(r.from_path.as_str())
            });
            records
        } else {
            Vec::new()
        };
        for rev in revs.iter().filter(|r| r.rev >= first) {
            walk.who.scan()?;
            let text = if rev.action.is_delete() {
                String::new()
            } else {
                self.revision_text(Some(rev))?
                    .ok_or_else(|| ServiceError::TooLargeToAnnotate {
                        file: format!("{}#{}", rev.path, rev.rev),
                        size: rev.size,
                        limit: self.config.max_diff_bytes,
                    })?
            };
            let lines = walk.table.split(&text);
            let mut sources = Vec::new();
            for record in records.iter().filter(|r| r.to_rev == rev.rev) {
                if let Some(source) =
                    self.source_annotation(walk, &record.from_path, record.from_end)?
                {
                    sources.push(source);
                }
            }
            let tag = self.origin_tag(walk, rev)?;
            let refs: Vec<&Annotation<usize>> = sources.iter().map(|s| s.as_ref()).collect();
            ann.push(tag, &lines, &refs);
        }
        Ok(ann)
    }

    /// The annotation of `path` up to revision `upto`, computed once per walk; `None` past the
    /// walk's `max_follow` sources, or when the source has no such revisions.
    fn source_annotation(
        &self,
        walk: &mut Walk<'_>,
        path: &DepotPath,
        upto: u32,
    ) -> Result<Option<Rc<Annotation<usize>>>, ServiceError> {
        let key = (path.clone(), upto);
        if let Some(known) = walk.sources.get(&key) {
            return Ok(Some(known.clone()));
        }
        if walk.followed >= self.config.max_follow {
            return Ok(None);
        }
        walk.followed += 1;
        let mut revs = walk.snap.file_revisions(path)?;
        revs.reverse();
        revs.retain(|r| r.rev <= upto);
        if revs.is_empty() {
            return Ok(None);
        }
        let ann = Rc::new(self.annotate_revs(walk, &revs, 1, false, true)?);
        walk.sources.insert(key, ann.clone());
        Ok(Some(ann))
    }

    /// The index of `rev`'s origin in the walk, added on first use.
    fn origin_tag(&self, walk: &mut Walk<'_>, rev: &RevisionRow) -> Result<usize, ServiceError> {
        let user = match walk.users.get(&rev.change) {
            Some(user) => user.clone(),
            None => {
                let user = walk
                    .snap
                    .get_change(rev.change)?
                    .map(|c| c.user)
                    .unwrap_or_default();
                walk.users.insert(rev.change, user.clone());
                user
            }
        };
        walk.origins.push(Rc::new(LineOrigin {
            path: rev.path.clone(),
            rev: rev.rev,
            change: rev.change,
            user,
            time: rev.time,
        }));
        Ok(walk.origins.len() - 1)
    }
}
