//! Table tests of the refusals the reading commands share (files, diff2, dirs, opened, print,
//! describe): each is a named `ServiceError` variant carrying the argument or file concerned.

mod support;

use keel_blob::BlobStore;
use keel_core::{ChangeNumber, Digest};
use keel_service::{Caller, DirsOptions, ListOptions, ServiceError};
use support::{Case, Failure, Want, World, check, done, message, shared, strings};

/// `//depot/main/a` and `//depot/main/b` submitted in change 1.
fn history(w: &World) {
    w.seed(&w.ann, &["//depot/main/a", "//depot/main/b"]);
}

fn files(w: &World, args: &[&str]) -> Result<(), Failure> {
    done(
        w.service
            .files(&w.ann, &strings(args), ListOptions::default(), &mut |_| {
                Ok(())
            }),
    )
}

fn print(w: &World, args: &[&str]) -> Result<(), Failure> {
    done(w.service.print(&w.ann, &strings(args), &mut |_, _| Ok(())))
}

fn head_digest(w: &World, path: &str) -> Digest {
    let mut digest = None;
    w.service
        .files(
            &w.ann,
            &strings(&[path]),
            ListOptions::default(),
            &mut |f| {
                digest = f.head_digest;
                Ok(())
            },
        )
        .expect("file listed");
    digest.expect("a live revision has content")
}

#[test]
fn read_refusals() {
    check(&[
        Case {
            name: "a listing without file arguments is refused",
            setup: history,
            act: |w| files(w, &[]),
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoFileArguments { command: None })
                ) && message(f) == "no file arguments given (try //depot/...)"
            }),
        },
        Case {
            name: "a file argument that matches nothing is refused with the argument",
            setup: history,
            act: |w| files(w, &["//depot/main/zzz"]),
            want: Want::Refused(|f| {
                matches!(shared(f), Some(ServiceError::NoSuchFiles { arg }) if arg == "//depot/main/zzz")
                    && message(f) == "//depot/main/zzz - no such file(s)"
            }),
        },
        Case {
            name: "a file argument the path parser refuses is a bad argument",
            setup: history,
            act: |w| files(w, &["//depot/main/a#x"]),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::BadArgument { arg, .. }) if arg == "//depot/main/a#x"),
            ),
        },
        Case {
            name: "diff2 needs one file per side",
            setup: history,
            act: |w| {
                done(
                    w.service
                        .diff2(&w.ann, "//depot/main/...", "//depot/main/a"),
                )
            },
            want: Want::Refused(|f| {
                matches!(shared(f), Some(ServiceError::OneFilePerSide { arg }) if arg == "//depot/main/...")
                    && message(f) == "//depot/main/... - diff2 needs exactly one file per side"
            }),
        },
        Case {
            name: "dirs needs a directory pattern",
            setup: history,
            act: |w| {
                done(w.service.dirs(
                    &w.ann,
                    &strings(&["//depot/main"]),
                    DirsOptions::default(),
                    &mut |_| Ok(()),
                ))
            },
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::DirsPattern { arg }) if arg == "//depot/main"),
            ),
        },
        Case {
            name: "opened of one workspace needs a workspace",
            setup: history,
            act: |w| {
                let nobody = Caller {
                    user: "ann".into(),
                    ..Caller::default()
                };
                done(
                    w.service
                        .opened(&nobody, &[], false, "", None, &mut |_| Ok(())),
                )
            },
            want: Want::Refused(|f| {
                matches!(shared(f), Some(ServiceError::OpenedNeedsWorkspace))
                    && message(f) == "opened needs a workspace"
            }),
        },
        Case {
            name: "print of a revision whose content is gone names the revision and digest",
            setup: |w| {
                history(w);
                let digest = head_digest(w, "//depot/main/a");
                w.blobs.delete(&digest).expect("blob deleted");
            },
            act: |w| print(w, &["//depot/main/a"]),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::ContentMissing { file, .. }) if file == "//depot/main/a#1"),
            ),
        },
        Case {
            name: "print of a shelved revision needs a change number",
            setup: history,
            act: |w| print(w, &["//depot/main/a@=x"]),
            want: Want::Refused(|f| {
                matches!(shared(f), Some(ServiceError::BadShelvedChange { arg, change }) if arg == "//depot/main/a@=x" && change == "x")
                    && message(f) == "//depot/main/a@=x - '@=x' is not a change number"
            }),
        },
        Case {
            name: "print of a shelved revision that is not shelved is refused",
            setup: history,
            act: |w| print(w, &["//depot/main/a@=1"]),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NoSuchShelvedFiles { arg }) if arg == "//depot/main/a@=1"),
            ),
        },
        Case {
            name: "describe of the shelf of a change that does not exist is refused",
            setup: history,
            act: |w| {
                done(
                    w.service
                        .describe_shelved(&w.ann, ChangeNumber(9), true, &mut |_| Ok(())),
                )
            },
            want: Want::Refused(|f| {
                matches!(
                    shared(f),
                    Some(ServiceError::NoSuchChange {
                        change: ChangeNumber(9)
                    })
                )
            }),
        },
    ]);
}
