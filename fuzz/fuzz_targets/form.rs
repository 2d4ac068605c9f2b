//! Fuzzes `Form::parse`; a parsed form must render to text that re-parses to the same form.
#![no_main]

use keel_core::Form;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(form) = Form::parse(text) else {
        return;
    };
    let rendered = form.render();
    let again = Form::parse(&rendered).expect("a rendered form must re-parse");
    assert_eq!(again, form);
    for (name, _) in &form.fields {
        assert!(form.get(name).is_some());
    }
});
