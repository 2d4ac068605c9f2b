//! A job's values: checked against the job spec, filled from its presets, rendered as a form,
//! and split into the words the job index holds.

use super::spec::{
    BLANK, FieldType, JOB_CODE, JobField, JobSpec, NEW_JOB, Persistence, RESERVED_FIELDS,
};
use crate::calendar::civil_from_days;
use crate::form::Form;

/// A job: its values by field name, in the spec's field order; empty fields left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Job {
    pub fields: Vec<(String, String)>,
}

/// A refused job form, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("field {field}: {reason}")]
    Field { field: String, reason: String },
    #[error("the job form has no {0} field (the job's name)")]
    NoName(String),
    #[error("invalid job name {name:?}: {reason}")]
    BadName { name: String, reason: String },
}

/// Who saves a job, and when: what the `$user` and `$now` presets fill in.
#[derive(Debug, Clone)]
pub struct Presets<'a> {
    pub user: &'a str,
    pub now: i64,
}

impl Job {
    /// A field's value ("" when empty), by name ignoring case.
    pub fn get(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or("", |(_, v)| v.as_str())
    }

    /// The job's name (its field 101).
    pub fn name<'a>(&'a self, spec: &JobSpec) -> &'a str {
        self.get(spec.name_of(JOB_CODE))
    }

    /// Reads a job form: every field must be in the spec (`Update` and `Access`, the dates Keel
    /// adds to the form, are ignored).
    pub fn from_form(form: &Form, spec: &JobSpec) -> Result<Job, JobError> {
        let mut fields = Vec::new();
        for (name, lines) in &form.fields {
            if RESERVED_FIELDS.contains(&name.as_str()) {
                continue;
            }
            let field = spec.field(name).ok_or_else(|| JobError::Field {
                field: name.clone(),
                reason: "no such field in the job spec".into(),
            })?;
            let value = match field.kind {
                FieldType::Text => lines.join("\n"),
                _ => lines.join(" ").trim().to_string(),
            };
            fields.push((field.name.clone(), value));
        }
        Ok(Job { fields }.ordered(spec))
    }

    /// The form of the job, comments first, `Update`/`Access` after the name when known.
    pub fn to_form(&self, spec: &JobSpec, dates: Option<(i64, i64)>) -> String {
        let mut fields = Vec::new();
        for f in &spec.fields {
            let value = self.get(&f.name);
            let lines: Vec<String> = match f.kind {
                FieldType::Text => value.lines().map(String::from).collect(),
                _ if value.is_empty() => Vec::new(),
                _ => vec![value.to_string()],
            };
            fields.push((f.name.clone(), lines));
            if let (JOB_CODE, Some((update, access))) = (f.code, dates) {
                fields.push(("Update".into(), vec![format_date(update)]));
                fields.push(("Access".into(), vec![format_date(access)]));
            }
        }
        let mut out = String::new();
        for c in &spec.comments {
            out.push_str(c);
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&Form { fields }.render());
        out
    }

    /// A new job as `job -o` offers it: the name given (or `new`) and every preset.
    pub fn fresh(spec: &JobSpec, name: &str, presets: &Presets) -> Job {
        let mut job = Job::default();
        for f in &spec.fields {
            let value = if f.code == JOB_CODE {
                name.to_string()
            } else {
                f.preset
                    .as_deref()
                    .map(|p| preset(p, presets))
                    .unwrap_or_default()
            };
            if !value.is_empty() {
                job.fields.push((f.name.clone(), value));
            }
        }
        job
    }

    /// Checks the job against the spec and fills what the spec fills: presets of empty
    /// `default`/`required` fields when new, `once` fields from `old` (or their preset),
    /// `always` fields from their preset; with `force` (an administrator's `-f`), a value given
    /// for a `once` or `always` field is kept. Returns the job ready to store.
    pub fn settle(
        mut self,
        spec: &JobSpec,
        old: Option<&Job>,
        presets: &Presets,
        force: bool,
    ) -> Result<Job, JobError> {
        let name_field = spec.name_of(JOB_CODE).to_string();
        let name = self.get(&name_field).to_string();
        if name.is_empty() {
            return Err(JobError::NoName(name_field));
        }
        check_job_name(&name)?;
        let mut settled = Vec::new();
        for f in &spec.fields {
            let given = self.take(&f.name);
            let value = match f.persistence {
                Persistence::Always | Persistence::Once if force && !given.is_empty() => given,
                Persistence::Always => f
                    .preset
                    .as_deref()
                    .map(|p| preset(p, presets))
                    .unwrap_or(given),
                Persistence::Once => match old {
                    Some(old) => old.get(&f.name).to_string(),
                    None => f
                        .preset
                        .as_deref()
                        .map(|p| preset(p, presets))
                        .unwrap_or(given),
                },
                Persistence::Default | Persistence::Required
                    if given.is_empty() && old.is_none() =>
                {
                    f.preset
                        .as_deref()
                        .map(|p| preset(p, presets))
                        .unwrap_or_default()
                }
                _ => given,
            };
            let value = check_value(f, value)?;
            if value.is_empty() {
                continue;
            }
            settled.push((f.name.clone(), value));
        }
        Ok(Job { fields: settled })
    }

    fn take(&mut self, name: &str) -> String {
        match self
            .fields
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(i) => self.fields.remove(i).1,
            None => String::new(),
        }
    }

    /// The fields in spec order.
    fn ordered(mut self, spec: &JobSpec) -> Job {
        self.fields
            .sort_by_key(|(n, _)| spec.field(n).map_or(u32::MAX, |f| f.code));
        self
    }

    /// The job's index entries: (field name, word), lowercase. Text and line fields give each
    /// word; word, select and date fields their whole value (a date as `YYYY/MM/DD:hh:mm:ss`).
    pub fn index_words(&self, spec: &JobSpec) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (name, value) in &self.fields {
            let Some(f) = spec.field(name) else { continue };
            let mut words = field_words(f.kind, value);
            words.sort();
            words.dedup();
            out.extend(words.into_iter().map(|w| (f.name.to_ascii_lowercase(), w)));
        }
        out
    }
}

