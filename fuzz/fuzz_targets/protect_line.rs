//! Fuzzes the protections table parser, host patterns and group limits: valid values must
//! survive Display → parse, and evaluating a parsed line never panics.
#![no_main]

use keel_core::protect::{HostPattern, ProtectLine};
use keel_core::{Limit, Right, UserProtections};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(line) = ProtectLine::parse(text, 1) {
        let shown = line.to_string();
        let again = ProtectLine::parse(&shown, 1).expect("displayed line must re-parse");
        assert_eq!(again, line);
        let compiled = UserProtections::compile(&[line], "user", &["group".into()], None);
        let _ = compiled.allows(Right::Read, "//depot/a/b.c");
    }
    if let Ok(host) = HostPattern::parse(text) {
        let again = HostPattern::parse(&host.to_string()).expect("displayed host must re-parse");
        assert_eq!(again, host);
        let _ = host.matches(Some("10.1.2.3".parse().expect("an address")));
    }
    if let Ok(limit) = Limit::parse(text) {
        assert_eq!(Limit::parse(&limit.to_string()), Ok(limit));
    }
});
