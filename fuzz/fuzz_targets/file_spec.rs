//! Fuzzes `FileSpec::parse` and `RevSpec::parse`; valid values must survive Display → parse.
#![no_main]

use keel_core::{FileSpec, RevSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = FileSpec::parse(text) {
        let shown = spec.to_string();
        let again = FileSpec::parse(&shown).expect("displayed file spec must re-parse");
        assert_eq!(again, spec);
    }
    if let Ok(rev) = RevSpec::parse(text) {
        let shown = rev.to_string();
        let again = RevSpec::parse(&shown).expect("displayed revision must re-parse");
        assert_eq!(again, rev);
    }
});
