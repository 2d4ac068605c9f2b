//! Fixes: jobs linked to changes (`fix`, `fix -d`, `fixes`). A fix of a submitted change sets
//! the job's status at once; a fix of a pending change does when the change is submitted
//! ([`close_fixed_jobs`], inside the submit's write job).

use crate::jobs::job_spec_of;
use crate::{Caller, JobsError, Service, ServiceError};
use keel_core::job::Job;
use keel_core::job::spec::STATUS_CODE;
use keel_core::{ChangeNumber, ChangeStatus};
use keel_store::{FixRow, WriteTxn};

/// The status a fix gives its job unless told otherwise.
pub const DEFAULT_FIX_STATUS: &str = "closed";

/// What `fixes` lists.
#[derive(Clone, Debug, Default)]
pub struct FixesQuery {
    /// Only this job's fixes.
    pub job: String,
    /// Only this change's fixes (0: any).
    pub change: u64,
    /// Only fixes by changes that touched these files.
    pub files: Vec<String>,
    /// At most this many (0: no limit).
    pub max: u32,
}

/// Sets `job`'s status field to `status`, keeping its other values and its index current.
fn set_status(
    txn: &mut dyn WriteTxn,
    job_name: &str,
    status: &str,
    now: i64,
) -> Result<(), JobsError> {
    let spec = job_spec_of(txn)?;
    let Some(row) = txn.get_job(job_name)? else {
        return Ok(());
    };
    let field = spec.name_of(STATUS_CODE).to_string();
    let mut job = Job { fields: row.fields };
    match job.fields.iter_mut().find(|(n, _)| *n == field) {
        Some((_, v)) => *v = status.to_string(),
        None => job.fields.push((field, status.to_string())),
    }
    let words = job.index_words(&spec);
    txn.put_job(
        &keel_store::JobRow {
            name: row.name,
            fields: job.fields,
            created: row.created,
            updated: row.updated,
            accessed: now,
        },
        &words,
    )?;
    Ok(())
}

/// At submit: moves the fixes of pending change `pending` to its submitted number and gives
/// each fixed job its fix's status.
pub(crate) fn close_fixed_jobs(
    txn: &mut dyn WriteTxn,
    pending: ChangeNumber,
    number: ChangeNumber,
    now: i64,
) -> Result<(), ServiceError> {
    close_fixed(txn, pending, number, now).map_err(|e| match e {
        JobsError::Service(e) => e,
        other => ServiceError::from(keel_store::StoreError::Corrupt(other.to_string())),
    })
}

fn close_fixed(
    txn: &mut dyn WriteTxn,
    pending: ChangeNumber,
    number: ChangeNumber,
    now: i64,
) -> Result<(), JobsError> {
    for fix in txn.fixes_of_change(pending)? {
        if number != pending {
            txn.delete_fix(&fix.job, pending)?;
        }
        set_status(txn, &fix.job, &fix.status, now)?;
        txn.put_fix(&FixRow {
            change: number,
            date: now,
            ..fix
        })?;
    }
    Ok(())
}

impl Service {
    /// Links `jobs` to `change` (or with `delete`, unlinks them). `status` (default `closed`)
    /// must be a value of the spec's status field; a submitted change sets it on the job now.
    /// Returns the fixes made or removed.
    pub fn fix(
        &self,
        caller: &Caller,
        change: ChangeNumber,
        jobs: Vec<String>,
        status: &str,
        delete: bool,
    ) -> Result<Vec<FixRow>, JobsError> {
        self.touch_user(caller)?;
        if jobs.is_empty() {
            return Err(ServiceError::BadArgument {
                arg: String::new(),
                reason: "name at least one job".into(),
            }
            .into());
        }
        let now = self.now();
        let caller = caller.clone();
        let status = status.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let row = txn
                .get_change(change)?
                .ok_or(ServiceError::NoSuchChange { change })?;
            let spec = job_spec_of(txn)?;
            let values = spec
                .field_by_code(STATUS_CODE)
                .map(|f| f.values.clone())
                .unwrap_or_default();
            let wanted = if status.is_empty() {
                DEFAULT_FIX_STATUS
            } else {
                &status
            };
            let status = values
                .iter()
                .find(|v| v.eq_ignore_ascii_case(wanted))
                .cloned()
                .ok_or_else(|| JobsError::BadStatus {
                    status: wanted.to_string(),
                    values: values.join("/"),
                })?;
            let mut done = Vec::new();
            for job in jobs {
                if txn.get_job(&job)?.is_none() {
                    return Err(JobsError::NoSuch { name: job });
                }
                let fix = FixRow {
                    job: job.clone(),
                    change,
                    user: caller.user.clone(),
                    workspace: row.workspace.clone(),
                    date: now,
                    status: status.clone(),
                };
                if delete {
                    if !txn.delete_fix(&job, change)? {
                        return Err(JobsError::NoSuchFix { job, change });
                    }
                } else {
                    txn.put_fix(&fix)?;
                    if row.status == ChangeStatus::Submitted {
                        set_status(txn, &job, &status, now)?;
                    }
                }
                done.push(fix);
            }
            Ok(done)
        })
    }

    /// Lists fixes, newest change first, narrowed by job, change and files.
    pub fn fixes(
        &self,
        caller: &Caller,
        query: &FixesQuery,
        sink: &mut dyn FnMut(FixRow) -> Result<(), ServiceError>,
    ) -> Result<(), JobsError> {
        let (snap, who) = self.read_as(caller)?;
        let max = if query.max == 0 {
            usize::MAX
        } else {
            query.max as usize
        };
        let jobs_in_files = if query.files.is_empty() {
            None
        } else {
            Some(self.jobs_fixed_in_files(caller, snap.as_ref(), &query.files)?)
        };
        let keep = |f: &FixRow| {
            (query.job.is_empty() || f.job == query.job)
                && (query.change == 0 || f.change.0 == query.change)
                && jobs_in_files.as_ref().is_none_or(|j| j.contains(&f.job))
        };
        let mut sent = 0;
        let mut send = |f: FixRow| -> Result<bool, JobsError> {
            who.scan()?;
            if keep(&f) {
                who.result()?;
                sink(f)?;
                sent += 1;
            }
            Ok(sent < max)
        };
        if !query.job.is_empty() {
            for f in snap.fixes_of_job(&query.job)? {
                if !send(f)? {
                    break;
                }
            }
        } else if query.change != 0 {
            for f in snap.fixes_of_change(ChangeNumber(query.change))? {
                if !send(f)? {
                    break;
                }
            }
        } else {
            let page = self.config.page_size.max(1);
            let mut before: Option<(ChangeNumber, String)> = None;
            'pages: loop {
                let rows = snap.list_fixes(before.as_ref().map(|(c, j)| (*c, j.as_str())), page)?;
                let full = rows.len() == page;
                before = rows.last().map(|f| (f.change, f.job.clone()));
                for f in rows {
                    if !send(f)? {
                        break 'pages;
                    }
                }
                if !full {
                    break;
                }
            }
        }
        Ok(())
    }
}
