//! The webhooks table: lines `NAME PATH-PATTERN URL [SECRET]`, parsed and checked (a bad line
//! is refused by its number and the token that is wrong), rendered, and matched against a
//! change's files. Pure logic: the server posts the payloads.

use crate::pattern::PathPattern;

/// One webhook: submitted changes with a file matching `path` are posted to `url`, signed
/// with `secret` when one is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookLine {
    pub name: String,
    /// A depot pattern (`//depot/proj/...`).
    pub path: String,
    /// `http://HOST[:PORT][/PATH]`.
    pub url: String,
    pub secret: Option<String>,
}

/// A webhooks table line that does not parse: its number, its text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("webhooks line {line_no} '{line}': {reason}")]
pub struct WebhookError {
    pub line_no: usize,
    pub line: String,
    pub reason: String,
}

impl WebhookLine {
    /// The line as the table shows it.
    pub fn render(&self) -> String {
        let mut line = format!("{} {} {}", self.name, self.path, self.url);
        if let Some(secret) = &self.secret {
            line.push(' ');
            line.push_str(secret);
        }
        line
    }

    /// Whether a depot file is one this webhook reports.
    pub fn matches(&self, depot: &str) -> bool {
        PathPattern::parse(&self.path).is_ok_and(|p| p.matches(depot))
    }
}

/// Parses a whole table (numbered from 1, blank lines skipped); names must be unique.
pub fn parse_webhooks(lines: &[String]) -> Result<Vec<WebhookLine>, WebhookError> {
    let mut table: Vec<WebhookLine> = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line = parse_webhook(i + 1, text)?;
        if table.iter().any(|l| l.name == line.name) {
            return Err(WebhookError {
                line_no: i + 1,
                line: text.trim().to_string(),
                reason: format!("the name '{}' is used by an earlier line", line.name),
            });
        }
        table.push(line);
    }
    Ok(table)
}

/// Parses one line, `line_no` naming it in an error.
pub fn parse_webhook(line_no: usize, text: &str) -> Result<WebhookLine, WebhookError> {
    let err = |reason: String| WebhookError {
        line_no,
        line: text.trim().to_string(),
        reason,
    };
    let fields: Vec<&str> = text.split_whitespace().collect();
    let (name, path, url, secret) = match fields[..] {
        [name, path, url] => (name, path, url, None),
        [name, path, url, secret] => (name, path, url, Some(secret)),
        _ => {
            return Err(err(format!(
                "expected NAME PATH-PATTERN URL [SECRET], found {} field(s)",
                fields.len()
            )));
        }
    };
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(err(format!(
            "name '{name}': use letters, digits, '-', '_' and '.'"
        )));
    }
    if !path.starts_with("//") {
        return Err(err(format!("path '{path}' is not a depot pattern (//...)")));
    }
    PathPattern::parse(path).map_err(|e| err(format!("path '{path}': {e}")))?;
    check_url(url).map_err(|reason| err(format!("URL '{url}': {reason}")))?;
    Ok(WebhookLine {
        name: name.to_string(),
        path: path.to_string(),
        url: url.to_string(),
        secret: secret.map(str::to_string),
    })
}

/// The parts of an `http://` URL a client connects with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookUrl {
    pub host: String,
    pub port: u16,
    /// The path and query, at least `/`.
    pub target: String,
}

/// Splits a URL the table accepted; the reason when it is not one.
pub fn check_url(url: &str) -> Result<WebhookUrl, String> {
    let rest = if let Some(rest) = url.strip_prefix("http://") {
        rest
    } else if url.starts_with("https://") {
        return Err(
            "https:// is not supported yet: post to an http:// relay on the receiving host".into(),
        );
    } else {
        return Err("it must start with http://".into());
    };
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err("user names or passwords in the URL are not accepted".into());
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            let port: u16 = port
                .parse()
                .map_err(|_| format!("port '{port}' is not a number from 1 to 65535"))?;
            if port == 0 {
                return Err("port 0 is not a port".into());
            }
            (host, port)
        }
        _ => (authority, 80),
    };
    let valid_host = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '[' | ']' | ':'));
    if !valid_host {
        return Err(format!("host '{host}' is not a host name or address"));
    }
    if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the path holds spaces or control characters".into());
    }
    let target = if target.starts_with('?') {
        format!("/{target}")
    } else {
        target.to_string()
    };
    Ok(WebhookUrl {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
        target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(lines: &[&str]) -> Result<Vec<WebhookLine>, WebhookError> {
        parse_webhooks(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn lines_parse_and_render_back() {
        let t = table(&[
            "ci //depot/proj/... http://127.0.0.1:8080/hook s3cret",
            "",
            "docs //depot/docs/... http://ci.example.com/keel?plan=7",
        ])
        .expect("valid table");
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].secret.as_deref(), Some("s3cret"));
        assert_eq!(
            t[0].render(),
            "ci //depot/proj/... http://127.0.0.1:8080/hook s3cret"
        );
        assert!(t[0].matches("//depot/proj/a/b.c"));
        assert!(!t[0].matches("//depot/other/x"));
        let url = check_url(&t[1].url).expect("url");
        assert_eq!(
            (url.host.as_str(), url.port, url.target.as_str()),
            ("ci.example.com", 80, "/keel?plan=7")
        );
    }

    #[test]
    fn bad_lines_name_the_line_and_the_token() {
        let cases: &[(&[&str], usize, &str)] = &[
            (
                &["a //depot/... http://h/", "b //depot/... ftp://h/"],
                2,
                "ftp://h/",
            ),
            (&["a //depot/... http://h:99999/"], 1, "99999"),
            (
                &["a //depot/... https://h/"],
                1,
                "https:// is not supported",
            ),
            (&["a //depot/..."], 1, "found 2 field(s)"),
            (&["a depot/... http://h/"], 1, "depot/..."),
            (&["a //depot/... http://u:p@h/"], 1, "passwords"),
            (&["a //depot/... http:///x"], 1, "host ''"),
            (
                &["a //depot/... http://h/", "a //depot/x http://h/"],
                2,
                "earlier line",
            ),
            (&["a/b //depot/... http://h/"], 1, "name 'a/b'"),
        ];
        for (lines, line_no, token) in cases {
            let e = table(lines).expect_err("refused");
            assert_eq!(e.line_no, *line_no, "{e}");
            assert!(e.to_string().contains(token), "{e} should name {token}");
        }
    }
}
