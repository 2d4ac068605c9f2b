//! Fuzzes `merge3`; one-sided and identical changes must merge exactly and without conflicts.
#![no_main]

use keel_core::merge3;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let mut next = || String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let (base, theirs, yours) = (next(), next(), next());

    assert_eq!(
        merge3(&base, &base, &yours).merged,
        yours,
        "only yours changed"
    );
    assert_eq!(
        merge3(&base, &theirs, &base).merged,
        theirs,
        "only theirs changed"
    );
    for x in [&theirs, &yours] {
        let same = merge3(&base, x, x);
        assert_eq!(same.conflicts, 0, "identical changes must not conflict");
        assert_eq!(&same.merged, x, "identical changes apply once");
    }

    let outcome = merge3(&base, &theirs, &yours);
    let has_end_marker = |text: &str| text.lines().any(|l| l.starts_with("<<<<"));
    if ![&base, &theirs, &yours].iter().any(|t| t.contains("<<<<")) {
        assert_eq!(
            has_end_marker(&outcome.merged),
            outcome.conflicts > 0,
            "a `<<<<` line appears exactly when there are conflicts"
        );
    }
    if outcome.conflicts == 0 {
        // A clean merge is built from input lines only, so it never outgrows them combined.
        assert!(outcome.merged.len() <= base.len() + theirs.len() + yours.len());
    }
});
