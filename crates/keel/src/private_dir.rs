//! A server's root, a replica's root and a proxy's cache are private to the account that runs
//! them: the process's umask is 077, so whatever it creates is 0700 (directories) or 0600
//! (files); a directory left looser by an earlier version or by hand is tightened on start.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The bits nobody but the owner may hold.
const OTHERS: u32 = 0o077;

/// Sets the process's umask to 077: every file and directory created from now on (by Keel,
/// SQLite, and the triggers it runs) has no group or other access.
pub fn restrict_umask() {
    // SAFETY: umask(2) only sets the process's file mode creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

/// Removes group and other access from an existing `dir` now, and from everything beneath it
/// on a thread of its own (a content store may hold millions of files; with `dir` itself at
/// 0700 nobody else can reach them meanwhile). What was changed is logged in one line. A
/// missing `dir` is left to its creator (under the 077 umask it is born 0700), so a server
/// that fails to start leaves no root behind.
pub fn make_private(dir: &Path) -> std::io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut changed = Changed::default();
    tighten(dir, &std::fs::metadata(dir)?, &mut changed);
    if let Some(error) = changed.failed.take() {
        return Err(error);
    }
    let dir = dir.to_path_buf();
    std::thread::Builder::new()
        .name("keel-private-dir".into())
        .spawn(move || {
            tighten_beneath(&dir, &mut changed);
            changed.log(&dir);
        })?;
    Ok(())
}

/// What tightening changed, and the first failure.
#[derive(Default)]
struct Changed {
    dirs: u64,
    files: u64,
    failed: Option<std::io::Error>,
    failed_path: Option<PathBuf>,
}

impl Changed {
    fn log(&self, dir: &Path) {
        if self.dirs + self.files > 0 {
            tracing::warn!(
                dir = %dir.display(),
                dirs = self.dirs,
                files = self.files,
                "removed group and other access from {} directories and {} files under {} \
                 (they are now 0700 / 0600 or tighter)",
                self.dirs,
                self.files,
                dir.display()
            );
        }
        if let (Some(e), Some(path)) = (&self.failed, &self.failed_path) {
            tracing::error!(path = %path.display(), error = %e, "cannot make it private");
        }
    }
}

/// Removes group and other bits from `path` (of `meta`, not a symlink) when it has any.
fn tighten(path: &Path, meta: &std::fs::Metadata, changed: &mut Changed) {
    let mode = meta.permissions().mode();
    if mode & OTHERS == 0 || meta.file_type().is_symlink() {
        return;
    }
    match std::fs::set_permissions(
        path,
        std::fs::Permissions::from_mode(mode & !OTHERS & 0o7777),
    ) {
        Ok(()) if meta.is_dir() => changed.dirs += 1,
        Ok(()) => changed.files += 1,
        // Gone meanwhile (a file renamed or removed by the server): nothing to do.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            if changed.failed.is_none() {
                changed.failed = Some(e);
                changed.failed_path = Some(path.to_path_buf());
            }
        }
    }
}

/// Tightens everything beneath `dir`, never following a symlink.
fn tighten_beneath(dir: &Path, changed: &mut Changed) {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            tighten(&path, &meta, changed);
            if meta.is_dir() {
                pending.push(path);
            }
        }
    }
}
