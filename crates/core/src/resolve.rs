//! The pure decision behind `p4 resolve -am/-as/-at/-ay/-af`: which content a file gets.

use std::fmt;

use thiserror::Error;

use crate::merge::merge3;

/// An automatic resolve flag of `p4 resolve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResolveMode {
    /// `-am`: accept the merge when it has no conflicts; skip otherwise.
    AcceptMerged,
    /// `-as`: accept the only side that changed; skip when both changed.
    AcceptSafe,
    /// `-at`: accept theirs.
    AcceptTheirs,
    /// `-ay`: accept yours.
    AcceptYours,
    /// `-af`: accept the merge, with conflict markers if any.
    AcceptForced,
}

impl ResolveMode {
    const ALL: [ResolveMode; 5] = [
        ResolveMode::AcceptMerged,
        ResolveMode::AcceptSafe,
        ResolveMode::AcceptTheirs,
        ResolveMode::AcceptYours,
        ResolveMode::AcceptForced,
    ];

    /// The flag letters without the dash, e.g. `am`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ResolveMode::AcceptMerged => "am",
            ResolveMode::AcceptSafe => "as",
            ResolveMode::AcceptTheirs => "at",
            ResolveMode::AcceptYours => "ay",
            ResolveMode::AcceptForced => "af",
        }
    }

    /// Parses the flag letters without the dash: `am`, `as`, `at`, `ay` or `af`.
    pub fn parse(text: &str) -> Option<ResolveMode> {
        ResolveMode::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

impl fmt::Display for ResolveMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "-{}", self.as_str())
    }
}

/// What the resolved file becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Their revision, unchanged.
    Theirs,
    /// Your workspace file, unchanged.
    Yours,
    /// New merged text (with conflict markers only under `-af`).
    Merged(String),
}

/// Why a file was left unresolved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Skip {
    /// `-am`: the merge has this many conflicting chunks.
    #[error("{0} conflicting chunk(s); resolve manually or use -af, -at or -ay")]
    Conflicts(usize),
    /// `-as`: both theirs and yours changed since base.
    #[error("both theirs and yours changed; use -am, -af, -at or -ay")]
    BothChanged,
    /// A binary file changed on both sides can only take one side whole.
    #[error("binary file changed on both sides; use -at or -ay")]
    BinaryNeedsWholeFile,
}

/// Decides the text resolve of one file from base, their and your contents.
///
/// - `-at` → [`Resolution::Theirs`]; `-ay` → [`Resolution::Yours`].
/// - `-as` → `Theirs` if yours equals base (also when nothing changed), `Yours` if theirs
///   equals base, else [`Skip::BothChanged`] (even if both made the same change).
/// - `-am` → [`merge3`]; with conflicts [`Skip::Conflicts`], else `Theirs` if the merge
///   equals theirs, `Yours` if it equals yours, else [`Resolution::Merged`].
/// - `-af` → like `-am`, but conflicts give `Merged` text containing Perforce markers.
///
/// Binary files go through [`decide_binary`] instead.
pub fn decide(
    mode: ResolveMode,
    base: &str,
    theirs: &str,
    yours: &str,
) -> Result<Resolution, Skip> {
    match mode {
        ResolveMode::AcceptTheirs => Ok(Resolution::Theirs),
        ResolveMode::AcceptYours => Ok(Resolution::Yours),
        ResolveMode::AcceptSafe if yours == base => Ok(Resolution::Theirs),
        ResolveMode::AcceptSafe if theirs == base => Ok(Resolution::Yours),
        ResolveMode::AcceptSafe => Err(Skip::BothChanged),
        ResolveMode::AcceptMerged | ResolveMode::AcceptForced => {
            let outcome = merge3(base, theirs, yours);
            if outcome.conflicts > 0 && mode == ResolveMode::AcceptMerged {
                Err(Skip::Conflicts(outcome.conflicts))
            } else if outcome.conflicts == 0 && outcome.merged == theirs {
                Ok(Resolution::Theirs)
            } else if outcome.conflicts == 0 && outcome.merged == yours {
                Ok(Resolution::Yours)
            } else {
                Ok(Resolution::Merged(outcome.merged))
            }
        }
    }
}

