//! `clone_workspace` streams the new have list while it copies it (`workspace_clone.rs`):
//! whatever the source's syncs do meanwhile, the clone's have list holds exactly the entries it
//! streamed, and those are the source's list of one moment.

mod support;

use keel_service::{Caller, CloneEvent, HaveEntry, WorkspaceSpec};
use support::World;

/// (depot file, have rev, client file) of each entry of `who`'s whole have list.
type Entries = Vec<(String, u32, String)>;

fn have(w: &World, who: &Caller) -> Entries {
    let mut out = Vec::new();
    w.service
        .have_list(who, &[], &mut |f| {
            out.push((
                f.depot_file.into_string(),
                f.have_rev,
                f.client_file.unwrap_or_default(),
            ));
            Ok(())
        })
        .expect("have");
    out
}

/// `(depot file, have rev)` of `entries`.
fn revisions(entries: &Entries) -> Vec<(String, u32)> {
    entries.iter().map(|(d, r, _)| (d.clone(), *r)).collect()
}

#[test]
fn a_clone_holds_exactly_what_it_streamed_while_its_source_is_synced() {
    let w = World::new();
    // Three pages of the default page size (1,000), so the stream spans several reads.
    let files: Vec<String> = (0..2_500)
        .map(|i| format!("//depot/d{}/f{i}", i / 100))
        .collect();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    w.seed(&w.ann, &refs);
    w.bump(&w.ann, &["//depot/d0/f0"]);
    w.sync(&w.bob, &[]).expect("bob synced");

    for round in 0..6u32 {
        let name = format!("bob-clone-{round}");
        let before = have(&w, &w.bob);
        let mut streamed: Entries = Vec::new();
        let mut started = false;
        let outcome = w
            .service
            .clone_workspace(
                &w.bob,
                "bob-ws",
                WorkspaceSpec {
                    name: name.clone(),
                    root: format!("/nonexistent/{name}"),
                    ..Default::default()
                },
                &mut |event| {
                    match event {
                        CloneEvent::Started { spec, .. } => {
                            assert_eq!(spec.name, name);
                            started = true;
                        }
                        CloneEvent::File(f) => {
                            if streamed.is_empty() {
                                // The source's list changes while the clone streams and copies.
                                let rev = if round % 2 == 0 { 1 } else { 2 };
                                w.service
                                    .update_have(
                                        &w.bob,
                                        vec![HaveEntry {
                                            depot_file: "//depot/d0/f0".into(),
                                            rev,
                                        }],
                                        None,
                                        0,
                                    )
                                    .expect("source's have list written mid-clone");
                            }
                            streamed.push((
                                f.depot_file.into_string(),
                                f.have_rev,
                                f.client_file.unwrap_or_default(),
                            ));
                        }
                    }
                    Ok(())
                },
            )
            .expect("clone");
        assert!(started, "round {round}: the workspace came first");
        assert_eq!(streamed.len(), files.len(), "round {round}");
        assert_eq!(outcome.files, streamed.len() as u64, "round {round}");
        // The source's list of one moment: as it was when the clone began.
        assert_eq!(revisions(&streamed), revisions(&before), "round {round}");
        // The clone's list is what was streamed, client files through the clone's view.
        let clone = Caller {
            workspace: name.clone(),
            ..w.bob.clone()
        };
        assert_eq!(have(&w, &clone), streamed, "round {round}");
        assert!(
            streamed
                .iter()
                .all(|(depot, _, client)| depot.strip_prefix("//depot/") == Some(client)),
            "round {round}: client files mapped through the clone's view"
        );
        // The source kept its own write.
        let source_now = have(&w, &w.bob);
        let f0 = source_now.iter().find(|(d, _, _)| d == "//depot/d0/f0");
        assert_eq!(
            f0.map(|(_, r, _)| *r),
            Some(if round % 2 == 0 { 1 } else { 2 }),
            "round {round}"
        );
    }
}
