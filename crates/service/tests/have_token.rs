//! Table tests of `HaveIfChanged` (`have_token.rs`): after each step, a client holding the
//! token of bob's earlier answer must be told "unchanged" exactly when the whole-workspace
//! `have` answer is the same as before; otherwise it gets either the `have` answer itself or,
//! when only the have list's entries moved, a delta that turns its copy into that answer.

mod support;

use keel_service::{Caller, HaveListing, HavePart};
use std::collections::BTreeMap;
use support::{World, caller, strings};

/// What happens between two of bob's `HaveIfChanged` calls.
struct Step {
    name: &'static str,
    act: fn(&World),
    /// How bob's whole-workspace have answer changes, and so what he is sent.
    changes: Change,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    /// The same answer: "unchanged".
    None,
    /// Only the have list's entries moved: a delta.
    Entries,
    /// The view, an obliterate or the protections: the whole list.
    Context,
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

/// `HaveIfChanged` with `token`: the listing, whether it was a delta, and what it sent.
fn ask(w: &World, who: &Caller, token: &str) -> (HaveListing, bool, Answer) {
    let mut sent = Vec::new();
    let mut delta = false;
    let listing = w
        .service
        .have_if_changed(who, token, &mut |part| {
            match part {
                HavePart::Delta => delta = true,
                HavePart::File(f) => sent.push(row(*f)),
            }
            Ok(())
        })
        .expect("have_if_changed");
    assert_eq!(delta, matches!(listing, HaveListing::Delta { .. }));
    (listing, delta, sent)
}

/// `copy` with a delta applied (revision 0 removes), in depot order like `have`'s answer.
fn apply(copy: &Answer, delta: &Answer) -> Answer {
    let mut by_path: BTreeMap<String, (String, String, u32, String)> =
        copy.iter().map(|r| (r.0.clone(), r.clone())).collect();
    for r in delta {
        if r.2 == 0 {
            by_path.remove(&r.0);
        } else {
            by_path.insert(r.0.clone(), r.clone());
        }
    }
    by_path.into_values().collect()
}

fn token_of(listing: HaveListing) -> String {
    match listing {
        HaveListing::Sent { token } | HaveListing::Delta { token } => token,
        HaveListing::Unchanged => panic!("a list was expected"),
    }
}

#[test]
fn the_token_changes_exactly_when_the_have_answer_does() {
    let steps = [
        Step {
            name: "nothing happens",
            act: |_| {},
            changes: Change::None,
        },
        Step {
            name: "another workspace submits and syncs",
            act: |w| {
                w.bump(&w.ann, &["//depot/a", "//depot/main/m"]);
                w.sync(&w.ann, &[]).expect("ann syncs");
            },
            changes: Change::None,
        },
        Step {
            name: "bob syncs a newer revision",
            act: |w| {
                w.bump(&w.ann, &["//depot/a"]);
                w.sync(&w.bob, &[]).expect("bob syncs");
            },
            changes: Change::Entries,
        },
        Step {
            name: "bob syncs a file back to an older revision",
            act: |w| w.sync(&w.bob, &["//depot/a#1"]).expect("sync a#1"),
            changes: Change::Entries,
        },
        Step {
            name: "bob submits an edit",
            act: |w| {
                w.bump(&w.bob, &["//depot/b"]);
            },
            changes: Change::Entries,
        },
        Step {
            name: "bob's view changes",
            act: |w| w.set_view(&w.bob, &["//depot/main/... //bob-ws/main/..."]),
            changes: Change::Context,
        },
        Step {
            name: "a file bob has is obliterated",
            act: |w| {
                w.service
                    .obliterate(&w.ann, &strings(&["//depot/b"]), true, &mut |_| Ok(()))
                    .expect("obliterated");
            },
            changes: Change::Context,
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
            changes: Change::Context,
        },
    ];
    for step in steps {
        let w = start();
        let before = have(&w, &w.bob);
        let (listing, delta, sent) = ask(&w, &w.bob, "");
        assert!(!delta, "{}: no token, no delta", step.name);
        assert_eq!(sent, before, "{}: the first answer is the list", step.name);
        let token = token_of(listing);
        let (again, _, resent) = ask(&w, &w.bob, &token);
        assert_eq!(again, HaveListing::Unchanged, "{}: asked twice", step.name);
        assert!(resent.is_empty(), "{}: unchanged sends nothing", step.name);

        (step.act)(&w);
        let after = have(&w, &w.bob);
        assert_eq!(
            after != before,
            step.changes != Change::None,
            "{}: the table's expectation of the have answer",
            step.name
        );
        let (listing, delta, sent) = ask(&w, &w.bob, &token);
        match step.changes {
            Change::None => {
                assert_eq!(listing, HaveListing::Unchanged, "{}", step.name);
                assert!(sent.is_empty(), "{}: nothing sent", step.name);
                continue;
            }
            Change::Entries => {
                assert!(delta, "{}: a delta", step.name);
                assert!(
                    sent.len() < after.len().max(2),
                    "{}: only what moved",
                    step.name
                );
                assert_eq!(
                    apply(&before, &sent),
                    after,
                    "{}: the delta applied",
                    step.name
                );
            }
            Change::Context => {
                assert!(!delta, "{}: the whole list", step.name);
                assert_eq!(sent, after, "{}: the new list is sent", step.name);
            }
        }
        let fresh = token_of(listing);
        assert_ne!(fresh, token, "{}: a new token", step.name);
        let (again, _, _) = ask(&w, &w.bob, &fresh);
        assert_eq!(
            again,
            HaveListing::Unchanged,
            "{}: the new token is current",
            step.name
        );
    }
}

#[test]
fn a_token_is_good_only_for_whoever_it_was_given_to() {
    let w = start();
    let token = token_of(ask(&w, &w.bob, "").0);
    // Same workspace, another user (a super user overriding bob's ownership, the only way
    // another user may use it): the protections could show them other files.
    let other = Caller {
        user: "ann".into(),
        force: true,
        ..caller("bob")
    };
    let (listing, _, sent) = ask(&w, &other, &token);
    assert!(matches!(listing, HaveListing::Sent { .. }));
    assert_eq!(sent, have(&w, &other));
    // A token that is not one at all is simply not current.
    let (listing, _, _) = ask(&w, &w.bob, "not-a-token");
    assert_eq!(token_of(listing), token);
}

#[test]
fn a_write_too_big_to_remember_sends_older_copies_the_whole_list() {
    let w = World::with_store_config(keel_store::StoreConfig {
        have_change_rows: 2,
        ..keel_store::StoreConfig::default()
    });
    w.seed(&w.ann, &["//depot/a", "//depot/b", "//depot/c"]);
    w.sync(&w.bob, &["//depot/a"]).expect("bob syncs a");
    let token = token_of(ask(&w, &w.bob, "").0);
    // Two files in one write: remembered, a delta.
    w.sync(&w.bob, &["//depot/b", "//depot/c"])
        .expect("bob syncs b and c");
    let (listing, delta, sent) = ask(&w, &w.bob, &token);
    assert!(delta);
    assert_eq!(sent.len(), 2);
    let after_two = token_of(listing);
    // Three files in one write: more than remembered, so the copy before it gets everything.
    w.bump(&w.ann, &["//depot/a", "//depot/b", "//depot/c"]);
    w.sync(&w.bob, &[]).expect("bob syncs all three");
    let (listing, delta, sent) = ask(&w, &w.bob, &after_two);
    assert!(!delta && matches!(listing, HaveListing::Sent { .. }));
    assert_eq!(sent, have(&w, &w.bob));
}
