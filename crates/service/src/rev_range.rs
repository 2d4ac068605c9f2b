//! Revision ranges in file arguments (`//depot/a#3,#5`, `//depot/...@10,@20`), as `annotate`
//! and `undo` take them: the upper end selects files like any revision; the lower end is
//! resolved per file to the first revision the range holds.

use crate::ServiceError;
use keel_core::{RevSpec, SpecError};
use keel_store::RevisionRow;

/// A file argument split at its range's comma.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeArg {
    /// The argument as given, for messages.
    pub text: String,
    /// The path with the upper end of the range (or the whole argument when no range).
    pub upper: String,
    /// The lower end of the range, if one was given.
    pub lower: Option<RevSpec>,
}

impl RangeArg {
    /// Splits `text` at the comma of `#a,#b` or `@a,@b` (the upper end may leave out its
    /// marker: `#3,5`).
    pub(crate) fn parse(text: &str) -> Result<RangeArg, ServiceError> {
        let bad = |e: SpecError| ServiceError::BadArgument {
            arg: text.to_string(),
            reason: format!("{text} - bad revision range: {e}"),
        };
        let Some(at) = text.find(['#', '@']) else {
            return Ok(RangeArg {
                text: text.to_string(),
                upper: text.to_string(),
                lower: None,
            });
        };
        let (path, revs) = text.split_at(at);
        let Some((lo, hi)) = revs.split_once(',') else {
            return Ok(RangeArg {
                text: text.to_string(),
                upper: text.to_string(),
                lower: None,
            });
        };
        let lower = RevSpec::parse(lo).map_err(bad)?;
        let hi = if hi.starts_with(['#', '@']) {
            hi.to_string()
        } else {
            format!("{}{hi}", &lo[..1])
        };
        RevSpec::parse(&hi).map_err(bad)?;
        Ok(RangeArg {
            text: text.to_string(),
            upper: format!("{path}{hi}"),
            lower: Some(lower),
        })
    }

    /// The first revision of a file the range holds, given the file's revisions (oldest
    /// first) and the revision the upper end selected; `None` when the range holds none.
    pub(crate) fn first_rev(
        &self,
        revs: &[RevisionRow],
        upper: u32,
    ) -> Result<Option<u32>, ServiceError> {
        let first = match &self.lower {
            None | Some(RevSpec::None) => 1,
            Some(RevSpec::Rev(n)) => *n,
            Some(RevSpec::Head) => revs.last().map_or(0, |r| r.rev),
            Some(RevSpec::Change(c)) => match revs.iter().find(|r| r.change >= *c) {
                Some(r) => r.rev,
                None => return Ok(None),
            },
            Some(other) => {
                return Err(ServiceError::BadArgument {
                    arg: self.text.clone(),
                    reason: format!(
                        "{} - a range starts at a revision (#N) or a change (@N), not {other}",
                        self.text
                    ),
                });
            }
        };
        Ok((first <= upper).then_some(first.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_core::ChangeNumber;

    #[test]
    fn ranges_split() {
        let cases: &[(&str, &str, Option<RevSpec>)] = &[
            ("//depot/a", "//depot/a", None),
            ("//depot/a#3", "//depot/a#3", None),
            ("//depot/a#3,#5", "//depot/a#5", Some(RevSpec::Rev(3))),
            ("//depot/a#3,5", "//depot/a#5", Some(RevSpec::Rev(3))),
            (
                "//depot/...@10,@20",
                "//depot/...@20",
                Some(RevSpec::Change(ChangeNumber(10))),
            ),
            ("//depot/a#2,@20", "//depot/a@20", Some(RevSpec::Rev(2))),
        ];
        for (text, upper, lower) in cases {
            let got = RangeArg::parse(text).expect(text);
            assert_eq!((got.upper.as_str(), &got.lower), (*upper, lower), "{text}");
        }
    }

    #[test]
    fn bad_ranges_name_the_argument() {
        for text in [
            "//depot/a#x,#5",
            "//depot/a#3,#",
            "//depot/a#3,#5x",
            "//depot/a@,@4",
        ] {
            let err = RangeArg::parse(text).expect_err(text).to_string();
            assert!(err.starts_with(text), "{text}: {err}");
        }
    }
}
