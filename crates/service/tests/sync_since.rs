//! Table tests of sync's shortcut for a workspace near head (`sync_since.rs`): after each step,
//! the plan of a whole-view sync (which may take the shortcut) must equal the plan of the full
//! have-list merge (from a service configured never to take it), and the shortcut must be taken exactly
//! when the have list's mark is provably still right.

mod support;

use keel_service::{LabelSpec, OpenAction, Service, SyncOptions};
use support::{World, strings};

/// What bob does or suffers after his whole-view sync marked his have list.
struct Step {
    name: &'static str,
    act: fn(&World),
    /// Whether the next whole-view sync may take the shortcut.
    shortcut: bool,
}

/// The depot every case starts from, and bob synced to it (his have list marked).
fn start() -> World {
    let w = World::new();
    w.seed(
        &w.ann,
        &["//depot/a", "//depot/b", "//depot/main/m", "//depot/main/n"],
    );
    w.bump(&w.ann, &["//depot/a"]);
    w.sync(&w.bob, &[]).expect("bob synced");
    w
}

/// `(plan, since)` of a whole-view preview sync.
type Plan = Vec<(String, u32, &'static str)>;

fn whole(w: &World) -> (Plan, Option<u64>) {
    plan_of(&w.service, w)
}

/// The plan of the full have-list merge, from a service that never takes the shortcut.
fn merged(w: &World) -> Plan {
    let (plan, since) = plan_of(&w.without_sync_shortcut(), w);
    assert_eq!(since, None);
    plan
}

fn plan_of(service: &Service, w: &World) -> (Plan, Option<u64>) {
    let mut out = Vec::new();
    let opts = SyncOptions {
        preview: true,
        ..SyncOptions::default()
    };
    let totals = service
        .sync(&w.bob, &[], opts, &mut |e| {
            out.push((
                e.item.depot_file.into_string(),
                e.item.rev,
                e.item.action.as_str(),
            ));
            Ok(())
        })
        .expect("whole-view sync");
    out.sort();
    (out, totals.since)
}

fn check(steps: &[Step]) {
    for step in steps {
        let w = start();
        assert!(whole(&w).1.is_some(), "{}: a fresh mark is used", step.name);
        (step.act)(&w);
        let (plan, since) = whole(&w);
        assert_eq!(plan, merged(&w), "{}: the plans differ", step.name);
        assert_eq!(
            since.is_some(),
            step.shortcut,
            "{}: shortcut taken",
            step.name
        );
        // Recording that sync (with its mark) leaves bob at head, by either route.
        w.sync(&w.bob, &[]).expect("bob syncs");
        assert_eq!(
            whole(&w).0,
            Vec::new(),
            "{}: in step after syncing",
            step.name
        );
        assert_eq!(merged(&w), Vec::new(), "{}: merge agrees", step.name);
    }
}

#[test]
fn the_shortcut_plans_what_the_full_merge_plans() {
    check(&[
        Step {
            name: "nothing changed",
            act: |_| {},
            shortcut: true,
        },
        Step {
            name: "another workspace edits, adds and deletes",
            act: |w| {
                w.bump(&w.ann, &["//depot/a", "//depot/main/m"]);
                w.seed(&w.ann, &["//depot/new"]);
                w.delete(&w.ann, &["//depot/b"]).expect("delete b");
                w.submit(&w.ann, 0).expect("delete submitted");
            },
            shortcut: true,
        },
        Step {
            name: "a file outside bob's view changes",
            act: |w| {
                w.set_view(&w.bob, &["//depot/main/... //bob-ws/main/..."]);
                w.sync(&w.bob, &[]).expect("bob syncs the narrower view");
                w.bump(&w.ann, &["//depot/a"]);
            },
            shortcut: true,
        },
        Step {
            name: "bob's own submit keeps the mark",
            act: |w| {
                w.bump(&w.bob, &["//depot/a"]);
                w.bump(&w.ann, &["//depot/b"]);
            },
            shortcut: true,
        },
        Step {
            name: "a change numbered before the mark is submitted after it",
            act: |w| {
                let change = w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Edit, change, "", &["//depot/a"])
                    .expect("a opened in the numbered change");
                w.sync(&w.bob, &[]).expect("bob syncs, marking");
                w.submit(&w.ann, change).expect("submitted late");
            },
            shortcut: true,
        },
        Step {
            name: "an opened file whose head moves is scheduled for resolve",
            act: |w| {
                w.edit(&w.bob, &["//depot/a"]).expect("bob edits a");
                w.bump(&w.ann, &["//depot/a"]);
            },
            shortcut: true,
        },
        Step {
            name: "a file opened for delete is left behind, then reverted",
            act: |w| {
                w.delete(&w.bob, &["//depot/a"]).expect("bob deletes a");
                w.bump(&w.ann, &["//depot/a"]);
                w.sync(&w.bob, &[]).expect("bob syncs, a stays behind");
                w.service
                    .revert(&w.bob, &strings(&["//depot/a"]), false, &[])
                    .expect("revert");
            },
            shortcut: true,
        },
        Step {
            name: "a partial sync to an older revision voids the mark",
            act: |w| w.sync(&w.bob, &["//depot/a#1"]).expect("sync a#1"),
            shortcut: false,
        },
        Step {
            name: "a sync of a label voids the mark",
            act: |w| {
                let label = LabelSpec {
                    name: "old".into(),
                    owner: "bob".into(),
                    options: "unlocked".into(),
                    view: vec!["//depot/...".into()],
                    ..LabelSpec::default()
                };
                w.service
                    .save_label(&w.bob, label, true, false)
                    .expect("label");
                w.service
                    .tag(
                        &w.bob,
                        "old",
                        &strings(&["//depot/...@1"]),
                        Default::default(),
                        &mut |_| Ok(()),
                    )
                    .expect("tagged");
                w.sync(&w.bob, &["//depot/...@old"]).expect("sync @old");
            },
            shortcut: false,
        },
        Step {
            name: "removing a file from the workspace voids the mark",
            act: |w| {
                w.sync(&w.bob, &["//depot/main/...#none"])
                    .expect("sync #none")
            },
            shortcut: false,
        },
        Step {
            name: "another view voids the mark",
            act: |w| w.set_view(&w.bob, &["//depot/main/... //bob-ws/main/..."]),
            shortcut: false,
        },
        Step {
            name: "an obliterate voids the mark",
            act: |w| {
                w.service
                    .obliterate(&w.ann, &strings(&["//depot/b"]), true, &mut |_| Ok(()))
                    .expect("obliterated");
            },
            shortcut: false,
        },
    ]);
}

