//! Table tests of the refusals of label specs, `tag` and `labelsync`: each names the label and
//! carries what was wrong (the owner, the Revision, the View line's depot).

mod support;

use keel_core::ChangeNumber;
use keel_service::{LabelError, LabelSpec, ServiceError, TagOptions};
use support::{Case, Failure, Want, World, check, done, message, shared, strings};

fn label(name: &str, options: &str, revision: &str, view: &[&str]) -> LabelSpec {
    LabelSpec {
        name: name.into(),
        owner: "ann".into(),
        options: options.into(),
        revision: revision.into(),
        view: strings(view),
        ..LabelSpec::default()
    }
}

fn save(w: &World, spec: LabelSpec) -> Result<(), Failure> {
    done(w.service.save_label(&w.ann, spec, false, false))
}

fn labelsync(w: &World, name: &str) -> Result<(), Failure> {
    done(
        w.service
            .labelsync(&w.ann, name, &[], false, &mut |_| Ok(())),
    )
}

/// File a submitted (change 1); labels `shut` (locked) and `auto` (@1) exist.
fn labels(w: &World) {
    w.seed(&w.ann, &["//depot/a"]);
    for spec in [
        label("shut", "locked", "", &[]),
        label("auto", "", "@1", &[]),
    ] {
        w.service
            .save_label(&w.ann, spec, true, false)
            .expect("label saved");
    }
}

#[test]
fn label_spec_refusals() {
    check(&[
        Case {
            name: "unknown Options are refused with the value",
            setup: |_| {},
            act: |w| save(w, label("rel", "sealed", "", &[])),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::Invalid { name, .. }) if name == "rel")
                    && message(f) == "label rel: unknown Options 'sealed' (locked or unlocked)"
            }),
        },
        Case {
            name: "a Revision that is not a change is refused",
            setup: |_| {},
            act: |w| save(w, label("rel", "", "42", &[])),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Invalid { name, reason }) if name == "rel" && reason.contains("Revision '42'")),
            ),
        },
        Case {
            name: "an overlay View line is refused",
            setup: |_| {},
            act: |w| save(w, label("rel", "", "", &["+//depot/..."])),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Invalid { reason, .. }) if reason.contains("overlay")),
            ),
        },
        Case {
            name: "a View line in a depot that does not exist is refused with the depot",
            setup: |_| {},
            act: |w| save(w, label("rel", "", "", &["//nodepot/..."])),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::NoSuchDepot { name, line, depot }) if name == "rel" && line == "//nodepot/..." && depot == "nodepot")
                    && message(f)
                        == "label rel: view line '//nodepot/...': depot 'nodepot' does not exist"
            }),
        },
        Case {
            name: "a bad label name is refused by the name parser",
            setup: |_| {},
            act: |w| save(w, label("bad name", "", "", &[])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::BadArgument { arg, .. }) if arg == "bad name"),
            ),
        },
        Case {
            name: "the owner must unlock a locked label to change it",
            setup: labels,
            act: |w| save(w, label("shut", "locked", "", &["//depot/a"])),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::StaysLocked { name }) if name == "shut")
                    && message(f) == "label 'shut' is locked; set Options: unlocked to change it"
            }),
        },
        Case {
            name: "a missing label has no spec",
            setup: labels,
            act: |w| done(w.service.get_label(&w.ann, "nolabel")),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::NoSuch { name }) if name == "nolabel"),
            ),
        },
        Case {
            name: "a missing label cannot be deleted",
            setup: labels,
            act: |w| done(w.service.delete_label(&w.ann, "nolabel", false)),
            want: Want::Refused(|f| {
                matches!(f, Failure::Label(LabelError::NoSuch { name }) if name == "nolabel")
                    && message(f) == "label 'nolabel' does not exist"
            }),
        },
        Case {
            name: "an unlocked label can be deleted",
            setup: labels,
            act: |w| done(w.service.delete_label(&w.ann, "auto", false)),
            want: Want::Ok,
        },
    ]);
}

#[test]
fn tag_and_labelsync_refusals() {
    check(&[
        Case {
            name: "labelsync of a missing label is refused",
            setup: labels,
            act: |w| labelsync(w, "nolabel"),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::NoSuch { name }) if name == "nolabel"),
            ),
        },
        Case {
            name: "labelsync of an automatic label is refused with its Revision",
            setup: labels,
            act: |w| labelsync(w, "auto"),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Automatic { name, revision: ChangeNumber(1) }) if name == "auto"),
            ),
        },
        Case {
            name: "labelsync of a locked label is refused with its owner",
            setup: labels,
            act: |w| labelsync(w, "shut"),
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::Locked { name, owner }) if name == "shut" && owner == "ann"),
            ),
        },
        Case {
            name: "a tag preview does not create a missing label",
            setup: labels,
            act: |w| {
                let opts = TagOptions {
                    delete: false,
                    preview: true,
                };
                done(
                    w.service
                        .tag(&w.ann, "fresh", &strings(&["//depot/a"]), opts, &mut |_| {
                            Ok(())
                        }),
                )
            },
            want: Want::Refused(
                |f| matches!(f, Failure::Label(LabelError::NoSuch { name }) if name == "fresh"),
            ),
        },
        Case {
            name: "@label of a missing label names the argument",
            setup: labels,
            act: |w| done(w.sync_plan(&w.bob, &["//depot/...@nolabel"])),
            want: Want::Refused(
                |f| matches!(shared(f), Some(ServiceError::NoSuchLabel { arg, name }) if arg == "//depot/...@nolabel" && name == "nolabel"),
            ),
        },
    ]);
}
