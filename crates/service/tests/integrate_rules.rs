//! Table tests of integrate/copy and resolve: which source revisions are pending, what is
//! opened how, and what resolve accepts.

mod support;

use keel_core::{ChangeNumber, ChangeRef, IntegHow};
use keel_service::{IntegrateError, IntegrateMode, IntegrateRequest, ResolveOutcome, ServiceError};
use support::{Case, Failure, Want, World, check, done, shared, strings};

fn main_to_rel() -> IntegrateRequest {
    IntegrateRequest {
        from: "//depot/main/...".into(),
        to: "//depot/rel/...".into(),
        ..IntegrateRequest::default()
    }
}

fn integrate(w: &World) -> Result<Vec<keel_service::FileInfo>, IntegrateError> {
    w.integrate(&w.ann, IntegrateMode::Integrate, main_to_rel())
}

/// main/f and main/g submitted (change 1).
fn sources(w: &World) {
    w.seed(&w.ann, &["//depot/main/f", "//depot/main/g"]);
}

/// `sources` branched to rel and submitted (change 2), then main/f edited (change 3).
fn branched_then_edited(w: &World) {
    sources(w);
    integrate(w).expect("branch");
    w.submit(&w.ann, 0).expect("branch submitted");
    w.bump(&w.ann, &["//depot/main/f"]);
}

/// `branched_then_edited`, integrated again: rel/f waits for a resolve.
fn pending_resolve(w: &World) {
    branched_then_edited(w);
    integrate(w).expect("integrate");
}

fn resolve(w: &World, outcome: ResolveOutcome) -> Result<(), support::Failure> {
    done(w.service.resolve_done(&w.ann, "//depot/rel/f", outcome))
}

#[test]
fn integrate_rules() {
    check(&[
        Case {
            name: "new targets are opened for branch with the source's content",
            setup: sources,
            act: |w| {
                let got = integrate(w)?;
                let actions: Vec<&str> = got
                    .iter()
                    .map(|f| f.action.map_or("", |a| a.as_str()))
                    .collect();
                assert_eq!(actions, ["branch", "branch"]);
                let mut s = w
                    .service
                    .submit_begin(&w.ann, ChangeRef::Default, "branch")?;
                assert_eq!(
                    s.uploads().expected().count(),
                    0,
                    "lazy copies upload nothing"
                );
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "preview opens nothing",
            setup: sources,
            act: |w| {
                let req = IntegrateRequest {
                    preview: true,
                    ..main_to_rel()
                };
                let got = w.integrate(&w.ann, IntegrateMode::Integrate, req)?;
                assert_eq!(got.len(), 2);
                assert!(w.opened(&w.ann).is_empty());
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "already integrated revisions are not offered again",
            setup: |w| {
                sources(w);
                integrate(w).expect("branch");
                w.submit(&w.ann, 0).expect("branch submitted");
            },
            act: |w| done(integrate(w)),
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::AlreadyIntegrated { from, files: 2 }) if from == "//depot/main/..."),
            ),
        },
        Case {
            name: "only the source with new revisions is offered, opened for integrate",
            setup: branched_then_edited,
            act: |w| {
                let got = integrate(w)?;
                let got: Vec<(&str, &str)> = got
                    .iter()
                    .map(|f| (f.depot_file.as_str(), f.action.map_or("", |a| a.as_str())))
                    .collect();
                assert_eq!(got, [("//depot/rel/f", "integrate")]);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "a source that does not exist is refused",
            setup: sources,
            act: |w| {
                let req = IntegrateRequest {
                    from: "//depot/none/...".into(),
                    ..main_to_rel()
                };
                done(w.integrate(&w.ann, IntegrateMode::Integrate, req))
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::NoSuchFiles { from }) if from == "//depot/none/..."),
            ),
        },
        Case {
            name: "integrating into a submitted change is refused",
            setup: sources,
            act: |w| {
                let req = IntegrateRequest {
                    change: 1,
                    ..main_to_rel()
                };
                done(w.integrate(&w.ann, IntegrateMode::Integrate, req))
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
            name: "a source revision bound selects older revisions",
            setup: branched_then_edited,
            act: |w| {
                let req = IntegrateRequest {
                    from: "//depot/main/...@2".into(),
                    ..main_to_rel()
                };
                done(w.integrate(&w.ann, IntegrateMode::Integrate, req))
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::AlreadyIntegrated { from, files: 2 }) if from == "//depot/main/...@2"),
            ),
        },
        Case {
            name: "copy opens the changed target already resolved",
            setup: branched_then_edited,
            act: |w| {
                w.integrate(&w.ann, IntegrateMode::Copy, main_to_rel())?;
                let got = w.service.resolve_list(&w.ann, &[]);
                assert!(
                    matches!(got, Err(IntegrateError::NothingToResolve { .. })),
                    "{got:?}"
                );
                assert_eq!(w.service.resolved(&w.ann, &[])?.len(), 1);
                done(w.submit(&w.ann, 0))
            },
            want: Want::Ok,
        },
        Case {
            name: "a source the mapping sends to no valid depot path is refused and nothing opens",
            setup: sources,
            act: |w| {
                // `...` matches the empty text, so //depot/main/f maps to //depot/rel/.
                let req = IntegrateRequest {
                    from: "//depot/main/f...".into(),
                    to: "//depot/rel/...".into(),
                    ..IntegrateRequest::default()
                };
                let got = w.integrate(&w.ann, IntegrateMode::Integrate, req);
                assert!(w.opened(&w.ann).is_empty(), "nothing is opened");
                done(got)
            },
            want: Want::Refused(|f| {
                matches!(f, Failure::Integrate(IntegrateError::BadTarget { from, target, .. }) if from == "//depot/main/f" && target == "//depot/rel/")
                    && support::message(f)
                        == "invalid depot path \"//depot/rel/\": empty path segment"
            }),
        },
        Case {
            name: "a deleted source opens the target for delete",
            setup: |w| {
                sources(w);
                integrate(w).expect("branch");
                w.submit(&w.ann, 0).expect("branch submitted");
                w.delete(&w.ann, &["//depot/main/g"]).expect("delete");
                w.submit(&w.ann, 0).expect("delete submitted");
            },
            act: |w| {
                let got = integrate(w)?;
                let got: Vec<(&str, &str)> = got
                    .iter()
                    .map(|f| (f.depot_file.as_str(), f.action.map_or("", |a| a.as_str())))
                    .collect();
                assert_eq!(got, [("//depot/rel/g", "delete")]);
                Ok(())
            },
            want: Want::Ok,
        },
    ]);
}

