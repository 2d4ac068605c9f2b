//! The shape of Perforce's "branchsubmit" benchmark, end to end: branch 70,000 files and submit,
//! and check that the branch wrote no content (every new revision is a lazy copy). Seeding the
//! tree is itself one 70,000-file upload submit, which must succeed without the client's retry.

use crate::common::{Client, Fixture, content_files, str_field, write};
use std::time::Instant;

const FILES: usize = 70_000;

/// Writes and opens for add `FILES` small new files under `top/`.
fn add_tree(client: &Client, top: &str) {
    for i in 0..FILES {
        write(
            &client.cwd,
            &format!("{top}/d{:02}/s{:02}/f{i}.c", i % 70, (i / 70) % 20),
            format!("// file {}\n", i % 100),
        );
    }
    client.ok(&["add", &format!("{top}/...")]);
}

/// Submits the default change, which must succeed on the first attempt: the client says
/// "retrying" on stderr when a broken connection made it upload a second time.
fn submit_first_try(client: &Client, description: &str) -> String {
    let out = client.run(&["submit", "-d", description]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "submit failed ({}): {stderr}",
        out.status
    );
    assert!(
        !stderr.contains("retrying"),
        "the submit needed a retry: {stderr}"
    );
    stdout
}

#[test]
fn branching_seventy_thousand_files_writes_no_content() {
    if crate::common::skip_slow("branching_seventy_thousand_files_writes_no_content") {
        return;
    }
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let t = Instant::now();
    add_tree(&a, "main");
    let seeded = submit_first_try(&a, "main line");
    assert!(seeded.contains("Change 1 submitted."), "{seeded}");
    println!("add + submit of {FILES} files: {:?}", t.elapsed());
    let blobs = content_files(&fx.server.root);

    let t = Instant::now();
    assert_eq!(
        a.ok(&["integrate", "-v", "//depot/main/...", "//depot/rel/..."]),
        format!("{FILES} files opened for branch.\n")
    );
    let integrate = t.elapsed();
    let t = Instant::now();
    let out = submit_first_try(&a, "branch rel");
    println!("integrate: {integrate:?}, branch submit: {:?}", t.elapsed());
    assert_eq!(
        out,
        format!("Submitting change 2.\n{FILES} files submitted.\nChange 2 submitted.\n")
    );

    assert_eq!(
        content_files(&fx.server.root),
        blobs,
        "the branch wrote no content"
    );
    let described = a.json(&["describe", "-s", "2"]);
    assert_eq!(
        described
            .iter()
            .filter(|r| r.get("depotFile").is_some())
            .count(),
        FILES
    );
    let sample = a.json(&["fstat", "//depot/rel/d07/s01/f1477.c"]);
    assert_eq!(str_field(&sample[0], "headAction"), "branch");
    assert_eq!(
        a.ok(&["print", "-q", "//depot/rel/d07/s01/f1477.c"]),
        "// file 77\n"
    );
}

/// A 70,000-new-file submit is one upload stream of about 210,000 small messages; the server
/// reads them slower than the client sends them. Three such submits in a row each succeed on
/// the first attempt and store every file.
#[test]
fn seventy_thousand_new_files_submit_in_one_change_without_retry() {
    if crate::common::skip_slow("seventy_thousand_new_files_submit_in_one_change_without_retry") {
        return;
    }
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    for round in 1..=3 {
        let top = format!("r{round}");
        add_tree(&a, &top);
        let out = submit_first_try(&a, &format!("round {round}"));
        assert!(
            out.contains(&format!("Change {round} submitted.")),
            "{}",
            &out[out.len().saturating_sub(200)..]
        );
        let described = a.json(&["describe", "-s", &round.to_string()]);
        assert_eq!(
            described
                .iter()
                .filter(|r| r.get("depotFile").is_some())
                .count(),
            FILES
        );
        assert_eq!(
            a.ok(&["print", "-q", &format!("//depot/{top}/d07/s01/f1477.c")]),
            "// file 77\n"
        );
    }
    assert!(a.json(&["opened"]).is_empty(), "nothing left opened");
}