/// The index words of one value of a field of `kind`.
pub(crate) fn field_words(kind: FieldType, value: &str) -> Vec<String> {
    match kind {
        FieldType::Text | FieldType::Line => value
            .split(|c: char| !is_word_char(c))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect(),
        FieldType::Date => parse_date(value)
            .map(|d| date_key(&d))
            .into_iter()
            .collect(),
        FieldType::Word | FieldType::Select => vec![value.to_lowercase()],
    }
}

/// Characters that make up a word of a text field.
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The value of preset `p` (`$user`, `$now`, `$blank`, or literal text).
fn preset(p: &str, presets: &Presets) -> String {
    match p {
        "$user" => presets.user.to_string(),
        "$now" => format_date(presets.now),
        "$blank" => BLANK.to_string(),
        text => text.to_string(),
    }
}

/// A job name: the shared naming rules, and not `new` once saved.
pub fn check_job_name(name: &str) -> Result<(), JobError> {
    let bad = |reason: &str| JobError::BadName {
        name: name.to_string(),
        reason: reason.to_string(),
    };
    crate::ids::check_name(name).map_err(bad)?;
    if name.eq_ignore_ascii_case(NEW_JOB) {
        return Err(bad("'new' asks for a new job number and cannot name a job"));
    }
    Ok(())
}

/// Checks one value against its field; returns it normalised (a date in its full form).
fn check_value(f: &JobField, value: String) -> Result<String, JobError> {
    let bad = |reason: String| JobError::Field {
        field: f.name.clone(),
        reason,
    };
    if f.persistence == Persistence::Required && (value.trim().is_empty() || value.trim() == BLANK)
    {
        return Err(bad("a value is required".into()));
    }
    if value.is_empty() {
        return Ok(value);
    }
    if f.length > 0 && value.chars().count() > f.length as usize {
        return Err(bad(format!("longer than {} characters", f.length)));
    }
    match f.kind {
        FieldType::Word if value.contains(char::is_whitespace) => {
            Err(bad(format!("{value:?} is not one word")))
        }
        FieldType::Line if value.contains('\n') => Err(bad("must be one line".into())),
        FieldType::Select => f
            .values
            .iter()
            .find(|v| v.eq_ignore_ascii_case(&value))
            .cloned()
            .ok_or_else(|| bad(format!("{value:?} is not one of {}", f.values.join("/")))),
        FieldType::Date => parse_date(&value)
            .map(|d| d.to_string())
            .ok_or_else(|| bad(format!("{value:?} is not a date (YYYY/MM/DD hh:mm:ss)"))),
        _ => Ok(value),
    }
}

/// A calendar date and time (UTC), as jobs hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct JobDate {
    pub ymd: (u32, u32, u32),
    pub hms: (u32, u32, u32),
    /// Whether a time was given (a date alone covers its whole day in `=`).
    pub has_time: bool,
}

impl std::fmt::Display for JobDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (y, m, d) = self.ymd;
        let (h, mi, s) = self.hms;
        write!(f, "{y:04}/{m:02}/{d:02} {h:02}:{mi:02}:{s:02}")
    }
}

