//! Fuzzes the job expression parser (`jobs -e`): any text either parses or is refused with an
//! error naming a position inside it; a parsed expression checks and matches without panicking,
//! and every term a job satisfies has one of the job's index words in its range (the index
//! narrows a search, never loses a job).
#![no_main]

use keel_core::job::{Expr, ExprError, Job, JobSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let spec = JobSpec::default();
    match Expr::parse(text) {
        Ok(expr) => {
            let _ = expr.check(&spec);
            let job = Job {
                fields: vec![
                    ("Job".into(), "job000001".into()),
                    ("Status".into(), "open".into()),
                    ("Date".into(), "2026/11/28 12:00:00".into()),
                    ("Description".into(), text.into()),
                ],
            };
            let _ = expr.matches(&job, &spec);
            let words = job.index_words(&spec);
            for term in expr.terms() {
                if term.matches(&job, &spec) {
                    let range = term.index_range(&spec);
                    assert!(words.iter().any(|(f, w)| range.contains(f, w)), "{range:?}");
                }
            }
        }
        Err(ExprError::Empty) => assert!(text.trim().is_empty()),
        Err(
            ExprError::Unexpected { position, .. }
            | ExprError::Missing { position, .. }
            | ExprError::Unclosed { position },
        ) => assert!(position >= 1 && position <= text.chars().count()),
        Err(e) => panic!("the parser gave a checking error: {e}"),
    }
});
