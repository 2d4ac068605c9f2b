//! `sizes`: the sizes of file revisions from their stored metadata (no content is read), per
//! revision or summed per argument, in bytes or in blocks of a given size; with `-z` each
//! stored content counts once (lazy copies add nothing).

use crate::args::FileArg;
use crate::{Caller, Service, ServiceError};
use keel_core::{DepotPath, Digest};
use std::collections::HashSet;

/// What `sizes` reports: one revision, or (with `summary`) one argument's total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeEntry {
    /// The revision's file, or the argument as given for a summary.
    pub path: String,
    /// The revision (0 for a summary).
    pub rev: u32,
    /// Revisions counted (1 for a revision).
    pub files: u64,
    pub bytes: u64,
    /// Blocks of `block_size` bytes, each revision rounded up (0 when no block size).
    pub blocks: u64,
}

/// How `sizes` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizesOptions {
    /// `-a`: every revision, not only the selected one.
    pub all_revisions: bool,
    /// `-s`: one total per argument.
    pub summary: bool,
    /// `-b N`: also count blocks of N bytes (0: none).
    pub block_size: u64,
    /// `-z`: count each stored content once: a lazy copy (a revision whose content another
    /// revision already counted here holds) adds nothing.
    pub once: bool,
}

impl Service {
    /// `sizes [-a] [-s] [-b N] FILE...`: deleted revisions have no content and are skipped.
    pub fn sizes(
        &self,
        caller: &Caller,
        files: &[String],
        options: SizesOptions,
        sink: &mut dyn FnMut(SizeEntry) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = match caller.workspace.is_empty() {
            true => None,
            false => Some(self.caller_workspace(snap.as_ref(), caller)?),
        };
        let blocks = |bytes: u64| match options.block_size {
            0 => 0,
            n => bytes.div_ceil(n),
        };
        for text in files {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            let mut total = SizeEntry {
                path: text.clone(),
                rev: 0,
                files: 0,
                bytes: 0,
                blocks: 0,
            };
            // `-z`: the contents counted so far under this argument.
            let mut seen: HashSet<Digest> = HashSet::new();
            let mut count = |path: &DepotPath,
                             rev: u32,
                             digest: Option<Digest>,
                             bytes: u64|
             -> Result<(), ServiceError> {
                if options.once && digest.is_some_and(|d| !seen.insert(d)) {
                    return Ok(());
                }
                if options.summary {
                    total.files += 1;
                    total.bytes += bytes;
                    total.blocks += blocks(bytes);
                    return Ok(());
                }
                sink(SizeEntry {
                    path: path.to_string(),
                    rev,
                    files: 1,
                    bytes,
                    blocks: blocks(bytes),
                })
            };
            let have_of = ws.as_ref().map(|w| w.name());
            self.for_each_selected(snap.as_ref(), &who, &arg, have_of, &mut |head| {
                if !options.all_revisions {
                    if !head.action.is_delete() {
                        count(&head.path, head.rev, head.digest, head.size)?;
                    }
                    return Ok(());
                }
                let mut revisions = snap.file_revisions(&head.path)?;
                revisions.reverse();
                for rev in revisions.into_iter().filter(|r| r.rev <= head.rev) {
                    who.scan()?;
                    if !rev.action.is_delete() {
                        count(&rev.path, rev.rev, rev.digest, rev.size)?;
                    }
                }
                Ok(())
            })?;
            if options.summary {
                sink(total)?;
            }
        }
        Ok(())
    }
}
