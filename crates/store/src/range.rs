//! Path ranges: every depot path starting with a literal prefix, as an index-friendly interval.

/// All paths that start with `prefix`, as the half-open interval `[lo, hi)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRange {
    pub lo: String,
    pub hi: String,
}

impl PathRange {
    /// The range of paths starting with `prefix`.
    pub fn prefix(prefix: &str) -> PathRange {
        let mut hi = prefix.to_string();
        match hi.pop() {
            Some(c) if (c as u32) < 0x7f => {
                hi.push(char::from_u32(c as u32 + 1).expect("ASCII successor is a char"));
            }
            Some(c) => {
                hi.push(c);
                hi.push(char::MAX);
            }
            None => hi.push(char::MAX),
        }
        PathRange {
            lo: prefix.to_string(),
            hi,
        }
    }

    /// The range holding exactly one path.
    pub fn exact(path: &str) -> PathRange {
        PathRange {
            lo: path.to_string(),
            hi: format!("{path}\u{0}"),
        }
    }

    /// Whether `path` falls inside the range.
    pub fn contains(&self, path: &str) -> bool {
        path >= self.lo.as_str() && path < self.hi.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::PathRange;

    #[test]
    fn prefix_ranges_contain_exactly_their_paths() {
        let cases = [
            ("//depot/a/", "//depot/a/x", true),
            ("//depot/a/", "//depot/a", false),
            ("//depot/a/", "//depot/a0", false),
            ("//depot/a/", "//depot/b/x", false),
            ("//depot/a", "//depot/ab", true),
            ("//depot/é", "//depot/éx", true),
            ("//depot/é", "//depot/f", false),
        ];
        for (prefix, path, expected) in cases {
            assert_eq!(
                PathRange::prefix(prefix).contains(path),
                expected,
                "{prefix} {path}"
            );
        }
    }

    #[test]
    fn exact_range_holds_one_path() {
        let r = PathRange::exact("//depot/a");
        assert!(r.contains("//depot/a"));
        assert!(!r.contains("//depot/a/b"));
        assert!(!r.contains("//depot/"));
    }
}
