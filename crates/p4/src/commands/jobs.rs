//! `jobs`, `job -o/-i/-d [-f]`, `jobspec -o` and `fix`: jobs over the service's, in the forms
//! P4 clients edit. A job's form is built from the server's job spec (its `specdef` names
//! every field of the spec, so P4Python's `fetch_job` returns a spec object and `save_job`
//! takes one back); tagged records carry the values, untagged output the form text and the
//! one-line listing `JOB on DATE by USER *STATUS* 'DESCRIPTION'`.

use crate::cmd::{Cmd, CmdError, CmdResult, number, usage};
use crate::commands::fileargs::{self, cut};
use crate::commands::forms;
use crate::dispatch::{self, Command};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{Field, Kind, SpecDef, Values};
use keel_core::ChangeNumber;
use keel_core::form::Form;
use keel_core::job::spec::{
    DATE_CODE, DESCRIPTION_CODE, FieldType, JOB_CODE, Persistence, STATUS_CODE, USER_CODE,
};
use keel_core::job::{Job, JobSpec};
use keel_service::command as rows;
use keel_service::{JobInfo, JobsError, JobsQuery, ServiceError};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "jobs",
        row: rows::LIST_JOBS,
        login: true,
        flags: "e: m: l r i",
        usage: "jobs [ -e jobview -i -l -m max -r ] [ file[revRange] ... ]",
        run: |c| Box::pin(jobs(c)),
    },
    Command {
        name: "job",
        row: rows::SAVE_JOB,
        login: true,
        flags: "o i d f",
        usage: "job [ -f ] [ -d | -o | -i ] [ jobName ]",
        run: |c| Box::pin(job(c)),
    },
    Command {
        name: "jobspec",
        row: rows::SAVE_JOB_SPEC,
        login: true,
        flags: "o i",
        usage: "jobspec [ -o | -i ]",
        run: |c| Box::pin(jobspec(c)),
    },
    Command {
        name: "spec",
        row: rows::SAVE_JOB_SPEC,
        login: true,
        flags: "o i",
        usage: "spec [ -o | -i ] job",
        run: |c| Box::pin(spec(c)),
    },
    Command {
        name: "fix",
        row: rows::FIX,
        login: true,
        flags: "c: d s:",
        usage: "fix [ -d ] [ -s status ] -c changelist# jobName ...",
        run: |c| Box::pin(fix(c)),
    },
];

const fn field(name: &'static str, code: u16, kind: Kind, len: u16) -> Field {
    Field {
        name,
        code,
        kind,
        required: false,
        read_only: false,
        len,
        values: "",
    }
}

/// The job spec's own form (`jobspec -o`).
pub const JOBSPEC: SpecDef = SpecDef {
    kind: "jobspec",
    comment: "# A Keel job specification.\n#\n#  Fields:   The job fields: code name type length \
              persistence.\n#  Values:   The values of select fields, /-separated.\n#  \
              Presets:  The value a new job starts with ($user, $now, $blank or text).\n#  \
              Comments: The comment block atop every job form.\n\n",
    fields: &[
        field("Fields", 351, Kind::WordList { words: 5 }, 64),
        field("Values", 352, Kind::WordList { words: 2 }, 64),
        field("Presets", 353, Kind::WordList { words: 2 }, 64),
        field("Comments", 356, Kind::Text, 0),
    ],
};

/// A job refusal as the client shows it: protections as protections, the rest naming what
/// was wrong.
fn refused(e: JobsError) -> CmdError {
    match e {
        JobsError::Service(s) => s.into(),
        other => CmdError::Report(Report::failed(
            Generic::Usage,
            number::FORM,
            other.to_string(),
        )),
    }
}

/// The job spec in force, parsed.
async fn spec_of(cmd: &mut Cmd) -> Result<JobSpec, CmdError> {
    let info = cmd
        .call(|svc, caller| svc.job_spec(caller))
        .await?
        .map_err(refused)?;
    JobSpec::parse(&info.text).map_err(|e| refused(JobsError::BadSpec(e)))
}

