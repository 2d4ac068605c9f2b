//! Table tests of sync planning: what a workspace is sent for its have list against head,
//! `#rev`, `@change`, `#none`, files deleted at head and files opened meanwhile.

mod support;

use keel_service::{HaveEntry, ServiceError};
use support::{Case, Want, World, check, done, shared};

/// The depot's history, the same for every case:
/// change 1 adds a, b, main/m; change 2 edits a; change 3 deletes b.
fn history(w: &World) {
    w.seed(&w.ann, &["//depot/a", "//depot/b", "//depot/main/m"]);
    w.bump(&w.ann, &["//depot/a"]);
    w.delete(&w.ann, &["//depot/b"]).expect("delete b");
    w.submit(&w.ann, 0).expect("delete submitted");
}

/// One row: what `who` has (set up by `before`), what it syncs, and the plan it must get.
struct Plan {
    name: &'static str,
    before: fn(&World),
    who: fn(&World) -> &keel_service::Caller,
    files: &'static [&'static str],
    want: &'static [(&'static str, u32, &'static str)],
}

fn nothing(_: &World) {}

fn bob(w: &World) -> &keel_service::Caller {
    &w.bob
}

#[test]
fn sync_plans() {
    let plans = [
        Plan {
            name: "an empty workspace gets every head that is not deleted",
            before: nothing,
            who: bob,
            files: &[],
            want: &[("//depot/a", 2, "added"), ("//depot/main/m", 1, "added")],
        },
        Plan {
            name: "#rev selects that revision",
            before: nothing,
            who: bob,
            files: &["//depot/a#1"],
            want: &[("//depot/a", 1, "added")],
        },
        Plan {
            name: "@change selects the newest revisions at that change",
            before: nothing,
            who: bob,
            files: &["//depot/...@1"],
            want: &[
                ("//depot/a", 1, "added"),
                ("//depot/b", 1, "added"),
                ("//depot/main/m", 1, "added"),
            ],
        },
        Plan {
            name: "head after @1 updates and deletes",
            before: |w| w.sync(&w.bob, &["//depot/...@1"]).expect("sync @1"),
            who: bob,
            files: &[],
            want: &[("//depot/a", 2, "updated"), ("//depot/b", 0, "deleted")],
        },
        Plan {
            name: "a workspace at head gets nothing",
            before: |w| w.sync(&w.bob, &[]).expect("sync"),
            who: bob,
            files: &[],
            want: &[],
        },
        Plan {
            name: "the submitter's own workspace is at head",
            before: nothing,
            who: |w| &w.ann,
            files: &[],
            want: &[],
        },
        Plan {
            name: "#none removes the files",
            before: |w| w.sync(&w.bob, &[]).expect("sync"),
            who: bob,
            files: &["//depot/a#none"],
            want: &[("//depot/a", 0, "deleted")],
        },
        Plan {
            name: "#0 is #none",
            before: |w| w.sync(&w.bob, &[]).expect("sync"),
            who: bob,
            files: &["//depot/main/...#0"],
            want: &[("//depot/main/m", 0, "deleted")],
        },
        Plan {
            name: "a file deleted at head is not sent",
            before: nothing,
            who: bob,
            files: &["//depot/b"],
            want: &[],
        },
        Plan {
            name: "going back to an older revision",
            before: |w| w.sync(&w.bob, &[]).expect("sync"),
            who: bob,
            files: &["//depot/a#1"],
            want: &[("//depot/a", 1, "updated")],
        },
        Plan {
            name: "a revision past head selects the newest revision at or below it",
            before: nothing,
            who: bob,
            files: &["//depot/a#9"],
            want: &[("//depot/a", 2, "added")],
        },
        Plan {
            name: "a narrow view gets only its files",
            before: nothing,
            who: |w| &w.cat,
            files: &[],
            want: &[("//depot/main/m", 1, "added")],
        },
        Plan {
            name: "an opened file whose head moved is scheduled for resolve",
            before: |w| {
                w.sync(&w.bob, &["//depot/a#1"]).expect("sync #1");
                w.edit(&w.bob, &["//depot/a"]).expect("edit");
            },
            who: bob,
            files: &["//depot/a"],
            want: &[("//depot/a", 2, "resolve")],
        },
        Plan {
            name: "workspace syntax selects through the view",
            before: nothing,
            who: |w| &w.cat,
            files: &["//cat-ws/..."],
            want: &[("//depot/main/m", 1, "added")],
        },
    ];
    let mut failures = Vec::new();
    let mut worlds = Vec::new();
    for plan in &plans {
        let world = World::new();
        history(&world);
        (plan.before)(&world);
        let got = world.sync_plan((plan.who)(&world), plan.files);
        let want: Vec<(String, u32, &str)> = plan
            .want
            .iter()
            .map(|(p, r, a)| (p.to_string(), *r, *a))
            .collect();
        match got {
            Ok(got) if got == want => {}
            other => failures.push(format!("{}: wanted {want:?}, got {other:?}", plan.name)),
        }
        worlds.push(world);
    }
    support::close_together(worlds);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn sync_refusals() {
    check(&[
        Case {
            name: "an unknown depot or workspace is refused",
            setup: history,
            act: |w| done(w.sync_plan(&w.bob, &["//nowhere/..."])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::UnknownRoot { name, .. }) if name == "nowhere"),
            ),
        },
        Case {
            name: "a malformed revision is refused",
            setup: history,
            act: |w| done(w.sync_plan(&w.bob, &["//depot/a#x"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::BadArgument { arg, reason }) if arg == "//depot/a#x" && reason.contains("\"#x\"")),
            ),
        },
        Case {
            name: "a have entry that is no depot path is refused, naming it",
            setup: history,
            act: |w| {
                let entries = vec![HaveEntry {
                    depot_file: "//depot/../a".into(),
                    rev: 1,
                }];
                done(w.service.update_have(bob(w), entries, None, 0))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::BadArgument { arg, reason }) if arg == "//depot/../a" && reason == "invalid depot path \"//depot/../a\": '..' segment not allowed"),
            ),
        },
    ]);
}
