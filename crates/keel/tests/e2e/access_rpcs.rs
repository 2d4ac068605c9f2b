//! Every RPC of `keel.proto` against the protections table, called raw over gRPC: refused for a
//! user with no protection lines, and for a user one level below what the RPC needs; let
//! through (whatever it then answers about its empty arguments) for a user holding exactly
//! its level. A new RPC without a level in the server's table fails here and in the server's
//! own unit test.

use crate::common::Server;
use keel_core::Level;
use keel_proto::v1 as pb;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::codegen::tokio_stream;

/// A request message of any RPC: every request carries its `Caller` as field 1.
#[derive(Clone, PartialEq, prost::Message)]
struct CallerOnly {
    #[prost(message, optional, tag = "1")]
    caller: Option<pb::Caller>,
}

/// Any reply: unknown fields are skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct AnyReply {}

/// A client stream's first message: a `begin` (field 1) whose field 1 is the caller.
#[derive(Clone, PartialEq, prost::Message)]
struct BeginOnly {
    #[prost(message, optional, tag = "1")]
    begin: Option<CallerOnly>,
}

fn rpcs() -> Vec<String> {
    include_str!("../../../proto/proto/keel.proto")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rpc "))
        .filter_map(|l| l.split('(').next())
        .map(|s| s.trim().to_string())
        .collect()
}

/// The table every case runs under: `boss` is super; `lv-LEVEL` holds exactly LEVEL.
fn table() -> Vec<String> {
    let mut lines = vec!["super user boss * //...".to_string()];
    for level in Level::ALL {
        lines.push(format!("{level} user lv-{level} * //..."));
    }
    lines
}

/// Calls `rpc` raw as `user` with otherwise empty arguments and returns the status the
/// server answered with (`Ok` when it accepted the call: a stream that started, or a reply).
async fn call(channel: &tonic::transport::Channel, rpc: &str, user: &str) -> tonic::Code {
    let caller = Some(pb::Caller {
        user: user.to_string(),
        ..Default::default()
    });
    match rpc {
        // Client streams start with a `begin` whose field 1 is the caller.
        "Submit" | "Shelve" => {
            let begin = Some(CallerOnly { caller });
            send(channel, rpc, BeginOnly { begin }).await
        }
        // Saving the same table again keeps the cases that follow meaningful.
        "SaveProtections" => {
            let lines = table();
            send(channel, rpc, pb::SaveProtectionsRequest { caller, lines }).await
        }
        _ => send(channel, rpc, CallerOnly { caller }).await,
    }
}

async fn send<M: prost::Message + Default + Send + Sync + 'static>(
    channel: &tonic::transport::Channel,
    rpc: &str,
    message: M,
) -> tonic::Code {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("channel ready");
    let path = PathAndQuery::try_from(format!("/keel.v1.Keel/{rpc}")).expect("path");
    let codec = tonic_prost::ProstCodec::<M, AnyReply>::default();
    let messages = tokio_stream::iter(vec![message]);
    match grpc
        .streaming(tonic::Request::new(messages), path, codec)
        .await
    {
        Ok(_) => tonic::Code::Ok,
        Err(status) => {
            if status.code() == tonic::Code::PermissionDenied {
                assert!(
                    status.message().contains("You don't have permission"),
                    "{rpc}: {}",
                    status.message()
                );
            }
            status.code()
        }
    }
}

#[test]
fn every_rpc_needs_its_level_and_is_refused_without_protections() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let boss = server.client("boss", "", dir.path());
    let form = format!("Protections:\n\t{}\n", table().join("\n\t"));
    let out = boss.run_stdin(&["protect", "-i"], &form);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let channel = tonic::transport::Channel::from_shared(format!("http://{}", server.addr))
            .expect("address")
            .connect()
            .await
            .expect("connects");
        let all = rpcs();
        assert!(all.len() > 50, "{all:?}");
        for rpc in &all {
            let level = keel_server::required_level(rpc);
            assert_eq!(
                call(&channel, rpc, "nobody").await,
                tonic::Code::PermissionDenied,
                "{rpc} without any protection line"
            );
            if let Some(below) = Level::ALL.into_iter().rev().find(|l| *l < level) {
                assert_eq!(
                    call(&channel, rpc, &format!("lv-{below}")).await,
                    tonic::Code::PermissionDenied,
                    "{rpc} (needs {level}) at {below}"
                );
            }
            let code = call(&channel, rpc, &format!("lv-{level}")).await;
            assert_ne!(
                code,
                tonic::Code::PermissionDenied,
                "{rpc} at its own level {level}"
            );
        }
    });
}
