//! Editing spec forms in `$EDITOR` (default `vi`) through a temp file.

use std::io::Write;

use anyhow::{Context, Result, bail};

/// Opens `text` in the user's editor and returns the edited text.
pub fn edit_text(text: &str, name_hint: &str) -> Result<String> {
    let mut file = tempfile::Builder::new()
        .prefix(&format!("keel-{name_hint}-"))
        .suffix(".txt")
        .tempfile()
        .context("cannot create a temp file for the editor")?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .context("cannot write the temp file for the editor")?;
    let editor = std::env::var("EDITOR")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    let path = file.path().to_path_buf();
    // The editor inherits the process's huge-page setting: it gets the user's own.
    crate::allocator::release_huge_pages();
    let status = if cfg!(unix) {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(&path)
            .status()
    } else {
        std::process::Command::new(&editor).arg(&path).status()
    }
    .with_context(|| format!("cannot run editor {editor:?}"))?;
    if !status.success() {
        bail!("editor {editor:?} exited with {status}");
    }
    std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
}