/// The `specdef` of the job form `spec` describes.
pub fn job_specdef(spec: &JobSpec) -> String {
    let mut out = String::new();
    for f in &spec.fields {
        out.push_str(&format!("{};code:{}", f.name, f.code));
        match f.kind {
            FieldType::Word => {}
            FieldType::Text => out.push_str(";type:text"),
            FieldType::Line => out.push_str(";type:line"),
            FieldType::Select => out.push_str(";type:select"),
            FieldType::Date => out.push_str(";type:date"),
        }
        if f.code == JOB_CODE || f.persistence == Persistence::Required {
            out.push_str(";rq");
        }
        if matches!(f.persistence, Persistence::Always) {
            out.push_str(";ro");
        }
        out.push_str(&format!(";len:{}", f.length));
        if let Some(p) = &f.preset {
            out.push_str(&format!(";pre:{p}"));
        }
        if !f.values.is_empty() {
            out.push_str(&format!(";val:{}", f.values.join("/")));
        }
        out.push_str(";;");
    }
    out
}

/// The tagged record of a job: each field with a value (text ending in a newline), then the
/// form's `specdef`.
fn job_record(spec: &JobSpec, job: &Job, with_specdef: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in &spec.fields {
        let value = job.get(&f.name);
        if value.is_empty() {
            continue;
        }
        let value = match f.kind {
            FieldType::Text if !value.ends_with('\n') => format!("{value}\n"),
            _ => value.to_string(),
        };
        out.push((f.name.clone(), value));
    }
    if with_specdef {
        out.push(("specdef".to_string(), job_specdef(spec)));
        out.push(("specFormatted".to_string(), String::new()));
    }
    out
}

fn mode(cmd: &Cmd, command: &Command) -> Result<(char, String, bool), CmdError> {
    let flags = dispatch::flags(cmd, command)?;
    let modes: Vec<char> = ['o', 'i', 'd']
        .into_iter()
        .filter(|f| flags.has(*f))
        .collect();
    let name = flags.rest.first().cloned().unwrap_or_default();
    match (modes.as_slice(), flags.rest.len()) {
        // No mode: the form goes to the client's editor.
        ([], 0) | ([], 1) => Ok(('e', name, flags.has('f'))),
        (['i'], 0) | (['o'], 0) => Ok((modes[0], name, flags.has('f'))),
        ([m], 1) => Ok((*m, name, flags.has('f'))),
        _ => Err(usage(format!("Usage: {}", command.usage))),
    }
}

async fn job(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("job").expect("job is in the table");
    let (mode, name, force) = mode(cmd, command)?;
    match mode {
        'd' => {
            let target = name.clone();
            cmd.call(move |svc, caller| svc.delete_job(caller, &target))
                .await?
                .map_err(refused)?;
            cmd.info(format!("Job {name} deleted."));
        }
        'i' => {
            let spec = spec_of(cmd).await?;
            const CONFIRM: &str = "dm-SpecInput";
            let m = Message::new()
                .with("specdef", job_specdef(&spec))
                .with("confirm", CONFIRM)
                .with("func", "client-InputData");
            let reply = cmd.ask(&m, CONFIRM).await?;
            let text = reply.text("data").unwrap_or_default();
            save_job(cmd, &spec, &text, force).await?;
        }
        _ => {
            let spec = spec_of(cmd).await?;
            let lookup = if name.is_empty() { "new".into() } else { name };
            let found = cmd
                .call(move |svc, caller| svc.get_job(caller, &lookup))
                .await?
                .map_err(refused)?;
            let job = Job {
                fields: found.fields,
            };
            if mode == 'e' {
                let text = job.to_form(&spec, None);
                match forms::edit_text(cmd, "job", &text).await? {
                    Some(edited) => save_job(cmd, &spec, &edited, force).await?,
                    // A new job is saved as the editor left it.
                    None if job_name(&job) == "new" => save_job(cmd, &spec, &text, force).await?,
                    None => cmd.info(format!("Job {} not changed.", job_name(&job))),
                }
            } else if cmd.tagged {
                cmd.stat(job_record(&spec, &job, true));
            } else {
                cmd.info(job.to_form(&spec, None));
            }
        }
    }
    Ok(())
}

