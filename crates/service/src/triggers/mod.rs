//! Triggers (`keel triggers`): the table, stored in the metadata store, and running the
//! commands it names at points of a submit (`change.rs`) and of saving or showing a spec
//! form (`form.rs`). A trigger runs on the request's own thread and never while the writer
//! is held: a slow trigger delays only the command it runs for.

mod change;
mod form;
mod run;

pub(crate) use change::{ChangeTriggers, InFlight};
pub use form::FormSpec;

use crate::error::TriggerFailure;
use crate::{Caller, Service, ServiceError};
use keel_core::TriggerLine;
use keel_core::trigger::{Trigger, TriggerVars, parse_table};
use run::{RunLimits, TriggerEnv};
use std::net::SocketAddr;
use std::time::Duration;

/// The address triggers reach this server on (`KEEL_SERVER`, `%serverport%`): the listening
/// address, with an unspecified IP (`0.0.0.0`, `::`) replaced by loopback, and `ssl:` before it
/// when the server speaks TLS.
pub(crate) fn reachable_address(addr: SocketAddr, tls: bool) -> String {
    let ip = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    let addr = SocketAddr::new(ip, addr.port());
    if tls {
        format!("ssl:{addr}")
    } else {
        addr.to_string()
    }
}

impl Service {
    /// Who may edit the triggers table: super users (`Service::is_super`; everyone until a
    /// protections table exists).
    pub(crate) fn check_may_edit_triggers(&self, caller: &Caller) -> Result<(), ServiceError> {
        if self.is_super(caller)? {
            Ok(())
        } else {
            Err(ServiceError::TriggersNeedSuper)
        }
    }

    /// Tells the service where the server listens (and whether it speaks TLS), for triggers
    /// to call back.
    pub fn set_server_address(&self, addr: SocketAddr, tls: bool) {
        let _ = self.server_address.set(reachable_address(addr, tls));
    }

    /// The triggers table, in table order.
    pub fn triggers(&self, caller: &Caller) -> Result<Vec<TriggerLine>, ServiceError> {
        self.touch_user(caller)?;
        Ok(self.meta.snapshot()?.triggers()?)
    }

    /// Replaces the triggers table with the `Triggers` form field's `lines`; a line that does
    /// not parse refuses the whole table, naming the line and what is wrong with it.
    pub fn save_triggers(
        &self,
        caller: &Caller,
        lines: &[String],
    ) -> Result<Vec<TriggerLine>, ServiceError> {
        self.check_table("triggers", lines)?;
        self.touch_user(caller)?;
        self.check_may_edit_triggers(caller)?;
        let table = parse_table(lines).map_err(|e| ServiceError::BadArgument {
            arg: e.line.clone(),
            reason: e.to_string(),
        })?;
        let saved = table.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.replace_triggers(&table).map_err(ServiceError::from)
        })?;
        Ok(saved)
    }

    /// Runs `triggers` one after another for `caller`, stopping at the first that fails.
    /// `each` may write into each run's fresh working directory (the form file, which a
    /// non-empty `vars.formfile` names inside it) before it runs and read from it after a
    /// success.
    fn run_triggers(
        &self,
        caller: &Caller,
        triggers: &[Trigger],
        subject: &str,
        change: Option<u64>,
        vars: &TriggerVars,
        each: &mut EachRun,
    ) -> Result<(), Box<TriggerFailure>> {
        let limits = RunLimits {
            timeout: Duration::from_millis(self.config.trigger_timeout_ms),
            output_bytes: self.config.trigger_output_bytes,
        };
        let server = self.server_address.get().map(String::as_str).unwrap_or("");
        let mut vars = vars.clone();
        vars.serverport = server.to_string();
        for trigger in triggers {
            let cannot_run = |what: &str, e: std::io::Error| {
                Box::new(TriggerFailure {
                    name: trigger.name.clone(),
                    kind: trigger.kind,
                    subject: subject.to_string(),
                    change,
                    reason: crate::TriggerFailureReason::CannotRun {
                        program: trigger.command.clone(),
                        error: format!("{what}: {e}"),
                    },
                    output: String::new(),
                })
            };
            let dir = tempfile::Builder::new()
                .prefix("keel-trigger-")
                .tempdir()
                .map_err(|e| cannot_run("making its working directory", e))?;
            each(trigger, dir.path(), Stage::Before)?;
            let mut vars = vars.clone();
            if !vars.formfile.is_empty() {
                vars.formfile = dir.path().join(&vars.formfile).display().to_string();
            }
            // A ticket for this run only: it ends when the run does (dropped below) or, should
            // the run outlive its limit, one second after it.
            let limit_secs = i64::try_from(limits.timeout.as_secs()).unwrap_or(i64::MAX);
            let ticket = self
                .run_tickets
                .issue(
                    &caller.user,
                    self.now().saturating_add(limit_secs).saturating_add(2),
                )
                .map_err(|e| cannot_run("making its ticket", std::io::Error::other(e)))?;
            let env = TriggerEnv {
                server,
                user: &caller.user,
                workspace: &caller.workspace,
                ticket: &ticket.ticket,
            };
            let started = std::time::Instant::now();
            let ran = run::run(trigger, subject, change, &vars, &env, dir.path(), &limits);
            drop(ticket);
            let millis = started.elapsed().as_millis() as u64;
            match &ran {
                Ok(_) => {
                    tracing::info!(trigger = %trigger.name, kind = %trigger.kind, subject, millis, "trigger passed")
                }
                Err(failure) => {
                    tracing::warn!(trigger = %trigger.name, kind = %trigger.kind, subject, millis, %failure, "trigger failed")
                }
            }
            ran?;
            each(trigger, dir.path(), Stage::After)?;
        }
        Ok(())
    }
}

/// What [`Service::run_triggers`] calls around each run: the trigger, its working directory
/// and the stage.
type EachRun<'a> =
    dyn FnMut(&Trigger, &std::path::Path, Stage) -> Result<(), Box<TriggerFailure>> + 'a;

/// When [`Service::run_triggers`] calls back: before a trigger runs, or after it passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Before,
    After,
}