#[test]
fn resolve_rules() {
    check(&[
        Case {
            name: "the pending resolve lists theirs and its base",
            setup: pending_resolve,
            act: |w| {
                let got = w.service.resolve_list(&w.ann, &[])?;
                assert_eq!(got.len(), 1);
                assert_eq!(
                    (got[0].depot_file.as_str(), got[0].head_rev),
                    ("//depot/rel/f", 2)
                );
                assert!(got[0].base_digest.is_some(), "main/f#1 is the base");
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "nothing to resolve is reported as such",
            setup: branched_then_edited,
            act: |w| done(w.service.resolve_list(&w.ann, &[])),
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::NothingToResolve { patterns }) if patterns.is_empty()),
            ),
        },
        Case {
            name: "resolving a file that needs none is refused",
            setup: branched_then_edited,
            act: |w| resolve(w, ResolveOutcome::Merged),
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::NothingToResolve { patterns }) if patterns == "//depot/rel/f"),
            ),
        },
        Case {
            name: "a file can be resolved only once",
            setup: |w| {
                pending_resolve(w);
                resolve(w, ResolveOutcome::Merged).expect("first resolve");
            },
            act: |w| resolve(w, ResolveOutcome::Yours),
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::NothingToResolve { patterns }) if patterns == "//depot/rel/f"),
            ),
        },
        Case {
            name: "a resolve naming several files is refused",
            setup: |w| {
                sources(w);
                integrate(w).expect("branch");
                w.submit(&w.ann, 0).expect("branch submitted");
                w.bump(&w.ann, &["//depot/main/f", "//depot/main/g"]);
                integrate(w).expect("integrate");
            },
            act: |w| {
                done(
                    w.service
                        .resolve_done(&w.ann, "//depot/rel/...", ResolveOutcome::Yours),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::Ambiguous { pattern }) if pattern == "//depot/rel/..."),
            ),
        },
        Case {
            name: "accepting theirs needs no upload and records a copy",
            setup: |w| {
                pending_resolve(w);
                resolve(w, ResolveOutcome::Theirs).expect("theirs");
            },
            act: |w| {
                let mut s = w.service.submit_begin(&w.ann, ChangeRef::Default, "copy")?;
                assert_eq!(s.uploads().expected().count(), 0);
                s.commit(&w.service)?;
                let mut hows = Vec::new();
                w.service
                    .integrated(&w.ann, &strings(&["//depot/rel/f"]), &mut |i| {
                        hows.push((i.to_rev, i.how));
                        Ok(())
                    })?;
                assert_eq!(hows, [(2, IntegHow::CopyFrom), (1, IntegHow::BranchFrom)]);
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "a merged resolve is submitted as a merge",
            setup: |w| {
                pending_resolve(w);
                resolve(w, ResolveOutcome::Merged).expect("merged");
            },
            act: |w| {
                w.submit(&w.ann, 0)?;
                let mut hows = Vec::new();
                w.service
                    .integrated(&w.ann, &strings(&["//depot/rel/f"]), &mut |i| {
                        hows.push(i.how);
                        Ok(())
                    })?;
                assert!(hows.contains(&IntegHow::MergeFrom), "{hows:?}");
                Ok(())
            },
            want: Want::Ok,
        },
        Case {
            name: "an ignored revision is not offered again",
            setup: |w| {
                pending_resolve(w);
                resolve(w, ResolveOutcome::Yours).expect("yours");
                w.submit(&w.ann, 0).expect("ignore submitted");
            },
            act: |w| done(integrate(w)),
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::AlreadyIntegrated { from, files: 2 }) if from == "//depot/main/..."),
            ),
        },
        Case {
            name: "reverting an unresolved integration leaves it pending",
            setup: |w| {
                pending_resolve(w);
                w.service
                    .revert(&w.ann, &strings(&["//depot/rel/f"]), false, &[])
                    .expect("revert");
            },
            act: |w| done(integrate(w)),
            want: Want::Ok,
        },
    ]);
}

