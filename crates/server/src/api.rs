//! The `Keel` gRPC service: one method per RPC, each a thin call into `keel_service::Service`.

use crate::ServerConfig;
use crate::access::authorize;
use crate::api_access;
use crate::api_auth;
use crate::api_labels;
use crate::api_locks;
use crate::api_shelves;
use crate::convert::{self, file};
use crate::identity::{Peer, caller_unauthenticated};
use crate::streams::{ResponseStream, Streams, blocking, small_file_args};
use keel_core::{ChangeNumber, ChangeRef};
use keel_proto::v1 as pb;
use keel_proto::v1::submit_message::Body as SubmitBody;
use keel_service::command;
use keel_service::{
    ChangesQuery, CloneEvent, DescribePart, HaveEntry, HaveListing, HavePart, IntegrateRequest,
    ListOptions, OpenRequest, Service, ServiceError, SpecError, SyncOptions, TagOptions,
};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tonic::{Request, Response, Status, Streaming};

pub(crate) struct Api {
    service: Arc<Service>,
    addr: SocketAddr,
    streams: Streams,
    /// Bytes per content chunk on the wire.
    chunk: usize,
    backup: Arc<crate::api_backup::Backup>,
    /// Stored content bytes sent in chunks since start (`InfoReply.content_bytes_sent`).
    sent: Arc<AtomicU64>,
    /// Set on a read-only replica.
    replica: Option<Arc<crate::replica::ReplicaStatus>>,
    /// Journal records per batch and the heartbeat of an idle journal stream.
    journal_batch: usize,
    journal_heartbeat: std::time::Duration,
    /// The certificate's fingerprint when serving TLS (`InfoReply.tls_fingerprint`).
    tls_fingerprint: Option<keel_tls::Fingerprint>,
    /// Where content accesses are recorded, when the audit log is on.
    audit: Option<Arc<crate::audit::Audit>>,
    /// The running commands (`monitor show`, `monitor terminate`).
    pub(crate) monitor: Arc<crate::monitor::Registry>,
    /// Where probe timings go, when the server exposes metrics.
    probe: Option<Arc<crate::metrics::ProbeMetrics>>,
    /// Set when the server is asked to stop: long-lived streams end (`stopping.rs`).
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Places for password checks (`Login`, `SetPassword`) on blocking threads: as many as
    /// the hashing gate runs and queues. A check beyond them waits here, as a task and not a
    /// thread, so a storm of logins costs no thread (and no thread's memory) per attempt.
    login_slots: Arc<tokio::sync::Semaphore>,
    /// `Watch` subscriptions, woken by submits.
    subscriptions: crate::api_watch::Subscriptions,
    /// Poked when the webhooks table is saved (the dispatcher reads it again).
    webhooks_saved: Arc<tokio::sync::Notify>,
}

impl Api {
    pub(crate) fn new(
        service: Arc<Service>,
        addr: SocketAddr,
        config: &ServerConfig,
        backup: Arc<crate::api_backup::Backup>,
        replica: Option<Arc<crate::replica::ReplicaStatus>>,
    ) -> Api {
        let subscriptions = crate::api_watch::Subscriptions::new(
            service.clone(),
            tokio::sync::watch::channel(crate::api_watch::Committed::default()).1,
            keel_service::WatchLimits {
                changes: config.watch_batch_changes,
                files: config.watch_max_files,
            },
            config.watch_buffer_messages,
            tokio::sync::watch::channel(false).1,
        );
        Api {
            subscriptions,
            webhooks_saved: Arc::new(tokio::sync::Notify::new()),
            service,
            addr,
            streams: Streams::new(config),
            chunk: config.content_chunk_bytes,
            backup,
            sent: Arc::new(AtomicU64::new(0)),
            replica,
            journal_batch: config.journal_batch_records,
            journal_heartbeat: std::time::Duration::from_millis(config.journal_heartbeat_ms),
            tls_fingerprint: None,
            audit: None,
            monitor: Arc::new(crate::monitor::Registry::new(
                Vec::new(),
                std::time::Duration::from_millis(config.slow_command_ms),
            )),
            probe: None,
            stopping: tokio::sync::watch::channel(false).1,
            login_slots: Arc::new(tokio::sync::Semaphore::new(
                config
                    .service
                    .password_check_threads
                    .saturating_add(config.service.password_check_queue)
                    .max(1),
            )),
        }
    }

    /// Ends long-lived streams (`Journal`) when `flag` is set.
    pub(crate) fn with_stopping(mut self, flag: tokio::sync::watch::Receiver<bool>) -> Api {
        self.subscriptions.stop_with(flag.clone());
        self.stopping = flag;
        self
    }

    /// Wakes `Watch` subscriptions through `commits` (`api_watch::commit_channel`).
    pub(crate) fn with_commits(
        mut self,
        commits: tokio::sync::watch::Receiver<crate::api_watch::Committed>,
    ) -> Api {
        self.subscriptions.wake_with(commits);
        self
    }

    /// The channel every submit bumps (for the webhooks' dispatcher).
    pub(crate) fn commits(&self) -> tokio::sync::watch::Receiver<crate::api_watch::Committed> {
        self.subscriptions.commits()
    }

    /// What the dispatcher waits on for saves of the webhooks table.
    pub(crate) fn webhooks_saved(&self) -> Arc<tokio::sync::Notify> {
        self.webhooks_saved.clone()
    }

    /// The counter of stored content bytes sent (for the metrics).
    pub(crate) fn content_sent(&self) -> Arc<AtomicU64> {
        self.sent.clone()
    }

    /// Keeps `ReportProbe`'s timings in `probe` (the server's metrics).
    pub(crate) fn with_probe(mut self, probe: Arc<crate::metrics::ProbeMetrics>) -> Api {
        self.probe = Some(probe);
        self
    }

    /// Lists and terminates the commands `registry` observes.
    pub(crate) fn with_monitor(mut self, registry: Arc<crate::monitor::Registry>) -> Api {
        self.monitor = registry;
        self
    }

    /// Records every content access in `audit`.
    pub(crate) fn with_audit(mut self, audit: Option<Arc<crate::audit::Audit>>) -> Api {
        self.audit = audit;
        self
    }

    /// Reports `fingerprint` in `Info` (a TLS server's certificate).
    pub(crate) fn with_tls_fingerprint(
        mut self,
        fingerprint: Option<keel_tls::Fingerprint>,
    ) -> Api {
        self.tls_fingerprint = fingerprint;
        self
    }
}

type Stream<T> = Result<Response<ResponseStream<T>>, Status>;

