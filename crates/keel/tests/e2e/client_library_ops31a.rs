//! End-to-end: keel-client's typed operations for workspaces and files (`ops::sync`, `have`,
//! `open`, `move_file`, `reopen`, `revert`, `unchanged_files`, `save_change`,
//! `default_change`, `plan_submit`, `submit`) driven from Rust as a CI job would, against a
//! real server, and their refusals as typed errors that leave nothing behind.

use crate::access::protect;
use crate::client_library::{all, connect, runtime};
use crate::common::{Client, Fixture, write};
use keel_client::WorkspaceCtx;
use keel_client::ops::{
    self, ChangeSave, OpenFor, OpenQuery, OpenedQuery, Outcome, QueryError, ReopenQuery,
    RevertQuery, SubmitProgress, SubmitQuery, SyncAction, SyncQuery,
};
use keel_core::FileAction;

/// alice submits `app/main.c` and `app/util.c` from her first workspace.
fn seeded(fx: &Fixture) -> Client {
    let alice = fx.workspace("alice", "alice-ws");
    write(&alice.cwd, "app/main.c", "int main;\n");
    write(&alice.cwd, "app/util.c", "int util;\n");
    alice.ok(&["add", "app/main.c", "app/util.c"]);
    alice.ok(&["submit", "-d", "seed"]);
    alice
}

