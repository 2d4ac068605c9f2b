//! Fuzzes the metadata store against its in-memory model: the input is decoded into a sequence
//! of store operations (workspaces, opens, submits, shelves, labels, integrations, obliterate)
//! applied to a temporary SQLite `MetaStore` and to the model, compared after every step.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/store/tests/model/mod.rs"]
mod model;

fuzz_target!(|data: &[u8]| {
    let mut harness = model::Harness::new();
    if let Err(e) = harness.run(data) {
        panic!("{e}");
    }
});
