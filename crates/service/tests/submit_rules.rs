//! Table tests of the rules of submit: what is refused, and what a default or numbered
//! change commits.

mod support;

use keel_blob::BlobStore;
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
            name: "a branch submits with deletes, a move and a re-sent lazy copy in one change",
            setup: |w| {
                w.seed(
                    &w.ann,
                    &["//depot/main/a", "//depot/main/b", "//depot/main/c"],
                );
                let branch = IntegrateRequest {
                    from: "//depot/main/...".into(),
                    to: "//depot/rel/...".into(),
                    ..IntegrateRequest::default()
                };
                w.integrate(&w.ann, IntegrateMode::Integrate, branch)
                    .expect("branch");
                w.delete(&w.ann, &["//depot/main/c"]).expect("delete");
                w.edit(&w.ann, &["//depot/main/b"]).expect("edit");
                w.service
                    .move_file(
                        &w.ann,
                        "//depot/main/b",
                        "//depot/main/b2",
                        ChangeRef::Default,
                    )
                    .expect("move");
            },
            act: |w| {
                // The client sends new content for one branched file (a lazy copy).
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "mixed")?;
                let bytes = b"changed in the workspace\n";
                let mut probe = w.blobs.writer().expect("writer");
                probe.write(bytes).expect("write");
                let digest = probe.finish().expect("finish").info.digest;
                let expected: Vec<String> = s.uploads().expected().map(str::to_string).collect();
                assert_eq!(expected, ["//depot/main/b2"], "only the edited, moved file");
                for path in ["//depot/rel/a", "//depot/main/b2"] {
                    s.uploads().begin_file(&w.service, path)?;
                    s.uploads().write_chunk(&w.service, bytes)?;
                    s.uploads()
                        .end_file(&w.service, &digest.to_hex(), bytes.len() as u64)?;
                }
                let got = s.commit(&w.service)?;
                assert_eq!(w.submitted(&got).len(), 6);
                assert!(w.opened(&w.ann).is_empty(), "every open record submitted");
                let log = |path: &str| {
                    let mut files = Vec::new();
                    w.service
                        .filelog(&w.ann, &[path.to_string()], 1, false, &mut |f| {
                            files.push(f);
                            Ok(())
                        })
                        .expect("filelog");
                    files.remove(0)
                };
                let head = |path: &str| {
                    let f = log(path);
                    let edges: Vec<(String, u32, u32, &str)> = f
                        .integrations
                        .iter()
                        .filter(|e| e.to_path == path)
                        .map(|e| {
                            (
                                e.from_path.clone(),
                                e.from_start,
                                e.from_end,
                                e.how.as_str(),
                            )
                        })
                        .collect();
                    (f.head_rev, f.head_action.map_or("", |a| a.as_str()), edges)
                };
                let from = |p: &str, end, how| vec![(p.to_string(), 0, end, how)];
                assert_eq!(
                    head("//depot/rel/a"),
                    (1, "branch", from("//depot/main/a", 1, "edit from"))
                );
                assert_eq!(
                    head("//depot/rel/b"),
                    (1, "branch", from("//depot/main/b", 1, "branch from"))
                );
                assert_eq!(head("//depot/main/c"), (2, "delete", vec![]));
                assert_eq!(head("//depot/main/b"), (2, "move/delete", vec![]));
                assert_eq!(
                    head("//depot/main/b2"),
                    (1, "move/add", from("//depot/main/b", 1, "moved from"))
                );
                assert_eq!(log("//depot/rel/a").head_digest, Some(digest));
                // The branched file keeps the content its source was seeded with.
                let mut seeded = w.blobs.writer().expect("writer");
                seeded.write(b"content //depot/main/b\n").expect("write");
                let seeded = seeded.finish().expect("finish").info.digest;
                assert_eq!(log("//depot/rel/b").head_digest, Some(seeded));
                assert!(log("//depot/main/c").head_digest.is_none());
                Ok(())
            },
            want: Want::Ok,
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
                up.write_chunk(&w.service, b"abc")?;
                // A small file is checked on a hashing thread: the refusal comes at the latest
                // from the commit, before anything is written.
                up.end_file(&w.service, &"0".repeat(64), 3)?;
                done(s.commit(&w.service))
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
