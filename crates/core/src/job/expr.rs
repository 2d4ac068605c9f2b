//! Job expressions (`jobs -e`): `field=value`, bare words (any text field), `&` or a space
//! for and, `|` for or, `^` for not, parentheses, `*` wildcards, `<` `>` `<=` `>=` on dates
//! and words; case-insensitive. Parsed into an [`Expr`], matched against one job exactly
//! ([`Expr::matches`]), and turned into the word ranges the job index answers
//! ([`Term::index_range`]).

use super::spec::{FieldType, JobSpec};
use super::values::{Job, date_key, field_words, is_word_char, parse_date};

/// A refused expression: what is wrong and where (1-based character position).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("job expression is empty")]
    Empty,
    #[error("job expression: unexpected {token:?} at position {position}: {reason}")]
    Unexpected {
        token: String,
        position: usize,
        reason: &'static str,
    },
    #[error("job expression: missing ')' for the '(' at position {position}")]
    Unclosed { position: usize },
    #[error("job expression: {reason} after {token:?} at position {position}")]
    Missing {
        token: String,
        position: usize,
        reason: &'static str,
    },
    #[error("job expression: unknown field {field:?} at position {position}")]
    UnknownField { field: String, position: usize },
    #[error(
        "job expression: {value:?} at position {position} is not a date (YYYY/MM/DD[:hh:mm:ss])"
    )]
    BadDate { value: String, position: usize },
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
}

/// One test: `field OP value`, or a bare word (field `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub field: Option<String>,
    pub op: Op,
    /// Lowercase; may hold `*`.
    pub value: String,
    /// Where the term starts in the expression (1-based), for errors.
    pub position: usize,
}

/// A parsed job expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Term(Term),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    And,
    Or,
    Not,
    Open,
    Close,
    Op(Op),
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Word(w) => w.clone(),
            Tok::And => "&".into(),
            Tok::Or => "|".into(),
            Tok::Not => "^".into(),
            Tok::Open => "(".into(),
            Tok::Close => ")".into(),
            Tok::Op(op) => match op {
                Op::Eq => "=",
                Op::Lt => "<",
                Op::Gt => ">",
                Op::Le => "<=",
                Op::Ge => ">=",
            }
            .into(),
        }
    }
}

/// Splits the expression into tokens with their 1-based positions; a space between two
/// operands becomes an `&`.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let pos = i + 1;
        match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '&' => out.push((Tok::And, pos)),
            '|' => out.push((Tok::Or, pos)),
            '^' => out.push((Tok::Not, pos)),
            '(' => out.push((Tok::Open, pos)),
            ')' => out.push((Tok::Close, pos)),
            '=' => out.push((Tok::Op(Op::Eq), pos)),
            '<' | '>' => {
                let eq = chars.get(i + 1) == Some(&'=');
                let op = match (c, eq) {
                    ('<', false) => Op::Lt,
                    ('<', true) => Op::Le,
                    ('>', false) => Op::Gt,
                    _ => Op::Ge,
                };
                out.push((Tok::Op(op), pos));
                if eq {
                    i += 1;
                }
            }
            '"' => {
                let start = i + 1;
                let end = (start..chars.len()).find(|&j| chars[j] == '"').ok_or(
                    ExprError::Unexpected {
                        token: "\"".into(),
                        position: pos,
                        reason: "quote is never closed",
                    },
                )?;
                let word: String = chars[start..end].iter().collect();
                out.push((Tok::Word(word), pos));
                i = end + 1;
                continue;
            }
            c if c.is_control() => {
                return Err(ExprError::Unexpected {
                    token: c.to_string(),
                    position: pos,
                    reason: "control characters are not allowed",
                });
            }
            _ => {
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !"&|^()=<>\"".contains(chars[i])
                {
                    i += 1;
                }
                out.push((Tok::Word(chars[start..i].iter().collect()), pos));
                continue;
            }
        }
        i += 1;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    at: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }

    fn unexpected(&self, reason: &'static str) -> ExprError {
        match self.toks.get(self.at) {
            Some((t, p)) => ExprError::Unexpected {
                token: t.text(),
                position: *p,
                reason,
            },
            None => {
                let (t, p) = self
                    .toks
                    .last()
                    .cloned()
                    .unwrap_or((Tok::Word(String::new()), 0));
                ExprError::Missing {
                    token: t.text(),
                    position: p,
                    reason: "expression ends",
                }
            }
        }
    }

    fn or(&mut self, depth: usize) -> Result<Expr, ExprError> {
        let mut left = self.and(depth)?;
        while self.peek() == Some(&Tok::Or) {
            self.at += 1;
            let right = self.and(depth)?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self, depth: usize) -> Result<Expr, ExprError> {
        let mut left = self.unary(depth)?;
        loop {
            match self.peek() {
                Some(Tok::And) => self.at += 1,
                // A space between operands is an and.
                Some(Tok::Word(_) | Tok::Open | Tok::Not) => {}
                _ => return Ok(left),
            }
            let right = self.unary(depth)?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, ExprError> {
        if depth > 64 {
            return Err(self.unexpected("parentheses nested more than 64 deep"));
        }
        match self.toks.get(self.at).cloned() {
            Some((Tok::Not, _)) => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary(depth + 1)?)))
            }
            Some((Tok::Open, pos)) => {
                self.at += 1;
                let inner = self.or(depth + 1)?;
                if self.peek() != Some(&Tok::Close) {
                    if self.at >= self.end {
                        return Err(ExprError::Unclosed { position: pos });
                    }
                    return Err(self.unexpected("expected ')' or an operator"));
                }
                self.at += 1;
                Ok(inner)
            }
            Some((Tok::Word(word), pos)) => {
                self.at += 1;
                if let Some(Tok::Op(op)) = self.peek().cloned() {
                    self.at += 1;
                    let Some((Tok::Word(value), _)) = self.toks.get(self.at).cloned() else {
                        let (t, p) = self.toks[self.at - 1].clone();
                        return match self.toks.get(self.at) {
                            Some(_) => {
                                Err(self.unexpected("expected a value after the comparison"))
                            }
                            None => Err(ExprError::Missing {
                                token: t.text(),
                                position: p,
                                reason: "a value is missing",
                            }),
                        };
                    };
                    self.at += 1;
                    return Ok(Expr::Term(Term {
                        field: Some(word),
                        op,
                        value: value.to_lowercase(),
                        position: pos,
                    }));
                }
                Ok(Expr::Term(Term {
                    field: None,
                    op: Op::Eq,
                    value: word.to_lowercase(),
                    position: pos,
                }))
            }
            _ => Err(self.unexpected("expected a word, 'field=value', '(' or '^'")),
        }
    }
}

