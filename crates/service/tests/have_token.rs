//! Table tests of `HaveIfChanged` (`have_token.rs`): after each step, a client holding the
//! token of bob's earlier answer must be told "unchanged" exactly when the whole-workspace
//! `have` answer is the same as before, and a changed answer must be the `have` answer itself.

mod support;

use keel_service::{Caller, HaveListing, WorkspaceSpec};
use support::{World, caller, strings};

/// What happens between two of bob's `HaveIfChanged` calls.
struct Step {
    name: &'static str,
    act: fn(&World),
    /// Whether bob's whole-workspace have answer changes (so must his token).
    changes: bool,
}

/// The depot every case starts from, bob synced to it.
fn start() -> World {
    let w = World::new();
    w.seed(&w.ann, &["//depot/a", "//depot/b", "//depot/main/m"]);
    w.bump(&w.ann, &["//depot/a"]);
    w.sync(&w.bob, &[]).expect("bob synced");
    w
}

/// Bob's whole have answer through `have_list`, as (depot file, client file, have rev, digest).
type Answer = Vec<(String, String, u32, String)>;

fn have(w: &World, who: &Caller) -> Answer {
    let mut out = Vec::new();
    w.service
        .have_list(who, &[], &mut |f| {
            out.push(row(f));
            Ok(())
        })
        .expect("have");
    out
}

fn row(f: keel_service::FileInfo) -> (String, String, u32, String) {
    (
        f.depot_file.into_string(),
        f.client_file.unwrap_or_default(),
        f.have_rev,
        f.head_digest.map(|d| d.to_string()).unwrap_or_default(),
    )
}

/// `HaveIfChanged` with `token`: the listing and what it sent.
fn ask(w: &World, who: &Caller, token: &str) -> (HaveListing, Answer) {
    let mut sent = Vec::new();
    let listing = w
        .service
        .have_if_changed(who, token, &mut |f| {
            sent.push(row(f));
            Ok(())
        })
        .expect("have_if_changed");
    (listing, sent)
}

fn token_of(listing: HaveListing) -> String {
    match listing {
        HaveListing::Sent { token } => token,
        HaveListing::Unchanged => panic!("a list was expected"),
    }
}

fn view(w: &World, lines: &[&str]) {
    let spec = WorkspaceSpec {
        name: "bob-ws".into(),
        owner: "bob".into(),
        root: "/tmp/bob".into(),
        view: lines.iter().map(|l| l.to_string()).collect(),
        ..WorkspaceSpec::default()
    };
    w.service
        .save_workspace(&w.bob, spec, false)
        .expect("view saved");
}

#[test]
fn the_token_changes_exactly_when_the_have_answer_does() {
    let steps = [
        Step {
            name: "nothing happens",
            act: |_| {},
            changes: false,
        },
        Step {
            name: "another workspace submits and syncs",
            act: |w| {
                w.bump(&w.ann, &["//depot/a", "//depot/main/m"]);
                w.sync(&w.ann, &[]).expect("ann syncs");
            },
            changes: false,
        },
        Step {
            name: "bob syncs a newer revision",
            act: |w| {
                w.bump(&w.ann, &["//depot/a"]);
                w.sync(&w.bob, &[]).expect("bob syncs");
            },
            changes: true,
        },
        Step {
            name: "bob syncs a file back to an older revision",
            act: |w| w.sync(&w.bob, &["//depot/a#1"]).expect("sync a#1"),
            changes: true,
        },
        Step {
            name: "bob submits an edit",
            act: |w| {
                w.bump(&w.bob, &["//depot/b"]);
            },
            changes: true,
        },
        Step {
            name: "bob's view changes",
            act: |w| view(w, &["//depot/main/... //bob-ws/main/..."]),
            changes: true,
        },
        Step {
            name: "a file bob has is obliterated",
            act: |w| {
                w.service
                    .obliterate(&w.ann, &strings(&["//depot/b"]), true, &mut |_| Ok(()))
                    .expect("obliterated");
            },
            changes: true,
        },
        Step {
            name: "the protections hide a file from bob",
            act: |w| {
                let table = strings(&[
                    "write user * * //...",
                    "list user bob * -//depot/a",
                    "super user ann * //...",
                ]);
                w.service
                    .save_protections(&w.ann, &table)
                    .expect("protections saved");
            },
            changes: true,
        },
    ];
    for step in steps {
        let w = start();
        let before = have(&w, &w.bob);
        let (listing, sent) = ask(&w, &w.bob, "");
        assert_eq!(sent, before, "{}: the first answer is the list", step.name);
        let token = token_of(listing);
        let (again, resent) = ask(&w, &w.bob, &token);
        assert_eq!(again, HaveListing::Unchanged, "{}: asked twice", step.name);
        assert!(resent.is_empty(), "{}: unchanged sends nothing", step.name);

        (step.act)(&w);
        let after = have(&w, &w.bob);
        assert_eq!(
            after != before,
            step.changes,
            "{}: the table's expectation of the have answer",
            step.name
        );
        let (listing, sent) = ask(&w, &w.bob, &token);
        if step.changes {
            assert_eq!(sent, after, "{}: the new list is sent", step.name);
            assert_ne!(token_of(listing), token, "{}: a new token", step.name);
        } else {
            assert_eq!(listing, HaveListing::Unchanged, "{}", step.name);
            assert!(sent.is_empty(), "{}: nothing sent", step.name);
        }
    }
}

#[test]
fn a_token_is_good_only_for_whoever_it_was_given_to() {
    let w = start();
    let token = token_of(ask(&w, &w.bob, "").0);
    // Same workspace, another user: the protections could show them other files.
    let other = Caller {
        user: "ann".into(),
        ..caller("bob")
    };
    let (listing, sent) = ask(&w, &other, &token);
    assert!(matches!(listing, HaveListing::Sent { .. }));
    assert_eq!(sent, have(&w, &other));
    // A token that is not one at all is simply not current.
    let (listing, _) = ask(&w, &w.bob, "not-a-token");
    assert_eq!(token_of(listing), token);
}
