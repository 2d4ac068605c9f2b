//! Table tests of the rules of shelve/unshelve, pending change deletion, labels and tag, and
//! obliterate.

mod support;

use keel_core::{ChangeNumber, ChangeRef};
use keel_service::{
    ChangeError, LabelError, LabelSpec, ObliterateError, OpenAction, ServiceError, ShelveError,
    TagOptions,
};
use support::{Case, Failure, Want, World, check, done, message, shared, strings};

/// ann's pending change 1 holds an add of //depot/x and an edit of //depot/main/m (added in
/// change 2, which is submitted first, so 1 is the older pending change).
fn pending(w: &World) {
    w.new_change(&w.ann);
    w.seed(&w.ann, &["//depot/main/m"]);
    w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])
        .expect("add");
    w.open_as(&w.ann, OpenAction::Edit, 1, "", &["//depot/main/m"])
        .expect("edit");
}

/// `pending`, shelved.
fn shelved(w: &World) {
    pending(w);
    w.shelve(&w.ann, 1).expect("shelved");
}

/// A fresh pending change of bob's (change 3, after `shelved`).
fn bob_change(w: &World) -> u64 {
    w.sync(&w.bob, &[]).expect("bob synced");
    w.new_change(&w.bob)
}

#[test]
fn shelve_rules() {
    check(&[
        Case {
            name: "the default changelist cannot be shelved",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| done(w.shelve(&w.ann, 0)),
            want: Want::Refused(|f| matches!(f, Failure::Shelve(ShelveError::DefaultChangelist))),
        },
        Case {
            name: "a change without opened files cannot be shelved",
            setup: |w| {
                w.new_change(&w.ann);
            },
            act: |w| done(w.shelve(&w.ann, 1)),
            want: Want::Refused(
                |f| matches!(f, Failure::Shelve(ShelveError::NothingToShelve { change: ChangeNumber(1), patterns }) if patterns.is_empty()),
            ),
        },
        Case {
            name: "shelving keeps the files open",
            setup: pending,
            act: |w| {
                w.shelve(&w.ann, 1)?;
                assert_eq!(w.opened(&w.ann).len(), 2);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "unshelve opens the shelved actions in another workspace",
            setup: shelved,
            act: |w| {
                let change = bob_change(w);
                w.service
                    .unshelve(&w.bob, ChangeNumber(1), ChangeRef::from_number(change), &[])?;
                let got: Vec<(String, String)> = w
                    .opened(&w.bob)
                    .into_iter()
                    .map(|(p, a, _)| (p, a))
                    .collect();
                assert_eq!(
                    got,
                    [
                        ("//depot/main/m".to_string(), "edit".to_string()),
                        ("//depot/x".to_string(), "add".to_string())
                    ]
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "unshelved files submit without an upload",
            setup: shelved,
            act: |w| {
                let change = bob_change(w);
                w.service
                    .unshelve(&w.bob, ChangeNumber(1), ChangeRef::from_number(change), &[])?;
                let mut s = w.service.submit_begin(
                    &w.bob,
                    ChangeRef::from_number(change),
                    "from the shelf",
                )?;
                assert_eq!(s.uploads().expected().count(), 0);
                done(s.commit(&w.service))
            },
            want: Want::Ok,
        },
        Case {
            name: "unshelve of a change that does not exist is refused",
            setup: shelved,
            act: |w| {
                done(
                    w.service
                        .unshelve(&w.bob, ChangeNumber(42), ChangeRef::Default, &[]),
                )
            },
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoSuchChange {
                        change: ChangeNumber(42)
                    })
                )
            }),
        },
        Case {
            name: "unshelve of a submitted change is refused",
            setup: shelved,
            act: |w| {
                done(
                    w.service
                        .unshelve(&w.bob, ChangeNumber(2), ChangeRef::Default, &[]),
                )
            },
            want: Want::Refused(|f| {
                matches!(
                    f,
                    Failure::Shelve(ShelveError::Submitted {
                        change: ChangeNumber(2)
                    })
                )
            }),
        },
        Case {
            name: "unshelve of a change without a shelf is refused",
            setup: pending,
            act: |w| {
                done(
                    w.service
                        .unshelve(&w.bob, ChangeNumber(1), ChangeRef::Default, &[]),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Shelve(ShelveError::NothingShelved { change: ChangeNumber(1), patterns }) if patterns.is_empty()),
            ),
        },
        Case {
            name: "unshelve of files outside the view is refused",
            setup: shelved,
            act: |w| {
                done(
                    w.service
                        .unshelve(&w.cat, ChangeNumber(1), ChangeRef::Default, &[]),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Shelve(ShelveError::NotInView { path, workspace }) if path == "//depot/x" && workspace == "cat-ws"),
            ),
        },
        Case {
            name: "deleting a shelf needs its change",
            setup: shelved,
            act: |w| done(w.service.delete_shelved(&w.ann, ChangeNumber(0), &[])),
            want: Want::Refused(|f| matches!(f, Failure::Shelve(ShelveError::DefaultChangelist))),
        },
        Case {
            name: "deleting shelved files that are not there is refused",
            setup: pending,
            act: |w| done(w.service.delete_shelved(&w.ann, ChangeNumber(1), &[])),
            want: Want::Refused(
                |f| matches!(f, Failure::Shelve(ShelveError::NothingShelved { change: ChangeNumber(1), patterns }) if patterns.is_empty()),
            ),
        },
        Case {
            name: "after the shelf is deleted the change submits",
            setup: |w| {
                shelved(w);
                w.service
                    .delete_shelved(&w.ann, ChangeNumber(1), &[])
                    .expect("shelf deleted");
            },
            act: |w| done(w.submit(&w.ann, 1)),
            want: Want::Ok,
        },
        Case {
            name: "a change with shelved files cannot be deleted",
            setup: |w| {
                shelved(w);
                w.service
                    .revert(&w.ann, &[], false, &[])
                    .expect("files reverted");
            },
            act: |w| done(w.service.delete_change(&w.ann, ChangeNumber(1))),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::ShelvedFilesExist {
                        change: ChangeNumber(1)
                    })
                )
            }),
        },
        Case {
            name: "a change with opened files cannot be deleted",
            setup: pending,
            act: |w| done(w.service.delete_change(&w.ann, ChangeNumber(1))),
            want: Want::Refused(|f| {
                matches!(
                    f,
                    Failure::Change(ChangeError::FilesOpened {
                        change: ChangeNumber(1)
                    })
                )
            }),
        },
    ]);
}

