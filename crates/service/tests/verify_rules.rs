//! `verify` over a real store: which files an argument selects, deletes skipped, shared content
//! read once, shelves with `shelved`, and damaged or missing blobs reported for exactly the files
//! that refer to them.

mod support;

use keel_blob::BlobStore;
use keel_core::Digest;
use keel_service::{
    Damage, IntegrateMode, IntegrateRequest, ServiceError, VerifyEvent, VerifyOptions,
    VerifyOutcome, VerifyTotals,
};
use support::World;

/// `//path#rev` (or `//path@=N`) and outcome of each reported file, in order, and the totals.
type Run = (Vec<(String, VerifyOutcome)>, VerifyTotals);

fn verify(w: &World, files: &[&str], options: VerifyOptions) -> Result<Run, ServiceError> {
    let mut reported = Vec::new();
    let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    let totals = w.service.verify(&w.ann, &files, options, &mut |event| {
        if let VerifyEvent::File(f) = event {
            let name = match f.file.shelved_in {
                Some(change) => format!("{}@={change}", f.file.depot_file),
                None => format!("{}#{}", f.file.depot_file, f.file.rev),
            };
            reported.push((name, f.outcome));
        }
        Ok(())
    })?;
    Ok((reported, totals))
}

fn all(w: &World) -> Run {
    let options = VerifyOptions {
        shelved: true,
        ..VerifyOptions::default()
    };
    verify(w, &[], options).expect("verify runs")
}

/// main/a.txt #1 #2, main/b.txt #1 and a delete at #2, rel/ branched from main (lazy copies of
/// a#2 and b#1), and main/s.txt shelved in change 5 (the number returned).
fn history(w: &World) -> u64 {
    w.seed(&w.ann, &["//depot/main/a.txt", "//depot/main/b.txt"]);
    w.bump(&w.ann, &["//depot/main/a.txt"]);
    let req = IntegrateRequest {
        from: "//depot/main/...".into(),
        to: "//depot/rel/...".into(),
        ..IntegrateRequest::default()
    };
    w.integrate(&w.ann, IntegrateMode::Integrate, req)
        .expect("branched");
    w.submit(&w.ann, 0).expect("branch submitted");
    w.delete(&w.ann, &["//depot/main/b.txt"]).expect("opened");
    w.submit(&w.ann, 0).expect("delete submitted");
    let shelf = w.new_change(&w.ann);
    w.open_as(
        &w.ann,
        keel_service::OpenAction::Add,
        shelf,
        "",
        &["//depot/main/s.txt"],
    )
    .expect("opened for add");
    w.shelve(&w.ann, shelf).expect("shelved");
    shelf
}

fn names(run: &Run) -> Vec<&str> {
    run.0.iter().map(|(n, _)| n.as_str()).collect()
}

/// The digest verify reports for `name`.
fn digest_of(w: &World, name: &str) -> Digest {
    let mut found = None;
    w.service
        .verify(&w.ann, &[], VerifyOptions::default(), &mut |event| {
            if let VerifyEvent::File(f) = event
                && format!("{}#{}", f.file.depot_file, f.file.rev) == name
            {
                found = Some(f.file.digest);
            }
            Ok(())
        })
        .expect("verify runs");
    found.unwrap_or_else(|| panic!("{name} not verified"))
}

#[test]
fn every_stored_content_once_in_path_order_newest_first() {
    let w = World::new();
    let shelf = history(&w);
    let run = all(&w);
    assert_eq!(
        names(&run),
        [
            "//depot/main/a.txt#2",
            "//depot/main/a.txt#1",
            "//depot/main/b.txt#1",
            "//depot/rel/a.txt#1",
            "//depot/rel/b.txt#1",
            &format!("//depot/main/s.txt@={shelf}"),
        ]
    );
    assert!(
        run.0.iter().all(|(_, o)| *o == VerifyOutcome::Ok),
        "{run:?}"
    );
    let totals = &run.1;
    assert_eq!((totals.revisions, totals.shelved, totals.ok), (5, 1, 6));
    // The branch's lazy copies share main's contents: four distinct contents read.
    assert_eq!(totals.contents_read, 4);
    assert!(totals.stored_bytes_read > 0 && totals.bytes > 0);
    assert!(!totals.found_problems());
    // Without `shelved`, no shelf.
    let plain = verify(&w, &[], VerifyOptions::default()).expect("verify runs");
    assert_eq!(plain.1.shelved, 0);
    assert_eq!(plain.0.len(), 5);
}

