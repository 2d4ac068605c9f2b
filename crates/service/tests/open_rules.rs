//! Table tests of the rules of open (add, edit, delete), move, revert and reopen.

mod support;

use keel_core::{ChangeNumber, ChangeRef, FileAction};
use keel_service::{FileOutcome, OpenAction, OpenError, ServiceError};
use support::{Case, Failure, Want, World, check, done, message, shared, strings, ty};

/// ann has submitted `//depot/a` and `//depot/main/m`, and `//depot/gone` deleted at head.
fn history(w: &World) {
    w.seed(&w.ann, &["//depot/a", "//depot/main/m", "//depot/gone"]);
    w.delete(&w.ann, &["//depot/gone"])
        .expect("opened for delete");
    w.submit(&w.ann, 0).expect("delete submitted");
}

/// `history`, and bob has synced it all.
fn synced(w: &World) {
    history(w);
    w.sync(&w.bob, &[]).expect("bob synced");
}

#[test]
fn open_rules() {
    check(&[
        Case {
            name: "add of a new file",
            setup: |_| {},
            act: |w| done(w.add(&w.ann, &["//depot/new"])),
            want: Want::Ok,
        },
        Case {
            name: "add in workspace syntax",
            setup: |_| {},
            act: |w| {
                let got = w.add(&w.ann, &["//ann-ws/sub/file.c"])?;
                assert_eq!(got[0].depot_file, "//depot/sub/file.c");
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "add of an existing file is refused",
            setup: history,
            act: |w| done(w.add(&w.bob, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::AddExisting { path, head_rev: 1 }) if path == "//depot/a"),
            ),
        },
        Case {
            name: "add of a file deleted at head re-adds it",
            setup: history,
            act: |w| {
                w.add(&w.bob, &["//depot/gone"])?;
                let got = w.submit(&w.bob, 0)?;
                assert_eq!(
                    (
                        w.submitted(&got)[0].head_rev,
                        w.submitted(&got)[0].action.map_or("", |a| a.as_str())
                    ),
                    (3, "add")
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "add of a wildcard is refused",
            setup: |_| {},
            act: |w| done(w.add(&w.ann, &["//depot/..."])),
            want: Want::Refused(|f| {
                matches!(f, Failure::Open(OpenError::AddNeedsFiles { arg }) if arg == "//depot/...")
                    && message(f)
                        == "//depot/... - add needs files, not wildcards or unmapped paths"
            }),
        },
        Case {
            name: "add outside the workspace view is refused",
            setup: |_| {},
            act: |w| done(w.add(&w.cat, &["//depot/other/x"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NotInView { path }) if path == "//depot/other/x"),
            ),
        },
        Case {
            name: "add into an unknown depot is refused",
            setup: |_| {},
            act: |w| done(w.add(&w.ann, &["//nodepot/x"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::UnknownRoot { name, .. }) if name == "nodepot"),
            ),
        },
        Case {
            name: "the same add twice reports it as already opened",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("first add");
            },
            act: |w| {
                let got = w.add(&w.ann, &["//depot/x"])?;
                assert_eq!(
                    (got[0].action.map_or("", |a| a.as_str()), got[0].outcome),
                    ("add", Some(FileOutcome::AlreadyOpened))
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "an add of new files beside nothing open opens them all",
            setup: history,
            act: |w| {
                let got = w.add(&w.bob, &["//depot/n/2", "//depot/n/1", "//depot/o"])?;
                let outcomes: Vec<_> = got.iter().map(|f| f.outcome).collect();
                assert_eq!(outcomes, [Some(FileOutcome::Opened); 3]);
                let opened: Vec<String> = w.opened(&w.bob).into_iter().map(|o| o.0).collect();
                assert_eq!(opened, ["//depot/n/1", "//depot/n/2", "//depot/o"]);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "an add of a file already opened for add and a new one opens the new one",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("first add");
            },
            act: |w| {
                let got = w.add(&w.ann, &["//depot/x", "//depot/y"])?;
                let outcomes: Vec<_> = got.iter().map(|f| f.outcome).collect();
                assert_eq!(
                    outcomes,
                    [Some(FileOutcome::AlreadyOpened), Some(FileOutcome::Opened)]
                );
                assert_eq!(w.opened(&w.ann).len(), 2);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "an add colliding with another workspace's exclusive add opens nothing",
            setup: |w| {
                w.open_as(&w.ann, OpenAction::Add, 0, "+l", &["//depot/n/1"])
                    .expect("locked add");
            },
            act: |w| {
                let refused = w.add(&w.bob, &["//depot/n/0", "//depot/n/1"]);
                assert!(w.opened(&w.bob).is_empty(), "bob opened nothing");
                done(refused)
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ExclusivelyOpened { path, .. }) if path == "//depot/n/1"),
            ),
        },
        Case {
            name: "edit of a synced file",
            setup: synced,
            act: |w| done(w.edit(&w.bob, &["//depot/a"])),
            want: Want::Ok,
        },
        Case {
            name: "edit of a file deleted at head is refused",
            setup: synced,
            act: |w| done(w.edit(&w.bob, &["//depot/gone"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NothingToOpen { patterns, action: FileAction::Edit }) if patterns == "//depot/gone"),
            ),
        },
        Case {
            name: "edit of a file the workspace does not have is refused",
            setup: history,
            act: |w| done(w.edit(&w.bob, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NotOnClient { path }) if path == "//depot/a"),
            ),
        },
        Case {
            name: "edit of a file that never existed is refused",
            setup: synced,
            act: |w| done(w.edit(&w.bob, &["//depot/nothing"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NoSuchFiles { pattern }) if pattern == "//depot/nothing"),
            ),
        },
        Case {
            name: "edit outside the workspace view is refused",
            setup: |w| {
                history(w);
                w.sync(&w.cat, &[]).expect("cat synced");
            },
            act: |w| done(w.edit(&w.cat, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NothingToOpen { patterns, action: FileAction::Edit }) if patterns == "//depot/a"),
            ),
        },
        Case {
            name: "edit of a file opened for delete is refused",
            setup: |w| {
                synced(w);
                w.delete(&w.bob, &["//depot/a"]).expect("opened for delete");
            },
            act: |w| done(w.edit(&w.bob, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::AlreadyOpened { path, wanted: FileAction::Edit, current: FileAction::Delete }) if path == "//depot/a"),
            ),
        },
        Case {
            name: "edit of a file another workspace holds +l is refused with the holder",
            setup: |w| {
                synced(w);
                w.open_as(&w.ann, OpenAction::Edit, 0, "+l", &["//depot/a"])
                    .expect("ann locks");
            },
            act: |w| done(w.edit(&w.bob, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ExclusivelyOpened { path, user, workspace }) if path == "//depot/a" && user == "ann" && workspace == "ann-ws"),
            ),
        },
        Case {
            name: "+l open of a file another workspace has open is refused",
            setup: |w| {
                synced(w);
                w.edit(&w.ann, &["//depot/a"]).expect("ann edits");
            },
            act: |w| done(w.open_as(&w.bob, OpenAction::Edit, 0, "+l", &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ExclusivelyOpened { path, user, workspace }) if path == "//depot/a" && user == "ann" && workspace == "ann-ws"),
            ),
        },
        Case {
            name: "+l open by the holder's own workspace again is fine",
            setup: |w| {
                synced(w);
                w.open_as(&w.ann, OpenAction::Edit, 0, "+l", &["//depot/a"])
                    .expect("ann locks");
            },
            act: |w| done(w.open_as(&w.ann, OpenAction::Edit, 0, "+l", &["//depot/a"])),
            want: Want::Ok,
        },
        Case {
            name: "a refused file rolls back the whole open",
            setup: |w| {
                synced(w);
                w.open_as(&w.ann, OpenAction::Edit, 0, "+l", &["//depot/a"])
                    .expect("ann locks");
            },
            act: |w| {
                let err = w.edit(&w.bob, &["//depot/main/m", "//depot/a"]);
                assert!(w.opened(&w.bob).is_empty(), "nothing half-opened");
                done(err)
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ExclusivelyOpened { path, user, workspace }) if path == "//depot/a" && user == "ann" && workspace == "ann-ws"),
            ),
        },
        Case {
            name: "delete of a synced file",
            setup: synced,
            act: |w| done(w.delete(&w.bob, &["//depot/..."])),
            want: Want::Ok,
        },
        Case {
            name: "delete outside the workspace view finds nothing",
            setup: |w| {
                history(w);
                w.sync(&w.cat, &[]).expect("cat synced");
            },
            act: |w| done(w.delete(&w.cat, &["//depot/a"])),
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NothingToOpen { patterns, action: FileAction::Delete }) if patterns == "//depot/a"),
            ),
        },
        Case {
            name: "open into a change that does not exist is refused",
            setup: |_| {},
            act: |w| done(w.open_as(&w.ann, OpenAction::Add, 99, "", &["//depot/x"])),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoSuchChange {
                        change: ChangeNumber(99)
                    })
                )
            }),
        },
        Case {
            name: "open into a submitted change is refused",
            setup: history,
            act: |w| done(w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::ChangeSubmitted {
                        change: ChangeNumber(1)
                    })
                )
            }),
        },
        Case {
            name: "open into another workspace's change is refused",
            setup: |w| {
                w.new_change(&w.ann);
            },
            act: |w| done(w.open_as(&w.bob, OpenAction::Add, 1, "", &["//depot/x"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ChangeOfOtherWorkspace { change: ChangeNumber(1), owner, workspace }) if owner == "ann-ws" && workspace == "bob-ws"),
            ),
        },
        Case {
            name: "open without a workspace is refused",
            setup: |_| {},
            act: |w| {
                let nobody = support::caller("dan");
                done(w.add(&nobody, &["//depot/x"]))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NoSuchWorkspace { name }) if name == "dan-ws"),
            ),
        },
    ]);
}