/// Streams a blob's stored bytes as chunk messages, adding them to `sent`.
fn send_content<T: prost::Message>(
    sink: &crate::streams::Sink<T>,
    blob: keel_blob::StoredBlob,
    path: &str,
    (chunk, sent): (usize, &AtomicU64),
    wrap: fn(Vec<u8>) -> T,
) -> Result<(), ServiceError> {
    keel_store::command::with_current(|c| c.add_file_sent());
    let mut reader = blob.reader;
    // A small file needs no chunk-sized (zeroed) buffer; +1 reads the end in the same call.
    let len = usize::try_from(blob.stored_size).map_or(chunk, |n| n.saturating_add(1).min(chunk));
    let mut buf = vec![0u8; len];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| ServiceError::ContentUnreadable {
                file: path.to_string(),
                reason: e.to_string(),
            })?;
        if n == 0 {
            return Ok(());
        }
        sink.send(wrap(buf[..n].to_vec()))?;
        sent.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[tonic::async_trait]
impl pb::keel_server::Keel for Api {
    async fn info(&self, req: Request<pb::InfoRequest>) -> Result<Response<pb::InfoReply>, Status> {
        // Unauthenticated, like `p4 info`: it tells anyone the server's security level.
        let who = caller_unauthenticated(&Peer::of(&req), req.into_inner().caller)?;
        let (svc, addr) = (self.service.clone(), self.addr);
        // Small and read-only: answered on the runtime thread once the user is on record.
        let info = if svc.user_known(&who) {
            svc.info(&who).map_err(convert::status)?
        } else {
            blocking(move || svc.info(&who)).await?
        };
        Ok(Response::new(pb::InfoReply {
            server_version: info.version,
            server_root: info.root,
            server_address: match self.tls_fingerprint {
                Some(_) => format!("ssl:{addr}"),
                None => addr.to_string(),
            },
            uptime_seconds: info.uptime_seconds,
            user: info.user,
            workspace: info.workspace,
            workspace_root: info.workspace_root,
            server_time: info.server_time.max(0) as u64,
            content_bytes_sent: self.sent.load(Ordering::Relaxed),
            proxy: None,
            replica: self.replica.as_ref().map(|r| r.info()),
            security: u32::from(info.security),
            tls_fingerprint: self
                .tls_fingerprint
                .map(|f| f.to_string())
                .unwrap_or_default(),
        }))
    }

