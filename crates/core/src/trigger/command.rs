//! A trigger's command line: split into argv words (no shell) and its `%variables%`
//! substituted inside each word, so a value never splits into more words or reaches a shell.

/// The variables a trigger command may name, Perforce's names; empty when not known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TriggerVars {
    pub change: String,
    pub user: String,
    pub client: String,
    pub serverport: String,
    pub formfile: String,
    pub formname: String,
    pub formtype: String,
}

/// Every variable name a command may use.
pub(super) const VARIABLES: &[&str] = &[
    "change",
    "user",
    "client",
    "serverport",
    "formfile",
    "formname",
    "formtype",
];

/// Variables that only form triggers know.
pub(super) const FORM_VARIABLES: &[&str] = &["formfile", "formname", "formtype"];

impl TriggerVars {
    fn get(&self, name: &str) -> Option<&str> {
        Some(match name {
            "change" => &self.change,
            "user" => &self.user,
            "client" => &self.client,
            "serverport" => &self.serverport,
            "formfile" => &self.formfile,
            "formname" => &self.formname,
            "formtype" => &self.formtype,
            _ => return None,
        })
    }

    /// `word` with every `%name%` of a known variable replaced by its value.
    pub fn substitute(&self, word: &str) -> String {
        let mut out = String::with_capacity(word.len());
        let mut rest = word;
        while let Some(start) = rest.find('%') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match variable_at(after).and_then(|name| Some((name, self.get(name)?))) {
                Some((name, value)) => {
                    out.push_str(value);
                    rest = &after[name.len() + 1..];
                }
                None => {
                    out.push('%');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The name of a `%name%` reference starting right after a `%`: lowercase letters closed by
/// `%`. Anything else (`%s`, `%Y-%m`) is literal text.
fn variable_at(text: &str) -> Option<&str> {
    let end = text.find('%')?;
    let name = &text[..end];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase())).then_some(name)
}

/// The `%name%` references in a command text.
pub(super) fn variables(command: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = command;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        match variable_at(after) {
            Some(name) => {
                found.push(name);
                rest = &after[name.len() + 1..];
            }
            None => rest = after,
        }
    }
    found
}

/// Splits a command line into words: whitespace separates words; `"..."` and `'...'` keep
/// their content (spaces included) in one word; nothing else is special. An unclosed quote
/// is an error naming it.
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("unclosed {c} in the command")),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_and_quotes() {
        let cases: &[(&str, &[&str])] = &[
            ("check %change%", &["check", "%change%"]),
            ("  a   b  ", &["a", "b"]),
            ("sh -c 'exit 1'", &["sh", "-c", "exit 1"]),
            ("say \"two words\" x", &["say", "two words", "x"]),
            ("a''b", &["ab"]),
            ("''", &[""]),
            ("", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(split_command(text).unwrap(), *want, "{text}");
        }
        assert_eq!(
            split_command("say 'open").unwrap_err(),
            "unclosed ' in the command"
        );
    }

    #[test]
    fn substitutes_inside_words_only_known_names() {
        let vars = TriggerVars {
            change: "12".into(),
            user: "a b".into(),
            ..Default::default()
        };
        let cases = [
            ("%change%", "12"),
            ("--change=%change%.", "--change=12."),
            ("%user%", "a b"),
            ("%client%", ""),
            ("100%", "100%"),
            ("+%Y-%m-%d", "+%Y-%m-%d"),
            ("%nope%", "%nope%"),
            ("%%change%%", "%12%"),
        ];
        for (word, want) in cases {
            assert_eq!(vars.substitute(word), want, "{word}");
        }
        assert_eq!(variables("x %change% %s %user%"), ["change", "user"]);
    }
}