impl Expr {
    /// Parses a job expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let toks = tokenize(text)?;
        if toks.is_empty() {
            return Err(ExprError::Empty);
        }
        let end = toks.len();
        let mut p = Parser { toks, at: 0, end };
        let expr = p.or(0)?;
        if p.at < p.end {
            return Err(p.unexpected("expected an operator"));
        }
        Ok(expr)
    }

    /// Checks every field the expression names is in the spec, and every date compared with
    /// a date field is a date.
    pub fn check(&self, spec: &JobSpec) -> Result<(), ExprError> {
        match self {
            Expr::Term(t) => {
                let Some(name) = &t.field else { return Ok(()) };
                let f = spec.field(name).ok_or_else(|| ExprError::UnknownField {
                    field: name.clone(),
                    position: t.position,
                })?;
                if f.kind == FieldType::Date
                    && !t.value.contains('*')
                    && parse_date(&t.value).is_none()
                {
                    return Err(ExprError::BadDate {
                        value: t.value.clone(),
                        position: t.position,
                    });
                }
                Ok(())
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.check(spec)?;
                b.check(spec)
            }
            Expr::Not(a) => a.check(spec),
        }
    }

    /// The expression's terms, left to right.
    pub fn terms(&self) -> Vec<&Term> {
        match self {
            Expr::Term(t) => vec![t],
            Expr::And(a, b) | Expr::Or(a, b) => {
                let mut out = a.terms();
                out.extend(b.terms());
                out
            }
            Expr::Not(a) => a.terms(),
        }
    }

    /// Whether `job` satisfies the expression (the exact test; the index only narrows).
    pub fn matches(&self, job: &Job, spec: &JobSpec) -> bool {
        match self {
            Expr::Term(t) => t.matches(job, spec),
            Expr::And(a, b) => a.matches(job, spec) && b.matches(job, spec),
            Expr::Or(a, b) => a.matches(job, spec) || b.matches(job, spec),
            Expr::Not(a) => !a.matches(job, spec),
        }
    }
}

/// A range of index words: `lo..=hi` (`hi` None: unbounded), over one field or any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordRange {
    /// The field's name, lowercase; `None`: any field.
    pub field: Option<String>,
    pub lo: String,
    /// Inclusive upper bound.
    pub hi: Option<String>,
}

/// Above every word: an upper bound for a prefix.
const TOP: char = '\u{10FFFF}';

