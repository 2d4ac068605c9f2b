//! A command's arguments as `monitor show -a` and the command log show them: the request
//! message's fields (without the caller, which has fields of its own), cut to a bound, and
//! nothing at all for the requests that carry a password.

use std::fmt::{self, Write};

/// RPCs whose requests carry a password: their arguments are never kept.
const SECRET: [&str; 3] = ["Login", "SetPassword", "SaveUser"];

/// `request`'s arguments, at most `max` bytes (`…` marks a cut).
pub(crate) fn of(command: &str, request: &dyn fmt::Debug, max: usize) -> String {
    if SECRET.contains(&command) {
        return String::new();
    }
    // The caller comes first in every request; room for it and the bound.
    let mut out = Limited {
        text: String::new(),
        max: max + 1024,
    };
    let _ = write!(out, "{request:?}");
    if !out.text.contains('{') {
        // A request stream (submit, shelve): its arguments come in its messages, unseen here.
        return String::new();
    }
    let text = without_caller(&out.text);
    let text = text.trim();
    // Drop the message's name and its outer braces: `SyncRequest { files: [..] }`.
    let text = match (text.find('{'), text.ends_with('}')) {
        (Some(open), true) => text[open + 1..text.len() - 1].trim(),
        _ => text,
    };
    cut(text, max)
}

/// `text` without its `caller: Some(Caller { .. }), ` field.
fn without_caller(text: &str) -> String {
    let Some(start) = text.find("caller: Some(Caller {") else {
        return text.to_string();
    };
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    let mut end = None;
    for (i, ch) in text[start..].char_indices() {
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_string = true,
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(start + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(mut end) = end else {
        return text[..start].to_string();
    };
    let rest = &text[end..];
    if rest.starts_with(", ") {
        end += 2;
    }
    format!("{}{}", &text[..start], &text[end..])
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut at = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}…", &text[..at])
}

/// A string that stops taking text at `max` bytes (formatting then stops early).
struct Limited {
    text: String,
    max: usize,
}

impl Write for Limited {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.text.len() + s.len() > self.max {
            let room = self.max - self.text.len();
            let mut at = room.min(s.len());
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            self.text.push_str(&s[..at]);
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use keel_proto::v1 as pb;

    #[test]
    fn arguments_leave_out_the_caller_and_secrets() {
        let req = pb::FilesRequest {
            caller: Some(pb::Caller {
                user: "ann}\"{".into(),
                ..Default::default()
            }),
            files: vec!["//depot/a/...".into()],
            ..Default::default()
        };
        let args = super::of("Files", &req, 512);
        assert!(args.starts_with("files: [\"//depot/a/...\"]"), "{args}");
        assert!(!args.contains("ann"), "{args}");
        let login = pb::LoginRequest {
            caller: None,
            password: "hunter2".into(),
        };
        assert_eq!(super::of("Login", &login, 512), "");
        assert_eq!(super::of("Submit", &"Streaming", 512), "");
    }

    #[test]
    fn long_arguments_are_cut_to_the_bound() {
        let req = pb::FilesRequest {
            files: (0..1000).map(|i| format!("//depot/é{i}")).collect(),
            ..Default::default()
        };
        let args = super::of("Files", &req, 100);
        assert!(args.len() <= 100, "{}", args.len());
        assert!(args.ends_with('…'));
    }
}
