//! `jobspec`, `job`, `jobs`, `fix` and `fixes`: the job spec, jobs (bugs and change requests)
//! read, saved, deleted and searched, and the fixes that link jobs to changes.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// The job spec as a form's text (parse it with `keel_core::job::JobSpec::parse`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobSpecText {
    /// The spec's form: Fields, Values, Presets, Comments.
    pub text: String,
    /// Seconds since the epoch it was last saved; 0: the default spec, never saved.
    pub updated: u64,
}

impl JobSpecText {
    fn from_wire(f: pb::JobSpecForm) -> JobSpecText {
        JobSpecText {
            text: f.text,
            updated: f.updated,
        }
    }
}

/// A job: its fields by name, in the spec's order (empty fields left out).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobRecord {
    pub name: String,
    /// `(field name, value)` pairs.
    pub fields: Vec<(String, String)>,
    /// Seconds since the epoch (0: never).
    pub updated: u64,
    pub accessed: u64,
    /// False for a new job offered by [`job`] (the spec's presets), not saved yet.
    pub exists: bool,
}

impl JobRecord {
    fn from_wire(j: pb::Job) -> JobRecord {
        JobRecord {
            name: j.name,
            fields: j.fields.into_iter().map(|f| (f.name, f.value)).collect(),
            updated: j.updated,
            accessed: j.accessed,
            exists: j.exists,
        }
    }
}

/// A fix: a change that fixes (or, pending, will fix) a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub job: String,
    pub change: u64,
    pub user: String,
    pub workspace: String,
    /// Seconds since the epoch the fix was made.
    pub date: u64,
    /// The status the job takes (or took) when the change is submitted.
    pub status: String,
}

impl Fix {
    fn from_wire(f: pb::FixEntry) -> Fix {
        Fix {
            job: f.job,
            change: f.change,
            user: f.user,
            workspace: f.workspace,
            date: f.date,
            status: f.status,
        }
    }
}

/// The job spec.
pub async fn job_spec(conn: &Connection) -> Result<JobSpecText, QueryError> {
    let got = conn
        .reply(conn.client().get_job_spec(pb::GetJobSpecRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(JobSpecText::from_wire(got))
}

/// Saves the job spec from its form's `text` (super users) and returns it as stored.
pub async fn save_job_spec(conn: &Connection, text: &str) -> Result<JobSpecText, QueryError> {
    let saved = conn
        .reply(conn.client().save_job_spec(pb::SaveJobSpecRequest {
            caller: conn.caller(),
            text: text.to_string(),
        }))
        .await?;
    Ok(JobSpecText::from_wire(saved))
}

/// Job `name`; for a name not yet used (or empty: a new job), the job the spec's presets
/// make, with `exists` false.
pub async fn job(conn: &Connection, name: &str) -> Result<JobRecord, QueryError> {
    let got = conn
        .reply(conn.client().get_job(pb::GetJobRequest {
            caller: conn.caller(),
            name: name.to_string(),
        }))
        .await?;
    Ok(JobRecord::from_wire(got))
}

/// Saves a job from its fields (`Job: new` takes the next number) and returns it as stored.
/// `force`: an administrator keeps the values given for read-only fields.
///
/// A CI server filing a job for a failed build, fixed by the change that broke it:
///
/// ```no_run
/// # async fn example(conn: keel_client::Connection) -> Result<(), keel_client::ops::QueryError> {
/// use keel_client::ops;
///
/// let mut fields = ops::job(&conn, "").await?.fields; // the spec's presets
/// for (name, value) in &mut fields {
///     if name == "Description" {
///         *value = "Build 131 failed: test_parser".into();
///     }
/// }
/// let job = ops::save_job(&conn, fields, false).await?;
/// ops::fix(&conn, 131, vec![job.name.clone()], "open", false).await?;
/// # Ok(())
/// # }
/// ```
pub async fn save_job(
    conn: &Connection,
    fields: Vec<(String, String)>,
    force: bool,
) -> Result<JobRecord, QueryError> {
    let saved = conn
        .reply(
            conn.client().save_job(pb::SaveJobRequest {
                caller: conn.caller(),
                fields: fields
                    .into_iter()
                    .map(|(name, value)| pb::JobField { name, value })
                    .collect(),
                force,
            }),
        )
        .await?;
    Ok(JobRecord::from_wire(saved))
}

/// Deletes job `name` (refused while a change fixes it).
pub async fn delete_job(conn: &Connection, name: &str) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_job(pb::DeleteJobRequest {
        caller: conn.caller(),
        name: name.to_string(),
    }))
    .await?;
    Ok(())
}

/// Which jobs `jobs` lists; the default lists every job in name order.
#[derive(Clone, Debug, Default)]
pub struct JobsQuery {
    /// A job expression, e.g. `status=open user=alice`; empty: every job.
    pub expression: String,
    /// At most this many; 0: all.
    pub max: u32,
    /// In reverse name order.
    pub reverse: bool,
    /// Only jobs fixed by changes that touched these depot paths.
    pub files: Vec<String>,
    /// With `files`: also jobs fixed by changes integrated into them.
    pub include_integrated: bool,
}

/// The jobs `query` selects, as the server streams them.
pub async fn jobs(conn: &Connection, query: JobsQuery) -> Result<Records<JobRecord>, QueryError> {
    let stream = conn
        .reply(conn.client().list_jobs(pb::ListJobsRequest {
            caller: conn.caller(),
            expression: query.expression,
            max: query.max,
            reverse: query.reverse,
            files: query.files,
            include_integrated: query.include_integrated,
        }))
        .await?;
    Ok(Records::new(conn, stream, |j| Ok(JobRecord::from_wire(j))))
}

/// Links (or with `delete`, unlinks) `jobs` to `change`. `status`: the status the jobs take
/// when the change is submitted (empty: closed). Returns the fixes made or removed.
pub async fn fix(
    conn: &Connection,
    change: u64,
    jobs: Vec<String>,
    status: &str,
    delete: bool,
) -> Result<Vec<Fix>, QueryError> {
    let reply = conn
        .reply(conn.client().fix(pb::FixRequest {
            caller: conn.caller(),
            change,
            jobs,
            status: status.to_string(),
            delete,
        }))
        .await?;
    Ok(reply.fixes.into_iter().map(Fix::from_wire).collect())
}

/// Which fixes `fixes` lists; the default lists them all.
#[derive(Clone, Debug, Default)]
pub struct FixesQuery {
    /// Only this job's fixes.
    pub job: Option<String>,
    /// Only this change's fixes.
    pub change: Option<u64>,
    /// Only fixes by changes that touched these depot paths.
    pub files: Vec<String>,
    /// At most this many; 0: all.
    pub max: u32,
}

/// The fixes `query` selects, as the server streams them.
pub async fn fixes(conn: &Connection, query: FixesQuery) -> Result<Records<Fix>, QueryError> {
    let stream = conn
        .reply(conn.client().list_fixes(pb::ListFixesRequest {
            caller: conn.caller(),
            job: query.job.unwrap_or_default(),
            change: query.change.unwrap_or(0),
            files: query.files,
            max: query.max,
        }))
        .await?;
    Ok(Records::new(conn, stream, |f| Ok(Fix::from_wire(f))))
}