/// Decides the resolve of a binary file, given content digests (any strings that are equal
/// exactly when the contents are equal) of base, their and your revisions.
///
/// Binary files are never merged line by line, only taken whole:
/// - `-at` → `Theirs`; `-ay` → `Yours`.
/// - `-am`, `-af` → `Theirs` if yours equals base or theirs equals yours, `Yours` if theirs
///   equals base, else [`Skip::BinaryNeedsWholeFile`].
/// - `-as` → `Theirs` if yours equals base, `Yours` if theirs equals base, else
///   [`Skip::BinaryNeedsWholeFile`] (even if both made the same change, as for text).
pub fn decide_binary(
    mode: ResolveMode,
    base_digest: &str,
    theirs_digest: &str,
    yours_digest: &str,
) -> Result<Resolution, Skip> {
    let identical_ok = matches!(mode, ResolveMode::AcceptMerged | ResolveMode::AcceptForced);
    match mode {
        ResolveMode::AcceptTheirs => Ok(Resolution::Theirs),
        ResolveMode::AcceptYours => Ok(Resolution::Yours),
        _ if yours_digest == base_digest => Ok(Resolution::Theirs),
        _ if theirs_digest == base_digest => Ok(Resolution::Yours),
        _ if identical_ok && theirs_digest == yours_digest => Ok(Resolution::Theirs),
        _ => Err(Skip::BinaryNeedsWholeFile),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ResolveMode::*;

    #[test]
    fn parse_and_display() {
        let cases: &[(&str, Option<ResolveMode>)] = &[
            ("am", Some(AcceptMerged)),
            ("as", Some(AcceptSafe)),
            ("at", Some(AcceptTheirs)),
            ("ay", Some(AcceptYours)),
            ("af", Some(AcceptForced)),
            ("-am", None),
            ("AM", None),
            ("a", None),
            ("", None),
            ("ax", None),
        ];
        for (text, want) in cases {
            assert_eq!(ResolveMode::parse(text), *want, "{text:?}");
            if let Some(mode) = want {
                assert_eq!(mode.to_string(), format!("-{text}"));
            }
        }
    }

    const BASE: &str = "1\n2\n3\n4\n5\n";
    const THEIRS_ONLY: (&str, &str) = ("1\nT2\n3\n4\n5\n", BASE);
    const YOURS_ONLY: (&str, &str) = (BASE, "1\n2\n3\nY4\n5\n");
    const BOTH_CLEAN: (&str, &str) = ("1\nT2\n3\n4\n5\n", "1\n2\n3\nY4\n5\n");
    const BOTH_CONFLICT: (&str, &str) = ("1\nT2\n3\n4\n5\n", "1\nY2\n3\n4\n5\n");
    const CLEAN_MERGE: &str = "1\nT2\n3\nY4\n5\n";
    const FORCED_MERGE: &str =
        "1\n>>>> ORIGINAL\n2\n==== THEIRS\nT2\n==== YOURS\nY2\n<<<<\n3\n4\n5\n";

    type Decision = Result<Resolution, Skip>;

    fn merged(text: &str) -> Decision {
        Ok(Resolution::Merged(text.to_string()))
    }

    #[test]
    fn decide_text_table() {
        use Resolution::{Theirs, Yours};
        let cases: Vec<(ResolveMode, (&str, &str), Decision)> = vec![
            (AcceptTheirs, THEIRS_ONLY, Ok(Theirs)),
            (AcceptTheirs, YOURS_ONLY, Ok(Theirs)),
            (AcceptTheirs, BOTH_CLEAN, Ok(Theirs)),
            (AcceptTheirs, BOTH_CONFLICT, Ok(Theirs)),
            (AcceptYours, THEIRS_ONLY, Ok(Yours)),
            (AcceptYours, YOURS_ONLY, Ok(Yours)),
            (AcceptYours, BOTH_CLEAN, Ok(Yours)),
            (AcceptYours, BOTH_CONFLICT, Ok(Yours)),
            (AcceptSafe, THEIRS_ONLY, Ok(Theirs)),
            (AcceptSafe, YOURS_ONLY, Ok(Yours)),
            (AcceptSafe, BOTH_CLEAN, Err(Skip::BothChanged)),
            (AcceptSafe, BOTH_CONFLICT, Err(Skip::BothChanged)),
            (AcceptSafe, (BASE, BASE), Ok(Theirs)),
            (AcceptSafe, ("x\n", "x\n"), Err(Skip::BothChanged)),
            (AcceptMerged, THEIRS_ONLY, Ok(Theirs)),
            (AcceptMerged, YOURS_ONLY, Ok(Yours)),
            (AcceptMerged, BOTH_CLEAN, merged(CLEAN_MERGE)),
            (AcceptMerged, BOTH_CONFLICT, Err(Skip::Conflicts(1))),
            (AcceptMerged, (BASE, BASE), Ok(Theirs)),
            (AcceptMerged, ("x\n", "x\n"), Ok(Theirs)),
            (AcceptForced, THEIRS_ONLY, Ok(Theirs)),
            (AcceptForced, YOURS_ONLY, Ok(Yours)),
            (AcceptForced, BOTH_CLEAN, merged(CLEAN_MERGE)),
            (AcceptForced, BOTH_CONFLICT, merged(FORCED_MERGE)),
        ];
        for (mode, (theirs, yours), want) in cases {
            assert_eq!(
                decide(mode, BASE, theirs, yours),
                want,
                "{mode} theirs={theirs:?} yours={yours:?}"
            );
        }
    }

    #[test]
    fn decide_binary_table() {
        use Resolution::{Theirs, Yours};
        let whole = Err(Skip::BinaryNeedsWholeFile);
        // (mode, theirs digest, yours digest) against base digest "b".
        let cases: Vec<(ResolveMode, &str, &str, Decision)> = vec![
            (AcceptTheirs, "t", "b", Ok(Theirs)),
            (AcceptTheirs, "t", "y", Ok(Theirs)),
            (AcceptYours, "b", "y", Ok(Yours)),
            (AcceptYours, "t", "y", Ok(Yours)),
            (AcceptSafe, "b", "b", Ok(Theirs)),
            (AcceptSafe, "t", "b", Ok(Theirs)),
            (AcceptSafe, "b", "y", Ok(Yours)),
            (AcceptSafe, "t", "y", whole.clone()),
            (AcceptSafe, "x", "x", whole.clone()),
            (AcceptMerged, "b", "b", Ok(Theirs)),
            (AcceptMerged, "t", "b", Ok(Theirs)),
            (AcceptMerged, "b", "y", Ok(Yours)),
            (AcceptMerged, "t", "y", whole.clone()),
            (AcceptMerged, "x", "x", Ok(Theirs)),
            (AcceptForced, "t", "b", Ok(Theirs)),
            (AcceptForced, "b", "y", Ok(Yours)),
            (AcceptForced, "t", "y", whole.clone()),
            (AcceptForced, "x", "x", Ok(Theirs)),
        ];
        for (mode, theirs, yours, want) in cases {
            assert_eq!(
                decide_binary(mode, "b", theirs, yours),
                want,
                "{mode} theirs={theirs} yours={yours}"
            );
        }
    }

    #[test]
    fn skip_messages() {
        assert_eq!(
            Skip::Conflicts(2).to_string(),
            "2 conflicting chunk(s); resolve manually or use -af, -at or -ay"
        );
        assert_eq!(
            Skip::BinaryNeedsWholeFile.to_string(),
            "binary file changed on both sides; use -at or -ay"
        );
    }
}
