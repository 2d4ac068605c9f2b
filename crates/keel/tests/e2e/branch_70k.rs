//! The shape of Perforce's "branchsubmit" benchmark, end to end: branch 70,000 files and submit,
//! and check that the branch wrote no content (every new revision is a lazy copy).

use crate::common::{Fixture, content_files, str_field, write};
use std::time::Instant;

const FILES: usize = 70_000;

#[test]
fn branching_seventy_thousand_files_writes_no_content() {
    if crate::common::skip_slow("branching_seventy_thousand_files_writes_no_content") {
        return;
    }
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    // Seeded in 7 submits of 10,000 files: a single 70,000-file upload submit sometimes loses
    // its connection ("stream closed because of a broken pipe"); the branch
    // below is still one 70,000-file integrate and one 70,000-file submit.
    let t = Instant::now();
    for batch in 0..7 {
        for i in batch * 10_000..(batch + 1) * 10_000 {
            write(
                &a.cwd,
                &format!("main/d{:02}/s{:02}/f{i}.c", i % 70, (i / 70) % 20),
                format!("// file {}\n", i % 100),
            );
        }
        a.ok(&["add", "main/..."]);
        a.ok(&["submit", "-d", &format!("main line, part {batch}")]);
    }
    println!("add + submit of {FILES} files: {:?}", t.elapsed());
    let blobs = content_files(&fx.server.root);

    let t = Instant::now();
    a.ok(&["integrate", "-v", "//depot/main/...", "//depot/rel/..."]);
    let integrate = t.elapsed();
    let t = Instant::now();
    let out = a.ok(&["submit", "-d", "branch rel"]);
    println!("integrate: {integrate:?}, branch submit: {:?}", t.elapsed());
    assert!(
        out.contains("Change 8 submitted."),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );

    assert_eq!(
        content_files(&fx.server.root),
        blobs,
        "the branch wrote no content"
    );
    let described = a.json(&["describe", "-s", "8"]);
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
