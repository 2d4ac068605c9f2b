//! Workspace and branch specs refuse with `SpecError` variants naming the spec and the facts.

mod support;

use keel_service::{BranchSpec, SpecError, SpecKind, WorkspaceSpec};
use support::World;

fn branch(name: &str, options: &str) -> BranchSpec {
    BranchSpec {
        name: name.into(),
        owner: "ann".into(),
        options: options.into(),
        view: vec!["//depot/main/... //depot/rel/...".into()],
        ..BranchSpec::default()
    }
}

#[test]
fn workspace_refusals() {
    let w = World::new();
    let again = WorkspaceSpec {
        name: w.ann.workspace.clone(),
        root: "/tmp/elsewhere".into(),
        view: vec![format!("//depot/... //{}/...", w.ann.workspace)],
        ..WorkspaceSpec::default()
    };
    let err = w
        .service
        .save_workspace(&w.ann, again, true)
        .expect_err("the name is taken");
    assert!(
        matches!(&err, SpecError::AlreadyExists { kind: SpecKind::Workspace, name } if name == "ann-ws"),
        "{err:?}"
    );

    w.add(&w.ann, &["//depot/x"]).expect("add");
    let err = w
        .service
        .delete_workspace(&w.ann, "ann-ws")
        .expect_err("files are opened");
    assert!(
        matches!(&err, SpecError::FilesOpened { name, path } if name == "ann-ws" && path == "//depot/x"),
        "{err:?}"
    );
    support::close_together(vec![w]);
}

#[test]
fn branch_refusals() {
    let w = World::new();
    let err = w
        .service
        .get_branch(&w.ann, "nothing")
        .expect_err("no such branch");
    assert!(
        matches!(&err, SpecError::NoSuch { kind: SpecKind::Branch, name } if name == "nothing"),
        "{err:?}"
    );

    w.service
        .save_branch(&w.ann, branch("rel", "locked"), true)
        .expect("ann's locked branch");
    let err = w
        .service
        .delete_branch(&w.bob, "rel")
        .expect_err("locked by ann");
    assert!(
        matches!(&err, SpecError::Locked { kind: SpecKind::Branch, name, owner } if name == "rel" && owner == "ann"),
        "{err:?}"
    );
    support::close_together(vec![w]);
}
