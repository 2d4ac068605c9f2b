//! Server addresses as users write them: `HOST:PORT` (plain TCP) or `ssl:HOST:PORT` (TLS), as
//! in Perforce's P4PORT.

use std::fmt;

/// The prefix that asks for TLS.
const SSL_PREFIX: &str = "ssl:";
/// The prefix that asks for plain TCP explicitly (the default).
const TCP_PREFIX: &str = "tcp:";
/// The port an address without one means (Perforce's too).
pub const DEFAULT_PORT: u16 = 1666;
/// The host a bare port means: as in Perforce, `1666` is this machine's port 1666.
const LOOPBACK: &str = "127.0.0.1";

/// A server address: where to connect and whether to speak TLS there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerAddr {
    /// `HOST:PORT`, without the protocol prefix: what the socket connects to and what the
    /// trust file is keyed by.
    pub host_port: String,
    /// Whether the address asked for TLS (`ssl:`).
    pub tls: bool,
}

impl ServerAddr {
    /// Reads `ssl:HOST:PORT`, `tcp:HOST:PORT` or `HOST:PORT`, completing the forms Perforce
    /// users type: a bare `PORT` is `127.0.0.1:PORT`, a `HOST` (or IPv6 literal) without a port
    /// gets `DEFAULT_PORT` (1666). Nothing is resolved here.
    pub fn parse(text: &str) -> ServerAddr {
        let text = text.trim();
        if let Some(rest) = strip_prefix_ignore_case(text, SSL_PREFIX) {
            return ServerAddr {
                host_port: complete(rest),
                tls: true,
            };
        }
        let rest = strip_prefix_ignore_case(text, TCP_PREFIX).unwrap_or(text);
        ServerAddr {
            host_port: complete(rest),
            tls: false,
        }
    }

    /// The same `HOST:PORT` with the other protocol.
    pub fn with_tls(&self, tls: bool) -> ServerAddr {
        ServerAddr {
            host_port: self.host_port.clone(),
            tls,
        }
    }

    /// The host part (brackets of an IPv6 literal removed), for the TLS server name.
    pub fn host(&self) -> &str {
        let host = match self.host_port.rsplit_once(':') {
            Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
            _ => &self.host_port,
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The URI tonic is given; the scheme is always `http` because the TLS layer (when there
    /// is one) is this crate's connector, not tonic's.
    pub fn uri(&self) -> String {
        format!("http://{}", self.host_port)
    }
}

/// `HOST:PORT` from what was written: a bare port, a host without a port, an IPv6 literal
/// with or without brackets. Anything else is left as written, for the socket to judge.
fn complete(text: &str) -> String {
    if text.is_empty() {
        return text.to_string();
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return format!("{LOOPBACK}:{text}");
    }
    if text.parse::<std::net::Ipv6Addr>().is_ok() {
        return format!("[{text}]:{DEFAULT_PORT}");
    }
    if (text.starts_with('[') && text.ends_with(']')) || !text.contains(':') {
        return format!("{text}:{DEFAULT_PORT}");
    }
    text.to_string()
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

impl fmt::Display for ServerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tls {
            write!(f, "{SSL_PREFIX}{}", self.host_port)
        } else {
            f.write_str(&self.host_port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ServerAddr;

    #[test]
    fn prefixes_pick_the_protocol() {
        let cases = [
            ("127.0.0.1:1666", "127.0.0.1:1666", false, "127.0.0.1"),
            ("ssl:127.0.0.1:1666", "127.0.0.1:1666", true, "127.0.0.1"),
            (
                "SSL:keel.example:1666",
                "keel.example:1666",
                true,
                "keel.example",
            ),
            ("tcp:keel:1666", "keel:1666", false, "keel"),
            ("ssl:[::1]:1666", "[::1]:1666", true, "::1"),
            (" ssl:h:1 ", "h:1", true, "h"),
        ];
        for (text, host_port, tls, host) in cases {
            let addr = ServerAddr::parse(text);
            assert_eq!(addr.host_port, host_port, "{text}");
            assert_eq!(addr.tls, tls, "{text}");
            assert_eq!(addr.host(), host, "{text}");
        }
        assert_eq!(ServerAddr::parse("ssl:h:1").to_string(), "ssl:h:1");
        assert_eq!(ServerAddr::parse("tcp:h:1").to_string(), "h:1");
        assert_eq!(ServerAddr::parse("h:1").uri(), "http://h:1");
    }

    #[test]
    fn perforce_shorthands_are_completed() {
        let cases = [
            // P4PORT=1666: this machine's port.
            ("1666", "127.0.0.1:1666", false),
            ("ssl:1667", "127.0.0.1:1667", true),
            // A host without a port: the default port.
            ("127.0.0.1", "127.0.0.1:1666", false),
            ("keel.example", "keel.example:1666", false),
            ("ssl:keel.example", "keel.example:1666", true),
            ("[::1]", "[::1]:1666", false),
            ("::1", "[::1]:1666", false),
            // Already complete, or not an address at all: left for the socket to judge.
            ("[::1]:9", "[::1]:9", false),
            ("h:port", "h:port", false),
        ];
        for (text, host_port, tls) in cases {
            let addr = ServerAddr::parse(text);
            assert_eq!(addr.host_port, host_port, "{text}");
            assert_eq!(addr.tls, tls, "{text}");
        }
    }
}
