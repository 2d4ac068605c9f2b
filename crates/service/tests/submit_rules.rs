//! Table tests of the rules of submit: what is refused, and what a default or numbered
//! change commits.

mod support;

use keel_core::{ChangeNumber, ChangeRef, FileAction};
use keel_service::{
    IntegrateMode, IntegrateRequest, OpenAction, ServiceError, SubmitError, UploadError,
};
use support::{Case, Failure, Want, World, check, done, shared};

/// ann has submitted `//depot/a` (change 1) and bob has synced it.
fn history(w: &World) {
    w.seed(&w.ann, &["//depot/a"]);
    w.sync(&w.bob, &[]).expect("bob synced");
}

#[test]
fn submit_rules() {
    check(&[
        Case {
            name: "an empty default changelist is refused",
            setup: |_| {},
            act: |w| done(w.submit(&w.ann, 0)),
            want: Want::Refused(|f| {
                matches!(
                    f,
                    Failure::Submit(SubmitError::NothingToSubmit { change: None })
                )
            }),
        },
        Case {
            name: "an empty numbered change is refused",
            setup: |w| {
                w.new_change(&w.ann);
            },
            act: |w| done(w.submit(&w.ann, 1)),
            want: Want::Refused(|f| {
                matches!(
                    f,
                    Failure::Submit(SubmitError::NothingToSubmit {
                        change: Some(ChangeNumber(1))
                    })
                )
            }),
        },
        Case {
            name: "a submit without a description is refused",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| done(w.service.submit_begin(&w.ann, ChangeRef::Default, "  ")),
            want: Want::Refused(|f| matches!(f, Failure::Submit(SubmitError::NoDescription))),
        },
        Case {
            name: "a numbered change's own description is used",
            setup: |w| {
                w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])
                    .expect("add");
            },
            act: |w| {
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::from_number(1), "")?;
                let path = s.uploads().expected().next().map(str::to_string);
                assert_eq!(path.as_deref(), Some("//depot/x"));
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "the default changelist submits only its own files",
            setup: |w| {
                w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/numbered"])
                    .expect("add numbered");
                w.add(&w.ann, &["//depot/default"]).expect("add default");
            },
            act: |w| {
                let got = w.submit(&w.ann, 0)?;
                assert_eq!(
                    got.change,
                    ChangeNumber(2),
                    "a new number after pending change 1"
                );
                assert_eq!(w.submitted(&got).len(), 1);
                assert_eq!(w.submitted(&got)[0].depot_file, "//depot/default");
                assert_eq!(
                    w.opened(&w.ann),
                    [("//depot/numbered".into(), "add".into(), 1)]
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "the newest pending change keeps its number",
            setup: |w| {
                w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])
                    .expect("add");
            },
            act: |w| {
                let got = w.submit(&w.ann, 1)?;
                assert_eq!((got.change, got.renamed_from), (ChangeNumber(1), None));
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "an older pending change is renumbered on submit",
            setup: |w| {
                w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])
                    .expect("add");
                w.seed(&w.bob, &["//depot/y"]);
            },
            act: |w| {
                let got = w.submit(&w.ann, 1)?;
                assert_eq!(
                    (got.change, got.renamed_from),
                    (ChangeNumber(3), Some(ChangeNumber(1)))
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "a change of another workspace is refused",
            setup: |w| {
                w.new_change(&w.ann);
            },
            act: |w| done(w.submit(&w.bob, 1)),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ChangeOfOtherWorkspace { change: ChangeNumber(1), owner, workspace }) if owner == "ann-ws" && workspace == "bob-ws"),
            ),
        },
        Case {
            name: "a submitted change is refused",
            setup: history,
            act: |w| done(w.submit(&w.ann, 1)),
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
            name: "a change with shelved files is refused",
            setup: |w| {
                w.new_change(&w.ann);
                w.open_as(&w.ann, OpenAction::Add, 1, "", &["//depot/x"])
                    .expect("add");
                w.shelve(&w.ann, 1).expect("shelved");
            },
            act: |w| done(w.submit(&w.ann, 1)),
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
            name: "a file with an unresolved integration is refused",
            setup: |w| {
                w.seed(&w.ann, &["//depot/main/f"]);
                let branch = IntegrateRequest {
                    from: "//depot/main/...".into(),
                    to: "//depot/rel/...".into(),
                    ..IntegrateRequest::default()
                };
                w.integrate(&w.ann, IntegrateMode::Integrate, branch.clone())
                    .expect("branch");
                w.submit(&w.ann, 0).expect("branch submitted");
                w.bump(&w.ann, &["//depot/main/f"]);
                w.integrate(&w.ann, IntegrateMode::Integrate, branch)
                    .expect("integrate");
            },
            act: |w| done(w.submit(&w.ann, 0)),
            want: Want::Refused(
                |f| matches!(f, Failure::Submit(SubmitError::MustResolve { path }) if path == "//depot/rel/f"),
            ),
        },
        Case {
            name: "an edit of an out-of-date revision is refused",
            setup: |w| {
                history(w);
                w.edit(&w.bob, &["//depot/a"]).expect("bob edits #1");
                w.bump(&w.ann, &["//depot/a"]);
            },
            act: |w| done(w.submit(&w.bob, 0)),
            want: Want::Refused(
                |f| matches!(f, Failure::Submit(SubmitError::OutOfDate { path, head_rev: 2, opened_at: 1 }) if path == "//depot/a"),
            ),
        },
        Case {
            name: "an add that someone else submitted first is refused",
            setup: |w| {
                w.add(&w.bob, &["//depot/x"]).expect("bob adds");
                w.seed(&w.ann, &["//depot/x"]);
            },
            act: |w| done(w.submit(&w.bob, 0)),
            want: Want::Refused(
                |f| matches!(f, Failure::Submit(SubmitError::OutOfDate { path, head_rev: 1, opened_at: 0 }) if path == "//depot/x"),
            ),
        },
        Case {
            name: "a delete leaves a deleted head without content",
            setup: |w| {
                history(w);
                w.delete(&w.bob, &["//depot/a"]).expect("delete");
            },
            act: |w| {
                let got = w.submit(&w.bob, 0)?;
                let f = &w.submitted(&got)[0];
                assert_eq!(
                    (f.head_rev, f.action.map_or("", |a| a.as_str()), f.have_rev),
                    (2, "delete", 0)
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "content missing from the upload is refused",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "no upload")?;
                done(s.commit(&w.service))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::Upload(UploadError::Missing { path })) if path == "//depot/x"),
            ),
        },
        Case {
            name: "content whose digest does not match is refused",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "damaged")?;
                let up = s.uploads();
                up.begin_file(&w.service, "//depot/x")?;
                up.write_chunk(b"abc")?;
                done(up.end_file(&w.service, &"0".repeat(64), 3))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::Upload(UploadError::Damaged { path, sent_size: 3, got_size: 3, .. })) if path == "//depot/x"),
            ),
        },
        Case {
            name: "content for a file opened for delete is refused",
            setup: |w| {
                history(w);
                w.delete(&w.bob, &["//depot/a"]).expect("delete");
            },
            act: |w| {
                let mut s = w
                    .service
                    .submit_begin(&w.bob, ChangeRef::Default, "content")?;
                done(s.uploads().begin_file(&w.service, "//depot/a"))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::Upload(UploadError::TakesNoContent { path, action: FileAction::Delete })) if path == "//depot/a"),
            ),
        },
        Case {
            name: "content for a file not in the change is refused",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "content")?;
                done(s.uploads().begin_file(&w.service, "//depot/other"))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::Upload(UploadError::NotInChange { path })) if path == "//depot/other"),
            ),
        },
        Case {
            name: "content for a text that is no depot path is refused as not in the change",
            setup: |w| {
                w.add(&w.ann, &["//depot/x"]).expect("add");
            },
            act: |w| {
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "content")?;
                done(s.uploads().begin_file(&w.service, "//depot/x/../y"))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::Upload(UploadError::NotInChange { path })) if path == "//depot/x/../y"),
            ),
        },
    ]);
}
