//! The client library's error type: every message names the file, address or value involved.

use std::path::PathBuf;

use crate::refusal::Refusal;

/// Everything that can go wrong in the client library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server could not be reached at all.
    #[error("cannot connect to Keel server at {addr}: {reason} (is `keel serve` running?)")]
    Connect { addr: String, reason: String },
    /// The server address is not one (`HOST:PORT`, `ssl:HOST:PORT`, `HOST`, `PORT`).
    #[error(
        "invalid Keel server address {addr}: {reason} (write HOST:PORT, ssl:HOST:PORT, HOST or PORT)"
    )]
    BadAddress { addr: String, reason: String },
    /// The server address names a host the resolver does not know.
    #[error("cannot resolve the host of Keel server address {addr}: {reason} (check the name)")]
    Resolve { addr: String, reason: String },
    /// A TLS server was not trusted, or the address named the wrong protocol.
    #[error(transparent)]
    Transport(#[from] keel_tls::ConnectError),
    /// The trust file could not be read or written.
    #[error(transparent)]
    TrustFile(#[from] keel_tls::TrustFileError),
    /// The server refused a request; the message is the server's, verbatim, and `refusal` its
    /// machine-readable reason when it gave one.
    #[error("{message}")]
    Server {
        code: tonic::Code,
        message: String,
        refusal: Option<Refusal>,
    },
    /// A local file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A configuration file line could not be understood.
    #[error("{}:{line}: {message}", file.display())]
    Config {
        file: PathBuf,
        line: usize,
        message: String,
    },
    /// An ignore file holds a pattern that does not parse.
    #[error("ignore file {}, line {line}: {message}", file.display())]
    IgnoreFile {
        file: PathBuf,
        line: usize,
        message: String,
    },
    /// A local path argument lies outside the workspace root.
    #[error("{} is not under the workspace root {}", path.display(), root.display())]
    OutsideRoot { path: PathBuf, root: PathBuf },
    /// A local path that leads, through a symlink, out of the workspace root: `add` does not
    /// follow it.
    #[error(
        "{} - leads through a symlink to {}, outside the workspace root {}; add the symlink \
         itself, not what it points to",
        path.display(),
        resolved.display(),
        root.display()
    )]
    ThroughSymlink {
        path: PathBuf,
        resolved: PathBuf,
        root: PathBuf,
    },
    /// The server named a workspace file the client refuses to write.
    #[error("refusing to write {path:?}: {reason}")]
    UnsafeClientPath { path: String, reason: String },
    /// Received content does not match its announced digest.
    #[error("{}: content digest mismatch (expected {expected}, got {actual})", path.display())]
    DigestMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// A `utf16` workspace file is not valid UTF-16: it is neither added nor submitted.
    #[error("{}: utf16 file {reason}", path.display())]
    NotUtf16 { path: PathBuf, reason: String },
    /// A file argument could not be understood.
    #[error("{arg}: {reason}")]
    BadArgument { arg: String, reason: String },
    /// No user name anywhere: no flag, `KEEL_USER`, `.keel` file, `$USER`, nor a password
    /// database entry for this process's uid.
    #[error(
        "cannot tell which user you are: -u, KEEL_USER, a .keel file and $USER name none, and the \
         system's user database has no name for this process's uid; pass -u NAME or set KEEL_USER"
    )]
    NoUser,
    /// No workspace is configured but the command needs one.
    #[error("no workspace set: use -w NAME, KEEL_WORKSPACE or a .keel file")]
    NoWorkspace,
    /// A command that writes workspace files runs outside the workspace's Root: the spec may
    /// have been changed to send the files elsewhere.
    #[error(
        "workspace {workspace} has Root {}, which is neither {} nor a directory above it: refusing to write files there (its spec may have been changed; check it with `keel workspace show {workspace}`, then run from inside the root, or pass --root-moved-ok if the root moved on purpose)",
        root.display(),
        cwd.display()
    )]
    RootElsewhere {
        workspace: String,
        root: PathBuf,
        cwd: PathBuf,
    },
    /// The workspace spec the server returned could not be used.
    #[error("workspace {name}: {reason}")]
    BadWorkspace { name: String, reason: String },
    /// Sync refused to overwrite a writable file that is not opened.
    #[error("Can't clobber writable file {}", .0.display())]
    CantClobber(PathBuf),
    /// The connection broke while content was still being sent, before the request was
    /// complete, so the server changed nothing and the upload may be repeated.
    #[error("connection to the server broke during the upload, before it was complete: {reason}")]
    Interrupted { reason: String },
    /// A sync file writer stopped before reporting on every file it was given (a bug).
    #[error("a sync file writer stopped unexpectedly")]
    WriterStopped,
    /// The server sent messages out of the documented order.
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an IO error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The server's machine-readable reason when it refused the request.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Error::Server { refusal, .. } => refusal.as_ref(),
            _ => None,
        }
    }

    /// The gRPC code when the server refused the request.
    pub fn code(&self) -> Option<tonic::Code> {
        match self {
            Error::Server { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Extension to attach a path to `std::io::Result`s.
pub trait IoContext<T> {
    /// Converts the IO error into [`Error::Io`] naming `path`.
    fn at(self, path: &std::path::Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &std::path::Path) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}
