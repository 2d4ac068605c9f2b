//! Every RPC of `keel.proto`, called raw: the RPC list read from the proto text, requests
//! built from a `Caller` alone (field 1 of every request, or of the upload streams' first
//! message), and a call that returns the status the server answered. The tests that prove no
//! RPC is reachable without a ticket (`auth_every_rpc`) or without its protection level
//! (`access_rpcs`) share it, so both always cover the same list.

use keel_proto::v1 as pb;
use keel_proto::v1::ErrorReason as R;
use prost::Message;
use prost::bytes::{Buf, BufMut};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

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
pub fn rpcs() -> Vec<(String, String)> {
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
pub fn request(message_type: &str, caller: &pb::Caller) -> Vec<u8> {
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
pub fn reason(status: &Status) -> R {
    pb::ErrorDetail::decode(status.details())
        .ok()
        .and_then(|d| R::try_from(d.reason).ok())
        .unwrap_or(R::Unspecified)
}

/// The status an RPC answers (the call's, or its stream's first), `None` when it succeeded.
pub async fn call(
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
