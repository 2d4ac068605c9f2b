//! Fields that widen rights are set only by a super user: a user's Type (and with it the
//! service user's content-by-digest bypass, which a type stored before Keel recorded its
//! setter no longer grants) and a group's limits, which its owners may not change.

mod support;

use keel_core::{Limit, UserType};
use keel_service::{AccessError, AuthError, GroupSpec, ServiceError, UserSpec};
use keel_store::UserRow;
use support::World;

/// ann is super; bob may not see `//depot/secret/...`. Returns the secret file's digest.
fn world_with_a_secret(w: &World) -> String {
    w.seed(&w.ann, &["//depot/secret/s"]);
    let table = [
        "write user * * //...",
        "list user bob * -//depot/secret/...",
        "super user ann * //...",
    ];
    let lines: Vec<String> = table.iter().map(|l| l.to_string()).collect();
    w.service
        .save_protections(&w.ann, &lines)
        .expect("protections saved");
    let mut digest = None;
    w.service
        .fstat(&w.ann, &["//depot/secret/s".to_string()], &mut |f| {
            digest = f.head_digest;
            Ok(())
        })
        .expect("fstat");
    digest.expect("a digest").to_string()
}

fn spec(name: &str, user_type: UserType) -> UserSpec {
    UserSpec {
        name: name.into(),
        email: format!("{name}@example.com"),
        user_type,
        ..UserSpec::default()
    }
}

fn denied(r: Result<keel_blob::StoredBlob, ServiceError>) -> bool {
    matches!(r, Err(ServiceError::ContentDenied { .. }))
}

#[test]
fn a_service_type_no_super_user_set_grants_nothing() {
    let w = World::new();
    let digest = world_with_a_secret(&w);
    assert!(denied(w.service.content(&w.bob, &digest, None)));

    // bob's row as a server before this check stored it, after bob saved Type: service
    // himself: the type is there, its setter is not.
    let now = 1_700_000_000;
    keel_store::write(w.meta().as_ref(), move |txn| {
        txn.put_user(&UserRow {
            name: "bob".into(),
            email: "bob@example.com".into(),
            full_name: String::new(),
            user_type: UserType::Service,
            created: now,
            updated: now,
            accessed: now,
            password_hash: None,
            p4_digest: None,
            type_set_by: None,
            reviews: Vec::new(),
        })
        .map_err(ServiceError::from)
    })
    .expect("row planted");
    assert_eq!(
        w.service.get_user(&w.bob, "bob").expect("bob").user_type,
        UserType::Service
    );
    assert!(denied(w.service.content(&w.bob, &digest, None)));
    // bob saving his spec (type unchanged) does not make it count either.
    w.service
        .save_user(&w.bob, spec("bob", UserType::Service), false)
        .expect("own spec, type unchanged");
    assert!(denied(w.service.content(&w.bob, &digest, None)));
    // Nor may he change it.
    let err = w
        .service
        .save_user(&w.bob, spec("bob", UserType::Operator), false)
        .expect_err("refused");
    assert!(
        matches!(&err, AuthError::PrivilegedField { field: "Type", .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "user bob: only a super user may set Type (asked for operator, it stays service); \
         nothing was saved"
    );

    // The super user saves it: now it counts.
    w.service
        .save_user(&w.ann, spec("bob", UserType::Service), true)
        .expect("super sets the type");
    assert!(w.service.content(&w.bob, &digest, None).is_ok());
}

#[test]
fn a_group_owner_changes_members_not_limits() {
    let w = World::new();
    world_with_a_secret(&w);
    let group = GroupSpec {
        name: "devs".into(),
        users: vec!["bob".into()],
        owners: vec!["bob".into()],
        ..GroupSpec::default()
    };
    w.service
        .save_group(&w.ann, group.clone())
        .expect("super saves the group");
    // The owner adds a member.
    let mut more = group.clone();
    more.users.push("cat".into());
    w.service
        .save_group(&w.bob, more.clone())
        .expect("an owner changes the members");
    // ... but lifts no limit.
    for field in ["MaxResults", "Timeout"] {
        let mut lifted = more.clone();
        match field {
            "MaxResults" => lifted.limits.max_results = Limit::Unlimited,
            _ => lifted.limits.timeout = Limit::Unlimited,
        }
        let err = w
            .service
            .save_group(&w.bob, lifted)
            .expect_err("limit refused");
        assert!(
            matches!(&err, AccessError::PrivilegedField { field: f, .. } if *f == field),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "group devs: only a super user may change {field}; an owner changes Users, \
                 Subgroups and Owners; nothing was saved"
            )
        );
    }
    let stored = w.service.get_group(&w.ann, "devs").expect("group");
    assert_eq!(stored.limits, more.limits);
    assert_eq!(stored.users, ["bob", "cat"]);
    // The super user may.
    let mut lifted = more;
    lifted.limits.max_results = Limit::Unlimited;
    w.service
        .save_group(&w.ann, lifted)
        .expect("super changes limits");
}
