//! Filters over a command's tagged fields (`fstat -F`), in the job expression language
//! ([`crate::job::Expr`]): `field=value` with `*` wildcards, `&` (or a space), `|`, `^`,
//! parentheses, and `<` `>` `<=` `>=` (numeric when both sides are numbers). Field names and
//! values compare case-insensitively; a field the record lacks matches no term, and a bare
//! word matches any field's value.

use crate::job::{Expr, ExprError, Op, Term, glob};

/// A parsed filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFilter(Expr);

impl RecordFilter {
    pub fn parse(text: &str) -> Result<RecordFilter, ExprError> {
        Expr::parse(text).map(RecordFilter)
    }

    /// Whether the record (field name, value pairs) passes.
    pub fn matches<K: AsRef<str>, V: AsRef<str>>(&self, record: &[(K, V)]) -> bool {
        eval(&self.0, record)
    }
}

fn eval<K: AsRef<str>, V: AsRef<str>>(e: &Expr, record: &[(K, V)]) -> bool {
    match e {
        Expr::Term(t) => term(t, record),
        Expr::And(a, b) => eval(a, record) && eval(b, record),
        Expr::Or(a, b) => eval(a, record) || eval(b, record),
        Expr::Not(a) => !eval(a, record),
    }
}

fn term<K: AsRef<str>, V: AsRef<str>>(t: &Term, record: &[(K, V)]) -> bool {
    let mut values = record.iter().filter(|(k, _)| {
        t.field
            .as_deref()
            .is_none_or(|f| f.eq_ignore_ascii_case(k.as_ref()))
    });
    values.any(|(_, v)| compare(&v.as_ref().to_lowercase(), t.op, &t.value))
}

fn compare(have: &str, op: Op, want: &str) -> bool {
    if op == Op::Eq {
        return glob(want, have);
    }
    let ordering = match (have.parse::<i64>(), want.parse::<i64>()) {
        (Ok(h), Ok(w)) => h.cmp(&w),
        _ => have.cmp(want),
    };
    match op {
        Op::Lt => ordering.is_lt(),
        Op::Le => ordering.is_le(),
        Op::Gt => ordering.is_gt(),
        Op::Ge => ordering.is_ge(),
        Op::Eq => ordering.is_eq(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_records() {
        let rec = [
            ("depotFile", "//depot/src/Main.c"),
            ("headRev", "12"),
            ("headType", "text"),
            ("headAction", "edit"),
        ];
        let cases: [(&str, bool); 12] = [
            ("headType=text", true),
            ("headtype=TEXT", true),
            ("headType=binary", false),
            ("^headType=binary", true),
            ("depotFile=//depot/src/*", true),
            ("headRev>=9", true),
            ("headRev>9 & headType=text", true),
            ("headRev<9", false),
            ("headRev<9 | headAction=edit", true),
            ("headType=text headRev=3", false),
            ("haveRev=*", false),
            ("main.c", false),
        ];
        for (text, want) in cases {
            let f = RecordFilter::parse(text).expect(text);
            assert_eq!(f.matches(&rec), want, "{text}");
        }
        assert!(
            RecordFilter::parse("//depot/src/main.c")
                .expect("word")
                .matches(&rec)
        );
    }

    #[test]
    fn refuses_what_does_not_parse() {
        for text in ["", "headRev>=", "(headType=text", "a=b )"] {
            assert!(RecordFilter::parse(text).is_err(), "{text}");
        }
    }
}
