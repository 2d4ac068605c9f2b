//! Jobs (bugs and change requests): the job spec (`jobspec`), one job shown, saved or deleted
//! (`job`), with its values checked against the spec and its index words kept beside it.

use crate::size_limits::Field;
use crate::{Caller, JobsError, Service};
use keel_core::Right;
use keel_core::job::{Job, JobSpec, NEW_JOB, Presets};
use keel_store::{JobRow, ReadTxn, WriteTxn};

/// The job spec as stored: its form text (the default spec's when none was saved) and when it
/// was saved (0: never).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpecInfo {
    pub text: String,
    pub updated: i64,
}

/// A job: its values by field name in spec order, and its dates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobInfo {
    pub name: String,
    pub fields: Vec<(String, String)>,
    pub updated: i64,
    pub accessed: i64,
    /// False for the new job `get_job` offers when none exists by the name (or for `new`).
    pub exists: bool,
}

/// How many numbers `new` tries past jobs that already took a `jobNNNNNN` name.
const NEW_NAME_TRIES: usize = 1000;

/// The job spec in force: the stored one, or the default.
pub(crate) fn job_spec_of(snap: &dyn ReadTxn) -> Result<JobSpec, JobsError> {
    match snap.job_spec()? {
        None => Ok(JobSpec::default()),
        Some((text, _)) => JobSpec::parse(&text).map_err(|e| JobsError::StoredSpec(e.to_string())),
    }
}

pub(crate) fn job_info(row: JobRow) -> JobInfo {
    JobInfo {
        name: row.name,
        fields: row.fields,
        updated: row.updated,
        accessed: row.accessed,
        exists: true,
    }
}

/// Stores `job` (already settled) with its index words.
pub(crate) fn store_job(
    txn: &mut dyn WriteTxn,
    spec: &JobSpec,
    job: &Job,
    created: i64,
    now: i64,
) -> Result<JobRow, JobsError> {
    let row = JobRow {
        name: job.name(spec).to_string(),
        fields: job.fields.clone(),
        created,
        updated: now,
        accessed: now,
    };
    txn.put_job(&row, &job.index_words(spec))?;
    Ok(row)
}

impl Service {
    /// The job spec (any user with list access reads it, as `jobspec -o`).
    pub fn job_spec(&self, caller: &Caller) -> Result<JobSpecInfo, JobsError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        Ok(match snap.job_spec()? {
            Some((text, updated)) => JobSpecInfo { text, updated },
            None => JobSpecInfo {
                text: JobSpec::default().render(),
                updated: 0,
            },
        })
    }

    /// Replaces the job spec with the form `text` (super users only); a bad form is refused
    /// naming its line.
    pub fn save_job_spec(&self, caller: &Caller, text: &str) -> Result<JobSpecInfo, JobsError> {
        self.touch_user(caller)?;
        if !self.is_super(caller)? {
            return Err(JobsError::SpecNeedsSuper {
                user: caller.user.clone(),
            });
        }
        self.check_form("job spec", &[Field::text("Fields", text)])?;
        let spec = JobSpec::parse(text)?;
        let text = spec.render();
        let now = self.now();
        let stored = text.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.put_job_spec(&stored, now).map_err(JobsError::from)
        })?;
        Ok(JobSpecInfo { text, updated: now })
    }

    /// A job, or (when none has the name, or the name is `new`) the new job its presets make.
    pub fn get_job(&self, caller: &Caller, name: &str) -> Result<JobInfo, JobsError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let spec = job_spec_of(snap.as_ref())?;
        if !name.eq_ignore_ascii_case(NEW_JOB)
            && let Some(row) = snap.get_job(name)?
        {
            return Ok(job_info(row));
        }
        let presets = Presets {
            user: &caller.user,
            now: self.now(),
        };
        let job = Job::fresh(
            &spec,
            if name.is_empty() { NEW_JOB } else { name },
            &presets,
        );
        Ok(JobInfo {
            name: job.name(&spec).to_string(),
            fields: job.fields,
            updated: 0,
            accessed: 0,
            exists: false,
        })
    }

    /// Creates or replaces a job from its field values (a job named `new` takes the next
    /// `jobNNNNNN` name). With `force`, an administrator keeps values given for read-only
    /// fields.
    pub fn save_job(
        &self,
        caller: &Caller,
        fields: Vec<(String, String)>,
        force: bool,
    ) -> Result<JobInfo, JobsError> {
        self.touch_user(caller)?;
        let sizes: Vec<Field> = fields.iter().map(|(n, v)| Field::text(n, v)).collect();
        self.check_form("job", &sizes)?;
        let job = Job { fields };
        if force && !self.user_access(caller)?.allows_anywhere(Right::Admin) {
            let spec = job_spec_of(self.meta.snapshot()?.as_ref())?;
            return Err(JobsError::ForceNeedsAdmin {
                name: job.name(&spec).to_string(),
                user: caller.user.clone(),
            });
        }
        let now = self.now();
        let user = caller.user.clone();
        let row = keel_store::write(self.meta.as_ref(), move |txn| {
            let spec = job_spec_of(txn)?;
            let mut job = job;
            // Only the spec's fields, named as the spec names them.
            for (name, _) in &job.fields {
                if spec.field(name).is_none() {
                    return Err(JobsError::BadJob {
                        name: job.name(&spec).to_string(),
                        source: keel_core::job::JobError::Field {
                            field: name.clone(),
                            reason: "no such field in the job spec".into(),
                        },
                    });
                }
            }
            let name_field = spec.name_of(keel_core::job::spec::JOB_CODE).to_string();
            // Refusals name the job as it was given (`new` until it is saved).
            let given = job.name(&spec).to_string();
            if job.name(&spec).eq_ignore_ascii_case(NEW_JOB) {
                let mut fresh = None;
                for _ in 0..NEW_NAME_TRIES {
                    let candidate = format!("job{:06}", txn.next_job_number()?);
                    if txn.get_job(&candidate)?.is_none() {
                        fresh = Some(candidate);
                        break;
                    }
                }
                let fresh = fresh.ok_or(JobsError::NoFreeNumber {
                    tries: NEW_NAME_TRIES,
                })?;
                for (n, v) in &mut job.fields {
                    if n.eq_ignore_ascii_case(&name_field) {
                        *v = fresh.clone();
                    }
                }
            }
            let name = job.name(&spec).to_string();
            let old = txn.get_job(&name)?;
            let old_job = old.as_ref().map(|r| Job {
                fields: r.fields.clone(),
            });
            let presets = Presets { user: &user, now };
            let settled = job
                .settle(&spec, old_job.as_ref(), &presets, force)
                .map_err(|source| JobsError::BadJob {
                    name: given.clone(),
                    source,
                })?;
            store_job(txn, &spec, &settled, old.map_or(now, |o| o.created), now)
        })?;
        Ok(job_info(row))
    }

    /// Deletes a job that no change fixes.
    pub fn delete_job(&self, caller: &Caller, name: &str) -> Result<(), JobsError> {
        self.touch_user(caller)?;
        let name = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let fixes = txn.fixes_of_job(&name)?;
            if let Some(first) = fixes.first() {
                return Err(JobsError::HasFixes {
                    name,
                    change: first.change,
                    more: fixes.len() - 1,
                });
            }
            if !txn.delete_job(&name)? {
                return Err(JobsError::NoSuch { name });
            }
            Ok(())
        })
    }
}
