//! The messages a P4 client shows its user (`client-Message`): one or more lines, each an id
//! (severity, generic code, subsystem, code, argument count packed in one number) and a format
//! string whose `%name%` placeholders the client fills from the message's other variables.
//! Severity decides what the client does with it: information is output, a warning goes to the
//! warnings, a failure is an error (exit 1 in the command line, an exception in P4Python).

use super::message::Message;

/// How bad a message is, as the client sorts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info = 1,
    Warn = 2,
    Failed = 3,
    Fatal = 4,
}

/// What kind of problem a message reports (the generic codes scripts test for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generic {
    None = 0,
    /// The request does not match the command's documented usage.
    Usage = 0x01,
    /// An entity (user, client, file, command) that does not exist.
    Unknown = 0x02,
    /// An entity used in the wrong context.
    Context = 0x03,
    /// Something the caller may not do.
    Illegal = 0x04,
    /// Something must be corrected first.
    NotYet = 0x05,
    /// Refused by the protections table.
    Protect = 0x06,
    /// The command found nothing.
    Empty = 0x11,
    /// A fault in the server.
    Fault = 0x21,
    /// The server needs an administrator.
    Admin = 0x23,
    /// The client's configuration is not enough.
    Config = 0x24,
    /// Too much for the server to handle.
    TooBig = 0x27,
}

/// The subsystem number Keel's server messages carry (the server's own).
const SUBSYSTEM: u32 = 7;
/// Format strings name the arguments; ids count at most 15 of them.
const MAX_ARGS: u32 = 15;

/// The packed id of a message. A `number` up to 1023 is Keel's own, in Keel's subsystem; a
/// larger one already carries a subsystem (`subsystem << 10 | code`: a message scripts know by
/// its unique id, such as `File(s) up-to-date.`, see `cmd::number`).
pub fn code(severity: Severity, generic: Generic, number: u32, args: usize) -> u32 {
    let args = (args as u32).min(MAX_ARGS);
    let unique = if number > 0x3ff {
        number & 0xffff
    } else {
        (SUBSYSTEM << 10) | number
    };
    ((severity as u32) << 28) | (args << 24) | ((generic as u32) << 16) | unique
}

/// One line of a message: a format string and its named arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub severity: Severity,
    pub generic: Generic,
    /// Keel's number for this message (the id's low bits), so scripts can tell messages apart.
    pub number: u32,
    fmt: String,
    args: Vec<(String, Vec<u8>)>,
}

impl Report {
    /// An empty message; add text and arguments with [`Report::text`] and [`Report::arg`].
    pub fn new(severity: Severity, generic: Generic, number: u32) -> Report {
        Report {
            severity,
            generic,
            number,
            fmt: String::new(),
            args: Vec::new(),
        }
    }

    /// An information line of plain text.
    pub fn info(text: impl AsRef<str>) -> Report {
        Report::new(Severity::Info, Generic::None, 0).text(text)
    }

    /// A failure of plain text.
    pub fn failed(generic: Generic, number: u32, text: impl AsRef<str>) -> Report {
        Report::new(Severity::Failed, generic, number).text(text)
    }

    /// Appends literal text. Text a client would read as format syntax (`%`, `[`) travels as
    /// an argument of its own, so it is shown as written.
    pub fn text(mut self, text: impl AsRef<str>) -> Report {
        let text = text.as_ref();
        if text.contains(['%', '[', ']', '|']) {
            let name = format!("text{}", self.args.len());
            return self.arg(&name, text.as_bytes());
        }
        self.fmt.push_str(text);
        self
    }

    /// Appends the argument `name` (shown as its value).
    pub fn arg(mut self, name: &str, value: impl AsRef<[u8]>) -> Report {
        self.fmt.push('%');
        self.fmt.push_str(name);
        self.fmt.push('%');
        self.args.push((name.to_string(), value.as_ref().to_vec()));
        self
    }

    /// The text the client shows.
    pub fn rendered(&self) -> String {
        let mut out = self.fmt.clone();
        for (name, value) in &self.args {
            out = out.replacen(&format!("%{name}%"), &String::from_utf8_lossy(value), 1);
        }
        out
    }

    /// The packed id.
    pub fn code(&self) -> u32 {
        code(self.severity, self.generic, self.number, self.args.len())
    }

    /// The `client-Message` carrying this line.
    pub fn to_message(&self) -> Message {
        let mut m = Message::new();
        m.set("code0", self.code().to_string());
        m.set("fmt0", &self.fmt);
        for (name, value) in &self.args {
            m.set(name, value);
        }
        m.set("func", "client-Message");
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_the_id_as_clients_unpack_it() {
        let c = code(Severity::Failed, Generic::Unknown, 5, 2);
        assert_eq!(c >> 28, 3);
        assert_eq!((c >> 24) & 0xf, 2);
        assert_eq!((c >> 16) & 0xff, 0x02);
        assert_eq!((c >> 10) & 0x3f, 7);
        assert_eq!(c & 0x3ff, 5);
    }

    #[test]
    fn carries_the_format_and_its_arguments() {
        let r = Report::new(Severity::Info, Generic::None, 1)
            .text("User ")
            .arg("user", "alice")
            .text(" logged in.");
        assert_eq!(r.rendered(), "User alice logged in.");
        let m = r.to_message();
        assert_eq!(m.text("fmt0").as_deref(), Some("User %user% logged in."));
        assert_eq!(m.text("user").as_deref(), Some("alice"));
        assert_eq!(m.func().as_deref(), Some("client-Message"));
        let code: u32 = m.text("code0").unwrap().parse().unwrap();
        assert_eq!(code >> 28, 1);
    }

    #[test]
    fn format_syntax_in_text_is_shown_as_written() {
        let r = Report::info("50% done [really]");
        assert_eq!(r.rendered(), "50% done [really]");
        let m = r.to_message();
        assert!(!m.text("fmt0").unwrap().contains('['));
    }
}
