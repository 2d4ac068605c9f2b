//! One P4 RPC message: an ordered list of variables, each `name NUL len(u32 LE) value NUL`.
//! Variables with an empty name are the command's positional arguments; `func` names the
//! function the receiver is to run. Values are bytes (paths and descriptions need not be
//! UTF-8).

/// Why a message body is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("P4 RPC message variable at byte {at} has no end to its name")]
    UnterminatedName { at: usize },
    #[error("P4 RPC message variable {name:?} at byte {at} is cut short")]
    Truncated { name: String, at: usize },
    #[error("P4 RPC message variable {name:?} at byte {at} does not end with NUL")]
    MissingNul { name: String, at: usize },
    #[error("P4 RPC message has more than {max} variables")]
    TooManyVariables { max: usize },
    #[error("P4 RPC message has no func variable")]
    NoFunc,
}

/// Most variables one message may carry (a command's arguments travel one per variable).
pub const MAX_VARIABLES: usize = 100_000;

/// A decoded (or to-be-encoded) message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    vars: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Message {
    /// A message invoking `func` (the `func` variable goes last, as clients send it).
    pub fn new() -> Message {
        Message::default()
    }

    /// Appends variable `name` = `value`.
    pub fn set(&mut self, name: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Message {
        self.vars
            .push((name.as_ref().to_vec(), value.as_ref().to_vec()));
        self
    }

    /// Builder form of [`Message::set`].
    pub fn with(mut self, name: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Message {
        self.set(name, value);
        self
    }

    /// The first variable named `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.vars
            .iter()
            .find(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| v.as_slice())
    }

    /// The variable `name` as text (lossy for bytes that are not UTF-8).
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Whether variable `name` is present (flags travel with empty values).
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The function this message invokes.
    pub fn func(&self) -> Option<String> {
        self.text("func")
    }

    /// The positional arguments (variables with an empty name), in order.
    pub fn args(&self) -> impl Iterator<Item = &[u8]> {
        self.vars
            .iter()
            .filter(|(n, _)| n.is_empty())
            .map(|(_, v)| v.as_slice())
    }

    /// Every variable, in order.
    pub fn vars(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.vars
    }

    /// The encoded body (without the header).
    pub fn encode(&self) -> Vec<u8> {
        let len = self.vars.iter().map(|(n, v)| n.len() + v.len() + 6).sum();
        let mut out = Vec::with_capacity(len);
        for (name, value) in &self.vars {
            out.extend_from_slice(name);
            out.push(0);
            out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            out.extend_from_slice(value);
            out.push(0);
        }
        out
    }

    /// Decodes a body (header already removed).
    pub fn decode(body: &[u8]) -> Result<Message, MessageError> {
        let mut vars = Vec::new();
        let mut at = 0;
        while at < body.len() {
            if vars.len() >= MAX_VARIABLES {
                return Err(MessageError::TooManyVariables { max: MAX_VARIABLES });
            }
            let start = at;
            let nul = body[at..]
                .iter()
                .position(|&b| b == 0)
                .ok_or(MessageError::UnterminatedName { at: start })?;
            let name = body[at..at + nul].to_vec();
            at += nul + 1;
            let shown = || String::from_utf8_lossy(&name).into_owned();
            let Some(len_bytes) = body.get(at..at + 4) else {
                return Err(MessageError::Truncated {
                    name: shown(),
                    at: start,
                });
            };
            let len = u32::from_le_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]])
                as usize;
            at += 4;
            let end = at
                .checked_add(len)
                .filter(|&e| e < body.len())
                .ok_or_else(|| MessageError::Truncated {
                    name: shown(),
                    at: start,
                })?;
            let value = body[at..end].to_vec();
            if body[end] != 0 {
                return Err(MessageError::MissingNul {
                    name: shown(),
                    at: start,
                });
            }
            at = end + 1;
            vars.push((name, value));
        }
        Ok(Message { vars })
    }
}

