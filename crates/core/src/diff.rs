//! Unified diffs between two texts (for `keel diff` and `describe`).

use similar::TextDiff;

/// A standard unified diff with `---`/`+++` headers and 3 lines of context; empty when equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_table() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "", ""),
            ("same\n", "same\n", ""),
            (
                "a\nb\nc\n",
                "a\nB\nc\n",
                "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
            ),
            ("", "x\n", "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n"),
            ("x\n", "", "--- old\n+++ new\n@@ -1 +0,0 @@\n-x\n"),
            (
                "a\n",
                "a",
                "--- old\n+++ new\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n",
            ),
        ];
        for (old, new, want) in cases {
            assert_eq!(
                unified_diff(old, new, "old", "new"),
                *want,
                "{old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn context_is_three_lines() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("10\n", "ten\n");
        let diff = unified_diff(&old, &new, "//depot/f#1", "//depot/f#2");
        let want = "--- //depot/f#1\n+++ //depot/f#2\n@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n";
        assert_eq!(diff, want);
    }

    #[test]
    fn distant_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=30)
            .map(|i| match i {
                2 => "two\n".to_string(),
                28 => "twenty-eight\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let diff = unified_diff(&old, &new, "a", "b");
        let hunks: Vec<&str> = diff.lines().filter(|l| l.starts_with("@@")).collect();
        assert_eq!(hunks, ["@@ -1,5 +1,5 @@", "@@ -25,6 +25,6 @@"]);
    }
}