#[test]
fn a_ci_job_syncs_edits_submits_and_reverts_through_typed_operations() {
    let fx = Fixture::new();
    let alice = seeded(&fx);
    let agent = fx.workspace("alice", "agent-ws");
    runtime().block_on(async {
        let conn = connect(&agent).await;
        let ws = WorkspaceCtx::fetch(&conn).await.expect("workspace");

        // Sync: every file reported once it is in place, then in the have list.
        let mut seen = Vec::new();
        let totals = ops::sync(&conn, &ws, SyncQuery::default(), |f| {
            assert!(f.error.is_none(), "{:?}", f.error);
            seen.push((f.depot_file.to_string(), f.rev, f.action));
        })
        .await
        .expect("sync");
        assert_eq!(totals.files, 2);
        assert_eq!(
            seen,
            vec![
                ("//depot/app/main.c".to_string(), 1, SyncAction::Added),
                ("//depot/app/util.c".to_string(), 1, SyncAction::Added),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(agent.cwd.join("app/main.c")).expect("synced file"),
            "int main;\n"
        );
        let have = ops::have(&conn, &ws, Vec::new()).await.expect("have");
        let have: Vec<(&str, &str, u32)> = have
            .iter()
            .map(|h| (h.depot_file.as_str(), h.client_file.as_str(), h.have_rev))
            .collect();
        assert_eq!(
            have,
            vec![
                ("//depot/app/main.c", "app/main.c", 1),
                ("//depot/app/util.c", "app/util.c", 1)
            ]
        );

        // Edit and add in the default change, then submit it with its files listed.
        let edited = all(
            "edit",
            ops::open(
                &conn,
                OpenQuery::new(OpenFor::Edit, vec!["//depot/app/main.c".into()]),
            ),
        )
        .await;
        assert_eq!(edited.len(), 1);
        assert_eq!(edited[0].action, Some(FileAction::Edit));
        assert_eq!(edited[0].outcome, Outcome::Opened);
        assert_eq!(edited[0].client_file_in(&ws).as_deref(), Some("app/main.c"));
        std::fs::write(agent.cwd.join("app/main.c"), "int main(void);\n").expect("write");
        write(&agent.cwd, "app/new.c", "int new;\n");
        let mut add = OpenQuery::new(OpenFor::Add, vec!["//agent-ws/app/new.c".into()]);
        add.add_types = vec!["text".into()];
        let added = all("add", ops::open(&conn, add)).await;
        assert_eq!(added[0].action, Some(FileAction::Add));
        assert_eq!(added[0].work_rev(), 1);

        let default = ops::default_change(&conn, &ws)
            .await
            .expect("default change");
        assert_eq!(
            default.files,
            vec![
                "//depot/app/main.c".to_string(),
                "//depot/app/new.c".to_string()
            ]
        );
        let query = SubmitQuery {
            change: 0,
            description: "from the CI job".into(),
            list_files: true,
        };
        let mut files = Vec::new();
        let done = ops::submit(&conn, query, &default.plan, |p| {
            if let SubmitProgress::Submitted { files: batch, .. } = p {
                files.extend(batch.into_iter().map(|f| (f.depot_file, f.rev, f.action)));
            }
        })
        .await
        .expect("submit");
        assert!(done.trigger_failures.is_empty());
        assert_eq!(done.pending_number(0), done.change);
        assert_eq!(
            files,
            vec![
                ("//depot/app/main.c".to_string(), 2, Some(FileAction::Edit)),
                ("//depot/app/new.c".to_string(), 1, Some(FileAction::Add)),
            ]
        );
        let listed = alice.json(&["changes", "-m", "1", "-s", "submitted"]);
        assert_eq!(listed[0]["change"].as_u64(), Some(done.change));

        // A numbered change, a move into it, a reopen, and `revert -a` of an unchanged edit.
        let change = ops::save_change(
            &conn,
            ChangeSave {
                description: "rename".into(),
                ..Default::default()
            },
        )
        .await
        .expect("new change");
        all(
            "edit",
            ops::open(
                &conn,
                OpenQuery::new(OpenFor::Edit, vec!["//depot/app/util.c".into()]),
            ),
        )
        .await;
        let moved = all(
            "move",
            ops::move_file(
                &conn,
                "//depot/app/util.c".into(),
                "//depot/lib/util.c".into(),
                Some(change),
            ),
        )
        .await;
        let mut halves: Vec<_> = moved.iter().map(|m| (m.action, m.change)).collect();
        halves.sort_by_key(|(a, _)| a.map(|a| a.as_str()));
        assert_eq!(
            halves,
            vec![
                (Some(FileAction::MoveAdd), change),
                (Some(FileAction::MoveDelete), change)
            ]
        );
        let reopened = all(
            "reopen",
            ops::reopen(
                &conn,
                ReopenQuery {
                    paths: vec!["//depot/lib/util.c".into()],
                    change: Some(0),
                    file_type: None,
                },
            ),
        )
        .await;
        assert_eq!(reopened[0].outcome, Outcome::Reopened);
        assert_eq!(reopened[0].change, 0);

        all(
            "edit",
            ops::open(
                &conn,
                OpenQuery::new(OpenFor::Edit, vec!["//depot/app/main.c".into()]),
            ),
        )
        .await;
        let unchanged = ops::unchanged_files(&conn, &ws, vec!["//depot/app/...".into()])
            .await
            .expect("unchanged");
        assert_eq!(unchanged, vec!["//depot/app/main.c".to_string()]);
        let reverted = all(
            "revert",
            ops::revert(
                &conn,
                RevertQuery {
                    paths: vec!["//depot/app/...".into()],
                    unchanged_only: true,
                    unchanged,
                },
            ),
        )
        .await;
        assert_eq!(reverted.len(), 1);
        assert_eq!(reverted[0].depot_file, "//depot/app/main.c");
        assert_eq!(reverted[0].outcome, Outcome::Reverted);
        let open = all("opened", ops::opened(&conn, OpenedQuery::default())).await;
        let open: Vec<&str> = open.iter().map(|o| o.depot_file.as_str()).collect();
        assert_eq!(open, vec!["//depot/app/util.c", "//depot/lib/util.c"]);
    });
}

#[test]
fn refusals_come_back_as_typed_errors_and_change_nothing() {
    let fx = Fixture::new();
    let alice = seeded(&fx);
    protect(
        &alice,
        &["super user alice * //...", "read user bob * //depot/..."],
    );
    let bob = fx.workspace("bob", "bob-ws");
    runtime().block_on(async {
        let conn = connect(&bob).await;
        let ws = WorkspaceCtx::fetch(&conn).await.expect("workspace");
        // bob may read: the sync works.
        let totals = ops::sync(&conn, &ws, SyncQuery::default(), |_| {})
            .await
            .expect("sync");
        assert_eq!(totals.files, 2);

        // ... but not open: the refusal names the access needed, and nothing is opened.
        let refused = match ops::open(
            &conn,
            OpenQuery::new(OpenFor::Edit, vec!["//depot/app/main.c".into()]),
        )
        .await
        {
            Err(e) => e,
            Ok(records) => records.all().await.expect_err("bob may not edit"),
        };
        let QueryError::Call(keel_client::Error::Server { message, .. }) = &refused else {
            panic!("not a server refusal: {refused:?}");
        };
        assert!(message.contains("needs open access"), "{message}");
        let open = all("opened", ops::opened(&conn, OpenedQuery::default())).await;
        assert!(open.is_empty(), "{open:?}");

        // Nothing to submit: a typed submit error, and no change made.
        let plan = ops::plan_submit(&conn, &ws, 0).await.expect("plan");
        let query = SubmitQuery {
            description: "nothing".into(),
            ..Default::default()
        };
        let err = ops::submit(&conn, query, &plan, |_| {})
            .await
            .expect_err("an empty change is refused");
        assert!(err.client_error().is_some(), "{err:?}");
        let listed = alice.json(&["changes"]);
        assert_eq!(listed.len(), 1, "{listed:?}");

        // A sync of a path that is no path: refused, naming it.
        let err = ops::sync(
            &conn,
            &ws,
            SyncQuery {
                paths: vec!["//depot/app/main.c#bogus".into()],
                ..Default::default()
            },
            |_| {},
        )
        .await
        .expect_err("a bad revision is refused");
        assert!(err.to_string().contains("bogus"), "{err}");
    });
}

#[test]
fn a_ci_job_browses_branches_shelves_locks_and_undoes_through_typed_operations() {
    use keel_client::ops::{
        FilelogQuery, IntegrateQuery, InterchangesQuery, LockQuery, ShelveQuery, UndoQuery,
        UnlockScope, UnshelveQuery,
    };
    let fx = Fixture::new();
    let alice = seeded(&fx);
    let agent = fx.workspace("alice", "agent-ws");
    let rt = runtime();
    let conn = rt.block_on(connect(&agent));
    let ws = rt.block_on(WorkspaceCtx::fetch(&conn)).expect("workspace");
    rt.block_on(ops::sync(&conn, &ws, SyncQuery::default(), |_| {}))
        .expect("sync");

    // Browsing: directories, a file's state and history, the changes the workspace has.
    rt.block_on(async {
        let dirs = all("dirs", ops::dirs(&conn, vec!["//depot/*".into()], false)).await;
        assert_eq!(dirs, vec!["//depot/app".to_string()]);
        let stat = all(
            "fstat",
            ops::fstat(&conn, vec!["//depot/app/main.c".into()]),
        )
        .await;
        assert_eq!(stat.len(), 1);
        assert_eq!((stat[0].head.rev, stat[0].have_rev), (1, 1));
        assert_eq!(stat[0].action, None);
        let log = all(
            "filelog",
            ops::filelog(
                &conn,
                FilelogQuery {
                    paths: vec!["//depot/app/main.c".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].user, "alice");
        assert_eq!(log[0].revision.action, Some(FileAction::Add));
        let states = all("cstat", ops::cstat(&conn, vec!["//agent-ws/...".into()])).await;
        assert!(states.iter().all(|s| s.status == "have"), "{states:?}");
        assert_eq!(states.len(), 1);

        // Not yet integrated: the seed change; then branched, the integration record shows.
        let pending = all(
            "interchanges",
            ops::interchanges(
                &conn,
                InterchangesQuery {
                    from: "//depot/app/...".into(),
                    to: "//depot/rel/...".into(),
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].change.number.0, states[0].change);
        let branched = all(
            "integrate -n",
            ops::integrate(
                &conn,
                IntegrateQuery {
                    from: "//depot/app/...".into(),
                    to: "//depot/rel/...".into(),
                    preview: true,
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(branched.len(), 2);
        assert!(
            branched
                .iter()
                .all(|b| b.action == Some(FileAction::Branch) && b.outcome == Outcome::Integrated),
            "{branched:?}"
        );
    });
    alice.ok(&["integrate", "//depot/app/...", "//depot/rel/..."]);
    alice.ok(&["submit", "-d", "branch"]);
    rt.block_on(async {
        let records = all(
            "integrated",
            ops::integrated(&conn, vec!["//depot/rel/main.c".into()]),
        )
        .await;
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].file, "//depot/app/main.c");
        assert_eq!(records[0].how_str(), "branch from");

        // A shelf: made, taken back into the workspace, deleted.
        let change = ops::save_change(
            &conn,
            ChangeSave {
                description: "review".into(),
                ..Default::default()
            },
        )
        .await
        .expect("change");
        let mut edit = OpenQuery::new(OpenFor::Edit, vec!["//depot/app/main.c".into()]);
        edit.change = Some(change);
        all("edit", ops::open(&conn, edit)).await;
        std::fs::write(agent.cwd.join("app/main.c"), "shelved\n").expect("write");
        let shelf = ops::shelve(
            &conn,
            &ws,
            ShelveQuery {
                change,
                ..Default::default()
            },
        )
        .await
        .expect("shelve");
        assert_eq!(shelf.change, change);
        assert_eq!(shelf.files.len(), 1);
        assert_eq!(shelf.files[0].outcome, Outcome::Shelved);
        let reverted = all(
            "revert",
            ops::revert(
                &conn,
                RevertQuery {
                    paths: vec!["//depot/app/main.c".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(reverted.len(), 1);
        let unshelved = ops::unshelve(
            &conn,
            &ws,
            UnshelveQuery {
                shelved: change,
                change: Some(change),
                paths: Vec::new(),
            },
        )
        .await
        .expect("unshelve");
        assert_eq!(unshelved.len(), 1);
        assert_eq!(unshelved[0].outcome, Outcome::Unshelved);
        assert_eq!(
            std::fs::read_to_string(agent.cwd.join("app/main.c")).expect("read"),
            "shelved\n"
        );
        let deleted = all(
            "delete shelved",
            ops::delete_shelved(&conn, change, Vec::new()),
        )
        .await;
        assert_eq!(deleted.len(), 1);
        assert_eq!(deleted[0].outcome, Outcome::ShelvedDeleted);

        // Locks: held, then let go.
        let locked = all("lock", ops::lock(&conn, LockQuery::default())).await;
        assert_eq!(locked.len(), 1);
        assert!(locked[0].locked);
        let unlocked = all(
            "unlock",
            ops::unlock(&conn, LockQuery::default(), UnlockScope::Own),
        )
        .await;
        assert_eq!(unlocked.len(), 1);
        all(
            "revert",
            ops::revert(
                &conn,
                RevertQuery {
                    paths: vec!["//depot/app/main.c".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
    });

    // An undo of a later submitted revision: opened for edit, nothing to resolve.
    alice.ok(&["edit", "app/util.c"]);
    write(&alice.cwd, "app/util.c", "int util2;\n");
    alice.ok(&["submit", "-d", "two"]);
    rt.block_on(async {
        ops::sync(&conn, &ws, SyncQuery::default(), |_| {})
            .await
            .expect("sync");
        let undone = all(
            "undo",
            ops::undo(
                &conn,
                UndoQuery {
                    paths: vec!["//depot/app/util.c#2".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(undone.len(), 1);
        assert_eq!(undone[0].depot_file, "//depot/app/util.c");
        assert_eq!(undone[0].action, Some(FileAction::Edit));
        assert!(!undone[0].unresolved);
    });
}

#[test]
fn a_ci_job_reads_content_resolves_and_checks_the_depot_through_typed_operations() {
    use keel_client::ops::{
        AnnotateQuery, GrepKind, GrepQuery, ObliterateItem, PopulateQuery, ResolveResult,
        SizesQuery, VerifyItem, VerifyQuery, VerifyStatus,
    };
    let fx = Fixture::new();
    let alice = seeded(&fx);
    alice.ok(&["edit", "app/main.c"]);
    write(&alice.cwd, "app/main.c", "int main;\nint two;\n");
    alice.ok(&["submit", "-d", "two"]);
    let rt = runtime();
    let conn = rt.block_on(connect(&alice));
    let ws = rt.block_on(WorkspaceCtx::fetch(&conn)).expect("workspace");
    rt.block_on(async {
        let diff = ops::diff2(
            &conn,
            "//depot/app/main.c#1".into(),
            "//depot/app/main.c#2".into(),
        )
        .await
        .expect("diff2");
        assert!(!diff.identical && !diff.binary);
        assert!(diff.diff.contains("+int two;"), "{}", diff.diff);
        assert_eq!((diff.left.rev, diff.right.rev), (1, 2));

        let sizes = all(
            "sizes",
            ops::sizes(
                &conn,
                SizesQuery {
                    paths: vec!["//depot/app/main.c".into()],
                    all_revisions: true,
                    ..Default::default()
                },
            ),
        )
        .await;
        let mut sizes: Vec<(u32, u64)> = sizes.iter().map(|s| (s.rev, s.bytes)).collect();
        sizes.sort();
        assert_eq!(sizes, vec![(1, 10), (2, 19)]);

        let hits: Vec<_> = all(
            "grep",
            ops::grep(
                &conn,
                GrepQuery {
                    paths: vec!["//depot/...".into()],
                    patterns: vec!["two".into()],
                    ..Default::default()
                },
            ),
        )
        .await
        .into_iter()
        .flatten()
        .collect();
        assert_eq!(hits.len(), 1);
        assert_eq!(
            (hits[0].depot_file.as_str(), hits[0].line, hits[0].kind),
            ("//depot/app/main.c", 2, GrepKind::Match)
        );

        let chunks = all(
            "annotate",
            ops::annotate(
                &conn,
                AnnotateQuery {
                    paths: vec!["//depot/app/main.c".into()],
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(chunks[0].file.as_ref().map(|(r, _)| r.rev), Some(2));
        let lines: Vec<(u32, &str)> = chunks
            .iter()
            .flat_map(|c| &c.lines)
            .map(|l| (l.lower_rev, l.text.as_str()))
            .collect();
        assert_eq!(lines, vec![(1, "int main;"), (2, "int two;")]);

        // Branch without a workspace, then a change on both sides to resolve.
        let populated = all(
            "populate",
            ops::populate(
                &conn,
                PopulateQuery {
                    from: "//depot/app/...".into(),
                    to: "//depot/rel/...".into(),
                    description: Some("rel".into()),
                    ..Default::default()
                },
            ),
        )
        .await;
        assert_eq!(populated.len(), 2);
        assert!(populated.iter().all(|p| !p.deleted && p.change > 0));
    });
    alice.ok(&["sync"]);
    alice.ok(&["edit", "rel/util.c"]);
    write(&alice.cwd, "rel/util.c", "int util; // rel\n");
    alice.ok(&["submit", "-d", "rel side"]);
    alice.ok(&["edit", "app/util.c"]);
    write(&alice.cwd, "app/util.c", "int util; // app\n");
    alice.ok(&["submit", "-d", "app side"]);
    alice.ok(&["integrate", "//depot/app/util.c", "//depot/rel/util.c"]);
    rt.block_on(async {
        let tasks = all("resolve list", ops::resolve_list(&conn, Vec::new())).await;
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].depot_file, "//depot/rel/util.c");
        assert_eq!(tasks[0].source_file, "//depot/app/util.c");
        std::fs::write(alice.cwd.join("rel/util.c"), "int util; // app\n").expect("write");
        let done = ops::resolve_done(&conn, "//depot/rel/util.c", ResolveResult::Theirs)
            .await
            .expect("resolve done");
        assert!(matches!(
            done.outcome,
            Outcome::Resolved {
                result: Some(ResolveResult::Theirs),
                ..
            }
        ));
        let resolved = all("resolved", ops::resolved(&conn, Vec::new())).await;
        assert_eq!(resolved.len(), 1);

        // Only the opened, changed file is a diff candidate.
        let candidates = ops::diff_candidates(&conn, &ws, Vec::new())
            .await
            .expect("diff candidates");
        assert_eq!(candidates.len(), 1, "{candidates:?}");
        assert_eq!(candidates[0].depot_file, "//depot/rel/util.c");

        // The depot's content checks out, and obliterate reports before it removes.
        let mut bad = 0;
        let mut summary = None;
        let mut found = ops::verify(&conn, VerifyQuery::default())
            .await
            .expect("verify");
        while let Some(item) = found.next().await.expect("read") {
            match item {
                VerifyItem::File(f) if f.status != VerifyStatus::Ok => bad += 1,
                VerifyItem::Summary(t) => summary = Some(t),
                _ => {}
            }
        }
        assert_eq!(bad, 0);
        let summary = summary.expect("a summary");
        assert_eq!((summary.bad, summary.missing), (0, 0));
        assert!(summary.revisions >= 7, "{summary:?}");
        let report = all("obliterate report", ops::obliterate(&conn, vec!["//depot/rel/main.c".into()], false)).await;
        assert!(report.iter().any(|i| matches!(
            i,
            ObliterateItem::Revision { purged: false, revision } if revision.depot_file == "//depot/rel/main.c"
        )));
        assert!(
            report
                .iter()
                .any(|i| matches!(i, ObliterateItem::Summary(s) if !s.executed && s.revisions == 1))
        );
    });
}
