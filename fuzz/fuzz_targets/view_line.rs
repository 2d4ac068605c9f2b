//! Fuzzes `ViewLine::parse`; valid lines must build a view, translate, and survive Display → parse.
#![no_main]

use keel_core::{View, ViewLine};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(line) = ViewLine::parse(text) else {
        return;
    };
    let shown = line.to_string();
    let again = ViewLine::parse(&shown).expect("displayed view line must re-parse");
    assert_eq!(again, line);
    let view = View::new(vec![line]).expect("a parsed line must build a view");
    let _ = view.translate("//depot/dir/sub/file.c");
    let _ = view.translate_back("//ws/dir/sub/file.c");
    let _ = view.left_prefixes();
    for prefix in view.left_prefixes() {
        if let Some(right) = view.translate(&prefix) {
            let _ = view.translate_back(&right);
        }
    }
});