impl WordRange {
    /// Whether the index entry (field, word) lies in the range.
    pub fn contains(&self, field: &str, word: &str) -> bool {
        self.field.as_deref().is_none_or(|f| f == field)
            && word >= self.lo.as_str()
            && self.hi.as_deref().is_none_or(|hi| word <= hi)
    }
}

impl Term {
    /// Whether `job` satisfies this term alone.
    pub fn matches(&self, job: &Job, spec: &JobSpec) -> bool {
        match &self.field {
            None => spec
                .fields
                .iter()
                .filter(|f| f.kind.is_text())
                .any(|f| text_matches(job.get(&f.name), &self.value)),
            Some(name) => {
                let Some(f) = spec.field(name) else {
                    return false;
                };
                let value = job.get(&f.name);
                if value.is_empty() {
                    return false;
                }
                match (f.kind, self.op) {
                    (FieldType::Date, op) => match (parse_date(value), parse_date(&self.value)) {
                        (Some(have), Some(want)) => {
                            let (lo, hi) = day_bounds(&want);
                            let have = date_key(&have);
                            match op {
                                Op::Eq => have >= lo && have <= hi,
                                Op::Lt => have < lo,
                                Op::Le => have <= hi,
                                Op::Gt => have > hi,
                                Op::Ge => have >= lo,
                            }
                        }
                        // A pattern that is no date (`2026/11/*`) matches the index form.
                        (Some(have), None) => glob(&self.value, &date_key(&have)),
                        _ => false,
                    },
                    (kind, Op::Eq) if kind.is_text() => text_matches(value, &self.value),
                    (_, Op::Eq) => glob(&self.value, &value.to_lowercase()),
                    (kind, op) => field_words(kind, value)
                        .iter()
                        .any(|w| compare(w, op, &self.value)),
                }
            }
        }
    }

    /// The index words that any job matching this term must hold (a superset: the exact test
    /// is [`Expr::matches`]).
    pub fn index_range(&self, spec: &JobSpec) -> WordRange {
        let field = self.field.as_ref().map(|f| {
            spec.field(f)
                .map_or_else(|| f.to_ascii_lowercase(), |f| f.name.to_ascii_lowercase())
        });
        let kind = self
            .field
            .as_ref()
            .and_then(|f| spec.field(f))
            .map(|f| f.kind);
        if kind == Some(FieldType::Date)
            && let Some(d) = parse_date(&self.value)
        {
            let (lo, hi) = day_bounds(&d);
            let (lo, hi) = match self.op {
                Op::Eq => (lo, Some(hi)),
                Op::Lt | Op::Le => (String::new(), Some(hi)),
                Op::Gt | Op::Ge => (lo, None),
            };
            return WordRange { field, lo, hi };
        }
        let (lo, hi) = match self.op {
            Op::Lt | Op::Le => (String::new(), Some(format!("{}{TOP}", self.value))),
            Op::Gt | Op::Ge => (literal_prefix(&self.value, false), None),
            Op::Eq => {
                let text = kind.is_none_or(FieldType::is_text);
                let prefix = literal_prefix(&self.value, text);
                if prefix.len() == self.value.len() {
                    (prefix.clone(), Some(prefix))
                } else {
                    let hi = format!("{prefix}{TOP}");
                    (prefix, Some(hi))
                }
            }
        };
        WordRange { field, lo, hi }
    }
}

/// The start and end (inclusive) index keys of a date: one second with a time, the whole day
/// without.
fn day_bounds(d: &super::values::JobDate) -> (String, String) {
    if d.has_time {
        let k = date_key(d);
        (k.clone(), k)
    } else {
        let (y, m, dd) = d.ymd;
        (
            format!("{y:04}/{m:02}/{dd:02}:00:00:00"),
            format!("{y:04}/{m:02}/{dd:02}:23:59:59"),
        )
    }
}

/// The part of a pattern before its first `*` (and, for text fields, before its first
/// character that splits words).
fn literal_prefix(pattern: &str, text: bool) -> String {
    pattern
        .chars()
        .take_while(|&c| c != '*' && (!text || is_word_char(c)))
        .collect()
}

/// Whether a text field's value matches a pattern: a pattern of one word matches any of its
/// words; a phrase (`"start-up"`, `"big trees"`) matches where the value has its words in a row.
fn text_matches(value: &str, pattern: &str) -> bool {
    let words = field_words(FieldType::Text, value);
    let wanted: Vec<&str> = pattern
        .split(|c: char| c != '*' && !is_word_char(c))
        .filter(|w| !w.is_empty())
        .collect();
    if wanted.is_empty() {
        return false;
    }
    words
        .windows(wanted.len())
        .any(|run| run.iter().zip(&wanted).all(|(w, p)| glob(p, w)))
}

