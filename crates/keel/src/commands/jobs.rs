//! `jobspec`, `job`, `jobs`, `fix`, `fixes` and `spec`: jobs (bugs and change requests) in
//! their forms, searched with job expressions, and linked to changes.

use std::io::Read;

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::ops::{self, Fix, FixesQuery, JobRecord, JobSpecText, JobsQuery};
use keel_core::Form;
use keel_core::job::{Job, JobSpec, format_date};

use crate::editor::edit_text;
use crate::output::{Record, date, date_time, first_line};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct JobspecArgs {
    /// Print the job spec as a form.
    #[arg(short = 'o', conflicts_with = "input")]
    pub output: bool,
    /// Read the job spec as a form from stdin and save it (super users).
    #[arg(short = 'i')]
    pub input: bool,
}

#[derive(Debug, Args)]
pub struct SpecArgs {
    /// Print the spec of TYPE as a form.
    #[arg(short = 'o', conflicts_with = "input")]
    pub output: bool,
    /// Read the spec of TYPE as a form from stdin and save it (super users).
    #[arg(short = 'i')]
    pub input: bool,
    /// The kind of spec: job (the one whose fields can be changed).
    #[arg(value_name = "TYPE")]
    pub kind: String,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    /// Print the job (or, for a new name or `new`, the job its presets make) as a form.
    #[arg(short = 'o', conflicts_with_all = ["input", "delete"])]
    pub output: bool,
    /// Read the job as a form from stdin and save it (Job: new takes the next number).
    #[arg(short = 'i', conflicts_with = "delete")]
    pub input: bool,
    /// Delete the job (refused while a change fixes it).
    #[arg(short = 'd')]
    pub delete: bool,
    /// Keep the values given for read-only fields (Date, ...): administrators.
    #[arg(short = 'f')]
    pub force: bool,
    /// The job (default: a new job).
    #[arg(value_name = "JOB")]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Only jobs matching a job expression, e.g. 'status=open user=alice', 'crash* | gui',
    /// 'date>2026/11/01 & ^status=closed'.
    #[arg(short = 'e', value_name = "EXPRESSION")]
    pub expression: Option<String>,
    /// At most this many jobs.
    #[arg(short = 'm', value_name = "MAX")]
    pub max: Option<u32>,
    /// Print each job's whole description.
    #[arg(short = 'l')]
    pub long: bool,
    /// List in reverse name order.
    #[arg(short = 'r')]
    pub reverse: bool,
    /// With files: also jobs fixed by changes integrated into them.
    #[arg(short = 'i', requires = "files")]
    pub include_integrated: bool,
    /// Only jobs fixed by changes that touched these files.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Remove the fixes instead of making them.
    #[arg(short = 'd')]
    pub delete: bool,
    /// The status the jobs take when the change is (or was) submitted (default closed).
    #[arg(short = 's', value_name = "STATUS")]
    pub status: Option<String>,
    /// The change that fixes the jobs.
    #[arg(short = 'c', value_name = "CHANGE", required = true)]
    pub change: u64,
    /// The jobs.
    #[arg(value_name = "JOB", required = true)]
    pub jobs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FixesArgs {
    /// Only this job's fixes.
    #[arg(short = 'j', value_name = "JOB")]
    pub job: Option<String>,
    /// Only this change's fixes.
    #[arg(short = 'c', value_name = "CHANGE")]
    pub change: Option<u64>,
    /// At most this many fixes.
    #[arg(short = 'm', value_name = "MAX")]
    pub max: Option<u32>,
    /// Only fixes by changes that touched these files.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

fn read_stdin(what: &str) -> Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the {what} form from stdin"))?;
    Ok(text)
}

async fn fetch_spec(s: &Session) -> Result<(JobSpec, JobSpecText)> {
    let form = ops::job_spec(&s.conn).await?;
    let spec =
        JobSpec::parse(&form.text).context("the server sent a job spec that does not parse")?;
    Ok((spec, form))
}

/// `jobspec [-o|-i]`.
pub async fn jobspec(s: &mut Session, args: JobspecArgs) -> Result<()> {
    if args.input {
        return save_spec(s, &read_stdin("job spec")?).await;
    }
    let (_, form) = fetch_spec(s).await?;
    let text = spec_form(&form);
    if args.output {
        s.out.emit(
            Record::new()
                .s("text", &form.text)
                .nz("Update", form.updated),
            text.trim_end(),
        );
        return Ok(());
    }
    let edited = edit_text(&text, "jobspec")?;
    if edited == text {
        s.out.emit(
            Record::new().s("action", "unchanged"),
            "Job spec not changed.",
        );
        return Ok(());
    }
    save_spec(s, &edited).await
}

/// `spec -o|-i TYPE`: the job spec is the spec whose fields can be changed.
pub async fn spec(s: &mut Session, args: SpecArgs) -> Result<()> {
    if args.kind != "job" {
        bail!(
            "spec type {:?}: only the job spec's fields can be changed (spec -o job, spec -i job)",
            args.kind
        );
    }
    jobspec(
        s,
        JobspecArgs {
            output: args.output,
            input: args.input,
        },
    )
    .await
}

fn spec_form(form: &JobSpecText) -> String {
    let header = "\
# The Keel job spec: the fields every job has.
#  Fields:   CODE NAME TYPE LENGTH PERSISTENCE, one line per field. Codes 101-105 are
#            Job (word), Status (select), User (word), Date (date), Description (text);
#            add fields from 106. TYPE: word, text, line, select, date. LENGTH: 0 = any.
#            PERSISTENCE: optional, default, required, once, always.
#  Values:   FIELD value1/value2/... for each select field.
#  Presets:  FIELD value: what a new job starts with ($user, $now, $blank or text).
#  Comments: the lines shown atop every job form.
";
    let mut out = String::from(header);
    out.push('\n');
    if form.updated > 0 {
        out.push_str(&format!("# Last saved {}.\n\n", date_time(form.updated)));
    }
    out.push_str(&form.text);
    out
}

async fn save_spec(s: &Session, text: &str) -> Result<()> {
    // Checked here first so that a mistake is named before the server is asked.
    JobSpec::parse(text).context("error in job spec")?;
    let saved = ops::save_job_spec(&s.conn, text).await?;
    s.out.emit(
        Record::new()
            .s("action", "saved")
            .n("Update", saved.updated),
        "Job spec saved.",
    );
    Ok(())
}

fn job_of(j: &JobRecord) -> Job {
    Job {
        fields: j.fields.clone(),
    }
}

/// A job's `--json` record: its fields by name (as p4's tagged output), and its dates.
fn job_record(j: &JobRecord) -> Record {
    let mut r = Record::new();
    for (name, value) in &j.fields {
        r = r.s(name, value);
    }
    if j.updated > 0 {
        r = r.s("Update", format_date(j.updated as i64));
    }
    if j.accessed > 0 {
        r = r.s("Access", format_date(j.accessed as i64));
    }
    r
}

fn job_form(spec: &JobSpec, j: &JobRecord) -> String {
    let dates = (j.exists).then_some((j.updated as i64, j.accessed as i64));
    job_of(j).to_form(spec, dates)
}

/// `job [-o|-i|-d] [-f] [JOB]`.
pub async fn job(s: &mut Session, args: JobArgs) -> Result<()> {
    if args.delete {
        let Some(name) = args.name else {
            bail!("job -d needs the job's name");
        };
        ops::delete_job(&s.conn, &name).await?;
        s.out.emit(
            Record::new().s("Job", &name).s("action", "deleted"),
            format!("Job {name} deleted."),
        );
        return Ok(());
    }
    let (spec, _) = fetch_spec(s).await?;
    if args.input {
        return save_job(s, &spec, &read_stdin("job")?, args.force).await;
    }
    let current = ops::job(&s.conn, &args.name.unwrap_or_default()).await?;
    let text = job_form(&spec, &current);
    if args.output {
        s.out.emit(job_record(&current), text.trim_end());
        return Ok(());
    }
    let edited = edit_text(&text, "job")?;
    if edited == text {
        s.out.emit(
            Record::new()
                .s("Job", &current.name)
                .s("action", "unchanged"),
            format!("Job {} not changed.", current.name),
        );
        return Ok(());
    }
    save_job(s, &spec, &edited, args.force).await
}

async fn save_job(s: &Session, spec: &JobSpec, text: &str, force: bool) -> Result<()> {
    let form = Form::parse(text).context("error in job specification")?;
    let job = Job::from_form(&form, spec).context("error in job specification")?;
    let saved = ops::save_job(&s.conn, job.fields, force).await?;
    s.out.emit(
        job_record(&saved).s("action", "saved"),
        format!("Job {} saved.", saved.name),
    );
    Ok(())
}

/// `jobs [-e EXPR] [-m MAX] [-l] [-r] [FILE...]`.
pub async fn jobs(s: &mut Session, args: JobsArgs) -> Result<()> {
    let (spec, _) = fetch_spec(s).await?;
    let files = if args.files.is_empty() {
        Vec::new()
    } else {
        s.file_args(&args.files).await?
    };
    let query = JobsQuery {
        expression: args.expression.unwrap_or_default(),
        max: args.max.unwrap_or(0),
        reverse: args.reverse,
        files,
        include_integrated: args.include_integrated,
    };
    let mut found = ops::jobs(&s.conn, query).await?;
    while let Some(j) = found.next().await? {
        s.out.emit(job_record(&j), job_line(&spec, &j, args.long));
    }
    Ok(())
}

/// `job000001 on 2026/11/28 by alice *open* 'Crash on start'` (with -l, the whole description
/// below it, indented).
fn job_line(spec: &JobSpec, j: &JobRecord, long: bool) -> String {
    use keel_core::job::spec::{DATE_CODE, DESCRIPTION_CODE, STATUS_CODE, USER_CODE};
    let job = job_of(j);
    let get = |code| job.get(spec.name_of(code)).to_string();
    let when = match keel_core::job::parse_date(&get(DATE_CODE)) {
        Some(d) => {
            let (y, m, dd) = d.ymd;
            format!(" on {y:04}/{m:02}/{dd:02}")
        }
        None => String::new(),
    };
    let user = get(USER_CODE);
    let by = if user.is_empty() {
        String::new()
    } else {
        format!(" by {user}")
    };
    let description = get(DESCRIPTION_CODE);
    let head = format!("{}{when}{by} *{}*", j.name, get(STATUS_CODE));
    if long {
        let body: String = description.lines().map(|l| format!("\n\t{l}")).collect();
        format!("{head}\n{body}\n")
    } else {
        format!("{head} '{}'", first_line(&description))
    }
}

fn fix_record(f: &Fix) -> Record {
    Record::new()
        .s("Job", &f.job)
        .n("Change", f.change)
        .s("User", &f.user)
        .s("Client", &f.workspace)
        .n("Date", f.date)
        .s("Status", &f.status)
}

/// `fix [-d] [-s STATUS] -c CHANGE JOB...`.
pub async fn fix(s: &mut Session, args: FixArgs) -> Result<()> {
    let status = args.status.unwrap_or_default();
    let fixes = ops::fix(&s.conn, args.change, args.jobs, &status, args.delete).await?;
    for f in &fixes {
        let text = if args.delete {
            format!("Fix {} by change {} removed.", f.job, f.change)
        } else {
            format!("Job {} fixed by change {} ({}).", f.job, f.change, f.status)
        };
        let action = if args.delete { "removed" } else { "fixed" };
        s.out.emit(fix_record(f).s("action", action), text);
    }
    Ok(())
}

/// `fixes [-j JOB] [-c CHANGE] [-m MAX] [FILE...]`.
pub async fn fixes(s: &mut Session, args: FixesArgs) -> Result<()> {
    let files = if args.files.is_empty() {
        Vec::new()
    } else {
        s.file_args(&args.files).await?
    };
    let query = FixesQuery {
        job: args.job,
        change: args.change,
        files,
        max: args.max.unwrap_or(0),
    };
    let mut found = ops::fixes(&s.conn, query).await?;
    while let Some(f) = found.next().await? {
        let text = format!(
            "{} fixed by change {} on {} by {}@{} ({})",
            f.job,
            f.change,
            date(f.date),
            f.user,
            f.workspace,
            f.status
        );
        s.out.emit(fix_record(&f), text);
    }
    Ok(())
}

/// A job a change fixes, as `describe` shows it.
pub struct FixedJob {
    pub name: String,
    pub date: String,
    pub user: String,
    pub status: String,
    /// The first line of its description.
    pub summary: String,
}

/// The jobs change `change` fixes, with their current status (for `describe`).
pub async fn fixed_jobs(s: &Session, change: u64) -> Result<Vec<FixedJob>> {
    use keel_core::job::spec::{DESCRIPTION_CODE, STATUS_CODE};
    let query = FixesQuery {
        change: Some(change),
        ..Default::default()
    };
    let fixes = ops::fixes(&s.conn, query).await?.all().await?;
    if fixes.is_empty() {
        return Ok(Vec::new());
    }
    let (spec, _) = fetch_spec(s).await?;
    let mut out = Vec::new();
    for f in fixes {
        let job = job_of(&ops::job(&s.conn, &f.job).await?);
        out.push(FixedJob {
            date: date(f.date),
            user: f.user,
            status: job.get(spec.name_of(STATUS_CODE)).to_string(),
            summary: first_line(job.get(spec.name_of(DESCRIPTION_CODE))).to_string(),
            name: f.job,
        });
    }
    Ok(out)
}