#[test]
fn move_rules() {
    check(&[
        Case {
            name: "move of a file opened for edit",
            setup: |w| {
                synced(w);
                w.edit(&w.bob, &["//depot/a"]).expect("edit");
            },
            act: |w| {
                w.service
                    .move_file(&w.bob, "//depot/a", "//depot/b", ChangeRef::Default)?;
                let actions: Vec<(String, String)> = w
                    .opened(&w.bob)
                    .into_iter()
                    .map(|(p, a, _)| (p, a))
                    .collect();
                assert_eq!(
                    actions,
                    [
                        ("//depot/a".to_string(), "move/delete".to_string()),
                        ("//depot/b".to_string(), "move/add".to_string())
                    ]
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "move of a file not opened is refused",
            setup: synced,
            act: |w| {
                done(
                    w.service
                        .move_file(&w.bob, "//depot/a", "//depot/b", ChangeRef::Default),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::MoveNotOpened { path }) if path == "//depot/a"),
            ),
        },
        Case {
            name: "move out of the view is refused",
            setup: |w| {
                history(w);
                w.sync(&w.cat, &[]).expect("cat synced");
                w.edit(&w.cat, &["//depot/main/m"]).expect("edit");
            },
            act: |w| {
                done(
                    w.service
                        .move_file(&w.cat, "//depot/main/m", "//depot/x", ChangeRef::Default),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Open(OpenError::NotInView { path }) if path == "//depot/x"),
            ),
        },
    ]);
}

#[test]
fn revert_rules() {
    check(&[
        Case {
            name: "revert of an add abandons it",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let got = w
                    .service
                    .revert(&w.ann, &strings(&["//depot/x"]), false, &[])?;
                assert_eq!(
                    (got[0].action.map_or("", |a| a.as_str()), got[0].outcome),
                    ("add", Some(FileOutcome::Reverted))
                );
                assert!(w.opened(&w.ann).is_empty());
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "revert of an edit names the have revision to restore",
            setup: |w| {
                synced(w);
                w.edit(&w.bob, &["//depot/a"]).expect("edit");
            },
            act: |w| {
                let got = w
                    .service
                    .revert(&w.bob, &strings(&["//depot/a"]), false, &[])?;
                assert_eq!(
                    (
                        got[0].have_rev,
                        got[0].action.map_or("", |a| a.as_str()),
                        got[0].outcome
                    ),
                    (1, "edit", Some(FileOutcome::Reverted))
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "revert of a file not opened is refused",
            setup: synced,
            act: |w| {
                done(
                    w.service
                        .revert(&w.bob, &strings(&["//depot/a"]), false, &[]),
                )
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NotOpened { patterns }) if patterns == "//depot/a"),
            ),
        },
        Case {
            name: "revert of one half of a move reverts the pair",
            setup: |w| {
                synced(w);
                w.edit(&w.bob, &["//depot/a"]).expect("edit");
                w.service
                    .move_file(&w.bob, "//depot/a", "//depot/b", ChangeRef::Default)
                    .expect("move");
            },
            act: |w| {
                let got = w
                    .service
                    .revert(&w.bob, &strings(&["//depot/b"]), false, &[])?;
                assert_eq!(got.len(), 2);
                assert!(w.opened(&w.bob).is_empty());
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "revert -a reverts only the unchanged edits it is given",
            setup: |w| {
                synced(w);
                w.edit(&w.bob, &["//depot/a", "//depot/main/m"])
                    .expect("edit");
                w.add(&w.bob, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let unchanged = strings(&["//depot/a", "//depot/x"]);
                w.service.revert(&w.bob, &[], true, &unchanged)?;
                let left: Vec<String> = w.opened(&w.bob).into_iter().map(|o| o.0).collect();
                assert_eq!(left, ["//depot/main/m", "//depot/x"]);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "revert releases an exclusive lock",
            setup: |w| {
                synced(w);
                w.open_as(&w.ann, OpenAction::Edit, 0, "+l", &["//depot/a"])
                    .expect("lock");
                w.service
                    .revert(&w.ann, &strings(&["//depot/a"]), false, &[])
                    .expect("revert");
            },
            act: |w| done(w.edit(&w.bob, &["//depot/a"])),
            want: Want::Ok,
        },
    ]);
}

#[test]
fn reopen_rules() {
    check(&[
        Case {
            name: "reopen into a numbered pending change",
            setup: |w| {
                w.new_change(&w.ann);
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                w.service.reopen(
                    &w.ann,
                    &strings(&["//depot/x"]),
                    Some(ChangeRef::from_number(1)),
                    None,
                )?;
                assert_eq!(w.opened(&w.ann)[0].2, 1);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "reopen into a submitted change is refused",
            setup: |w| {
                history(w);
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                done(w.service.reopen(
                    &w.ann,
                    &strings(&["//depot/x"]),
                    Some(ChangeRef::from_number(1)),
                    None,
                ))
            },
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::ChangeSubmitted {
                        change: ChangeNumber(1)
                    })
                )
            }),
        },
        Case {
            name: "reopen of a file not opened is refused",
            setup: |_| {},
            act: |w| {
                done(
                    w.service
                        .reopen(&w.ann, &strings(&["//depot/x"]), None, ty("+x")),
                )
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NotOpened { patterns }) if patterns == "//depot/x"),
            ),
        },
        Case {
            name: "reopen +l while another workspace has the file open is refused",
            setup: |w| {
                synced(w);
                w.edit(&w.ann, &["//depot/a"]).expect("ann edits");
                w.edit(&w.bob, &["//depot/a"]).expect("bob edits");
            },
            act: |w| {
                done(
                    w.service
                        .reopen(&w.bob, &strings(&["//depot/a"]), None, ty("+l")),
                )
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ExclusivelyOpened { path, user, workspace }) if path == "//depot/a" && user == "ann" && workspace == "ann-ws"),
            ),
        },
        Case {
            name: "reopen with a new type keeps the action",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let got = w
                    .service
                    .reopen(&w.ann, &strings(&["//depot/x"]), None, ty("binary"))?;
                assert_eq!(
                    (got[0].file_type.map(|t| t.to_string()), got[0].action),
                    (Some("binary".to_string()), Some(FileAction::Add))
                );
                Ok(())
            },
            want: Want::Ok,
        },
    ]);
}

