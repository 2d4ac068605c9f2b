//! A command's arguments as `monitor show -a` and the command log show them: the request
//! message's fields (without the caller, which has fields of its own), cut to a bound, and
//! nothing at all for the commands that carry a password (`secret` in the command table).
//!
//! A command keeps its request ([`Arguments`]) and puts it in words only when asked (most
//! commands end with nobody asking, and with the command log on, the log's writer thread
//! asks). The request's `Debug` text is filtered as it is formatted, in one pass into one
//! buffer: the message's name and braces and its `caller` field never reach the buffer, and
//! formatting stops once the bound is passed.

use std::fmt::{self, Write};

/// Whether `command`'s requests carry a password (its row's `secret` flag): their arguments
/// are never kept.
fn secret(command: &str) -> bool {
    keel_service::command::find(command).is_some_and(|c| c.secret)
}

/// The first field of every request, which is left out.
const CALLER: &[u8] = b"caller: ";

/// A command's request, kept to be put in words when asked.
pub(crate) struct Arguments {
    kept: Kept,
    /// Most bytes of the text.
    max: usize,
}

/// What was kept of a command's request.
enum Kept {
    /// A gRPC request message, put in words when asked.
    Request(Box<dyn fmt::Debug + Send + Sync>),
    /// The arguments in words already (a front end other than gRPC's).
    Words(String),
}

impl Arguments {
    /// Keeps a copy of `request` of RPC `command`, its text to be at most `max` bytes;
    /// `None` for the requests that carry a password.
    pub(crate) fn keep<T>(command: &str, request: &T, max: usize) -> Option<Arguments>
    where
        T: fmt::Debug + Clone + Send + Sync + 'static,
    {
        (!secret(command)).then(|| Arguments {
            kept: Kept::Request(Box::new(request.clone())),
            max,
        })
    }

    /// Keeps the arguments `words` of command `command` as a front end put them, cut to `max`
    /// bytes; `None` for the commands that carry a password.
    pub(crate) fn words(command: &str, mut words: String, max: usize) -> Option<Arguments> {
        (!secret(command)).then(|| {
            cut(&mut words, max);
            Arguments {
                kept: Kept::Words(words),
                max,
            }
        })
    }

    /// The arguments' text (`…` marks a cut).
    pub(crate) fn text(&self) -> String {
        match &self.kept {
            Kept::Request(request) => of(&**request, self.max),
            Kept::Words(words) => words.clone(),
        }
    }
}

/// `request`'s arguments, at most `max` bytes (`…` marks a cut).
fn of(request: &dyn fmt::Debug, max: usize) -> String {
    let mut out = Filter {
        // Room for the bound, the closing ` }` and a byte over (which tells a cut).
        limit: max + 3,
        text: String::with_capacity((max + 3).min(256)),
        state: State::Head,
        caller_seen: 0,
        depth: 0,
        in_string: false,
        escaped: false,
    };
    let complete = write!(out, "{request:?}").is_ok();
    if matches!(out.state, State::Head) {
        // No braces: a message without fields.
        return String::new();
    }
    let mut text = out.text;
    if complete {
        // Drop the closing brace of the message and the spaces around the fields.
        if text.ends_with('}') {
            text.pop();
        }
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
    }
    cut(&mut text, max);
    text
}

/// Where the filter is in the request's `Debug` text.
#[derive(Clone, Copy)]
enum State {
    /// Before the message's opening brace: dropped.
    Head,
    /// Right after the brace: spaces are dropped; `caller: ` begins the skipped field.
    Start,
    /// Inside the caller's value: dropped until it ends at a top-level `,` or `}`.
    Caller,
    /// After the caller's `,`: the space is dropped.
    AfterCaller,
    /// The arguments: kept.
    Fields,
}

