//! Putting the content files were opened with (branched, copied, undone) into the workspace,
//! as `integrate`, `copy` and `undo` do once the server has opened them.

use std::collections::HashMap;

use anyhow::Result;
use keel_client::WorkspaceCtx;
use keel_client::content::ContentStream;
use keel_client::ops::FileResult;
use keel_client::paths::LocalResolver;
use keel_client::transfer::LocalMode;

use crate::session::{AlreadyReported, Session};

/// Writes each of `wanted`'s records its content, read from the depot file it is keyed by at
/// revision `rev(record)`, into the record's workspace file (writable, as an opened file is).
/// A file that cannot be written is reported and the others are still written; the command
/// then fails as already reported. `purpose` names the command to the server.
pub(crate) async fn write_opened(
    s: &Session,
    ws: &WorkspaceCtx,
    resolver: &mut LocalResolver,
    wanted: &HashMap<String, FileResult>,
    rev: impl Fn(&FileResult) -> u32,
    purpose: &str,
) -> Result<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let mut specs: Vec<String> = wanted
        .iter()
        .map(|(file, record)| format!("{file}#{}", rev(record)))
        .collect();
    specs.sort();
    let mut content = ContentStream::open_for(&s.conn, specs, purpose).await?;
    let mut failed = false;
    while let Some((file, header)) = content.next_file().await? {
        let (Some(header), Some(record)) = (header, wanted.get(&file.depot_file)) else {
            continue;
        };
        let client_file = record.client_file_in(ws).unwrap_or_default();
        let mode = LocalMode::for_type(&record.file_type, true);
        let result = match resolver.resolve(&client_file) {
            Ok(local) => content.write_file(&header, local, mode).await,
            Err(e) => Err(e),
        };
        if mode.symlink {
            // Paths resolved from here on must see the new link.
            resolver.forget();
        }
        if let Err(e) = result {
            s.out.error(e.to_string());
            failed = true;
        }
    }
    if failed {
        return Err(AlreadyReported.into());
    }
    Ok(())
}