fn label(name: &str, options: &str, revision: &str) -> LabelSpec {
    LabelSpec {
        name: name.into(),
        owner: "ann".into(),
        options: options.into(),
        revision: revision.into(),
        ..LabelSpec::default()
    }
}

fn tag(w: &World, name: &str, files: &[&str], delete: bool) -> Result<u64, LabelError> {
    let opts = TagOptions {
        delete,
        preview: false,
    };
    w.service
        .tag(&w.ann, name, &strings(files), opts, &mut |_| Ok(()))
}

/// Files a, b submitted; labels `open` (unlocked), `shut` (locked) and `auto` (@1) exist.
fn labels(w: &World) {
    w.seed(&w.ann, &["//depot/a", "//depot/b"]);
    for spec in [
        label("open", "unlocked", ""),
        label("shut", "locked", ""),
        label("auto", "unlocked", "@1"),
    ] {
        w.service
            .save_label(&w.ann, spec, true, false)
            .expect("label saved");
    }
}

#[test]
fn label_rules() {
    check(&[
        Case {
            name: "tag of an unlocked label",
            setup: labels,
            act: |w| {
                assert_eq!(tag(w, "open", &["//depot/..."], false)?, 2);
                assert_eq!(
                    tag(w, "open", &["//depot/..."], false)?,
                    0,
                    "already tagged"
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "tag creates a missing label",
            setup: labels,
            act: |w| {
                tag(w, "fresh", &["//depot/a"], false)?;
                done(w.service.get_label(&w.ann, "fresh"))
            },
            want: Want::Ok,
        },
        Case {
            name: "a locked label refuses tag",
            setup: labels,
            act: |w| done(tag(w, "shut", &["//depot/a"], false)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::Locked { name, owner }) if name == "shut" && owner == "ann")
                    && message(f)
                        == "label 'shut' is locked; its owner ann must set Options: unlocked first"
            }),
        },
        Case {
            name: "a locked label refuses labelsync",
            setup: labels,
            act: |w| {
                done(
                    w.service
                        .labelsync(&w.ann, "shut", &[], false, &mut |_| Ok(())),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Locked { name, .. }) if name == "shut"),
            ),
        },
        Case {
            name: "a locked label cannot be deleted",
            setup: labels,
            act: |w| done(w.service.delete_label(&w.ann, "shut", false)),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Locked { name, .. }) if name == "shut"),
            ),
        },
        Case {
            name: "only the owner may change a locked label",
            setup: labels,
            act: |w| {
                done(
                    w.service
                        .save_label(&w.bob, label("shut", "unlocked", ""), false, false),
                )
            },
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::NotOwner { name, owner }) if name == "shut" && owner == "ann")
                    && message(f)
                        == "label 'shut' belongs to ann; only its owner (or a super user with -f) \
                            can change or delete it"
            }),
        },
        Case {
            name: "only the owner may change or delete an unlocked label",
            setup: labels,
            act: |w| {
                let changed =
                    w.service
                        .save_label(&w.bob, label("open", "unlocked", ""), false, false);
                assert!(
                    matches!(&changed, Err(LabelError::NotOwner { name, owner }) if name == "open" && owner == "ann"),
                    "{changed:?}"
                );
                done(w.service.delete_label(&w.bob, "open", false))
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::NotOwner { name, .. }) if name == "open"),
            ),
        },
        Case {
            name: "a super user changes and deletes a locked label with force",
            setup: labels,
            act: |w| {
                // No protections table: every user is a super user.
                w.service
                    .save_label(&w.bob, label("shut", "locked", ""), false, true)?;
                w.service.delete_label(&w.bob, "shut", true)?;
                done(w.service.delete_label(&w.bob, "open", true))
            },
            want: Want::Ok,
        },
        Case {
            name: "the owner may unlock a locked label",
            setup: labels,
            act: |w| {
                w.service
                    .save_label(&w.ann, label("shut", "unlocked", ""), false, false)?;
                done(tag(w, "shut", &["//depot/a"], false))
            },
            want: Want::Ok,
        },
        Case {
            name: "an automatic label refuses tag",
            setup: labels,
            act: |w| done(tag(w, "auto", &["//depot/a"], false)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::Automatic { name, revision: ChangeNumber(1) }) if name == "auto")
                    && message(f)
                        == "label 'auto' is an automatic label (Revision @1); its files cannot be tagged"
            }),
        },
        Case {
            name: "a label cannot be created twice",
            setup: labels,
            act: |w| {
                done(
                    w.service
                        .save_label(&w.ann, label("open", "unlocked", ""), true, false),
                )
            },
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::Exists { name }) if name == "open")
                    && message(f) == "label 'open' already exists"
            }),
        },
        Case {
            name: "tag needs files",
            setup: labels,
            act: |w| done(tag(w, "open", &[], false)),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoFileArguments {
                        command: Some("tag")
                    })
                ) && message(f) == "tag needs file arguments (try //depot/...)"
            }),
        },
        Case {
            name: "tag -d of a missing label is refused",
            setup: labels,
            act: |w| done(tag(w, "nolabel", &["//depot/a"], true)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::NoSuch { name }) if name == "nolabel")
                    && message(f) == "label 'nolabel' does not exist"
            }),
        },
        Case {
            name: "tag of files that do not exist is refused",
            setup: labels,
            act: |w| done(tag(w, "open", &["//depot/zzz"], false)),
            want: Want::Refused(|f| {
                matches!(shared(f), Some(ServiceError::NoSuchFiles { arg }) if arg == "//depot/zzz")
                    && message(f) == "//depot/zzz - no such file(s)"
            }),
        },
        Case {
            name: "@label selects the tagged revisions",
            setup: |w| {
                labels(w);
                tag(w, "open", &["//depot/a"], false).expect("tagged");
                w.bump(&w.ann, &["//depot/a"]);
            },
            act: |w| {
                let got = w.sync_plan(&w.bob, &["//depot/...@open"])?;
                assert_eq!(got, [("//depot/a".to_string(), 1, "added")]);
                Ok(())
            },
            want: Want::Ok,
        },
    ]);
}

