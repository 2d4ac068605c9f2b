//! Fuzzes `DepotPath`, `ClientPath` and `PathPattern` parsing and pattern matching.
#![no_main]

use keel_core::{ClientPath, DepotPath, PathPattern};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(path) = DepotPath::parse(text) {
        let _ = (path.depot(), path.dir(), path.file_name());
        assert_eq!(DepotPath::parse(&path.to_string()).as_ref(), Ok(&path));
        let pattern = PathPattern::parse(text).expect("a depot path is a valid pattern");
        assert!(pattern.matches(text), "a literal pattern must match itself");
    }
    if let Ok(path) = ClientPath::parse(text) {
        assert_eq!(ClientPath::parse(&path.to_string()).as_ref(), Ok(&path));
    }
    if let Ok(pattern) = PathPattern::parse(text) {
        let _ = pattern.matches("//depot/dir/sub/file.c");
        let _ = pattern.has_wildcards();
        assert!(text.starts_with(pattern.literal_prefix()));
    }
});
