//! The server's [`CommandGate`]: what every front end other than gRPC's calls per command, so
//! that its commands meet the same checks and records as gRPC calls. A write on a read-only
//! replica is refused with the store's words (a P4 command cannot be forwarded to the primary
//! as a gRPC call can), the command is registered with the monitor (so `monitor show` lists it
//! and `monitor terminate` stops it), the caller's level is checked against the command's row,
//! and its end goes to the command log and the per-command metrics. gRPC calls meet the same
//! steps in the layers around the API (`monitor::Observe`, `keel_metrics::Instrument`,
//! `replica::gate`, `access::authorize`), from the same table.

use crate::convert::WireError;
use crate::monitor::args::Arguments;
use crate::monitor::{Registry, Running, Who};
use keel_metrics::RpcMetrics;
use keel_service::command::{Command, CommandGate, CommandRun, CommandStart, Failure, RunHooks};
use keel_service::{Service, ServiceError};
use keel_store::command::CommandCounters;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The gate of one server: its service, monitor registry and metrics.
#[derive(Clone)]
pub struct ServerGate {
    pub(crate) service: Arc<Service>,
    pub(crate) registry: Arc<Registry>,
    /// The primary's address when this server is a read-only replica.
    pub(crate) primary: Option<String>,
    pub(crate) metrics: Option<Arc<RpcMetrics>>,
    /// Most bytes of a command's arguments kept for the monitor and the log.
    pub(crate) args_max_bytes: usize,
}

impl CommandGate for ServerGate {
    fn begin(
        &self,
        command: &'static Command,
        start: CommandStart,
    ) -> Result<CommandRun, ServiceError> {
        let run = self.registry.start(command.name.to_string(), start.program);
        let _ = run.who.set(Who {
            user: start.who.user.clone(),
            workspace: start.who.workspace.clone(),
            host: start.who.host.clone(),
        });
        if let Some(address) = start.who.address {
            let _ = run.address.set(address);
        }
        if let Some(args) = Arguments::words(command.name, start.args, self.args_max_bytes) {
            let _ = run.args.set(args);
        }
        let label = self.metrics.as_ref().map(|m| {
            let label = m.command_label(command.name);
            m.started(label);
            label
        });
        let hooks = Hooks {
            run,
            registry: self.registry.clone(),
            metrics: self.metrics.clone().zip(label),
            started: Instant::now(),
        };
        let refusal = match &self.primary {
            Some(primary) if command.writes() => {
                Some(ServiceError::Store(keel_store::StoreError::ReadOnly {
                    primary: primary.clone(),
                }))
            }
            _ => self.service.admit(&start.who, command).err(),
        };
        if let Some(refused) = refusal {
            hooks.end(Some(Failure::Service(&refused)));
            return Err(refused);
        }
        Ok(CommandRun::recorded(command, Box::new(hooks)))
    }

    fn refused_login(&self, command: &'static Command, start: CommandStart, reason: &str) {
        let run = self.registry.start(command.name.to_string(), start.program);
        let _ = run.who.set(Who {
            user: start.who.user,
            workspace: start.who.workspace,
            host: start.who.host,
        });
        if let Some(address) = start.who.address {
            let _ = run.address.set(address);
        }
        self.registry.end(
            &run,
            Some((tonic::Code::Unauthenticated, reason.to_string())),
        );
    }

    fn running(&self) -> Vec<keel_service::command::RunningCommand> {
        self.registry
            .running()
            .iter()
            .map(|run| running_command(run))
            .collect()
    }

    fn terminate(&self, id: u64, by: &str) -> Option<keel_service::command::RunningCommand> {
        let run = self.registry.terminate(id, by)?;
        tracing::info!(id = run.id, command = %run.command, by = %by, "command terminated");
        Some(running_command(&run))
    }
}

/// A running command as the service's monitor view has it.
fn running_command(run: &Running) -> keel_service::command::RunningCommand {
    let who = run.who.get().cloned().unwrap_or_default();
    keel_service::command::RunningCommand {
        id: run.id,
        user: who.user,
        command: run.command.clone(),
        args: run.args(),
        elapsed: run.elapsed(),
        terminated: run.is_terminated(),
        workspace: who.workspace,
        host: who.host,
        address: run.address.get().map(|a| a.to_string()).unwrap_or_default(),
        program: run.program.clone(),
    }
}

/// One command the gate began.
struct Hooks {
    run: Arc<Running>,
    registry: Arc<Registry>,
    metrics: Option<(Arc<RpcMetrics>, &'static str)>,
    started: Instant,
}

impl RunHooks for Hooks {
    fn counters(&self) -> Arc<CommandCounters> {
        self.run.counters.clone()
    }

    fn add_bytes(&self, received: u64, sent: u64) {
        self.run.bytes_in.fetch_add(received, Ordering::Relaxed);
        self.run.bytes_out.fetch_add(sent, Ordering::Relaxed);
    }

