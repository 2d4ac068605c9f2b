//! End-to-end: keel-client's typed operations (`keel_client::ops`) used from Rust as a CI
//! server would, the code path of the library guide's examples: many paths' changes since
//! their own N in one call, a subscription that delivers a change submitted after it opened,
//! a file listing, a change's description, and refusals as typed errors.

use crate::common::{Client, Fixture, submit_files, write};
use keel_client::ops::{
    self, DescribeItem, DescribeQuery, FilesQuery, QueryError, SincePath, Watch, WatchError,
    WatchEvent, WatchQuery,
};
use keel_client::{Connection, Settings};
use std::time::Duration;

/// A connection as `client`'s user and workspace (shared by the `client_library_*` modules).
pub(crate) async fn connect(client: &Client) -> Connection {
    connect_as(client, &client.user, None).await
}

/// A connection as `user` (with `ticket`, if any) through `client`'s server and workspace.
pub(crate) async fn connect_as(client: &Client, user: &str, ticket: Option<String>) -> Connection {
    let settings = Settings {
        server: client.addr.clone(),
        user: user.to_string(),
        workspace: Some(client.workspace.clone()),
        host: "ci-host".into(),
        config_file: None,
        tickets: None,
        ticket,
        trust_file: Some(client.trust.clone()),
        bind: None,
        ignore: None,
    };
    Connection::connect(&settings).await.expect("connect")
}

/// Every record a streaming operation answers: `call` must succeed (else the failure names
/// `what`), and so must reading its records.
pub(crate) async fn all<T: Send + 'static>(
    what: &str,
    call: impl std::future::Future<Output = Result<ops::Records<T>, QueryError>>,
) -> Vec<T> {
    call.await.expect(what).all().await.expect("read")
}

/// A single-threaded runtime for a test's async calls.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn a_ci_server_asks_many_paths_at_once_and_reads_typed_records() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let c1 = submit_files(&ws, &["app/main.c"], "one");
    let c2 = submit_files(&ws, &["lib/util.c"], "two");
    let c3 = submit_files(&ws, &["app/main.c"], "three");
    runtime().block_on(async {
        let conn = connect(&ws).await;
        let plans = [
            SincePath::new("//depot/app/...", c1),
            SincePath::new("//depot/lib/...", 0),
            SincePath::new("//depot/docs/...", 0),
        ];
        let hits = all("changes since", ops::changes_since(&conn, &plans, 0)).await;
        let got: Vec<(usize, u64)> = hits.iter().map(|h| (h.path, h.change.number.0)).collect();
        assert_eq!(got, vec![(0, c3), (1, c2)]);
        assert_eq!(hits[0].change.description.trim_end(), "three");
        assert_eq!(hits[0].change.user, "alice");

        let files = all(
            "files",
            ops::files(
                &conn,
                FilesQuery {
                    paths: vec!["//depot/...".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        let heads: Vec<(&str, u32, u64)> = files
            .iter()
            .map(|f| (f.depot_file.as_str(), f.rev, f.change))
            .collect();
        assert_eq!(
            heads,
            vec![("//depot/app/main.c", 2, c3), ("//depot/lib/util.c", 1, c2)]
        );

        let items = all("describe", ops::describe(&conn, DescribeQuery::new(c3))).await;
        assert!(
            matches!(&items[0], DescribeItem::Change(c) if c.number.0 == c3),
            "{items:?}"
        );
        assert!(
            items.iter().any(|i| matches!(i, DescribeItem::File(f)
                if f.depot_file == "//depot/app/main.c"
                    && f.action == Some(keel_core::FileAction::Edit))),
            "{items:?}"
        );

        // A path that is not one is the server's refusal, as a typed error naming it.
        let bad = [SincePath::new("//depot/app/...#3", 0)];
        let refused = match ops::changes_since(&conn, &bad, 0).await {
            Err(e) => e,
            Ok(records) => records.all().await.expect_err("a revision is refused"),
        };
        let QueryError::Call(keel_client::Error::Server { message, .. }) = &refused else {
            panic!("not a server refusal: {refused:?}");
        };
        assert!(message.contains("//depot/app/...#3"), "{message}");
    });
}

#[test]
fn a_subscription_opened_before_a_submit_delivers_it() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    submit_files(&ws, &["app/old.c"], "before");
    let rt = runtime();
    let mut watch = rt.block_on(async {
        let conn = connect(&ws).await;
        let mut watch = Watch::new(&conn, WatchQuery::new(vec!["//depot/app/...".into()]));
        watch.open().await.expect("open");
        watch
    });
    submit_files(&ws, &["lib/other.c"], "elsewhere");
    let c = submit_files(&ws, &["app/new.c"], "after");
    let event = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), watch.next())
            .await
            .expect("delivered within 20 s")
            .expect("a change")
    });
    let WatchEvent::Change(change) = event else {
        panic!("not a change: {event:?}");
    };
    assert_eq!(change.change.number.0, c);
    let files: Vec<&str> = change.files.iter().map(|f| f.depot_file.as_str()).collect();
    assert_eq!(files, vec!["//depot/app/new.c"]);
    assert_eq!(watch.since(), Some(c));

    // A path with a revision cannot be watched: refused before the subscription says it
    // started (`open` fails), and not retried.
    let refused = rt.block_on(async {
        let conn = connect(&ws).await;
        let mut bad = Watch::new(&conn, WatchQuery::new(vec!["//depot/app/...#2".into()]));
        tokio::time::timeout(Duration::from_secs(20), bad.open())
            .await
            .expect("answered within 20 s")
            .expect_err("refused at open")
    });
    assert!(
        matches!(&refused, WatchError::Refused(e) if e.to_string().contains("without a revision")),
        "{refused:?}"
    );
}

#[test]
fn a_build_agent_clones_a_prebuilt_workspace() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    submit_files(&ws, &["app/main.c"], "one");
    write(&ws.cwd, "out/app.o", "built\n");
    let root = fx.dir.path().join("agent-1");
    let done = runtime().block_on(async {
        let conn = connect(&ws).await;
        let query = ops::CloneQuery {
            source: "alice-ws".into(),
            name: "agent-1".into(),
            root: root.clone(),
            host: None,
            description: None,
            with_untracked: true,
        };
        let mut failures = Vec::new();
        let done = ops::clone_workspace(&conn, query, |file, e| {
            failures.push(format!("{file}: {e}"))
        })
        .await
        .expect("clone");
        assert!(failures.is_empty(), "{failures:?}");
        done
    });
    assert_eq!(
        (done.name.as_str(), done.files, done.failed),
        ("agent-1", 1, 0)
    );
    assert_eq!(done.untracked, 1);
    assert_eq!(crate::common::read(&root, "app/main.c"), b"one\n");
    assert_eq!(crate::common::read(&root, "out/app.o"), b"built\n");
    // A second clone into the same, now filled, root is refused, naming it.
    let refused = runtime().block_on(async {
        let conn = connect(&ws).await;
        let query = ops::CloneQuery {
            source: "alice-ws".into(),
            name: "agent-2".into(),
            root: root.clone(),
            host: None,
            description: None,
            with_untracked: false,
        };
        ops::clone_workspace(&conn, query, |_, _| {})
            .await
            .expect_err("not empty")
    });
    assert!(
        matches!(&refused, ops::CloneError::RootNotEmpty(r) if r == &root),
        "{refused:?}"
    );
}