#[test]
fn force_always_merges_the_whole_have_list() {
    let w = start();
    let opts = SyncOptions {
        preview: true,
        force: true,
        ..SyncOptions::default()
    };
    let mut files = 0;
    let totals = w
        .service
        .sync(&w.bob, &[], opts, &mut |_| {
            files += 1;
            Ok(())
        })
        .expect("sync -f");
    assert_eq!(totals.since, None);
    assert_eq!(files, 4, "every file is refreshed");
}

#[test]
fn a_mark_is_refused_after_another_write() {
    let w = start();
    w.bump(&w.ann, &["//depot/a"]);
    // A sync hands out a mark; before the client returns it, another sync writes the have list.
    let mut have = Vec::new();
    let totals = w
        .service
        .sync(&w.bob, &[], SyncOptions::default(), &mut |e| {
            have.push(keel_service::HaveEntry {
                depot_file: e.item.depot_file.into_string(),
                rev: e.item.rev,
            });
            Ok(())
        })
        .expect("sync");
    let mark = totals.mark.expect("a whole-view sync hands out a mark");
    w.sync(&w.bob, &["//depot/a#1"])
        .expect("a partial sync meanwhile");
    let done = w
        .service
        .update_have(&w.bob, have, Some(mark), 0)
        .expect("recorded");
    assert!(done.wrote);
    assert!(!done.marked, "the mark no longer holds");
    assert_eq!(
        whole(&w).1,
        None,
        "the next sync merges the whole have list"
    );
}

/// A mark made while the newest change is submitted starts the next look after that change:
/// no later submit can take its number, so a sync right after an import looks at no change.
#[test]
fn the_rescan_starts_after_a_submitted_newest_change() {
    let w = start();
    let mut newest = 0;
    w.service
        .changes(&w.ann, &keel_service::ChangesQuery::default(), &mut |c| {
            newest = newest.max(c.change.0);
            Ok(())
        })
        .expect("changes");
    let (plan, since) = whole(&w);
    assert_eq!(plan, Vec::new());
    assert_eq!(since, Some(newest + 1));
}

#[test]
fn an_own_submit_moves_the_mark_past_it_unless_another_change_came_first() {
    let w = start();
    let own = w.bump(&w.bob, &["//depot/b"]);
    let (plan, since) = whole(&w);
    assert_eq!(plan, Vec::new());
    assert_eq!(
        since,
        Some(own + 1),
        "nothing up to bob's change is looked at"
    );
    // Ann's change in bob's view before his next submit: the mark stays before hers.
    let hers = w.bump(&w.ann, &["//depot/a"]);
    w.bump(&w.bob, &["//depot/b"]);
    let (plan, since) = whole(&w);
    assert_eq!(plan, merged(&w));
    assert_eq!(plan.len(), 1, "{plan:?}");
    assert!(since.is_some_and(|s| s <= hers), "{since:?}");
}

/// A workspace whose first submit puts the first files into its view (an import) has its
/// have list marked by that submit, so its next sync looks only at later changes; a view that
/// held files before gets no mark.
#[test]
fn an_import_into_an_empty_view_marks_the_importing_workspace() {
    let w = World::new();
    let import = w.seed(&w.bob, &["//depot/a", "//depot/main/m"]);
    let (plan, since) = whole(&w);
    assert_eq!(plan, Vec::new());
    assert_eq!(
        since,
        Some(import + 1),
        "the import's own files are not looked at"
    );
    w.sync(&w.ann, &[]).expect("ann synced");
    w.bump(&w.ann, &["//depot/a"]);
    let (plan, since) = whole(&w);
    assert_eq!(plan, merged(&w));
    assert_eq!(plan.len(), 1, "{plan:?}");
    assert_eq!(since, Some(import + 1), "ann's change is looked at");

    let w = World::new();
    w.seed(&w.ann, &["//depot/b"]);
    w.seed(&w.bob, &["//depot/a"]);
    let (plan, since) = whole(&w);
    assert_eq!(plan, merged(&w));
    assert_eq!(plan.len(), 1, "bob lacks ann's file: {plan:?}");
    assert_eq!(since, None, "a view that held files is not marked");
}
