//! Table tests of creating depots: a name must parse and be free among depots and workspaces.

mod support;

use keel_service::DepotError;
use support::{Case, Failure, Want, World, check, done, message};

fn create(w: &World, name: &str) -> Result<(), Failure> {
    done(w.service.create_depot(&w.ann, name, ""))
}

#[test]
fn depot_rules() {
    check(&[
        Case {
            name: "a new depot is created and listed",
            setup: |_| {},
            act: |w| {
                create(w, "assets")?;
                let names: Vec<String> = w
                    .service
                    .list_depots(&w.ann)?
                    .into_iter()
                    .map(|d| d.name)
                    .collect();
                assert_eq!(names, ["assets", "depot"]);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "a depot cannot be created twice",
            setup: |w| create(w, "assets").expect("first create"),
            act: |w| create(w, "assets"),
            want: Want::Refused(|f| {
                matches!(f, Failure::Depot(DepotError::Exists { name }) if name == "assets")
                    && message(f) == "depot 'assets' already exists"
            }),
        },
        Case {
            name: "a depot cannot take a workspace's name",
            setup: |_| {},
            act: |w| create(w, "ann-ws"),
            want: Want::Refused(|f| {
                matches!(f, Failure::Depot(DepotError::NameIsWorkspace { name }) if name == "ann-ws")
                    && message(f) == "'ann-ws' is already the name of a workspace"
            }),
        },
        Case {
            name: "a name the parser refuses is refused with its reason",
            setup: |_| {},
            act: |w| create(w, "a/b"),
            want: Want::Refused(
                |f| matches!(f, Failure::Depot(DepotError::BadName { name, reason }) if name == "a/b" && reason.contains("\"a/b\"")),
            ),
        },
    ]);
}