#[test]
fn mapping_and_history_refusals() {
    check(&[
        Case {
            name: "a one-line view whose sides differ in wildcards is refused with both",
            setup: sources,
            act: |w| {
                let req = IntegrateRequest {
                    to: "//depot/rel/*".into(),
                    ..main_to_rel()
                };
                done(w.integrate(&w.ann, IntegrateMode::Integrate, req))
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::BadMapping { from, to, .. }) if from == "//depot/main/..." && to == "//depot/rel/*"),
            ),
        },
        Case {
            name: "a source the spec parser refuses is a bad argument",
            setup: sources,
            act: |w| {
                let req = IntegrateRequest {
                    from: "//depot/main/...#x".into(),
                    ..main_to_rel()
                };
                done(w.integrate(&w.ann, IntegrateMode::Integrate, req))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::BadArgument { arg, .. }) if arg == "//depot/main/...#x"),
            ),
        },
        Case {
            name: "a pending resolve whose source revision was obliterated is refused",
            setup: |w| {
                pending_resolve(w);
                w.service
                    .obliterate(&w.ann, &strings(&["//depot/main/f"]), true, &mut |_| Ok(()))
                    .expect("source obliterated");
            },
            act: |w| done(w.service.resolve_list(&w.ann, &[])),
            want: Want::Refused(|f| {
                matches!(f, Failure::Integrate(IntegrateError::SourceGone { path, rev: 2 }) if path == "//depot/main/f")
                    && support::message(f) == "//depot/main/f#2 - source revision is gone"
            }),
        },
        Case {
            name: "integrated of a file without integration records is refused",
            setup: sources,
            act: |w| {
                done(
                    w.service
                        .integrated(&w.ann, &strings(&["//depot/main/f"]), &mut |_| Ok(())),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Integrate(IntegrateError::NoIntegrations { arg }) if arg == "//depot/main/f"),
            ),
        },
        Case {
            name: "integrated needs file arguments",
            setup: sources,
            act: |w| done(w.service.integrated(&w.ann, &[], &mut |_| Ok(()))),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoFileArguments {
                        command: Some("integrated")
                    })
                )
            }),
        },
    ]);
}
