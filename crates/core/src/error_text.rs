//! One line of text for an error and its chain of sources.

/// Joins an error and its sources into one line (`outer: inner: root`), skipping a source whose
/// message an earlier part already contains (many errors repeat their source's text).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn joins_sources_and_skips_repeats() {
        let root = Layer("connection refused", None);
        let mid = Layer("transport error: connection refused", Some(Box::new(root)));
        let top = Layer("cannot reach 127.0.0.1:9", Some(Box::new(mid)));
        assert_eq!(
            error_chain(&top),
            "cannot reach 127.0.0.1:9: transport error: connection refused"
        );
    }
}
