//! End-to-end: keel-client's typed operations for specs, jobs, accounts and administration
//! (`keel_client::ops`), called from Rust against a real server: workspace, label, branch,
//! user and group specs saved, read, listed and deleted; tag and labelsync; review and
//! reviews; jobs and fixes; login, logout and passwords; the typemap, triggers, webhooks and
//! protections tables; info, depots, settings, the monitor and a checkpoint; and refusals as
//! typed errors.

use crate::client_library::{all, connect_as, runtime};
use crate::common::{Fixture, write};
use keel_client::ops::{
    self, BranchSpec, CheckpointEvent, FixesQuery, GroupSpec, JobsQuery, LabelAction, LabelSpec,
    PasswordChange, ProtectsQuery, QueryError, TagQuery, TriggersError, UserSpec, WorkspaceSpec,
};

/// The server's refusal inside `e`, as text (panics on any other error).
fn refusal(e: &QueryError) -> String {
    match e {
        QueryError::Call(keel_client::Error::Server { message, .. }) => message.clone(),
        other => panic!("not a server refusal: {other:?}"),
    }
}

#[test]
fn specs_are_saved_read_listed_and_deleted_through_typed_calls() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    write(&ws.cwd, "app/a.c", "a\n");
    write(&ws.cwd, "app/b.c", "b\n");
    ws.ok(&["add", "app/a.c", "app/b.c"]);
    ws.ok(&["submit", "-d", "two files"]);
    let root = fx.dir.path().join("agent-9");
    runtime().block_on(async {
        let conn = connect_as(&ws, "alice", None).await;

        // Workspaces.
        let saved = ops::save_workspace(
            &conn,
            WorkspaceSpec {
                name: "agent-9".into(),
                owner: "alice".into(),
                root: root.display().to_string(),
                description: "A build agent.".into(),
                options: "noallwrite noclobber normdir nomodtime".into(),
                view: vec!["//depot/app/... //agent-9/app/...".into()],
                ..Default::default()
            },
            true,
        )
        .await
        .expect("save workspace");
        assert!(saved.updated > 0, "{saved:?}");
        let got = ops::workspace(&conn, "agent-9", false).await.expect("get");
        assert_eq!(got.view, vec!["//depot/app/... //agent-9/app/..."]);
        assert_eq!(got.root, root.display().to_string());
        let names: Vec<String> = all("list", ops::workspaces(&conn))
            .await
            .into_iter()
            .map(|w| w.name)
            .collect();
        assert_eq!(names, vec!["agent-9", "alice-ws"]);
        let again = ops::save_workspace(&conn, got.clone(), true).await;
        let refused = refusal(&again.expect_err("create-only over an existing one"));
        assert!(refused.contains("agent-9"), "{refused}");
        ops::delete_workspace(&conn, "agent-9")
            .await
            .expect("delete");
        let gone = ops::workspace(&conn, "agent-9", false).await;
        let gone = gone.expect_err("deleted");
        assert_eq!(
            gone.client_error().and_then(keel_client::Error::code),
            Some(tonic::Code::NotFound),
            "{gone:?}"
        );

        // Labels, tag and labelsync.
        ops::save_label(
            &conn,
            LabelSpec {
                name: "rel-1".into(),
                owner: "alice".into(),
                description: "Release one.".into(),
                options: "unlocked".into(),
                view: vec!["//depot/...".into()],
                ..Default::default()
            },
            true,
            false,
        )
        .await
        .expect("save label");
        let tagged = all(
            "tag",
            ops::tag(
                &conn,
                TagQuery {
                    label: "rel-1".into(),
                    files: vec!["//depot/app/a.c".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(tagged.len(), 1, "{tagged:?}");
        assert_eq!(
            (
                tagged[0].depot_file.as_str(),
                tagged[0].rev,
                tagged[0].action
            ),
            ("//depot/app/a.c", 1, Some(LabelAction::Added))
        );
        let preview = all(
            "labelsync",
            ops::labelsync(&conn, "rel-1", vec!["//depot/app/b.c".into()], true),
        )
        .await;
        // Only the files named are synced: a.c stays tagged.
        let actions: Vec<(String, Option<LabelAction>)> = preview
            .into_iter()
            .map(|e| (e.depot_file, e.action))
            .collect();
        assert_eq!(
            actions,
            vec![("//depot/app/b.c".to_string(), Some(LabelAction::Added))]
        );
        let label = ops::label(&conn, "rel-1", false).await.expect("label");
        assert_eq!(label.description.trim_end(), "Release one.");
        assert_eq!(all("labels", ops::labels(&conn)).await.len(), 1);
        ops::delete_label(&conn, "rel-1", false)
            .await
            .expect("delete");
        assert!(ops::label(&conn, "rel-1", false).await.is_err());

        // Branches.
        let spec = BranchSpec {
            name: "main-to-rel".into(),
            owner: "alice".into(),
            description: "Release branch.".into(),
            options: "unlocked".into(),
            view: vec!["//depot/app/... //depot/rel/...".into()],
            ..Default::default()
        };
        ops::save_branch(&conn, spec.clone(), true)
            .await
            .expect("save branch");
        let refused = ops::save_branch(&conn, spec, true)
            .await
            .expect_err("exists");
        assert!(refusal(&refused).contains("main-to-rel"), "{refused:?}");
        let got = ops::branch(&conn, "main-to-rel", false)
            .await
            .expect("branch");
        assert_eq!(got.view, vec!["//depot/app/... //depot/rel/..."]);
        assert_eq!(all("branches", ops::branches(&conn)).await.len(), 1);
        ops::delete_branch(&conn, "main-to-rel")
            .await
            .expect("delete");
        assert!(all("branches", ops::branches(&conn)).await.is_empty());

        // Users and groups.
        let saved = ops::save_user(
            &conn,
            UserSpec {
                name: "bob".into(),
                email: "bob@ci".into(),
                full_name: "Bob Builder".into(),
                user_type: "standard".into(),
                reviews: vec!["//depot/app/...".into()],
                ..Default::default()
            },
            true,
        )
        .await
        .expect("save user");
        assert_eq!(saved.full_name, "Bob Builder");
        let bob = ops::user(&conn, "bob").await.expect("user");
        assert_eq!(bob.reviews, vec!["//depot/app/..."]);
        assert!(!bob.has_password);
        let users: Vec<String> = all("users", ops::users(&conn))
            .await
            .into_iter()
            .map(|u| u.name)
            .collect();
        assert!(users.contains(&"bob".to_string()), "{users:?}");
        // What a review daemon reads: bob reviews app/, change 1 touched it.
        let reviewers = all(
            "reviews",
            ops::reviews(&conn, None, vec!["//depot/app/a.c".into()]),
        )
        .await;
        let names: Vec<&str> = reviewers.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, vec!["bob"]);
        assert_eq!(reviewers[0].email, "bob@ci");
        let changes = all("review", ops::review(&conn, Some(1), None)).await;
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!((changes[0].change, changes[0].user.as_str()), (1, "alice"));
        let group = GroupSpec {
            name: "builders".into(),
            users: vec!["bob".into()],
            owners: vec!["alice".into()],
            max_results: "unset".into(),
            max_scan_rows: "unset".into(),
            max_lock_time: "unset".into(),
            max_open_files: "unset".into(),
            timeout: "unset".into(),
            ..Default::default()
        };
        ops::save_group(&conn, group).await.expect("save group");
        assert_eq!(
            ops::group(&conn, "builders").await.expect("group").users,
            vec!["bob"]
        );
        assert_eq!(
            all("groups", ops::groups(&conn, Some("bob"))).await.len(),
            1
        );
        assert!(
            all("groups", ops::groups(&conn, Some("alice")))
                .await
                .is_empty()
        );
        ops::delete_group(&conn, "builders")
            .await
            .expect("delete group");
        ops::delete_user(&conn, "bob", true)
            .await
            .expect("delete user");
        assert!(ops::user(&conn, "bob").await.is_err());
    });
}

#[test]
fn jobs_and_fixes_through_typed_calls() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    write(&ws.cwd, "a.c", "a\n");
    ws.ok(&["add", "a.c"]);
    ws.ok(&["submit", "-d", "one"]);
    runtime().block_on(async {
        let conn = connect_as(&ws, "alice", None).await;
        let spec = ops::job_spec(&conn).await.expect("job spec");
        assert!(spec.text.contains("Fields:"), "{}", spec.text);
        let spec_parsed = keel_core::job::JobSpec::parse(&spec.text).expect("parses");
        assert!(
            !spec_parsed
                .name_of(keel_core::job::spec::STATUS_CODE)
                .is_empty()
        );

        let fresh = ops::job(&conn, "").await.expect("a new job");
        assert!(!fresh.exists);
        let mut fields = fresh.fields.clone();
        for (name, value) in &mut fields {
            if name == "Description" {
                *value = "Crash on start".into();
            }
        }
        let saved = ops::save_job(&conn, fields, false).await.expect("save job");
        assert!(saved.exists);
        assert_eq!(saved.name, "job000001");
        let got = ops::job(&conn, "job000001").await.expect("job");
        assert!(
            got.fields
                .iter()
                .any(|(n, v)| n == "Description" && v.trim_end() == "Crash on start"),
            "{got:?}"
        );
        let found = all(
            "jobs",
            ops::jobs(
                &conn,
                JobsQuery {
                    expression: "crash".into(),
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(found.len(), 1);
        let none = all(
            "jobs",
            ops::jobs(
                &conn,
                JobsQuery {
                    expression: "nothing-matches-this".into(),
                    ..Default::default()
                },
            ),
        )
        .await;
        assert!(none.is_empty());

        let fixed = ops::fix(&conn, 1, vec!["job000001".into()], "", false)
            .await
            .expect("fix");
        assert_eq!(fixed.len(), 1);
        assert_eq!((fixed[0].job.as_str(), fixed[0].change), ("job000001", 1));
        let listed = all(
            "fixes",
            ops::fixes(
                &conn,
                FixesQuery {
                    job: Some("job000001".into()),
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(listed, fixed);
        // A job a change fixes cannot be deleted; the refusal is the server's, typed.
        let refused = ops::delete_job(&conn, "job000001")
            .await
            .expect_err("fixed");
        assert!(refusal(&refused).contains("job000001"), "{refused:?}");
        ops::fix(&conn, 1, vec!["job000001".into()], "", true)
            .await
            .expect("unfix");
        ops::delete_job(&conn, "job000001")
            .await
            .expect("delete job");
        let saved_spec = ops::save_job_spec(&conn, &spec.text)
            .await
            .expect("save spec");
        assert!(saved_spec.updated > 0);
    });
}

#[test]
fn accounts_tables_and_server_state_through_typed_calls() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    write(&ws.cwd, "a.c", "a\n");
    ws.ok(&["add", "a.c"]);
    ws.ok(&["submit", "-d", "one"]);
    runtime().block_on(async {
        let conn = connect_as(&ws, "alice", None).await;

        let info = ops::info(&conn).await.expect("info");
        assert_eq!(info.user, "alice");
        assert_eq!(info.workspace, "alice-ws");
        assert!(info.replica.is_none() && info.proxy.is_none());
        let created = ops::create_depot(&conn, "assets", "Binary assets").await;
        assert_eq!(created.expect("create depot").name, "assets");
        let depots: Vec<String> = ops::depots(&conn)
            .await
            .expect("depots")
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(depots, vec!["assets", "depot"]);

        let set = ops::set_setting(&conn, "security", "1").await.expect("set");
        assert_eq!((set.name.as_str(), set.value.as_str()), ("security", "1"));
        let settings = all("settings", ops::settings(&conn)).await;
        let security = settings
            .into_iter()
            .find(|s| s.name == "security")
            .expect("listed");
        assert_eq!((security.value.as_str(), security.is_default), ("1", false));
        let unset = ops::unset_setting(&conn, "security").await.expect("unset");
        assert!(unset.was_set);
        let refused = ops::set_setting(&conn, "no.such.setting", "1").await;
        let refused = refused.expect_err("unknown");
        assert!(refusal(&refused).contains("no.such.setting"), "{refused:?}");

        let running = ops::monitor_show(&conn, true, true).await.expect("monitor");
        assert!(
            running.iter().any(|c| c.user == "alice"),
            "the monitor call itself runs: {running:?}"
        );

        let typemap = ops::save_typemap(&conn, vec!["binary+l //depot/....png".into()])
            .await
            .expect("save typemap");
        assert_eq!(typemap.len(), 1);
        let read = ops::typemap(&conn).await.expect("typemap");
        assert_eq!(
            (read[0].file_type.as_str(), read[0].pattern.as_str()),
            ("binary+l", "//depot/....png")
        );
        let bad = ops::save_typemap(&conn, vec!["nosuchtype //depot/...".into()]).await;
        assert!(refusal(&bad.expect_err("bad type")).contains("nosuchtype"));

        let triggers = ops::save_triggers(
            &conn,
            vec!["check change-submit //depot/never/... \"true\"".into()],
        )
        .await
        .expect("save triggers");
        assert_eq!(triggers.len(), 1);
        assert_eq!(triggers[0].kind, keel_core::TriggerKind::ChangeSubmit);
        assert_eq!(ops::triggers(&conn).await.expect("triggers"), triggers);

        let hooks = ops::save_webhooks(
            &conn,
            vec!["ci //depot/app/... http://127.0.0.1:9/hook s3cret".into()],
        )
        .await
        .expect("save webhooks");
        assert_eq!(hooks.len(), 1);
        let read = ops::webhooks(&conn).await.expect("webhooks");
        assert_eq!(
            (read[0].name.as_str(), read[0].url.as_str(), read[0].secret.is_empty()),
            ("ci", "http://127.0.0.1:9/hook", false)
        );

        let mut events = ops::checkpoint(&conn).await.expect("checkpoint");
        let mut done = None;
        while let Some(event) = events.next().await.expect("event") {
            if let CheckpointEvent::Done(d) = event {
                done = Some(d);
            }
        }
        let done = done.expect("a checkpoint report");
        assert!(done.rows > 0 && !done.digest.is_empty(), "{done:?}");

        // Accounts: a super user makes bob and gives him a password; bob logs in with it
        // and out again.
        let bob_spec = UserSpec {
            name: "bob".into(),
            email: "bob@ci".into(),
            full_name: "Bob".into(),
            user_type: "standard".into(),
            ..Default::default()
        };
        ops::save_user(&conn, bob_spec, true).await.expect("make bob");
        ops::set_password(
            &conn,
            PasswordChange {
                user: Some("bob".into()),
                old_password: String::new(),
                new_password: "Bob-pass-1".into(),
            },
        )
        .await
        .expect("set bob's password");
        let anonymous_bob = connect_as(&ws, "bob", None).await;
        let wrong = ops::login(&anonymous_bob, "wrong".into(), false).await;
        assert!(wrong.is_err(), "a wrong password is refused");
        let ticket = ops::login(&anonymous_bob, "Bob-pass-1".into(), false)
            .await
            .expect("login");
        assert_eq!(ticket.user, "bob");
        assert!(!ticket.ticket.is_empty());
        let bob = connect_as(&ws, "bob", Some(ticket.ticket.clone())).await;
        let status = ops::login_status(&bob).await.expect("status");
        assert_eq!(status.user, "bob");
        assert!(status.ticket.is_empty() && status.expires > 0);

        // Protections: bob may write but is not a super user; his table edits are refused.
        let lines = vec![
            "super user alice * //...".to_string(),
            "write user bob * //...".to_string(),
        ];
        let saved = ops::save_protections(&conn, lines.clone()).await.expect("protect");
        assert_eq!(saved, 2);
        let table = ops::protections(&conn).await.expect("protections");
        assert!(table.exists);
        assert_eq!(table.lines, lines);
        let mine = ops::protects(&bob, ProtectsQuery::default()).await.expect("protects");
        assert_eq!(mine.len(), 1, "{mine:?}");
        assert_eq!(
            (mine[0].mode.as_str(), mine[0].name.as_str(), mine[0].is_group),
            ("write", "bob", false)
        );
        let refused = ops::save_triggers(&bob, Vec::new()).await.expect_err("not super");
        assert!(
            matches!(&refused, TriggersError::Call(e) if e.code() == Some(tonic::Code::PermissionDenied)),
            "{refused:?}"
        );
        assert_eq!(ops::triggers(&conn).await.expect("unchanged"), triggers);
        let refused = ops::save_protections(&bob, Vec::new()).await.expect_err("not super");
        assert!(refused.client_error().is_some(), "{refused:?}");
        assert_eq!(ops::protections(&conn).await.expect("unchanged").lines, lines);

        let ended = ops::logout(&bob, false).await.expect("logout");
        assert_eq!(ended, 1);
        assert!(ops::login_status(&bob).await.is_err(), "the ticket ended");
    });
}