// p4submit
#[test]
fn open_preview_refuses_as_open_and_opens_nothing() {
    use keel_service::OpenRequest;
    let request = |files: &[&str]| OpenRequest {
        files: strings(files),
        ..OpenRequest::default()
    };
    let w = World::new();
    synced(&w);
    // What edit would open, named as edit names it; nothing is opened.
    let got = w
        .service
        .open_preview(&w.bob, OpenAction::Edit, request(&["//depot/a"]))
        .expect("previewed");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].depot_file, "//depot/a");
    assert_eq!(got[0].action, Some(FileAction::Edit));
    assert_eq!(got[0].outcome, Some(FileOutcome::Opened));
    let added = w
        .service
        .open_preview(&w.bob, OpenAction::Add, request(&["//depot/new"]))
        .expect("previewed");
    assert_eq!(added[0].action, Some(FileAction::Add));
    assert!(w.opened(&w.bob).is_empty(), "a preview opens nothing");
    // The refusals are open's own.
    let refused = w
        .service
        .open_preview(&w.bob, OpenAction::Add, request(&["//depot/a"]))
        .expect_err("refused");
    assert!(
        matches!(refused, OpenError::AddExisting { ref path, head_rev: 1 } if path == "//depot/a"),
        "{refused:?}"
    );
    let refused = w
        .service
        .open_preview(&w.bob, OpenAction::Edit, request(&["//depot/none"]))
        .expect_err("refused");
    assert!(
        matches!(refused, OpenError::NoSuchFiles { .. }),
        "{refused:?}"
    );
}
