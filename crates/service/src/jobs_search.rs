//! `jobs`: jobs listed in name order, narrowed by a job expression through the job word index
//! (each term a range of index words; `&` intersects, `|` unites) and then tested exactly, or
//! by the files their fixing changes touched.

use crate::args::FileArg;
use crate::jobs::{JobInfo, job_info, job_spec_of};
use crate::{Caller, ChangesQuery, JobsError, Service, ServiceError};
use keel_core::DepotPath;
use keel_core::job::{Expr, Job, JobSpec};
use keel_store::ReadTxn;
use std::collections::{BTreeSet, HashSet};

/// What `jobs` lists.
#[derive(Clone, Debug, Default)]
pub struct JobsQuery {
    /// A job expression (`-e`); empty: every job.
    pub expression: String,
    /// At most this many jobs (`-m`); 0: no limit.
    pub max: u32,
    /// Name order descending (`-r`).
    pub reverse: bool,
    /// Only jobs fixed by changes that touched these files.
    pub files: Vec<String>,
    /// With `files`: also jobs fixed by changes whose revisions were integrated into them
    /// (`-i`), following integrations back through their sources.
    pub include_integrated: bool,
}

/// How many integration sources `jobs -i` follows back at most.
const MAX_INTEGRATION_SOURCES: usize = 10_000;

impl Service {
    /// Lists the jobs `query` selects, handing each to `sink`.
    pub fn jobs(
        &self,
        caller: &Caller,
        query: &JobsQuery,
        sink: &mut dyn FnMut(JobInfo) -> Result<(), ServiceError>,
    ) -> Result<(), JobsError> {
        let (snap, who) = self.read_as(caller)?;
        let spec = job_spec_of(snap.as_ref())?;
        let expr = match query.expression.trim() {
            "" => None,
            text => {
                let expr = Expr::parse(text)?;
                expr.check(&spec)?;
                Some(expr)
            }
        };
        let page = self.config.page_size.max(1);
        let mut names: Option<BTreeSet<String>> = match &expr {
            Some(e) => candidates(snap.as_ref(), e, &spec, page, &mut || who.scan())?,
            None => None,
        };
        if !query.files.is_empty() {
            let fixed = self.jobs_fixed_in_files(caller, snap.as_ref(), &query.files)?;
            let fixed = if query.include_integrated {
                let mut all = fixed;
                all.extend(self.jobs_fixed_upstream(caller, snap.as_ref(), &who, &query.files)?);
                all
            } else {
                fixed
            };
            names = Some(match names {
                Some(n) => n.intersection(&fixed).cloned().collect(),
                None => fixed,
            });
        }
        let max = if query.max == 0 {
            usize::MAX
        } else {
            query.max as usize
        };
        let mut sent = 0;
        let mut emit = |row: keel_store::JobRow| -> Result<bool, JobsError> {
            let job = Job {
                fields: row.fields.clone(),
            };
            if expr.as_ref().is_none_or(|e| e.matches(&job, &spec)) {
                who.result()?;
                sink(job_info(row))?;
                sent += 1;
            }
            Ok(sent < max)
        };
        match names {
            Some(names) => {
                let ordered: Box<dyn Iterator<Item = &String>> = if query.reverse {
                    Box::new(names.iter().rev())
                } else {
                    Box::new(names.iter())
                };
                for name in ordered {
                    who.scan()?;
                    if let Some(row) = snap.get_job(name)?
                        && !emit(row)?
                    {
                        break;
                    }
                }
            }
            None if query.reverse => {
                // Names only, then the rows newest name first.
                let mut all = Vec::new();
                each_job(snap.as_ref(), page, &mut |row| {
                    who.scan()?;
                    all.push(row.name);
                    Ok(true)
                })?;
                for name in all.iter().rev() {
                    if let Some(row) = snap.get_job(name)?
                        && !emit(row)?
                    {
                        break;
                    }
                }
            }
            None => each_job(snap.as_ref(), page, &mut |row| {
                who.scan()?;
                emit(row)
            })?,
        }
        Ok(())
    }

    /// The names of jobs fixed by changes that touched `files` (as `changes FILES` lists
    /// them, so through the caller's protections).
    pub(crate) fn jobs_fixed_in_files(
        &self,
        caller: &Caller,
        snap: &dyn ReadTxn,
        files: &[String],
    ) -> Result<BTreeSet<String>, JobsError> {
        let mut changes = Vec::new();
        let query = ChangesQuery {
            files: files.to_vec(),
            ..Default::default()
        };
        self.changes(caller, &query, &mut |c| {
            changes.push(c.change);
            Ok(())
        })?;
        let mut out = BTreeSet::new();
        for change in changes {
            out.extend(snap.fixes_of_change(change)?.into_iter().map(|f| f.job));
        }
        Ok(out)
    }
}