#[test]
fn obliterate_rules() {
    fn obliterate(
        w: &World,
        files: &[&str],
        execute: bool,
    ) -> Result<keel_service::ObliterateTotals, ObliterateError> {
        w.service
            .obliterate(&w.ann, &strings(files), execute, &mut |_| Ok(()))
    }
    check(&[
        Case {
            name: "obliterate needs files",
            setup: labels,
            act: |w| done(obliterate(w, &[], true)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Obliterate(ObliterateError::NoFiles))
                    && message(f) == "obliterate needs file arguments (e.g. //depot/old/...)"
            }),
        },
        Case {
            name: "obliterate of a revision range is refused",
            setup: labels,
            act: |w| done(obliterate(w, &["//depot/a#1"], true)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Obliterate(ObliterateError::RevisionGiven { arg }) if arg == "//depot/a#1")
                    && message(f)
                        == "//depot/a#1 - obliterate removes whole files; revision ranges are not supported"
            }),
        },
        Case {
            name: "a report removes nothing",
            setup: labels,
            act: |w| {
                let totals = obliterate(w, &["//depot/a"], false)?;
                assert_eq!((totals.revisions, totals.executed), (1, false));
                assert_eq!(w.sync_plan(&w.bob, &["//depot/a"])?.len(), 1);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "obliterate removes revisions, label entries and unshared content",
            setup: |w| {
                labels(w);
                tag(w, "open", &["//depot/..."], false).expect("tagged");
            },
            act: |w| {
                let totals = obliterate(w, &["//depot/a"], true)?;
                assert_eq!(
                    (totals.revisions, totals.label_entries, totals.blobs_deleted),
                    (1, 1, 1)
                );
                assert!(w.sync_plan(&w.bob, &["//depot/a"])?.is_empty());
                assert_eq!(w.sync_plan(&w.bob, &["//depot/...@open"])?.len(), 1);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "content a branch still shares is kept",
            setup: |w| {
                w.seed(&w.ann, &["//depot/main/f"]);
                let req = keel_service::IntegrateRequest {
                    from: "//depot/main/...".into(),
                    to: "//depot/rel/...".into(),
                    ..Default::default()
                };
                w.integrate(&w.ann, keel_service::IntegrateMode::Integrate, req)
                    .expect("branch");
                w.submit(&w.ann, 0).expect("branch submitted");
            },
            act: |w| {
                let totals = obliterate(w, &["//depot/main/..."], true)?;
                assert_eq!((totals.revisions, totals.blobs_deleted), (1, 0));
                w.sync(&w.bob, &["//depot/rel/f"])?;
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "obliterate of files that do not exist is refused",
            setup: labels,
            act: |w| done(obliterate(w, &["//depot/zzz/..."], true)),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NoSuchFiles { arg }) if arg == "//depot/zzz/..."),
            ),
        },
    ]);
}