    fn end(&self, failure: Option<Failure<'_>>) {
        let outcome = failure.map(|f| {
            let (code, text) = match f {
                Failure::Service(e) => (e.code_and_detail().0, e.to_string()),
                Failure::Said(text) => (tonic::Code::Unknown, text.to_string()),
            };
            // A terminated command reports as gRPC's terminated calls do.
            match self.run.is_terminated() {
                true => (tonic::Code::Cancelled, text),
                false => (code, text),
            }
        });
        if let Some((metrics, label)) = &self.metrics {
            let received = self.run.bytes_in.load(Ordering::Relaxed);
            let sent = self.run.bytes_out.load(Ordering::Relaxed);
            metrics.ended(
                label,
                self.started.elapsed().as_secs_f64(),
                Some(outcome.as_ref().map_or(tonic::Code::Ok, |(code, _)| *code)),
                (received, sent),
            );
        }
        self.registry.end(&self.run, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::ServerGate;
    use crate::monitor::Registry;
    use crate::monitor::record::CommandRecord;
    use crate::monitor::registry::CommandSink;
    use keel_service::command::{self, CommandGate, CommandStart};
    use keel_service::{Caller, Service, ServiceConfig, ServiceError};
    use std::sync::{Arc, Mutex};

    /// Keeps every ended command's record.
    #[derive(Default)]
    struct Records(Mutex<Vec<(String, String, tonic::Code, String)>>);

    impl CommandSink for Records {
        fn ended(&self, r: CommandRecord) {
            let user = r.user().to_string();
            let mut records = self.0.lock().expect("records");
            records.push((r.run.command.clone(), user, r.code, r.error.clone()));
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        service: Arc<Service>,
        records: Arc<Records>,
        registry: Arc<Registry>,
    }

    /// A service where ann is a super user and bob has list access only.
    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = keel_store::StoreConfig::default();
        let meta = Arc::new(
            keel_store::SqliteStore::open(&dir.path().join("metadata.db"), &config).expect("store"),
        );
        let have = keel_store::SqliteHaveStore::open_with(&dir.path().join("have"), &config)
            .expect("have store");
        let blobs = Arc::new(
            keel_blob::FsBlobStore::open(
                dir.path().join("content"),
                keel_blob::CompressionPolicy::default(),
            )
            .expect("blob store"),
        );
        let service = Arc::new(Service::new(
            meta,
            have,
            blobs,
            Arc::new(|| 1_700_000_000),
            ServiceConfig::default(),
            dir.path().to_path_buf(),
        ));
        let lines = ["super user ann * //...", "list user bob * //..."];
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        service
            .save_protections(&who("ann"), &lines)
            .expect("protections saved");
        let records = Arc::new(Records::default());
        let registry = Arc::new(Registry::new(
            vec![records.clone() as Arc<dyn CommandSink>],
            std::time::Duration::from_secs(3600),
        ));
        Fixture {
            _dir: dir,
            service,
            records,
            registry,
        }
    }

    fn who(user: &str) -> Caller {
        Caller {
            user: user.into(),
            workspace: format!("{user}-ws"),
            host: "h".into(),
            ..Caller::default()
        }
    }

    fn start(user: &str, args: &str) -> CommandStart {
        CommandStart {
            who: who(user),
            program: "p4/test".into(),
            args: args.into(),
            connection: None,
        }
    }

    fn gate(f: &Fixture, primary: Option<&str>) -> ServerGate {
        ServerGate {
            service: f.service.clone(),
            registry: f.registry.clone(),
            primary: primary.map(str::to_string),
            metrics: None,
            args_max_bytes: 64,
        }
    }

    fn records(f: &Fixture) -> Vec<(String, String, tonic::Code, String)> {
        f.records.0.lock().expect("records").clone()
    }

    /// An admitted command is in the monitor while it runs and in the log when it ends; one
    /// the caller's level does not reach is refused naming the command and the level, and
    /// logged as refused.
    #[test]
    fn admits_by_the_table_and_records_every_command() {
        let f = fixture();
        let gate = gate(&f, None);
        let run = gate
            .begin(command::FILES, start("bob", "//depot/..."))
            .expect("bob may list");
        let running = f.registry.running();
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].command, "Files");
        assert_eq!(running[0].args(), "//depot/...");
        run.end(Ok(()));
        assert!(f.registry.running().is_empty());

        let refused = gate
            .begin(command::SUBMIT, start("bob", "-d x"))
            .err()
            .expect("bob may not submit");
        assert!(
            matches!(
                refused,
                ServiceError::CommandDenied {
                    command: "Submit",
                    ..
                }
            ),
            "{refused}"
        );
        assert!(f.registry.running().is_empty());

        // Dropped unended: the client went away.
        drop(
            gate.begin(command::OPEN, start("ann", ""))
                .expect("ann may open"),
        );
        let got = records(&f);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            ("Files".into(), "bob".into(), tonic::Code::Ok, "".into())
        );
        assert_eq!(got[1].0, "Submit");
        assert_eq!(got[1].2, tonic::Code::PermissionDenied);
        assert!(
            got[1].3.contains("Submit needs write access"),
            "{}",
            got[1].3
        );
        assert_eq!(got[2].0, "Open");
        assert_eq!(got[2].2, tonic::Code::Cancelled);
    }

    /// A replica refuses every command that writes, even a super user's, naming its primary,
    /// and runs reads.
    #[test]
    fn a_replica_refuses_writes() {
        let f = fixture();
        let gate = gate(&f, Some("primary.example:1666"));
        for c in command::COMMANDS.iter().filter(|c| c.writes()) {
            let refused = gate
                .begin(c, start("ann", ""))
                .err()
                .unwrap_or_else(|| panic!("{} ran on a replica", c.name));
            let text = refused.to_string();
            assert!(
                text.contains("read-only replica of primary.example:1666"),
                "{}: {text}",
                c.name
            );
        }
        let run = gate
            .begin(command::FSTAT, start("ann", ""))
            .expect("reads run");
        run.end(Ok(()));
        assert!(f.registry.running().is_empty());
        let got = records(&f);
        assert_eq!(got.last().map(|r| r.2), Some(tonic::Code::Ok));
    }
}
