//! Every RPC of `keel.proto` against the protections table, called raw over gRPC (`raw_rpc`):
//! refused for a user with no protection lines, and for a user one level below what the RPC
//! needs; let through (whatever it then answers about its empty arguments) for a user holding
//! exactly its level. The few RPCs that need no level (`Info`, `Login`, `LoginStatus`,
//! `Logout`, as in p4) answer a user with no lines. A new RPC without a level in the server's
//! table fails here and in the server's own unit test.

use crate::common::Server;
use crate::raw_rpc::{call, reason, request, rpcs};
use keel_core::Level;
use keel_proto::v1 as pb;
use keel_proto::v1::ErrorReason as R;
use prost::Message;

/// The table every case runs under: `boss` is super; `lv-LEVEL` holds exactly LEVEL.
fn table() -> Vec<String> {
    let mut lines = vec!["super user boss * //...".to_string()];
    for level in Level::ALL {
        lines.push(format!("{level} user lv-{level} * //..."));
    }
    lines
}

/// Calls `rpc` (request type `message_type`) raw as `user` with otherwise empty arguments;
/// whether the protections refused it (PERMISSION_DENIED with reason PERMISSION_DENIED, not a
/// refusal of its own, such as another user's spec or an empty argument).
async fn refused(
    channel: &tonic::transport::Channel,
    rpc: &str,
    message_type: &str,
    user: &str,
) -> bool {
    let caller = pb::Caller {
        user: user.to_string(),
        ..Default::default()
    };
    let body = match rpc {
        // Saving the same table again keeps the cases that follow meaningful.
        "SaveProtections" => pb::SaveProtectionsRequest {
            caller: Some(caller),
            lines: table(),
        }
        .encode_to_vec(),
        _ => request(message_type, &caller),
    };
    let Some(status) = call(channel.clone(), rpc, body, None).await else {
        return false;
    };
    if reason(&status) != R::PermissionDenied {
        return false;
    }
    assert_eq!(
        status.code(),
        tonic::Code::PermissionDenied,
        "{rpc}: {status:?}"
    );
    assert!(
        status.message().contains("You don't have permission"),
        "{rpc}: {}",
        status.message()
    );
    true
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
        for (rpc, message_type) in &all {
            let Some(level) = keel_server::required_level(rpc) else {
                // Info, Login, LoginStatus, Logout: no level, as in p4.
                assert!(
                    !refused(&channel, rpc, message_type, "nobody").await,
                    "{rpc} needs no level"
                );
                continue;
            };
            assert!(
                refused(&channel, rpc, message_type, "nobody").await,
                "{rpc} without any protection line"
            );
            if let Some(below) = Level::ALL.into_iter().rev().find(|l| *l < level) {
                assert!(
                    refused(&channel, rpc, message_type, &format!("lv-{below}")).await,
                    "{rpc} (needs {level}) at {below}"
                );
            }
            assert!(
                !refused(&channel, rpc, message_type, &format!("lv-{level}")).await,
                "{rpc} at its own level {level}"
            );
        }
    });
}
