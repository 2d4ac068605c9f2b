//! Every RPC in `keel.proto` is refused without a valid ticket at security level 3, except
//! the two listed in `UNAUTHENTICATED` with their reason, so an RPC added later cannot be
//! reached unauthenticated. The requests are built from the proto text alone (a `Caller`
//! naming a user who has a password), sent raw, and must come back UNAUTHENTICATED.

use crate::common::{Fixture, KEEL};
use keel_proto::v1 as pb;
use keel_proto::v1::ErrorReason as R;
use prost::Message;
use prost::bytes::{Buf, BufMut};
use std::process::{Command, Stdio};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The RPCs that answer without a ticket, and why.
const UNAUTHENTICATED: &[(&str, &str)] = &[
    (
        "Info",
        "like `p4 info`: says how to reach the server and its security level",
    ),
    (
        "Login",
        "trades a password for a ticket, so it cannot need one",
    ),
];

/// Sends and receives messages as the bytes they are.
#[derive(Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n).to_vec()))
    }
}

/// (RPC name, request message type) for every RPC of the `Keel` service.
fn rpcs() -> Vec<(String, String)> {
    let proto = include_str!("../../../proto/proto/keel.proto");
    proto
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rpc "))
        .map(|l| {
            let (name, rest) = l.split_once('(').expect("rpc NAME(");
            let request = rest.split(')').next().expect("REQUEST)");
            let request = request.trim().trim_start_matches("stream ").trim();
            (name.trim().to_string(), request.to_string())
        })
        .collect()
}

/// The request's bytes: its `Caller` (field 1 of every request, or of the first message's
/// `begin` in the upload streams).
fn request(message_type: &str, caller: &pb::Caller) -> Vec<u8> {
    let with_caller = pb::InfoRequest {
        caller: Some(caller.clone()),
    }
    .encode_to_vec();
    match message_type {
        "SubmitMessage" | "ShelveMessage" => {
            let mut outer = Vec::new();
            prost::encoding::bytes::encode(1, &with_caller, &mut outer);
            outer
        }
        _ => with_caller,
    }
}

/// A refusal's machine-readable reason.
fn reason(status: &Status) -> R {
    pb::ErrorDetail::decode(status.details())
        .ok()
        .and_then(|d| R::try_from(d.reason).ok())
        .unwrap_or(R::Unspecified)
}

/// The status an RPC answers (the call's, or its stream's first), `None` when it succeeded.
async fn call(
    channel: tonic::transport::Channel,
    rpc: &str,
    body: Vec<u8>,
    ticket: Option<&str>,
) -> Option<Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("channel ready");
    let path: tonic::codegen::http::uri::PathAndQuery =
        format!("/keel.v1.Keel/{rpc}").parse().expect("path");
    let mut req = tonic::Request::new(tokio_stream::iter(vec![body]));
    if let Some(t) = ticket {
        req.metadata_mut()
            .insert("keel-ticket", t.parse().expect("ascii ticket"));
    }
    match grpc.streaming(req, path, Raw).await {
        Err(status) => Some(status),
        Ok(reply) => reply.into_inner().message().await.err(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_but_info_and_login_is_refused_without_a_valid_ticket_at_level_3() {
    let fx = Fixture::new();
    let tickets = fx.dir.path().join("tickets");
    let keel = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new(KEEL)
            .args(args)
            .env("KEEL_SERVER", &fx.server.addr)
            .env("KEEL_USER", "admin")
            .env("KEEL_TICKETS", &tickets)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("keel");
        let mut input = child.stdin.take().expect("stdin");
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        assert!(child.wait().expect("keel exits").success(), "keel {args:?}");
    };
    keel(&["passwd"], "Adm1n-Pa55\nAdm1n-Pa55\n");
    keel(&["login"], "Adm1n-Pa55\n");
    keel(&["configure", "set", "security=3"], "");

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", fx.server.addr))
        .expect("endpoint")
        .connect()
        .await
        .expect("connects");
    let rpcs = rpcs();
    assert!(rpcs.len() > 50, "{rpcs:?}");
    for (name, _) in UNAUTHENTICATED {
        assert!(rpcs.iter().any(|(r, _)| r == name), "{name} is an RPC");
    }
    let caller = pb::Caller {
        user: "admin".into(),
        workspace: String::new(),
        host: "test".into(),
    };
    for (rpc, message_type) in &rpcs {
        let body = request(message_type, &caller);
        if let Some((_, why)) = UNAUTHENTICATED.iter().find(|(n, _)| n == rpc) {
            // It may refuse for its own reasons (Login: a wrong password), never for the ticket.
            let answer = call(channel.clone(), rpc, body, None).await;
            let reason = answer.as_ref().map(reason);
            assert!(
                !matches!(
                    reason,
                    Some(R::LoginRequired | R::TicketInvalid | R::TicketExpired)
                ),
                "{rpc} ({why}) must answer without a ticket: {answer:?}"
            );
            continue;
        }
        let bogus = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";
        for (ticket, expected) in [(None, R::LoginRequired), (Some(bogus), R::TicketInvalid)] {
            let status = call(channel.clone(), rpc, body.clone(), ticket)
                .await
                .unwrap_or_else(|| panic!("{rpc} answered without a valid ticket"));
            assert_eq!(
                status.code(),
                tonic::Code::Unauthenticated,
                "{rpc} with ticket {ticket:?}: {status:?}"
            );
            assert_eq!(reason(&status), expected, "{rpc}: {status:?}");
            assert!(
                status.message().contains("admin"),
                "{rpc}: {}",
                status.message()
            );
        }
    }
}
