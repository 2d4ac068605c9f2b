//! `keel trust`: the fingerprints of `ssl:` servers this user trusts (like `p4 trust`): show
//! and establish trust for the current server, `-l` list every entry, `-d` forget the current
//! server, `-f` replace a fingerprint that changed.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::{Overrides, Settings};
use keel_core::error_chain;
use keel_tls::{ConnectError, DialError, Dialer, ServerAddr, TrustFile, TrustMode};

use crate::cli::Cli;
use crate::output::{Out, Record};

/// How long `keel trust` waits for the server to answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Trust the server's fingerprint without asking.
    #[arg(short = 'y', long = "yes")]
    pub yes: bool,
    /// List every trusted server and fingerprint.
    #[arg(short = 'l', long = "list", conflicts_with_all = ["delete", "force", "yes"])]
    pub list: bool,
    /// Forget the current server's fingerprint.
    #[arg(short = 'd', long = "delete", conflicts_with_all = ["force", "yes"])]
    pub delete: bool,
    /// Replace a trusted fingerprint that no longer matches the server's.
    #[arg(short = 'f', long = "force")]
    pub force: bool,
}

pub async fn run(cli: &Cli, args: &TrustArgs) -> Result<()> {
    let out = Out {
        quiet: cli.globals.quiet,
        ..Out::new(cli.globals.json)
    };
    let cwd = std::env::current_dir().context("cannot determine the current directory")?;
    let overrides = Overrides {
        server: cli.globals.server.clone(),
        user: cli.globals.user.clone(),
        workspace: cli.globals.workspace.clone(),
    };
    let settings = Settings::resolve(&overrides, &cwd)?;
    let Some(path) = settings.trust_file.clone() else {
        return Err(keel_tls::TrustFileError::NoHome.into());
    };
    let mut trust = TrustFile::load(&path)?;
    if args.list {
        for (addr, fp) in trust.entries() {
            out.emit(
                Record::new()
                    .s("server", format!("ssl:{addr}"))
                    .s("fingerprint", fp.to_string()),
                format!("ssl:{addr} {fp}"),
            );
        }
        return Ok(());
    }
    let addr = ServerAddr::parse(&settings.server);
    if !addr.tls {
        bail!(
            "{addr} is a plain TCP address; trust is for TLS servers (ssl:{})",
            addr.host_port
        );
    }
    if args.delete {
        let removed = trust.remove(&addr.host_port);
        if removed.is_some() {
            trust.save()?;
        }
        let (action, text) = match removed {
            Some(fp) => ("removed", format!("Removed trust for {addr} ({fp}).")),
            None => ("none", format!("{addr} was not trusted.")),
        };
        out.emit(
            Record::new()
                .s("server", addr.to_string())
                .s("action", action),
            text,
        );
        return Ok(());
    }
    let presented = fetch_fingerprint(&addr).await?;
    let record = |action: &str| {
        Record::new()
            .s("server", addr.to_string())
            .s("fingerprint", presented.to_string())
            .s("action", action)
    };
    let replacing = match trust.get(&addr.host_port) {
        Some(fp) if fp == presented => {
            out.emit(record("already"), "Trust already established.");
            return Ok(());
        }
        Some(trusted) if !args.force => {
            return Err(keel_client::Error::Transport(ConnectError::Changed {
                addr: addr.host_port.clone(),
                trusted,
                presented,
            })
            .into());
        }
        Some(trusted) => Some(trusted),
        None => None,
    };
    let question = match replacing {
        Some(trusted) => format!(
            "The fingerprint of the server at {addr} has changed: trusted {trusted}, presented \
             {presented}. Replace it?"
        ),
        None => format!(
            "The authenticity of the server at {addr} can't be established: this may be your \
             first connection to it. Its certificate fingerprint is {presented}. Trust it?"
        ),
    };
    if !args.yes && !ask(&question)? {
        bail!(
            "the fingerprint {presented} of {addr} was not trusted (check it with the server's \
             admin; `keel trust -y{}` trusts it without asking)",
            if replacing.is_some() { " -f" } else { "" }
        );
    }
    trust.set(&addr.host_port, presented);
    trust.save()?;
    let (action, verb) = match replacing {
        Some(_) => ("replaced", "Replaced"),
        None => ("added", "Added"),
    };
    out.emit(
        record(action),
        format!("{verb} trust for {addr} ({presented})."),
    );
    Ok(())
}

/// Connects accepting any certificate and returns the fingerprint the server presented.
async fn fetch_fingerprint(addr: &ServerAddr) -> Result<keel_tls::Fingerprint> {
    let dialer = Dialer::new(addr.clone(), TrustMode::Any, CONNECT_TIMEOUT);
    let endpoint = dialer
        .endpoint()
        .with_context(|| format!("{addr} is not a usable address"))?;
    match dialer.connect(endpoint).await {
        Ok(_) => {}
        Err(DialError::Refused(why)) => return Err(keel_client::Error::Transport(why).into()),
        Err(DialError::Transport(e)) => {
            return Err(keel_client::Error::Connect {
                addr: addr.to_string(),
                reason: error_chain(&e),
            }
            .into());
        }
    }
    dialer
        .observed()
        .fingerprint()
        .with_context(|| format!("the server at {addr} presented no certificate"))
}

/// Asks `question` on the terminal; without one, the answer is no.
fn ask(question: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    let mut stderr = std::io::stderr().lock();
    write!(stderr, "{question} (yes/no) ").context("cannot write to stderr")?;
    stderr.flush().context("cannot write to stderr")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer")?;
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}