    async fn list_depots(
        &self,
        req: Request<pb::ListDepotsRequest>,
    ) -> Result<Response<pb::ListDepotsReply>, Status> {
        let who = authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::LIST_DEPOTS,
        )?;
        let svc = self.service.clone();
        let depots = blocking(move || svc.list_depots(&who)).await?;
        Ok(Response::new(pb::ListDepotsReply {
            depots: depots.into_iter().map(convert::depot).collect(),
        }))
    }

    async fn create_depot(
        &self,
        req: Request<pb::CreateDepotRequest>,
    ) -> Result<Response<pb::Depot>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::CREATE_DEPOT)?;
        let svc = self.service.clone();
        let depot = blocking(move || svc.create_depot(&who, &req.name, &req.description)).await?;
        Ok(Response::new(convert::depot(depot)))
    }

    async fn save_workspace(
        &self,
        req: Request<pb::SaveWorkspaceRequest>,
    ) -> Result<Response<pb::Workspace>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_WORKSPACE)?;
        let spec = convert::workspace_from_wire(
            req.workspace
                .ok_or_else(|| Status::invalid_argument("no workspace spec given"))?,
        );
        let svc = self.service.clone();
        let saved = blocking(move || svc.save_workspace(&who, spec, req.create_only)).await?;
        Ok(Response::new(convert::workspace_to_wire(saved)))
    }

    async fn get_workspace(
        &self,
        req: Request<pb::GetWorkspaceRequest>,
    ) -> Result<Response<pb::Workspace>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_WORKSPACE)?;
        let svc = self.service.clone();
        let spec = blocking(move || {
            let spec = svc.get_workspace(&who, &req.name)?;
            if req.form {
                svc.form_out(&who, spec)
            } else {
                Ok(spec)
            }
        })
        .await?;
        Ok(Response::new(convert::workspace_to_wire(spec)))
    }

    type CloneWorkspaceStream = ResponseStream<pb::CloneWorkspaceMessage>;
    async fn clone_workspace(
        &self,
        req: Request<pb::CloneWorkspaceRequest>,
    ) -> Stream<pb::CloneWorkspaceMessage> {
        use pb::clone_workspace_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::CLONE_WORKSPACE)?;
        let spec = convert::workspace_from_wire(
            req.workspace
                .ok_or_else(|| Status::invalid_argument("no workspace spec given"))?,
        );
        let svc = self.service.clone();
        let message = |body| pb::CloneWorkspaceMessage { body: Some(body) };
        Ok(Response::new(self.streams.spawn(move |sink| {
            let made = svc.clone_workspace(&who, &req.source, spec, &mut |event| {
                sink.send(message(match event {
                    CloneEvent::Started {
                        spec,
                        opened_in_source,
                    } => Body::Started(pb::CloneStarted {
                        workspace: Some(convert::workspace_to_wire(spec)),
                        opened_in_source,
                    }),
                    CloneEvent::File(f) => Body::File(convert::clone_entry(*f)),
                }))
            })?;
            sink.send(message(Body::Done(pb::CloneDone {
                files: made.files,
                marked: made.marked,
            })))
            .map_err(SpecError::from)
        })))
    }

    type ListWorkspacesStream = ResponseStream<pb::Workspace>;
    async fn list_workspaces(
        &self,
        req: Request<pb::ListWorkspacesRequest>,
    ) -> Stream<pb::Workspace> {
        let who = authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::LIST_WORKSPACES,
        )?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.list_workspaces(&who, &mut |w| sink.send(convert::workspace_to_wire(w)))
        })))
    }

    async fn delete_workspace(
        &self,
        req: Request<pb::DeleteWorkspaceRequest>,
    ) -> Result<Response<pb::DeleteWorkspaceReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DELETE_WORKSPACE)?;
        let svc = self.service.clone();
        blocking(move || svc.delete_workspace(&who, &req.name)).await?;
        Ok(Response::new(pb::DeleteWorkspaceReply {}))
    }

    type OpenStream = ResponseStream<pb::FileRecord>;
    async fn open(&self, req: Request<pb::OpenRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::OPEN)?;
        let action = convert::open_action(req.action)?;
        let open = OpenRequest {
            files: req.files,
            change: ChangeRef::from_number(req.change),
            file_type: convert::type_change(&req.file_type)?,
            add_types: convert::detected_types(&req.add_types)?,
        };
        let svc = self.service.clone();
        let files = blocking(move || svc.open(&who, action, open)).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type MoveStream = ResponseStream<pb::FileRecord>;
    async fn r#move(&self, req: Request<pb::MoveRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::MOVE)?;
        let svc = self.service.clone();
        let files = blocking(move || {
            svc.move_file(&who, &req.from, &req.to, ChangeRef::from_number(req.change))
        })
        .await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type RevertStream = ResponseStream<pb::FileRecord>;
    async fn revert(&self, req: Request<pb::RevertRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::REVERT)?;
        let svc = self.service.clone();
        let files =
            blocking(move || svc.revert(&who, &req.files, req.unchanged_only, &req.unchanged))
                .await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type ReopenStream = ResponseStream<pb::FileRecord>;
    async fn reopen(&self, req: Request<pb::ReopenRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::REOPEN)?;
        let svc = self.service.clone();
        let change = req.set_change.then_some(ChangeRef::from_number(req.change));
        let file_type = convert::type_change(&req.file_type)?;
        let files = blocking(move || svc.reopen(&who, &req.files, change, file_type)).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type OpenedStream = ResponseStream<pb::FileRecord>;
    async fn opened(&self, req: Request<pb::OpenedRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::OPENED)?;
        let svc = self.service.clone();
        let change = req
            .filter_change
            .then_some(ChangeRef::from_number(req.change));
        let one_change =
            change.filter(|_| !req.all_workspaces && req.files.is_empty() && req.user.is_empty());
        if req.content_only && one_change.is_none() {
            return Err(Status::invalid_argument(
                "content_only lists one pending change of the caller's workspace: \
                 set filter_change, and no files, user or all_workspaces",
            ));
        }
        if let Some(change) = one_change {
            // One whole pending change: streamed a page at a time.
            let content_only = req.content_only;
            return Ok(Response::new(self.streams.read(
                command::OPENED,
                svc.user_known(&who),
                move |sink| {
                    svc.opened_in_change(&who, change, content_only, &mut |f| sink.send(file(f)))
                },
            )));
        }
        Ok(Response::new(self.streams.read(
            command::OPENED,
            svc.user_known(&who),
            move |sink| {
                svc.opened(
                    &who,
                    &req.files,
                    req.all_workspaces,
                    &req.user,
                    change,
                    &mut |f| sink.send(file(f)),
                )
            },
        )))
    }

    async fn save_change(
        &self,
        req: Request<pb::SaveChangeRequest>,
    ) -> Result<Response<pb::Change>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_CHANGE)?;
        let svc = self.service.clone();
        if req.delete {
            let number = req.change;
            blocking(move || svc.delete_change(&who, ChangeNumber(number))).await?;
            // A deleted change has no status: the reply names it only.
            return Ok(Response::new(pb::Change {
                change: number,
                ..Default::default()
            }));
        }
        let saved = blocking(move || {
            svc.save_change(
                &who,
                ChangeRef::from_number(req.change).numbered(),
                &req.description,
                &req.files,
            )
        })
        .await?;
        Ok(Response::new(convert::change(saved)))
    }

    type SubmitStream = ResponseStream<pb::SubmitReply>;
    async fn submit(&self, req: Request<Streaming<pb::SubmitMessage>>) -> Stream<pb::SubmitReply> {
        let peer = Peer::of_stream(&req);
        let mut stream = req.into_inner();
        let svc = self.service.clone();
        let first = stream
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("empty submit stream"))?;
        let Some(SubmitBody::Begin(begin)) = first.body else {
            return Err(Status::invalid_argument("a submit must start with `begin`"));
        };
        let who = authorize(&self.service, &peer, begin.caller, command::SUBMIT)?;
        let list_files = convert::submit_reply_files(begin.reply_files)?;
        let session = {
            let svc = svc.clone();
            blocking(move || {
                svc.submit_begin(
                    &who,
                    ChangeRef::from_number(begin.change),
                    &begin.description,
                )
            })
            .await?
        };
        let (_stream, session) = api_shelves::receive_uploads(
            stream,
            session,
            keel_service::SubmitSession::uploads,
            svc.clone(),
            api_shelves::submit_step,
            "submit",
        )
        .await?;
        // The commit runs on the reply's producer: each batch of committed files
        // (`ServiceConfig::submit_batch`) goes out as the have list records it, one reply
        // message per batch, so the reply never holds the whole change nor reads it twice.
        // A client that asked for no files gets one message with their count instead.
        Ok(Response::new(self.streams.spawn(move |sink| {
            let reply = |result: &keel_service::SubmitResult,
                         files: Vec<pb::FileRecord>,
                         file_count: u64| pb::SubmitReply {
                change: result.change.0,
                files,
                renamed_from: result.renamed_from.map_or(0, |c| c.0),
                trigger_failures: result
                    .trigger_failures
                    .iter()
                    .cloned()
                    .map(crate::api_triggers::failure_to_wire)
                    .collect(),
                file_count,
            };
            if list_files {
                return session
                    .commit_with(&svc, &mut |result, files| {
                        let files = files.into_iter().map(file).collect();
                        sink.send(reply(result, files, 0)).is_ok()
                    })
                    .map(|_| ());
            }
            let mut count = 0u64;
            let result = session.commit_with(&svc, &mut |_, files| {
                count += files.len() as u64;
                true
            })?;
            // The client may be gone; the change is submitted either way.
            let _ = sink.send(reply(&result, Vec::new(), count));
            Ok(())
        })))
    }

    type IntegrateStream = ResponseStream<pb::FileRecord>;
    async fn integrate(&self, req: Request<pb::IntegrateRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::INTEGRATE)?;
        let mode = convert::integrate_mode(req.mode)?;
        let request = IntegrateRequest {
            from: req.from,
            to: req.to,
            branch: req.branch,
            reverse: req.reverse,
            files: req.files,
            preview: req.preview,
            change: req.change,
        };
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            // Targets are opened batch by batch as they stream; a client that stops reading
            // does not stop the integrate part way.
            let mut listening = true;
            svc.integrate(&who, mode, request, &mut |f| {
                listening = listening && sink.send(file(f)).is_ok();
                Ok(())
            })
        })))
    }

    type ResolveListStream = ResponseStream<pb::FileRecord>;
    async fn resolve_list(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::RESOLVE_LIST)?;
        let svc = self.service.clone();
        let files = blocking(move || svc.resolve_list(&who, &req.files)).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    async fn resolve_done(
        &self,
        req: Request<pb::ResolveDoneRequest>,
    ) -> Result<Response<pb::FileRecord>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::RESOLVE_DONE)?;
        let outcome = convert::resolve_outcome(req.outcome)?;
        let svc = self.service.clone();
        let info = blocking(move || svc.resolve_done(&who, &req.file, outcome)).await?;
        Ok(Response::new(file(info)))
    }

    type ResolvedStream = ResponseStream<pb::FileRecord>;
    async fn resolved(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::RESOLVED)?;
        let svc = self.service.clone();
        let files = blocking(move || svc.resolved(&who, &req.files)).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type IntegratedStream = ResponseStream<pb::IntegRecord>;
    async fn integrated(&self, req: Request<pb::FilesRequest>) -> Stream<pb::IntegRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::INTEGRATED)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.integrated(&who, &req.files, &mut |i| sink.send(convert::integ_info(i)))
        })))
    }

    type SyncStream = ResponseStream<pb::SyncMessage>;
    async fn sync(&self, req: Request<pb::SyncRequest>) -> Stream<pb::SyncMessage> {
        use pb::sync_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SYNC)?;
        let svc = self.service.clone();
        let opts = SyncOptions {
            preview: req.preview,
            force: req.force,
            have_only: req.have_only,
            populate_only: req.populate_only,
        };
        // A preview writes nothing (no resolves are scheduled), so it may be answered inline.
        let small = opts.preview && small_file_args(&req.files);
        let (chunk, sent, by_digest) = (self.chunk, self.sent.clone(), req.content_by_digest);
        let audit = self.audit.clone().map(|a| (a, crate::audit::who(&who)));
        Ok(Response::new(self.streams.read(
            command::SYNC,
            small && svc.user_known(&who),
            move |sink| {
                let totals = svc.sync(&who, &req.files, opts, &mut |event| {
                    let item = event.item;
                    if let (Some((audit, by)), Some(_)) = (&audit, &event.content) {
                        audit.record(by, "sync", item.depot_file.as_str(), item.rev, item.digest);
                    }
                    let msg = pb::SyncFile {
                        depot_file: item.depot_file.to_string(),
                        client_file: item.client_file,
                        rev: item.rev,
                        action: convert::sync_action(item.action) as i32,
                        file_type: item.file_type.map(|t| t.to_string()).unwrap_or_default(),
                        digest: item.digest.map(|d| d.to_hex()).unwrap_or_default(),
                        size: item.size,
                        compressed: event.content.as_ref().is_some_and(|c| c.compressed),
                        transfer: event.content.is_some(),
                        stored_size: event
                            .content
                            .as_ref()
                            .map(|c| c.blob.stored_size)
                            .unwrap_or(0),
                        mod_time: item.time.max(0) as u64,
                        recorded_mod_time: item.mod_time,
                        have_digest: item.have_digest.map(|d| d.to_hex()).unwrap_or_default(),
                        change: item.change,
                        author: item.author,
                    };
                    sink.send(pb::SyncMessage {
                        body: Some(Body::File(msg)),
                    })?;
                    if let Some(content) = event.content.filter(|_| !by_digest) {
                        send_content(
                            sink,
                            content.blob,
                            item.depot_file.as_str(),
                            (chunk, &sent),
                            |data| pb::SyncMessage {
                                body: Some(Body::Chunk(data)),
                            },
                        )?;
                    }
                    Ok(())
                })?;
                sink.send(pb::SyncMessage {
                    body: Some(Body::Summary(pb::SyncSummary {
                        files: totals.files,
                        bytes: totals.bytes,
                        mark: totals.mark.map(convert::sync_mark_to_pb),
                    })),
                })
            },
        )))
    }

    async fn update_have(
        &self,
        req: Request<Streaming<pb::HaveBatch>>,
    ) -> Result<Response<pb::UpdateHaveReply>, Status> {
        let peer = Peer::of_stream(&req);
        let mut stream = req.into_inner();
        let mut updated = 0;
        // Batches of this call recorded so far: the sync's own writes a mark allows for.
        let mut earlier = 0;
        while let Some(batch) = stream.message().await? {
            let who = authorize(&self.service, &peer, batch.caller, command::UPDATE_HAVE)?;
            let entries: Vec<HaveEntry> = batch
                .entries
                .into_iter()
                .map(|e| HaveEntry {
                    depot_file: e.depot_file,
                    rev: e.rev,
                })
                .collect();
            let mark = batch.mark.map(convert::sync_mark_from_pb);
            let svc = self.service.clone();
            let done = blocking(move || svc.update_have(&who, entries, mark, earlier)).await?;
            updated += done.updated;
            earlier += u64::from(done.wrote);
        }
        Ok(Response::new(pb::UpdateHaveReply { updated }))
    }

    type HaveStream = ResponseStream<pb::FileRecord>;
    async fn have(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::HAVE)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.have_list(&who, &req.files, &mut |f| sink.send(file(f)))
        })))
    }

    type HaveIfChangedStream = ResponseStream<pb::HaveIfChangedMessage>;
    async fn have_if_changed(
        &self,
        req: Request<pb::HaveIfChangedRequest>,
    ) -> Stream<pb::HaveIfChangedMessage> {
        use pb::have_if_changed_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::HAVE_IF_CHANGED)?;
        let svc = self.service.clone();
        let message = |body| pb::HaveIfChangedMessage { body: Some(body) };
        // Answered inline while it stays small: an unchanged list is one message.
        let small = svc.user_known(&who);
        Ok(Response::new(self.streams.read(
            command::HAVE_IF_CHANGED,
            small,
            move |sink| {
                let listing = svc.have_if_changed(&who, &req.token, &mut |part| {
                    sink.send(message(match part {
                        HavePart::Delta => Body::Delta(true),
                        HavePart::File(f) => Body::File(file(*f)),
                    }))
                })?;
                match listing {
                    HaveListing::Unchanged => sink.send(message(Body::Unchanged(true))),
                    HaveListing::Sent { token } | HaveListing::Delta { token } => {
                        sink.send(message(Body::Token(token)))
                    }
                }
            },
        )))
    }

    type UndoStream = ResponseStream<pb::FileRecord>;
    async fn undo(&self, req: Request<pb::UndoRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let stream =
            crate::api_undo::undo(self.service.clone(), &self.streams, &peer, req.into_inner())?;
        Ok(Response::new(stream))
    }

    type AnnotateStream = ResponseStream<pb::AnnotateMessage>;
    async fn annotate(&self, req: Request<pb::AnnotateRequest>) -> Stream<pb::AnnotateMessage> {
        let peer = Peer::of(&req);
        let stream = crate::api_annotate::annotate(
            self.service.clone(),
            &self.streams,
            &peer,
            req.into_inner(),
        )?;
        Ok(Response::new(stream))
    }

    type FilesStream = ResponseStream<pb::FileRecord>;
    async fn files(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::FILES)?;
        let svc = self.service.clone();
        let opts = ListOptions {
            all_revisions: req.all_revisions,
            max: req.max,
        };
        let small = small_file_args(&req.files);
        Ok(Response::new(self.streams.read(
            command::FILES,
            small && svc.user_known(&who),
            move |sink| svc.files(&who, &req.files, opts, &mut |f| sink.send(file(f))),
        )))
    }

    type FstatStream = ResponseStream<pb::FileRecord>;
    async fn fstat(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::FSTAT)?;
        let svc = self.service.clone();
        let small = small_file_args(&req.files);
        Ok(Response::new(self.streams.read(
            command::FSTAT,
            small && svc.user_known(&who),
            move |sink| svc.fstat(&who, &req.files, &mut |f| sink.send(file(f))),
        )))
    }

    type DirsStream = ResponseStream<pb::DirRecord>;
    async fn dirs(&self, req: Request<pb::DirsRequest>) -> Stream<pb::DirRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DIRS)?;
        let svc = self.service.clone();
        let opts = keel_service::DirsOptions {
            include_deleted: req.include_deleted,
        };
        Ok(Response::new(self.streams.read(
            command::DIRS,
            svc.user_known(&who),
            move |sink| {
                svc.dirs(&who, &req.dirs, opts, &mut |dir| {
                    sink.send(pb::DirRecord { dir })
                })
            },
        )))
    }

    type FilelogStream = ResponseStream<pb::FileRecord>;
    async fn filelog(&self, req: Request<pb::FilesRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::FILELOG)?;
        let svc = self.service.clone();
        let small = small_file_args(&req.files);
        Ok(Response::new(self.streams.read(
            command::FILELOG,
            small && svc.user_known(&who),
            move |sink| {
                svc.filelog(&who, &req.files, req.max, req.follow_history, &mut |f| {
                    sink.send(file(f))
                })
            },
        )))
    }

    type ChangesStream = ResponseStream<pb::Change>;
    async fn changes(&self, req: Request<pb::ChangesRequest>) -> Stream<pb::Change> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller.clone(), command::CHANGES)?;
        let svc = self.service.clone();
        if !req.since.is_empty() {
            return crate::api_watch::changes_since(&self.streams, svc, who, req);
        }
        let query = ChangesQuery {
            files: req.files,
            max: req.max,
            status: convert::change_status_filter(req.status)?,
            user: req.user,
            workspace: req.workspace,
        };
        let small = query.files.is_empty() && (1..=64).contains(&query.max);
        Ok(Response::new(self.streams.read(
            command::CHANGES,
            small && svc.user_known(&who),
            move |sink| svc.changes(&who, &query, &mut |c| sink.send(convert::change(c))),
        )))
    }

    async fn get_webhooks(
        &self,
        req: Request<pb::GetWebhooksRequest>,
    ) -> Result<Response<pb::WebhooksTable>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_WEBHOOKS)?;
        let svc = self.service.clone();
        let table = blocking(move || svc.webhooks(&who)).await?;
        Ok(Response::new(crate::api_webhooks::table_to_wire(table)))
    }

    async fn save_webhooks(
        &self,
        req: Request<pb::SaveWebhooksRequest>,
    ) -> Result<Response<pb::WebhooksTable>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_WEBHOOKS)?;
        let svc = self.service.clone();
        let table = blocking(move || {
            svc.save_webhooks(&who, &req.lines)?;
            svc.webhooks(&who)
        })
        .await?;
        self.webhooks_saved.notify_one();
        Ok(Response::new(crate::api_webhooks::table_to_wire(table)))
    }

    type WatchStream = ResponseStream<pb::WatchMessage>;
    async fn watch(&self, req: Request<pb::WatchRequest>) -> Stream<pb::WatchMessage> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::WATCH)?;
        let since = (!req.from_now).then_some(req.since);
        Ok(Response::new(
            self.subscriptions.subscribe(who, req.files, since),
        ))
    }

    type DescribeStream = ResponseStream<pb::DescribeMessage>;
    async fn describe(&self, req: Request<pb::DescribeRequest>) -> Stream<pb::DescribeMessage> {
        use pb::describe_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DESCRIBE)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            let mut send = |part| {
                let body = match part {
                    DescribePart::Change(c) => Body::Change(convert::change(c)),
                    DescribePart::File(f) => Body::File(file(*f)),
                    DescribePart::Diff(d) => Body::Diff(d),
                };
                sink.send(pb::DescribeMessage { body: Some(body) })
            };
            if req.shelved {
                svc.describe_shelved(&who, ChangeNumber(req.change), req.summary, &mut send)
            } else {
                svc.describe(&who, ChangeNumber(req.change), req.summary, &mut send)
            }
        })))
    }

    type PrintStream = ResponseStream<pb::ContentMessage>;
    async fn print(&self, req: Request<pb::FilesRequest>) -> Stream<pb::ContentMessage> {
        use pb::content_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::PRINT)?;
        let svc = self.service.clone();
        let (chunk, sent, by_digest) = (self.chunk, self.sent.clone(), req.content_by_digest);
        let audit = self.audit.clone().map(|a| (a, crate::audit::who(&who)));
        let action = crate::audit::print_action(&req.purpose);
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.print(&who, &req.files, &mut |info, content| {
                let path = info.depot_file.clone();
                if let Some((audit, by)) = &audit {
                    audit.record(
                        by,
                        action,
                        path.as_str(),
                        info.head_rev,
                        Some(content.digest),
                    );
                }
                sink.send(pb::ContentMessage {
                    body: Some(Body::File(file(info))),
                })?;
                sink.send(pb::ContentMessage {
                    body: Some(Body::Header(pb::ContentHeader {
                        compressed: content.compressed,
                        size: content.size,
                        digest: content.digest.to_hex(),
                        stored_size: content.blob.stored_size,
                    })),
                })?;
                if by_digest {
                    return Ok(());
                }
                send_content(sink, content.blob, path.as_str(), (chunk, &sent), |data| {
                    pb::ContentMessage {
                        body: Some(Body::Chunk(data)),
                    }
                })
            })
        })))
    }

    type ContentStream = ResponseStream<pb::ContentMessage>;
    async fn content(&self, req: Request<pb::ContentRequest>) -> Stream<pb::ContentMessage> {
        use pb::content_message::Body;
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::CONTENT)?;
        let svc = self.service.clone();
        let (chunk, sent, audit) = (self.chunk, self.sent.clone(), self.audit.clone());
        Ok(Response::new(self.streams.spawn(move |sink| {
            let of = (!req.depot_file.is_empty()).then(|| keel_service::ContentOf {
                depot_file: req.depot_file.clone(),
                rev: req.rev,
            });
            let blob = svc.content(&who, &req.digest, of.as_ref())?;
            if let Some(audit) = &audit {
                let digest = keel_core::Digest::from_hex(&req.digest).ok();
                audit.record(&crate::audit::who(&who), "content", "", 0, digest);
            }
            sink.send(pb::ContentMessage {
                body: Some(Body::Header(pb::ContentHeader {
                    compressed: blob.encoding == keel_blob::Encoding::Zstd,
                    size: 0,
                    digest: req.digest.clone(),
                    stored_size: blob.stored_size,
                })),
            })?;
            send_content(sink, blob, &req.digest, (chunk, &sent), |data| {
                pb::ContentMessage {
                    body: Some(Body::Chunk(data)),
                }
            })
        })))
    }

    async fn diff2(
        &self,
        req: Request<pb::Diff2Request>,
    ) -> Result<Response<pb::Diff2Reply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DIFF2)?;
        let svc = self.service.clone();
        let audit = self.audit.clone();
        let d = blocking(move || {
            let d = svc.diff2(&who, &req.left, &req.right)?;
            if let Some(audit) = &audit {
                let by = crate::audit::who(&who);
                for side in [&d.left, &d.right] {
                    let (file, rev) = (side.depot_file.as_str(), side.head_rev);
                    audit.record(&by, "diff", file, rev, side.head_digest);
                }
            }
            Ok::<_, ServiceError>(d)
        })
        .await?;
        Ok(Response::new(pb::Diff2Reply {
            left: Some(file(d.left)),
            right: Some(file(d.right)),
            diff: d.diff,
            identical: d.identical,
            binary: d.binary,
        }))
    }

    async fn shelve(
        &self,
        req: Request<Streaming<pb::ShelveMessage>>,
    ) -> Result<Response<pb::ShelveReply>, Status> {
        let peer = Peer::of_stream(&req);
        let reply = api_shelves::shelve(self.service.clone(), &peer, req.into_inner()).await?;
        Ok(Response::new(reply))
    }

    type DeleteShelvedStream = ResponseStream<pb::FileRecord>;
    async fn delete_shelved(
        &self,
        req: Request<pb::DeleteShelvedRequest>,
    ) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DELETE_SHELVED)?;
        let svc = self.service.clone();
        let files =
            blocking(move || svc.delete_shelved(&who, ChangeNumber(req.change), &req.files))
                .await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type UnshelveStream = ResponseStream<pb::FileRecord>;
    async fn unshelve(&self, req: Request<pb::UnshelveRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::UNSHELVE)?;
        let svc = self.service.clone();
        let files = blocking(move || {
            svc.unshelve(
                &who,
                ChangeNumber(req.shelved_change),
                ChangeRef::from_number(req.change),
                &req.files,
            )
        })
        .await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type ObliterateStream = ResponseStream<pb::ObliterateMessage>;
    async fn obliterate(
        &self,
        req: Request<pb::ObliterateRequest>,
    ) -> Stream<pb::ObliterateMessage> {
        let peer = Peer::of(&req);
        let mut req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller.take(), command::OBLITERATE)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            api_shelves::obliterate(&svc, &who, &req, sink)
        })))
    }
    async fn save_label(
        &self,
        req: Request<pb::SaveLabelRequest>,
    ) -> Result<Response<pb::Label>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_LABEL)?;
        let spec = api_labels::label_from_wire(
            req.label
                .ok_or_else(|| Status::invalid_argument("no label spec given"))?,
        );
        let svc = self.service.clone();
        let saved =
            blocking(move || svc.save_label(&who, spec, req.create_only, req.force)).await?;
        Ok(Response::new(api_labels::label_to_wire(saved)))
    }

    async fn get_label(
        &self,
        req: Request<pb::GetLabelRequest>,
    ) -> Result<Response<pb::Label>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_LABEL)?;
        let svc = self.service.clone();
        let spec = blocking(move || {
            let spec = svc.get_label(&who, &req.name)?;
            if req.form {
                Ok(svc.form_out(&who, spec)?)
            } else {
                Ok::<_, keel_service::LabelError>(spec)
            }
        })
        .await?;
        Ok(Response::new(api_labels::label_to_wire(spec)))
    }

    type ListLabelsStream = ResponseStream<pb::Label>;
    async fn list_labels(&self, req: Request<pb::ListLabelsRequest>) -> Stream<pb::Label> {
        let who = authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::LIST_LABELS,
        )?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.list_labels(&who, &mut |l| sink.send(api_labels::label_to_wire(l)))
        })))
    }

    async fn delete_label(
        &self,
        req: Request<pb::DeleteLabelRequest>,
    ) -> Result<Response<pb::DeleteLabelReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DELETE_LABEL)?;
        let svc = self.service.clone();
        blocking(move || svc.delete_label(&who, &req.name, req.force)).await?;
        Ok(Response::new(pb::DeleteLabelReply {}))
    }

    type TagStream = ResponseStream<pb::LabelFile>;
    async fn tag(&self, req: Request<pb::TagRequest>) -> Stream<pb::LabelFile> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::TAG)?;
        let svc = self.service.clone();
        let opts = TagOptions {
            delete: req.delete,
            preview: req.preview,
        };
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.tag(&who, &req.label, &req.files, opts, &mut |c| {
                sink.send(api_labels::label_file(c))
            })
            .map(drop)
        })))
    }

    type LabelsyncStream = ResponseStream<pb::LabelFile>;
    async fn labelsync(&self, req: Request<pb::LabelsyncRequest>) -> Stream<pb::LabelFile> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::LABELSYNC)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.labelsync(&who, &req.label, &req.files, req.preview, &mut |c| {
                sink.send(api_labels::label_file(c))
            })
            .map(drop)
        })))
    }

    async fn save_branch(
        &self,
        req: Request<pb::SaveBranchRequest>,
    ) -> Result<Response<pb::Branch>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_BRANCH)?;
        let spec = api_labels::branch_from_wire(
            req.branch
                .ok_or_else(|| Status::invalid_argument("no branch spec given"))?,
        );
        let svc = self.service.clone();
        let saved = blocking(move || svc.save_branch(&who, spec, req.create_only)).await?;
        Ok(Response::new(api_labels::branch_to_wire(saved)))
    }

    async fn get_branch(
        &self,
        req: Request<pb::GetBranchRequest>,
    ) -> Result<Response<pb::Branch>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_BRANCH)?;
        let svc = self.service.clone();
        let spec = blocking(move || {
            let spec = svc.get_branch(&who, &req.name)?;
            if req.form {
                Ok(svc.form_out(&who, spec)?)
            } else {
                Ok::<_, keel_service::SpecError>(spec)
            }
        })
        .await?;
        Ok(Response::new(api_labels::branch_to_wire(spec)))
    }

    type ListBranchesStream = ResponseStream<pb::Branch>;
    async fn list_branches(&self, req: Request<pb::ListBranchesRequest>) -> Stream<pb::Branch> {
        let who = authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::LIST_BRANCHES,
        )?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            svc.list_branches(&who, &mut |b| sink.send(api_labels::branch_to_wire(b)))
        })))
    }

    async fn delete_branch(
        &self,
        req: Request<pb::DeleteBranchRequest>,
    ) -> Result<Response<pb::DeleteBranchReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DELETE_BRANCH)?;
        let svc = self.service.clone();
        blocking(move || svc.delete_branch(&who, &req.name)).await?;
        Ok(Response::new(pb::DeleteBranchReply {}))
    }

    type CheckpointStream = ResponseStream<pb::CheckpointMessage>;
    async fn checkpoint(
        &self,
        req: Request<pb::CheckpointRequest>,
    ) -> Stream<pb::CheckpointMessage> {
        authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::CHECKPOINT,
        )?;
        let backup = self.backup.clone();
        Ok(Response::new(
            self.streams.spawn(move |sink| backup.checkpoint(sink)),
        ))
    }

    type VerifyStream = ResponseStream<pb::VerifyMessage>;
    async fn verify(&self, req: Request<pb::VerifyRequest>) -> Stream<pb::VerifyMessage> {
        let peer = Peer::of(&req);
        let mut req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller.take(), command::VERIFY)?;
        let svc = self.service.clone();
        // A long read: its own thread at the long-read priority, its checks lower still.
        Ok(Response::new(self.streams.read(
            command::VERIFY,
            false,
            move |sink| crate::api_verify::verify(&svc, &who, &req, sink),
        )))
    }

    type JournalStream = ResponseStream<pb::JournalMessage>;
    async fn journal(&self, req: Request<pb::JournalRequest>) -> Stream<pb::JournalMessage> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        authorize(&self.service, &peer, req.caller, command::JOURNAL)?;
        let backup = self.backup.clone();
        let (batch, heartbeat) = (self.journal_batch, self.journal_heartbeat);
        let stream = self.streams.spawn(move |sink| {
            crate::api_replication::stream_journal(
                backup.journal.as_deref(),
                req.from_position,
                batch,
                heartbeat,
                sink,
            )
        });
        // It never ends by itself: a stop ends it, so the server does not wait for it.
        Ok(Response::new(crate::stopping::end_on_stop(
            stream,
            self.stopping.clone(),
        )))
    }

    async fn get_triggers(
        &self,
        req: Request<pb::GetTriggersRequest>,
    ) -> Result<Response<pb::TriggersTable>, Status> {
        let who = authorize(
            &self.service,
            &Peer::of(&req),
            req.into_inner().caller,
            command::GET_TRIGGERS,
        )?;
        let svc = self.service.clone();
        let table = blocking(move || svc.triggers(&who)).await?;
        Ok(Response::new(crate::api_triggers::table_to_wire(table)))
    }

    async fn save_triggers(
        &self,
        req: Request<pb::SaveTriggersRequest>,
    ) -> Result<Response<pb::TriggersTable>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_TRIGGERS)?;
        let svc = self.service.clone();
        let table = blocking(move || svc.save_triggers(&who, &req.lines)).await?;
        Ok(Response::new(crate::api_triggers::table_to_wire(table)))
    }

    async fn login(
        &self,
        req: Request<pb::LoginRequest>,
    ) -> Result<Response<pb::LoginReply>, Status> {
        api_auth::login(self.service.clone(), &self.login_slots, req).await
    }

    async fn login_status(
        &self,
        req: Request<pb::LoginStatusRequest>,
    ) -> Result<Response<pb::LoginReply>, Status> {
        api_auth::login_status(self.service.clone(), req).await
    }

    async fn logout(
        &self,
        req: Request<pb::LogoutRequest>,
    ) -> Result<Response<pb::LogoutReply>, Status> {
        api_auth::logout(self.service.clone(), req).await
    }

    async fn set_password(
        &self,
        req: Request<pb::SetPasswordRequest>,
    ) -> Result<Response<pb::SetPasswordReply>, Status> {
        api_auth::set_password(self.service.clone(), &self.login_slots, req).await
    }

    async fn get_user(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::User>, Status> {
        api_auth::get_user(self.service.clone(), req).await
    }

    async fn save_user(
        &self,
        req: Request<pb::SaveUserRequest>,
    ) -> Result<Response<pb::User>, Status> {
        api_auth::save_user(self.service.clone(), req).await
    }

    async fn delete_user(
        &self,
        req: Request<pb::DeleteUserRequest>,
    ) -> Result<Response<pb::DeleteUserReply>, Status> {
        api_auth::delete_user(self.service.clone(), req).await
    }

    type ListUsersStream = ResponseStream<pb::User>;
    async fn list_users(&self, req: Request<pb::ListUsersRequest>) -> Stream<pb::User> {
        api_auth::list_users(self.service.clone(), &self.streams, req)
    }

    async fn configure(
        &self,
        req: Request<pb::ConfigureRequest>,
    ) -> Result<Response<pb::ConfigureReply>, Status> {
        api_auth::configure(self.service.clone(), req).await
    }

    type ListSettingsStream = ResponseStream<pb::Setting>;
    async fn list_settings(&self, req: Request<pb::ListSettingsRequest>) -> Stream<pb::Setting> {
        api_auth::list_settings(self.service.clone(), &self.streams, req)
    }

    async fn monitor_show(
        &self,
        req: Request<pb::MonitorShowRequest>,
    ) -> Result<Response<pb::MonitorShowReply>, Status> {
        crate::api_monitor::show(&self.service, &self.monitor, req).await
    }

    async fn monitor_terminate(
        &self,
        req: Request<pb::MonitorTerminateRequest>,
    ) -> Result<Response<pb::RunningCommand>, Status> {
        crate::api_monitor::terminate(&self.service, &self.monitor, req).await
    }

    async fn report_probe(
        &self,
        req: Request<pb::ReportProbeRequest>,
    ) -> Result<Response<pb::ReportProbeReply>, Status> {
        crate::api_probe::report_probe(&self.service, self.probe.clone(), req)
    }

    async fn get_job_spec(
        &self,
        req: Request<pb::GetJobSpecRequest>,
    ) -> Result<Response<pb::JobSpecForm>, Status> {
        crate::api_jobs::get_job_spec(&self.service, req).await
    }

    async fn save_job_spec(
        &self,
        req: Request<pb::SaveJobSpecRequest>,
    ) -> Result<Response<pb::JobSpecForm>, Status> {
        crate::api_jobs::save_job_spec(&self.service, req).await
    }

    async fn get_job(&self, req: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        crate::api_jobs::get_job(&self.service, req).await
    }

    async fn save_job(
        &self,
        req: Request<pb::SaveJobRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        crate::api_jobs::save_job(&self.service, req).await
    }

    async fn delete_job(
        &self,
        req: Request<pb::DeleteJobRequest>,
    ) -> Result<Response<pb::DeleteJobReply>, Status> {
        crate::api_jobs::delete_job(&self.service, req).await
    }

    type ListJobsStream = ResponseStream<pb::Job>;
    async fn list_jobs(&self, req: Request<pb::ListJobsRequest>) -> Stream<pb::Job> {
        crate::api_jobs::list_jobs(&self.service, &self.streams, req)
    }

    async fn fix(&self, req: Request<pb::FixRequest>) -> Result<Response<pb::FixReply>, Status> {
        crate::api_jobs::fix(&self.service, req).await
    }

    type ListFixesStream = ResponseStream<pb::FixEntry>;
    async fn list_fixes(&self, req: Request<pb::ListFixesRequest>) -> Stream<pb::FixEntry> {
        crate::api_jobs::list_fixes(&self.service, &self.streams, req)
    }

    async fn get_counter(
        &self,
        req: Request<pb::GetCounterRequest>,
    ) -> Result<Response<pb::CounterValue>, Status> {
        crate::api_counters::get(self.service.clone(), req).await
    }

    async fn update_counter(
        &self,
        req: Request<pb::UpdateCounterRequest>,
    ) -> Result<Response<pb::CounterValue>, Status> {
        crate::api_counters::update(self.service.clone(), req).await
    }

    type ListCountersStream = ResponseStream<pb::CounterValue>;
    async fn list_counters(
        &self,
        req: Request<pb::ListCountersRequest>,
    ) -> Stream<pb::CounterValue> {
        crate::api_counters::list(self.service.clone(), &self.streams, req)
    }

    type ReviewStream = ResponseStream<pb::ReviewChange>;
    async fn review(&self, req: Request<pb::ReviewRequest>) -> Stream<pb::ReviewChange> {
        crate::api_counters::review(self.service.clone(), &self.streams, req)
    }

    type ReviewsStream = ResponseStream<pb::User>;
    async fn reviews(&self, req: Request<pb::ReviewsRequest>) -> Stream<pb::User> {
        crate::api_counters::reviews(self.service.clone(), &self.streams, req)
    }

    type InterchangesStream = ResponseStream<pb::Interchange>;
    async fn interchanges(&self, req: Request<pb::InterchangesRequest>) -> Stream<pb::Interchange> {
        crate::api_counters::interchanges(self.service.clone(), &self.streams, req)
    }

    type CstatStream = ResponseStream<pb::ChangeSyncState>;
    async fn cstat(&self, req: Request<pb::CstatRequest>) -> Stream<pb::ChangeSyncState> {
        crate::api_counters::cstat(self.service.clone(), &self.streams, req)
    }

    type SizesStream = ResponseStream<pb::SizeEntry>;
    async fn sizes(&self, req: Request<pb::SizesRequest>) -> Stream<pb::SizeEntry> {
        crate::api_counters::sizes(self.service.clone(), &self.streams, req)
    }

    type GrepStream = ResponseStream<pb::GrepMessage>;
    async fn grep(&self, req: Request<pb::GrepRequest>) -> Stream<pb::GrepMessage> {
        crate::api_grep::grep(self.service.clone(), &self.streams, req)
    }

    type PopulateStream = ResponseStream<pb::PopulatedFile>;
    async fn populate(&self, req: Request<pb::PopulateRequest>) -> Stream<pb::PopulatedFile> {
        crate::api_populate::populate(self.service.clone(), &self.streams, req)
    }

    async fn istat(
        &self,
        req: Request<pb::IstatRequest>,
    ) -> Result<Response<pb::IstatReply>, Status> {
        crate::api_istat::istat(self.service.clone(), req).await
    }

    type PruneStream = ResponseStream<pb::PruneMessage>;
    async fn prune(&self, req: Request<pb::PruneRequest>) -> Stream<pb::PruneMessage> {
        crate::api_istat::prune(self.service.clone(), &self.streams, req)
    }

    async fn get_group(
        &self,
        req: Request<pb::GetGroupRequest>,
    ) -> Result<Response<pb::Group>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_GROUP)?;
        let svc = self.service.clone();
        let group = blocking(move || svc.get_group(&who, &req.name)).await?;
        Ok(Response::new(api_access::group_to_wire(group)))
    }

    async fn save_group(
        &self,
        req: Request<pb::SaveGroupRequest>,
    ) -> Result<Response<pb::Group>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_GROUP)?;
        let group = req
            .group
            .ok_or_else(|| Status::invalid_argument("no group spec given"))?;
        let spec = api_access::group_from_wire(group).map_err(convert::status)?;
        let svc = self.service.clone();
        let saved = blocking(move || svc.save_group(&who, spec)).await?;
        Ok(Response::new(api_access::group_to_wire(saved)))
    }

    async fn delete_group(
        &self,
        req: Request<pb::DeleteGroupRequest>,
    ) -> Result<Response<pb::DeleteGroupReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::DELETE_GROUP)?;
        let svc = self.service.clone();
        blocking(move || svc.delete_group(&who, &req.name)).await?;
        Ok(Response::new(pb::DeleteGroupReply {}))
    }

    type ListGroupsStream = ResponseStream<pb::Group>;
    async fn list_groups(&self, req: Request<pb::ListGroupsRequest>) -> Stream<pb::Group> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::LIST_GROUPS)?;
        let svc = self.service.clone();
        Ok(Response::new(self.streams.spawn(move |sink| {
            let user = (!req.user.is_empty()).then_some(req.user.as_str());
            svc.list_groups(&who, user, &mut |g| sink.send(api_access::group_to_wire(g)))
        })))
    }

    async fn get_protections(
        &self,
        req: Request<pb::GetProtectionsRequest>,
    ) -> Result<Response<pb::Protections>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::GET_PROTECTIONS)?;
        let svc = self.service.clone();
        let table = blocking(move || svc.get_protections(&who)).await?;
        Ok(Response::new(pb::Protections {
            lines: table.lines,
            exists: table.exists,
        }))
    }

    async fn save_protections(
        &self,
        req: Request<pb::SaveProtectionsRequest>,
    ) -> Result<Response<pb::SaveProtectionsReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller, command::SAVE_PROTECTIONS)?;
        let svc = self.service.clone();
        let lines = blocking(move || svc.save_protections(&who, &req.lines)).await?;
        Ok(Response::new(pb::SaveProtectionsReply {
            lines: u32::try_from(lines).unwrap_or(u32::MAX),
        }))
    }

    async fn protects(
        &self,
        req: Request<pb::ProtectsRequest>,
    ) -> Result<Response<pb::ProtectsReply>, Status> {
        let peer = Peer::of(&req);
        let req = req.into_inner();
        let who = authorize(&self.service, &peer, req.caller.clone(), command::PROTECTS)?;
        let query = api_access::protects_query(&req);
        let svc = self.service.clone();
        let (lines, level) = blocking(move || svc.protects(&who, &query)).await?;
        Ok(Response::new(pb::ProtectsReply {
            lines: lines.into_iter().map(api_access::protect_entry).collect(),
            max_level: level.map(|l| l.as_str().to_string()).unwrap_or_default(),
        }))
    }

    async fn get_typemap(
        &self,
        req: Request<pb::GetTypemapRequest>,
    ) -> Result<Response<pb::TypemapTable>, Status> {
        crate::api_typemap::get_typemap(&self.service, req).await
    }

    async fn save_typemap(
        &self,
        req: Request<pb::SaveTypemapRequest>,
    ) -> Result<Response<pb::TypemapTable>, Status> {
        crate::api_typemap::save_typemap(&self.service, req).await
    }

    type LockStream = ResponseStream<pb::FileRecord>;
    async fn lock(&self, req: Request<pb::LockRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let files = api_locks::lock(&self.service, &peer, req.into_inner()).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }

    type UnlockStream = ResponseStream<pb::FileRecord>;
    async fn unlock(&self, req: Request<pb::UnlockRequest>) -> Stream<pb::FileRecord> {
        let peer = Peer::of(&req);
        let files = api_locks::unlock(&self.service, &peer, req.into_inner()).await?;
        Ok(Response::new(self.streams.spawn(move |sink| {
            files.into_iter().try_for_each(|f| sink.send(file(f)))
        })))
    }
}