#[test]
fn an_argument_selects_revisions_up_to_the_one_it_names() {
    let w = World::new();
    history(&w);
    let cases: [(&str, &[&str]); 5] = [
        (
            "//depot/main/a.txt",
            &["//depot/main/a.txt#2", "//depot/main/a.txt#1"],
        ),
        ("//depot/main/a.txt#1", &["//depot/main/a.txt#1"]),
        ("//depot/main/a.txt@1", &["//depot/main/a.txt#1"]),
        // A file deleted at head: its earlier content is still checked.
        ("//depot/main/b.txt", &["//depot/main/b.txt#1"]),
        (
            "//depot/rel/*",
            &["//depot/rel/a.txt#1", "//depot/rel/b.txt#1"],
        ),
    ];
    for (arg, want) in cases {
        let run = verify(&w, &[arg], VerifyOptions::default()).expect("verify runs");
        assert_eq!(names(&run), want, "{arg}");
    }
    // Workspace syntax maps through the caller's view.
    let run = verify(&w, &["//ann-ws/rel/a.txt"], VerifyOptions::default()).expect("runs");
    assert_eq!(names(&run), ["//depot/rel/a.txt#1"]);
}

#[test]
fn arguments_that_select_nothing_are_refused() {
    let w = World::new();
    history(&w);
    let cases: [(&[&str], VerifyOptions, &str); 3] = [
        (
            &["//depot/main/...", "//depot/nothing/..."],
            VerifyOptions::default(),
            "//depot/nothing/... - no such file(s)",
        ),
        // Only shelved: nothing without `shelved`.
        (
            &["//depot/main/s.txt"],
            VerifyOptions::default(),
            "//depot/main/s.txt - no such file(s)",
        ),
        (
            &["//nowhere/..."],
            VerifyOptions::default(),
            "//nowhere/... - 'nowhere' is neither a depot nor a workspace",
        ),
    ];
    for (args, options, want) in cases {
        let err = verify(&w, args, options).expect_err("refused");
        assert_eq!(err.to_string(), want, "{args:?}");
    }
    let shelved = VerifyOptions {
        shelved: true,
        ..VerifyOptions::default()
    };
    let run = verify(&w, &["//depot/main/s.txt"], shelved).expect("a shelved file is found");
    assert_eq!(run.0.len(), 1);
}

#[test]
fn damaged_and_missing_content_is_reported_for_every_file_that_refers_to_it() {
    let w = World::new();
    let shelf = history(&w);
    let shared = digest_of(&w, "//depot/main/a.txt#2");
    let gone = digest_of(&w, "//depot/main/b.txt#1");
    // Flip the first stored byte of one blob (in its pack or its own file) and delete another.
    let at = w
        .blobs
        .stored_at(&shared)
        .expect("blob store readable")
        .expect("blob stored");
    let mut bytes = std::fs::read(&at.path).expect("blob");
    bytes[at.offset as usize] ^= 0x20;
    std::fs::write(&at.path, bytes).expect("damaged");
    w.blobs.delete(&gone).expect("deleted");

    let run = all(&w);
    let outcome = |name: &str| {
        run.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o.clone())
            .unwrap_or_else(|| panic!("{name} not reported"))
    };
    for name in ["//depot/main/a.txt#2", "//depot/rel/a.txt#1"] {
        assert!(
            matches!(outcome(name), VerifyOutcome::Bad(Damage::Mismatch { actual, .. }) if actual != shared),
            "{name}: {:?}",
            outcome(name)
        );
    }
    for name in ["//depot/main/b.txt#1", "//depot/rel/b.txt#1"] {
        assert_eq!(outcome(name), VerifyOutcome::Missing, "{name}");
    }
    assert_eq!(outcome("//depot/main/a.txt#1"), VerifyOutcome::Ok);
    let shelved = format!("//depot/main/s.txt@={shelf}");
    assert_eq!(outcome(&shelved), VerifyOutcome::Ok);
    assert_eq!((run.1.ok, run.1.bad, run.1.missing), (2, 2, 2));

    // Only the problems, with the same totals.
    let options = VerifyOptions {
        shelved: true,
        problems_only: true,
    };
    let problems = verify(&w, &[], options).expect("verify runs");
    assert_eq!(
        names(&problems),
        [
            "//depot/main/a.txt#2",
            "//depot/main/b.txt#1",
            "//depot/rel/a.txt#1",
            "//depot/rel/b.txt#1",
        ]
    );
    assert_eq!(problems.1, run.1);

    // An argument that leaves them out finds nothing wrong.
    let clean = verify(&w, &["//depot/main/a.txt#1"], VerifyOptions::default()).expect("runs");
    assert!(!clean.1.found_problems());
}