/// A `fmt::Write` that keeps only the arguments of a request's `Debug` text, up to `limit`
/// bytes (then formatting stops).
struct Filter {
    limit: usize,
    text: String,
    state: State,
    /// How much of `caller: ` has been matched at the start.
    caller_seen: usize,
    /// Bracket depth inside the caller's value, and whether inside a string there.
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Filter {
    /// Keeps `s` (the arguments), up to the limit.
    fn keep(&mut self, s: &str) -> fmt::Result {
        let room = self.limit - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        let mut at = room;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        self.text.push_str(&s[..at]);
        Err(fmt::Error)
    }
}

impl Write for Filter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Fields => return self.keep(&s[i..]),
                State::Head => match bytes[i..].iter().position(|&b| b == b'{') {
                    Some(at) => {
                        i += at + 1;
                        self.state = State::Start;
                    }
                    None => return Ok(()),
                },
                State::Start => {
                    if self.caller_seen == 0 && bytes[i] == b' ' {
                        i += 1;
                        continue;
                    }
                    // Match `caller: ` across pieces; anything else starts the arguments.
                    let want = &CALLER[self.caller_seen..];
                    let have = &bytes[i..];
                    let n = want.len().min(have.len());
                    if want[..n] == have[..n] {
                        self.caller_seen += n;
                        i += n;
                        if self.caller_seen == CALLER.len() {
                            self.state = State::Caller;
                        }
                    } else {
                        // Not the caller (a prefix of it matched): keep what matched.
                        let seen = self.caller_seen;
                        self.state = State::Fields;
                        self.keep(std::str::from_utf8(&CALLER[..seen]).unwrap_or(""))?;
                    }
                }
                State::Caller => {
                    let b = bytes[i];
                    i += 1;
                    if self.in_string {
                        match (self.escaped, b) {
                            (true, _) => self.escaped = false,
                            (false, b'\\') => self.escaped = true,
                            (false, b'"') => self.in_string = false,
                            _ => {}
                        }
                        continue;
                    }
                    match b {
                        b'"' => self.in_string = true,
                        b'(' | b'{' | b'[' => self.depth += 1,
                        b')' | b']' => self.depth = self.depth.saturating_sub(1),
                        b'}' if self.depth == 0 => {
                            // The caller was the only field: the message ends here.
                            self.state = State::Fields;
                            self.keep("}")?;
                        }
                        b'}' => self.depth -= 1,
                        b',' if self.depth == 0 => self.state = State::AfterCaller,
                        _ => {}
                    }
                }
                State::AfterCaller => {
                    if bytes[i] == b' ' {
                        i += 1;
                    }
                    self.state = State::Fields;
                }
            }
        }
        Ok(())
    }
}

/// `text` cut to at most `max` bytes at a character boundary, `…` marking the cut.
fn cut(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut at = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push('…');
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
        let args = super::of(&req, 512);
        assert!(args.starts_with("files: [\"//depot/a/...\"]"), "{args}");
        assert!(!args.contains("ann"), "{args}");
        let login = pb::LoginRequest {
            caller: None,
            password: "hunter2".into(),
            all_hosts: false,
        };
        assert!(super::Arguments::keep("Login", &login, 512).is_none());
        let kept = super::Arguments::keep("Files", &req, 512).expect("kept");
        assert_eq!(kept.text(), args);
    }

    #[test]
    fn long_arguments_are_cut_to_the_bound() {
        let req = pb::FilesRequest {
            files: (0..1000).map(|i| format!("//depot/é{i}")).collect(),
            ..Default::default()
        };
        let args = super::of(&req, 100);
        assert!(args.len() <= 100, "{}", args.len());
        assert!(args.ends_with('…'));
        assert!(args.starts_with("files: [\"//depot/é0\", "), "{args}");
    }

    /// The filter keeps exactly the fields after the caller, whatever the caller holds and
    /// however the formatter splits its writes.
    #[test]
    fn arguments_are_the_fields_after_the_caller() {
        let files = pb::FilesRequest {
            caller: None,
            files: vec!["//depot/x".into()],
            max: 3,
            ..Default::default()
        };
        let text = super::of(&files, 512);
        assert!(text.starts_with("files: [\"//depot/x\"]"), "{text}");
        assert!(text.contains("max: 3"), "{text}");
        assert!(!text.ends_with('}') && !text.ends_with(' '), "{text}");
        let info = pb::InfoRequest {
            caller: Some(pb::Caller {
                user: "a(b]c\\".into(),
                workspace: "w, x: }".into(),
                host: String::new(),
                force: false,
            }),
        };
        assert_eq!(super::of(&info, 512), "");
        // A text cut exactly at the bound, and one a byte shorter, keep their ends.
        let full = super::of(&files, 512);
        assert_eq!(super::of(&files, full.len()), full);
        let short = super::of(&files, full.len() - 1);
        assert!(short.ends_with('…') && short.len() < full.len(), "{short}");
        // A message whose first field is not the caller keeps it whole.
        struct Plain;
        impl std::fmt::Debug for Plain {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Plain")
                    .field("call", &1)
                    .field("b", &"x")
                    .finish()
            }
        }
        assert_eq!(super::of(&Plain, 512), "call: 1, b: \"x\"");
    }
}