/// Parses `YYYY/MM/DD`, optionally followed by ` hh:mm:ss` or `:hh:mm:ss`.
pub fn parse_date(text: &str) -> Option<JobDate> {
    let text = text.trim();
    let (day, time) = match text.find([' ', ':']) {
        Some(i) => (&text[..i], Some(text[i + 1..].trim())),
        None => (text, None),
    };
    let nums = |s: &str, n: usize, sep: char| -> Option<Vec<u32>> {
        let parts: Vec<&str> = s.split(sep).collect();
        if parts.len() != n
            || parts
                .iter()
                .any(|p| p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        parts.iter().map(|p| p.parse().ok()).collect()
    };
    let d = nums(day, 3, '/')?;
    if !(1..=12).contains(&d[1]) || !(1..=31).contains(&d[2]) || d[0] < 1000 {
        return None;
    }
    let hms = match time {
        Some(t) => {
            let t = nums(t, 3, ':')?;
            if t[0] > 23 || t[1] > 59 || t[2] > 59 {
                return None;
            }
            (t[0], t[1], t[2])
        }
        None => (0, 0, 0),
    };
    Some(JobDate {
        ymd: (d[0], d[1], d[2]),
        hms,
        has_time: time.is_some(),
    })
}

/// The sortable index key of a date: `YYYY/MM/DD:hh:mm:ss`.
pub(crate) fn date_key(d: &JobDate) -> String {
    let (y, m, dd) = d.ymd;
    let (h, mi, s) = d.hms;
    format!("{y:04}/{m:02}/{dd:02}:{h:02}:{mi:02}:{s:02}")
}

/// `YYYY/MM/DD hh:mm:ss` (UTC) of a Unix time.
pub fn format_date(secs: i64) -> String {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}/{mo:02}/{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presets() -> Presets<'static> {
        Presets {
            user: "alice",
            now: 1_764_300_000,
        }
    }

    #[test]
    fn a_new_job_takes_the_presets() {
        let spec = JobSpec::default();
        let fresh = Job::fresh(&spec, "new", &presets());
        assert_eq!(fresh.get("status"), "open");
        assert_eq!(fresh.get("User"), "alice");
        assert_eq!(fresh.get("Description"), BLANK);
        let form = Form::parse(&fresh.to_form(&spec, None)).expect("form");
        let mut job = Job::from_form(&form, &spec).expect("job");
        job.fields[0].1 = "job000001".into();
        // The placeholder description is refused.
        let err = job
            .clone()
            .settle(&spec, None, &presets(), false)
            .expect_err("blank");
        assert!(err.to_string().contains("Description"), "{err}");
        job.fields.retain(|(n, _)| n != "Description");
        job.fields
            .push(("Description".into(), "Crash on start.\nSecond line.".into()));
        let settled = job.settle(&spec, None, &presets(), false).expect("settles");
        assert_eq!(settled.get("Date"), format_date(1_764_300_000));
        assert_eq!(settled.name(&spec), "job000001");
        let words = settled.index_words(&spec);
        assert!(
            words.contains(&("description".into(), "crash".into())),
            "{words:?}"
        );
        assert!(
            words.contains(&("status".into(), "open".into())),
            "{words:?}"
        );
    }

    #[test]
    fn bad_values_name_the_field() {
        let spec = JobSpec::default();
        let job = |status: &str| Job {
            fields: vec![
                ("Job".into(), "j1".into()),
                ("Status".into(), status.into()),
                ("Description".into(), "x".into()),
            ],
        };
        let err = job("shut")
            .settle(&spec, None, &presets(), false)
            .expect_err("bad");
        assert_eq!(
            err.to_string(),
            "field Status: \"shut\" is not one of open/suspended/closed"
        );
        assert_eq!(
            job("CLOSED")
                .settle(&spec, None, &presets(), false)
                .map(|j| j.get("Status").to_string()),
            Ok("closed".to_string())
        );
        let form = Form::parse("Job: j1\nColour: red\n").expect("form");
        assert!(Job::from_form(&form, &spec).is_err());
    }

    #[test]
    fn dates_parse_and_format() {
        assert_eq!(format_date(0), "1970/01/01 00:00:00");
        let d = parse_date("2026/11/28 12:30:05").expect("date");
        assert_eq!(d.to_string(), "2026/11/28 12:30:05");
        assert_eq!(date_key(&d), "2026/11/28:12:30:05");
        assert!(parse_date("2026/11/28:12:30:05").is_some());
        assert!(parse_date("2026/13/01").is_none());
        assert!(parse_date("yesterday").is_none());
    }
}