/// The name in a job's `Job` field (`new` for a job not yet saved).
fn job_name(job: &Job) -> &str {
    job.fields
        .iter()
        .find(|(f, _)| f == "Job")
        .map_or("new", |(_, v)| v.as_str())
}

/// Saves job form `text` (from `-i` or the editor).
async fn save_job(cmd: &mut Cmd, spec: &JobSpec, text: &str, force: bool) -> CmdResult {
    let bad = |e: String| {
        CmdError::Report(Report::failed(
            Generic::Usage,
            number::FORM,
            format!("Error in job specification: {e}"),
        ))
    };
    let form = Form::parse(text).map_err(|e| bad(e.to_string()))?;
    let job = Job::from_form(&form, spec).map_err(|e| bad(e.to_string()))?;
    let saved = cmd
        .call(move |svc, caller| svc.save_job(caller, job.fields, force))
        .await?
        .map_err(refused)?;
    cmd.info(format!("Job {} saved.", saved.name));
    Ok(())
}

async fn jobspec(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("jobspec").expect("jobspec is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if !flags.rest.is_empty() || (flags.has('o') && flags.has('i')) {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    job_spec_form(cmd, flags.has('o'), flags.has('i')).await
}

/// `spec -o job` / `spec -i job`: the job spec is the one spec whose fields change.
async fn spec(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("spec").expect("spec is in the table");
    let flags = dispatch::flags(cmd, command)?;
    match flags.rest.as_slice() {
        [kind] if kind == "job" => {}
        [kind] => {
            return Err(usage(format!(
                "spec: only the job spec's fields can be changed ('{kind}' was given).\nUsage: {}",
                command.usage
            )));
        }
        _ => return Err(usage(format!("Usage: {}", command.usage))),
    }
    if flags.has('o') && flags.has('i') {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    job_spec_form(cmd, flags.has('o'), flags.has('i')).await
}

/// Shows the job spec (`output`), saves one read from the client (`input`), or, with
/// neither, sends it through the client's editor and saves what comes back.
async fn job_spec_form(cmd: &mut Cmd, output: bool, input: bool) -> CmdResult {
    let spec = spec_of(cmd).await?;
    let form = job_spec_values(&spec);
    let edited = if output {
        forms::send(cmd, &JOBSPEC, &form);
        return Ok(());
    } else if input {
        forms::receive(cmd, &JOBSPEC).await?
    } else {
        match forms::edit(cmd, &JOBSPEC, &form).await? {
            forms::Edited::Changed(values) => values,
            forms::Edited::Same => {
                cmd.info("Spec job not changed.");
                return Ok(());
            }
        }
    };
    // The form as text is the job spec's own syntax (`Fields:` lines and the rest).
    let text = JOBSPEC.render(&edited);
    cmd.call(move |svc, caller| svc.save_job_spec(caller, &text))
        .await?
        .map_err(refused)?;
    cmd.info("Spec job saved.");
    Ok(())
}

/// The job spec as the values of its form.
fn job_spec_values(spec: &JobSpec) -> Values {
    let mut values: Vec<String> = Vec::new();
    let mut presets: Vec<String> = Vec::new();
    for f in &spec.fields {
        if !f.values.is_empty() {
            values.push(format!("{} {}", f.name, f.values.join("/")));
        }
        if let Some(p) = &f.preset {
            presets.push(format!("{} {p}", f.name));
        }
    }
    vec![
        (
            "Fields",
            spec.fields
                .iter()
                .map(|f| {
                    format!(
                        "{} {} {} {} {}",
                        f.code,
                        f.name,
                        f.kind.as_str(),
                        f.length,
                        f.persistence.as_str()
                    )
                })
                .collect(),
        ),
        ("Values", values),
        ("Presets", presets),
        ("Comments", spec.comments.clone()),
    ]
}

/// `job000001 on 2026/11/28 by alice *open* 'Crash on start'`; with `-l` the whole
/// description below it, indented.
fn job_line(spec: &JobSpec, job: &Job, long: bool) -> String {
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
    let head = format!("{}{when}{by} *{}*", job.name(spec), get(STATUS_CODE));
    if long {
        let body: String = description.lines().map(|l| format!("\n\t{l}")).collect();
        format!("{head}\n{body}\n")
    } else {
        format!("{head} '{}'", cut(&description, Some(31), true))
    }
}

async fn jobs(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("jobs").expect("jobs is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let max: u32 = match flags.value('m') {
        Some(m) => m
            .parse()
            .map_err(|_| usage(format!("-m {m}: the maximum must be a number")))?,
        None => 0,
    };
    // Depot paths need no workspace; local and client paths go through the caller's.
    let (mapped, _) = fileargs::map(cmd, &flags.rest, false).await?;
    let files = mapped.into_iter().map(|a| a.keel).collect();
    let query = JobsQuery {
        expression: flags.value('e').unwrap_or_default().to_string(),
        max,
        reverse: flags.has('r'),
        files,
        include_integrated: flags.has('i'),
    };
    let spec = spec_of(cmd).await?;
    let found = cmd
        .call(move |svc, caller| {
            let mut out: Vec<JobInfo> = Vec::new();
            svc.jobs(caller, &query, &mut |j| -> Result<(), ServiceError> {
                out.push(j);
                Ok(())
            })
            .map(|()| out)
        })
        .await?
        .map_err(refused)?;
    let long = flags.has('l');
    for info in found {
        let job = Job {
            fields: info.fields,
        };
        if cmd.tagged {
            cmd.stat(job_record(&spec, &job, false));
        } else {
            cmd.info(job_line(&spec, &job, long));
        }
    }
    Ok(())
}

async fn fix(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("fix").expect("fix is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let change: u64 = match flags.value('c') {
        Some(c) => c
            .parse()
            .map_err(|_| usage(format!("'{c}' is not a change number (-c).")))?,
        None => {
            return Err(usage(format!(
                "fix: name the change with -c.\nUsage: {}",
                command.usage
            )));
        }
    };
    if flags.rest.is_empty() {
        return Err(usage(format!(
            "fix: name at least one job.\nUsage: {}",
            command.usage
        )));
    }
    let jobs = flags.rest.clone();
    let status = flags.value('s').unwrap_or_default().to_string();
    let delete = flags.has('d');
    let done = cmd
        .call(move |svc, caller| svc.fix(caller, ChangeNumber(change), jobs, &status, delete))
        .await?
        .map_err(refused)?;
    for f in done {
        let action = if delete { "deleted" } else { "fixed" };
        if cmd.tagged {
            cmd.stat([
                ("Job", f.job.clone()),
                ("Change", f.change.0.to_string()),
                ("Status", f.status.clone()),
                ("Action", action.to_string()),
            ]);
        } else if delete {
            cmd.info(format!("Deleted fix {} by change {}.", f.job, f.change.0));
        } else {
            cmd.info(format!(
                "{} fixed by change {} ({}).",
                f.job, f.change.0, f.status
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_job_form_names_every_field() {
        let def = job_specdef(&JobSpec::default());
        assert!(def.starts_with("Job;code:101;rq;len:"), "{def}");
        assert!(def.contains("Status;code:102;type:select;rq;"), "{def}");
        assert!(def.contains("Description;code:105;type:text;"), "{def}");
        assert!(def.ends_with(";;"), "{def}");
    }
}
