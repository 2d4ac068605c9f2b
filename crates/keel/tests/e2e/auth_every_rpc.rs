//! Every RPC in `keel.proto` is refused without a valid ticket at security level 3, except
//! the two listed in `UNAUTHENTICATED` with their reason, so an RPC added later cannot be
//! reached unauthenticated. The requests are built from the proto text alone (`raw_rpc`) (a `Caller`
//! naming a user who has a password), sent raw, and must come back UNAUTHENTICATED.

use crate::common::{Fixture, KEEL};
use crate::raw_rpc::{call, reason, request, rpcs};
use keel_proto::v1 as pb;
use keel_proto::v1::ErrorReason as R;
use std::process::{Command, Stdio};

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
        force: false,
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
