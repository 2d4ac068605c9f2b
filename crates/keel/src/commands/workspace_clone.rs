//! `workspace clone SOURCE NEW --root DIR`: a prebuilt workspace in the time it takes to link
//! its files (`keel_client::ops::clone_workspace`); the command line adds the `.keel` file
//! and the printing.

use anyhow::{Context, Result};
use keel_client::ops::{self, CloneQuery};

use crate::cli::WorkspaceCloneArgs;
use crate::output::Record;
use crate::session::{AlreadyReported, Session};

pub async fn clone(s: &mut Session, args: WorkspaceCloneArgs) -> Result<()> {
    let query = CloneQuery {
        source: args.source,
        name: args.name,
        root: args.root,
        host: args.host,
        description: args.description,
        with_untracked: args.with_untracked,
    };
    let out = &s.out;
    let done = ops::clone_workspace(&s.conn, query, |file, e| {
        out.error(format!("{file}: {e}"));
    })
    .await?;
    // The source's `.keel` settings file, naming the clone, is the command line's business.
    copy_config(&done.source_root, &done.root, &done.name)?;
    let text = format!(
        "Workspace {} cloned from {}: {} files ({} hard-linked, {} reflinked, {} copied, {} symlinks, {} from the server){}.",
        done.name,
        done.source,
        done.files,
        done.hard_linked,
        done.reflinked,
        done.copied,
        done.symlinks,
        done.fetched,
        if args.with_untracked {
            format!(", {} untracked files", done.untracked)
        } else {
            String::new()
        }
    );
    s.out.emit(
        Record::new()
            .s("client", &done.name)
            .s("source", &done.source)
            .s("root", done.root.display().to_string())
            .n("files", done.files)
            .n("hardLinked", done.hard_linked)
            .n("reflinked", done.reflinked)
            .n("copied", done.copied)
            .n("symlinks", done.symlinks)
            .n("fetched", done.fetched)
            .n("untracked", done.untracked)
            .b("marked", done.marked),
        text,
    );
    if done.failed > 0 {
        return Err(AlreadyReported.into());
    }
    Ok(())
}

/// When the source's root holds a `.keel` settings file, the clone gets one naming itself.
fn copy_config(source_root: &std::path::Path, root: &std::path::Path, name: &str) -> Result<()> {
    let from = source_root.join(".keel");
    let Ok(text) = std::fs::read_to_string(&from) else {
        return Ok(());
    };
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("KEEL_WORKSPACE"))
        .map(str::to_string)
        .collect();
    lines.push(format!("KEEL_WORKSPACE={name}"));
    let to = root.join(".keel");
    std::fs::write(&to, lines.join("\n") + "\n")
        .with_context(|| format!("writing {}", to.display()))
}