fn compare(word: &str, op: Op, value: &str) -> bool {
    match op {
        Op::Eq => glob(value, word),
        Op::Lt => word < value,
        Op::Le => word <= value,
        Op::Gt => word > value,
        Op::Ge => word >= value,
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point: linear in practice, bounded by p × t.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(status: &str, user: &str, date: &str, description: &str) -> Job {
        Job {
            fields: vec![
                ("Job".into(), "job000001".into()),
                ("Status".into(), status.into()),
                ("User".into(), user.into()),
                ("Date".into(), date.into()),
                ("Description".into(), description.into()),
            ],
        }
    }

    fn check(expr: &str, j: &Job) -> bool {
        let spec = JobSpec::default();
        let e = Expr::parse(expr).expect("parses");
        e.check(&spec).expect("fields known");
        e.matches(j, &spec)
    }

    #[test]
    fn expressions_match_as_documented() {
        let j = job(
            "open",
            "Alice",
            "2026/11/28 12:00:00",
            "The GUI crashes on start-up.",
        );
        let cases = [
            ("status=open", true),
            ("Status=closed", false),
            ("gui", true),
            ("GUI crash*", true),
            ("gui&user=bob", false),
            ("gui | user=bob", true),
            ("gui & ^status=closed", true),
            ("^(status=open)", false),
            ("(status=closed|status=open) user=al*", true),
            ("date=2026/11/28", true),
            ("date>2026/11/27", true),
            ("date>2026/11/28", false),
            ("date>=2026/11/28", true),
            ("date<2026/11/28", false),
            ("date<=2026/11/28:12:00:00", true),
            ("user>=alice", true),
            ("user<alice", false),
            ("description=\"start-up\"", true),
            ("crashes*up", false),
            ("\"on start\"", true),
            ("\"start on\"", false),
            ("\"tart-up\"", false),
            ("date=2026/11/*", true),
            ("*", true),
        ];
        let spec = JobSpec::default();
        let words = j.index_words(&spec);
        for (expr, want) in cases {
            assert_eq!(check(expr, &j), want, "{expr}");
            // The index narrows, never loses: a term the job satisfies has an entry of the
            // job in its word range.
            for term in Expr::parse(expr).expect("parses").terms() {
                if term.matches(&j, &spec) {
                    let range = term.index_range(&spec);
                    assert!(
                        words.iter().any(|(f, w)| range.contains(f, w)),
                        "{expr}: {range:?} misses {words:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn errors_name_the_token_and_position() {
        let err = |text: &str| Expr::parse(text).expect_err(text).to_string();
        assert_eq!(
            err("status=open &"),
            "job expression: expression ends after \"&\" at position 13"
        );
        assert_eq!(
            err("status=open )"),
            "job expression: unexpected \")\" at position 13: expected an operator"
        );
        assert_eq!(
            err("(status=open"),
            "job expression: missing ')' for the '(' at position 1"
        );
        assert_eq!(
            err("status= | x"),
            "job expression: unexpected \"|\" at position 9: expected a value after the comparison"
        );
        assert_eq!(
            err("=open"),
            "job expression: unexpected \"=\" at position 1: expected a word, 'field=value', '(' or '^'"
        );
        assert_eq!(err("  "), "job expression is empty");
        let spec = JobSpec::default();
        let e = Expr::parse("colour=red").expect("parses");
        assert_eq!(
            e.check(&spec).expect_err("unknown").to_string(),
            "job expression: unknown field \"colour\" at position 1"
        );
        let e = Expr::parse("date>soon").expect("parses");
        assert!(e.check(&spec).is_err());
    }

    #[test]
    fn index_ranges_cover_the_matches() {
        let spec = JobSpec::default();
        let term = |text: &str| match Expr::parse(text).expect("parses") {
            Expr::Term(t) => t.index_range(&spec),
            other => panic!("not a term: {other:?}"),
        };
        let r = term("Status=open");
        assert_eq!(
            (r.field.as_deref(), r.lo.as_str(), r.hi.as_deref()),
            (Some("status"), "open", Some("open"))
        );
        let r = term("crash*");
        assert_eq!((r.field, r.lo.as_str()), (None, "crash"));
        assert!(r.hi.is_some_and(|h| h.starts_with("crash")));
        let r = term("date=2026/11/28");
        assert_eq!(r.lo, "2026/11/28:00:00:00");
        assert_eq!(r.hi.as_deref(), Some("2026/11/28:23:59:59"));
    }

    #[test]
    fn glob_matches() {
        assert!(glob("a*c", "abbbc"));
        assert!(glob("*", ""));
        assert!(!glob("a*c", "abd"));
        assert!(glob("**x", "yx"));
    }
}