/// A message framed and encoded straight into a send buffer, its variables written as they
/// are given (no [`Message`] built first); [`Encoder::finish`] fills in the frame's header.
/// What the file transfer sends per file, where the copies and allocations of a [`Message`]
/// show in a profile.
pub struct Encoder<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> Encoder<'a> {
    /// Starts a message at the end of `out`.
    pub fn begin(out: &'a mut Vec<u8>) -> Encoder<'a> {
        let start = out.len();
        out.extend_from_slice(&[0; super::frame::HEADER_LEN]);
        Encoder { out, start }
    }

    /// Adds variable `name` with `value`.
    pub fn var(&mut self, name: &str, value: impl AsRef<[u8]>) -> &mut Encoder<'a> {
        let value = value.as_ref();
        self.out.reserve(name.len() + value.len() + 6);
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.out
            .extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.out.extend_from_slice(value);
        self.out.push(0);
        self
    }

    /// Ends the message (its `func` is given last, as [`Message`]s are sent).
    pub fn finish(self) {
        let len = self.out.len() - self.start - super::frame::HEADER_LEN;
        let header = super::frame::encode_header(u32::try_from(len).unwrap_or(u32::MAX));
        self.out[self.start..self.start + super::frame::HEADER_LEN].copy_from_slice(&header);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoder_writes_what_a_message_sends() {
        let m = Message::new()
            .with("handle", "keel")
            .with("data", [0u8, 1, 2, 0xff])
            .with("func", "client-WriteFile");
        let mut out = b"before".to_vec();
        let mut e = Encoder::begin(&mut out);
        e.var("handle", "keel")
            .var("data", [0u8, 1, 2, 0xff])
            .var("func", "client-WriteFile");
        e.finish();
        let body = m.encode();
        let mut framed = b"before".to_vec();
        framed.extend_from_slice(&super::super::frame::encode_header(body.len() as u32));
        framed.extend_from_slice(&body);
        assert_eq!(out, framed);
    }

    #[test]
    fn round_trips_binary_values_and_arguments() {
        let m = Message::new()
            .with("", "-o")
            .with("", [0xffu8, 0, 1])
            .with("tag", "")
            .with("func", "user-client");
        let back = Message::decode(&m.encode()).expect("decodes");
        assert_eq!(back, m);
        assert_eq!(back.func().as_deref(), Some("user-client"));
        assert_eq!(
            back.args().collect::<Vec<_>>(),
            [&b"-o"[..], &[0xff, 0, 1][..]]
        );
        assert!(back.has("tag"));
        assert!(!back.has("nope"));
    }

    #[test]
    fn decodes_a_captured_server_reply() {
        // `xfiles=7 server=3 server2=59 func=protocol` as a body.
        let body = b"xfiles\0\x01\0\0\x007\0server\0\x01\0\0\x003\0server2\0\x02\0\0\x0059\0func\0\x08\0\0\0protocol\0";
        let m = Message::decode(body).expect("decodes");
        assert_eq!(m.text("server2").as_deref(), Some("59"));
        assert_eq!(m.func().as_deref(), Some("protocol"));
        assert_eq!(m.encode(), body);
    }

    #[test]
    fn damaged_bodies_name_the_variable() {
        assert_eq!(
            Message::decode(b"func"),
            Err(MessageError::UnterminatedName { at: 0 })
        );
        assert_eq!(
            Message::decode(b"func\0\x09\0\0\0protocol\0"),
            Err(MessageError::Truncated {
                name: "func".into(),
                at: 0
            })
        );
        assert_eq!(
            Message::decode(b"func\0\x02\0\0\0abX"),
            Err(MessageError::MissingNul {
                name: "func".into(),
                at: 0
            })
        );
        assert_eq!(
            Message::decode(b"a\0\xff\xff\xff\xffx\0"),
            Err(MessageError::Truncated {
                name: "a".into(),
                at: 0
            })
        );
    }
}