impl Service {
    /// The names of jobs fixed by changes whose revisions were integrated into `files`
    /// (directly or through other integrations), for `jobs -i`.
    fn jobs_fixed_upstream(
        &self,
        caller: &Caller,
        snap: &dyn ReadTxn,
        who: &crate::access::Access,
        files: &[String],
    ) -> Result<BTreeSet<String>, JobsError> {
        let ws = self.optional_workspace(snap, caller)?;
        let page = self.config.page_size.max(1);
        // Source revisions (path, start, end]: integrated into the files, still to follow.
        let mut queue: Vec<(DepotPath, u32, u32)> = Vec::new();
        for text in files {
            let arg = FileArg::parse(text, snap, ws.as_ref())?;
            for scope in &arg.scopes {
                let mut after: Option<String> = None;
                loop {
                    let rows = snap.head_revisions(scope, after.as_deref(), None, page)?;
                    let full = rows.len() == page;
                    after = rows.last().map(|r| r.path.as_str().to_string());
                    for row in rows {
                        who.scan()?;
                        if arg.matches(row.path.as_str()) && who.lists(row.path.as_str()) {
                            for integ in snap.integrations_into(&row.path)? {
                                queue.push((integ.from_path, integ.from_start, integ.from_end));
                            }
                        }
                    }
                    if !full {
                        break;
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        let mut changes = BTreeSet::new();
        let mut followed = 0;
        while let Some((path, start, end)) = queue.pop() {
            followed += 1;
            if followed > MAX_INTEGRATION_SOURCES || !who.lists(path.as_str()) {
                continue;
            }
            if !seen.insert((path.clone(), start, end)) {
                continue;
            }
            for rev in snap.file_revisions(&path)? {
                who.scan()?;
                if rev.rev > start && rev.rev <= end {
                    changes.insert(rev.change);
                }
            }
            for integ in snap.integrations_into(&path)? {
                if integ.to_rev > start && integ.to_rev <= end {
                    queue.push((integ.from_path, integ.from_start, integ.from_end));
                }
            }
        }
        let mut out = BTreeSet::new();
        for change in changes {
            out.extend(snap.fixes_of_change(change)?.into_iter().map(|f| f.job));
        }
        Ok(out)
    }
}

/// Every job in name order, a page at a time, while `each` says go on.
fn each_job(
    snap: &dyn ReadTxn,
    page: usize,
    each: &mut dyn FnMut(keel_store::JobRow) -> Result<bool, JobsError>,
) -> Result<(), JobsError> {
    let mut after: Option<String> = None;
    loop {
        let rows = snap.list_jobs(after.as_deref(), page)?;
        let full = rows.len() == page;
        after = rows.last().map(|r| r.name.clone());
        for row in rows {
            if !each(row)? {
                return Ok(());
            }
        }
        if !full {
            return Ok(());
        }
    }
}

/// The jobs that may match `expr`, from the index (a superset: each is tested exactly after);
/// `None` when the index cannot narrow it (a negation on its own), so every job is a candidate.
fn candidates(
    snap: &dyn ReadTxn,
    expr: &Expr,
    spec: &JobSpec,
    page: usize,
    scan: &mut dyn FnMut() -> Result<(), ServiceError>,
) -> Result<Option<BTreeSet<String>>, JobsError> {
    Ok(match expr {
        Expr::Term(term) => {
            let range = term.index_range(spec);
            let mut names = BTreeSet::new();
            let mut after: Option<String> = None;
            loop {
                let rows = snap.jobs_by_word(&range, after.as_deref(), page)?;
                let full = rows.len() == page;
                after = rows.last().cloned();
                for name in rows {
                    scan()?;
                    names.insert(name);
                }
                if !full {
                    break;
                }
            }
            Some(names)
        }
        Expr::And(a, b) => {
            // When one side's words are in few jobs, those are the candidates: the other side
            // is tested on their rows, not read from the index (`status=open & needle`).
            if let Some(few) = fewer_side(snap, a, b, spec, page, scan)? {
                return Ok(Some(few));
            }
            match (
                candidates(snap, a, spec, page, scan)?,
                candidates(snap, b, spec, page, scan)?,
            ) {
                (None, x) | (x, None) => x,
                (Some(a), Some(b)) => Some(a.intersection(&b).cloned().collect()),
            }
        }
        Expr::Or(a, b) => {
            match (
                candidates(snap, a, spec, page, scan)?,
                candidates(snap, b, spec, page, scan)?,
            ) {
                (Some(mut a), Some(b)) => {
                    a.extend(b);
                    Some(a)
                }
                _ => None,
            }
        }
        Expr::Not(_) => None,
    })
}

/// The first probe of an `&`'s sides reads this many index entries of each.
const FIRST_PROBE: usize = 16;

/// For `a & b` where a side is a term: the jobs of the side whose words are in fewer jobs, when
/// that is at most `page` jobs, found by reading both sides' index entries in step (16, then
/// 256, ... up to `page`), so a narrow side is found without reading all of a broad one.
fn fewer_side(
    snap: &dyn ReadTxn,
    a: &Expr,
    b: &Expr,
    spec: &JobSpec,
    page: usize,
    scan: &mut dyn FnMut() -> Result<(), ServiceError>,
) -> Result<Option<BTreeSet<String>>, JobsError> {
    let terms: Vec<_> = [a, b]
        .into_iter()
        .filter_map(|e| match e {
            Expr::Term(t) => Some(t.index_range(spec)),
            _ => None,
        })
        .collect();
    if terms.is_empty() {
        return Ok(None);
    }
    let mut cap = FIRST_PROBE.min(page);
    loop {
        for range in &terms {
            let names = snap.jobs_by_word(range, None, cap + 1)?;
            for _ in &names {
                scan()?;
            }
            if names.len() <= cap {
                return Ok(Some(names.into_iter().collect()));
            }
        }
        if cap >= page {
            return Ok(None);
        }
        cap = (cap * 16).min(page);
    }
}
