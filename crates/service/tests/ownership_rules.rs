//! Workspaces and pending changes belong to their owner: another user's use is refused with
//! the owner named, a super user's override (`Caller::force`) is let through, and editing a
//! pending change never re-owns it.

mod support;

use keel_service::{Caller, ChangeError, ServiceError, SpecError, SpecKind, WorkspaceSpec};
use support::World;

/// `user` naming ann's workspace, overriding or not.
fn in_anns(user: &str, force: bool) -> Caller {
    Caller {
        workspace: "ann-ws".into(),
        force,
        ..support::caller(user)
    }
}

#[test]
fn another_users_workspace_is_refused_unless_a_super_user_overrides() {
    let w = World::new();
    let change = w
        .service
        .save_change(&w.ann, None, "ann's work", &[])
        .expect("ann's change")
        .change;

    let err = w
        .service
        .save_change(&in_anns("bob", false), None, "bob's", &[])
        .expect_err("not bob's workspace");
    assert!(
        matches!(&err, ChangeError::Service(ServiceError::WorkspaceNotOwned { name, owner, user })
            if name == "ann-ws" && owner == "ann" && user == "bob"),
        "{err:?}"
    );
    let err = w
        .service
        .delete_change(&in_anns("bob", false), change)
        .expect_err("not bob's workspace");
    assert!(
        matches!(
            &err,
            ChangeError::Service(ServiceError::WorkspaceNotOwned { .. })
        ),
        "{err:?}"
    );

    // Without a protections table everyone is a super user: bob may override, and his edit
    // keeps the change ann's.
    let edited = w
        .service
        .save_change(
            &in_anns("bob", true),
            Some(change),
            "edited by an admin",
            &[],
        )
        .expect("override");
    assert_eq!(edited.user, "ann");
    assert_eq!(edited.workspace, "ann-ws");
    // A change the overriding super user made in ann's workspace is his: ann may not delete it.
    let his = w
        .service
        .save_change(&in_anns("bob", true), None, "bob's in ann's", &[])
        .expect("override")
        .change;
    let err = w
        .service
        .delete_change(&w.ann, his)
        .expect_err("bob's change");
    assert!(
        matches!(&err, ChangeError::Service(ServiceError::ChangeOfOtherUser { change, owner })
            if *change == his && owner == "bob"),
        "{err:?}"
    );
    w.service
        .delete_change(&w.ann, change)
        .expect("ann deletes her own");
    assert!(matches!(
        w.service.delete_change(&w.ann, change),
        Err(ChangeError::Service(ServiceError::NoSuchChange { .. }))
    ));
    support::close_together(vec![w]);
}

#[test]
fn specs_are_edited_and_deleted_by_their_owner_and_given_away_only_by_a_super_user() {
    let w = World::new();
    let bob = &w.bob;
    let taken = WorkspaceSpec {
        name: "ann-ws".into(),
        owner: "bob".into(),
        root: "/tmp/bob-chose".into(),
        view: vec!["//depot/... //ann-ws/...".into()],
        ..WorkspaceSpec::default()
    };
    let err = w
        .service
        .save_workspace(bob, taken.clone(), false)
        .expect_err("ann's spec");
    assert!(
        matches!(&err, SpecError::NotOwner { kind: SpecKind::Workspace, name, owner }
            if name == "ann-ws" && owner == "ann"),
        "{err:?}"
    );
    let gift = WorkspaceSpec {
        name: "gift-ws".into(),
        owner: "ann".into(),
        view: vec!["//depot/... //gift-ws/...".into()],
        ..taken.clone()
    };
    let err = w
        .service
        .save_workspace(bob, gift.clone(), true)
        .expect_err("given to ann");
    assert!(
        matches!(&err, SpecError::OwnerNotCaller { name, owner, user, .. }
            if name == "gift-ws" && owner == "ann" && user == "bob"),
        "{err:?}"
    );
    let err = w
        .service
        .delete_workspace(bob, "ann-ws")
        .expect_err("ann's workspace");
    assert!(matches!(&err, SpecError::NotOwner { .. }), "{err:?}");
    let anns = w
        .service
        .get_workspace(&w.ann, "ann-ws")
        .expect("still there");
    assert_eq!(
        (anns.owner.as_str(), anns.root.ends_with("ann-ws")),
        ("ann", true)
    );

    let admin = Caller {
        force: true,
        ..bob.clone()
    };
    w.service
        .save_workspace(&admin, gift, true)
        .expect("a super user gives a workspace away");
    w.service
        .delete_workspace(&admin, "ann-ws")
        .expect("a super user deletes it");
    support::close_together(vec![w]);
}
