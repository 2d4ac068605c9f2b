//! Fuzzes the triggers table parser; a parsed table must render to lines that re-parse to
//! the same table, and every command must split into argv words.
#![no_main]

use keel_core::trigger::{parse_table, render_table, split_command};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let Ok(table) = parse_table(&lines) else {
        return;
    };
    let again = parse_table(&render_table(&table)).expect("a rendered table must re-parse");
    assert_eq!(again, table);
    for line in &table {
        split_command(&line.command).expect("a parsed command splits");
    }
});
