//! `verify` (Perforce's `p4 verify`): re-reads the stored content of every selected revision
//! (and with `shelved`, of shelved files), recomputes its BLAKE3 digest and size, and reports
//! each as OK, BAD (the content is not what the metadata records, or cannot be decoded or read)
//! or MISSING (no blob under the digest).
//!
//! It runs online without disturbing anyone: it only reads, never waits for or holds the writer,
//! takes a fresh snapshot per page of files (a snapshot held for hours would keep the database's
//! log from being checkpointed), and reads and hashes on worker threads at `verify_nice`
//! (`verify/checker.rs`). Revisions that store no content (deletes) are skipped. A file
//! argument selects every revision up to the one it names (all of them without a revision),
//! newest first per file, files in path order; no argument means every depot.

mod cache;
mod checker;

use crate::args::FileArg;

use crate::expand::{selected_page, selection_of};
use crate::{Caller, Service, ServiceError};
use checker::Checker;
use keel_blob::ContentCheck;
use keel_core::{ChangeNumber, DepotPath, Digest, FileAction, FileType};
use keel_store::{ChangeFilter, ChangeStatus, RevisionRow, ShelvedRow};

/// What to verify besides the submitted revisions, and what to report.
#[derive(Clone, Copy, Debug, Default)]
pub struct VerifyOptions {
    /// Also the content of shelved files (in pending changes) matching the arguments.
    pub shelved: bool,
    /// Report only files that are BAD or MISSING (progress and totals still come).
    pub problems_only: bool,
}

/// A revision or shelved file whose stored content verify checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFile {
    pub depot_file: DepotPath,
    /// The revision; 0 for a shelved file.
    pub rev: u32,
    /// The pending change a shelved file is shelved in (`//path@=CHANGE`); `None` for a revision.
    pub shelved_in: Option<ChangeNumber>,
    /// The change that submitted the revision (or holds the shelf).
    pub change: ChangeNumber,
    pub action: FileAction,
    pub file_type: FileType,
    /// The BLAKE3 digest the metadata records.
    pub digest: Digest,
    /// The content size the metadata records.
    pub size: u64,
}

impl StoredFile {
    /// The revision's content to check; `None` for a revision that stores none (a delete).
    fn of_revision(row: RevisionRow) -> Option<StoredFile> {
        Some(StoredFile {
            digest: row.digest?,
            depot_file: row.path,
            rev: row.rev,
            shelved_in: None,
            change: row.change,
            action: row.action,
            file_type: row.file_type,
            size: row.size,
        })
    }

    /// The shelved file's content to check; `None` for a shelved delete.
    fn of_shelved(row: ShelvedRow) -> Option<StoredFile> {
        Some(StoredFile {
            digest: row.digest?,
            depot_file: row.path,
            rev: 0,
            shelved_in: Some(row.change),
            change: row.change,
            action: row.action,
            file_type: row.file_type,
            size: row.size,
        })
    }
}

/// How a file's stored content compared with its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyOutcome {
    /// The content decodes to exactly the recorded digest and size.
    Ok,
    /// The stored content is damaged.
    Bad(Damage),
    /// The content store has no blob under the recorded digest.
    Missing,
    /// A replica with on-demand content has not fetched this content from its primary yet
    /// (it will when a client first needs it): not damage.
    NotFetched,
}

/// What is wrong with damaged stored content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Damage {
    /// The content decodes, but to another digest or size than the metadata records.
    Mismatch { actual: Digest, size: u64 },
    /// The stored bytes are not a valid encoding; `reason` is the decoder's message.
    Undecodable { reason: String },
    /// The stored file could not be read; `reason` is the I/O error.
    Unreadable { reason: String },
}

/// One checked file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedFile {
    pub file: StoredFile,
    pub outcome: VerifyOutcome,
}

/// What a verify streams: each checked file (only problems with `problems_only`), and every so
/// often the totals so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyEvent {
    File(VerifiedFile),
    Progress(VerifyTotals),
}

/// Counts of a verify (so far, in a progress event).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyTotals {
    /// Submitted revisions checked.
    pub revisions: u64,
    /// Shelved files checked.
    pub shelved: u64,
    pub ok: u64,
    pub bad: u64,
    pub missing: u64,
    /// Files whose content a replica with on-demand content has not fetched yet.
    pub not_fetched: u64,
    /// Content bytes checked: the recorded sizes of the files found (OK or BAD).
    pub bytes: u64,
    /// Distinct contents read from the content store (shared content counts once while
    /// remembered).
    pub contents_read: u64,
    /// Stored bytes read (compressed, as on disk).
    pub stored_bytes_read: u64,
}

impl VerifyTotals {
    fn count(&mut self, file: &StoredFile, outcome: &VerifyOutcome) {
        if file.shelved_in.is_some() {
            self.shelved += 1;
        } else {
            self.revisions += 1;
        }
        match outcome {
            VerifyOutcome::Ok => self.ok += 1,
            VerifyOutcome::Bad(_) => self.bad += 1,
            VerifyOutcome::Missing => self.missing += 1,
            VerifyOutcome::NotFetched => self.not_fetched += 1,
        }
        if !matches!(outcome, VerifyOutcome::Missing | VerifyOutcome::NotFetched) {
            self.bytes += file.size;
        }
    }

    /// Whether any file was BAD or MISSING.
    pub fn found_problems(&self) -> bool {
        self.bad + self.missing > 0
    }
}

/// The outcome for `file` of re-reading the blob under its digest.
pub fn judge(file: &StoredFile, check: &ContentCheck) -> VerifyOutcome {
    match check {
        ContentCheck::Content { digest, size } if *digest == file.digest && *size == file.size => {
            VerifyOutcome::Ok
        }
        ContentCheck::Content { digest, size } => VerifyOutcome::Bad(Damage::Mismatch {
            actual: *digest,
            size: *size,
        }),
        ContentCheck::Missing => VerifyOutcome::Missing,
        ContentCheck::Undecodable { reason } => VerifyOutcome::Bad(Damage::Undecodable {
            reason: reason.clone(),
        }),
        ContentCheck::Unreadable { reason } => VerifyOutcome::Bad(Damage::Unreadable {
            reason: reason.clone(),
        }),
    }
}

impl Service {
    /// `verify`: checks the stored content of the files `files` select (every depot when
    /// empty), streaming each outcome and progress to `sink`; returns the totals. An argument
    /// that selects nothing fails the verify once every argument was checked.
    pub fn verify(
        &self,
        caller: &Caller,
        files: &[String],
        options: VerifyOptions,
        sink: &mut dyn FnMut(VerifyEvent) -> Result<(), ServiceError>,
    ) -> Result<VerifyTotals, ServiceError> {
        self.touch_user(caller)?;
        let (args, have_of) = {
            let snap = self.meta.snapshot()?;
            let ws = self.optional_workspace(snap.as_ref(), caller)?;
            let texts: Vec<String> = if files.is_empty() {
                let depots = snap.list_depots()?;
                depots.iter().map(|d| format!("//{}/...", d.name)).collect()
            } else {
                files.to_vec()
            };
            let args = texts
                .iter()
                .map(|text| FileArg::parse(text, snap.as_ref(), ws.as_ref()))
                .collect::<Result<Vec<_>, _>>()?;
            (args, ws.map(|w| w.name().to_string()))
        };
        let mut matched = vec![0u64; args.len()];
        let totals = std::thread::scope(|scope| {
            let mut checker = Checker::start(scope, self, options.problems_only, sink);
            for (arg, count) in args.iter().zip(matched.iter_mut()) {
                *count += self.verify_revisions(arg, have_of.as_deref(), &mut checker)?;
            }
            if options.shelved {
                self.verify_shelves(&args, &mut matched, &mut checker)?;
            }
            checker.finish()
        })?;
        if !files.is_empty()
            && let Some(unmatched) = args.iter().zip(&matched).find(|(_, n)| **n == 0)
        {
            return Err(ServiceError::NoSuchFiles {
                arg: unmatched.0.text.clone(),
            });
        }
        Ok(totals)
    }

    /// Queues every content-carrying revision `arg` selects, a page of files per snapshot;
    /// returns how many files it selected.
    fn verify_revisions(
        &self,
        arg: &FileArg,
        have_of: Option<&str>,
        checker: &mut Checker<'_>,
    ) -> Result<u64, ServiceError> {
        let page = self.config.page_size.max(1);
        let selection = selection_of(self.meta.snapshot()?.as_ref(), &arg.text, &arg.rev)?;
        let mut matched = 0;
        for scope in &arg.scopes {
            let mut after: Option<String> = None;
            loop {
                let mut files = Vec::new();
                let snap = self.meta.snapshot()?;
                let heads =
                    selected_page(snap.as_ref(), scope, &selection, after.as_deref(), page)?;
                let more = heads.len() >= page;
                after = heads.last().map(|h| h.path.to_string());
                for head in heads {
                    let path = head.path.as_str();
                    if !arg.matches(path) || !selection.admits(path) {
                        continue;
                    }
                    let chosen =
                        self.select_revision(snap.as_ref(), &arg.text, &arg.rev, head, have_of)?;
                    let Some(chosen) = chosen else { continue };
                    matched += 1;
                    let revisions = snap.file_revisions(&chosen.path)?;
                    files.extend(
                        revisions
                            .into_iter()
                            .filter(|r| r.rev <= chosen.rev)
                            .filter_map(StoredFile::of_revision),
                    );
                }
                drop(snap);
                for file in files {
                    checker.check(file)?;
                }
                if !more {
                    break;
                }
            }
        }
        Ok(matched)
    }

    /// Queues the content of every shelved file matching an argument, pending changes newest
    /// first, a page of shelved files per snapshot; counts the files each argument matched.
    fn verify_shelves(
        &self,
        args: &[FileArg],
        matched: &mut [u64],
        checker: &mut Checker<'_>,
    ) -> Result<(), ServiceError> {
        let page = self.config.page_size.max(1);
        let pending = ChangeFilter {
            status: Some(ChangeStatus::Pending),
            ..ChangeFilter::default()
        };
        let mut before: Option<ChangeNumber> = None;
        loop {
            let changes = self.meta.snapshot()?.list_changes(&pending, before, page)?;
            let more = changes.len() >= page;
            before = changes.last().map(|c| c.change);
            for change in changes {
                let mut after: Option<DepotPath> = None;
                loop {
                    let rows = self.meta.snapshot()?.shelved_in_change(
                        change.change,
                        after.as_ref().map(DepotPath::as_str),
                        page,
                    )?;
                    let full = rows.len() >= page;
                    after = rows.last().map(|r| r.path.clone());
                    for row in rows {
                        let mut selected = false;
                        for (arg, count) in args.iter().zip(matched.iter_mut()) {
                            if arg.matches(row.path.as_str()) {
                                *count += 1;
                                selected = true;
                            }
                        }
                        if let Some(file) = selected.then(|| StoredFile::of_shelved(row)).flatten()
                        {
                            checker.check(file)?;
                        }
                    }
                    if !full {
                        break;
                    }
                }
            }
            if !more {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(digest: u8, size: u64) -> StoredFile {
        StoredFile {
            depot_file: DepotPath::parse("//depot/a.txt").expect("path"),
            rev: 3,
            shelved_in: None,
            change: ChangeNumber(12),
            action: FileAction::Edit,
            file_type: FileType::parse("text").expect("type"),
            digest: Digest([digest; 32]),
            size,
        }
    }

    #[test]
    fn judge_compares_digest_and_size() {
        let content = |d: u8, size: u64| ContentCheck::Content {
            digest: Digest([d; 32]),
            size,
        };
        let cases = [
            ("same digest and size", content(1, 10), VerifyOutcome::Ok),
            (
                "other digest",
                content(2, 10),
                VerifyOutcome::Bad(Damage::Mismatch {
                    actual: Digest([2; 32]),
                    size: 10,
                }),
            ),
            (
                "same digest, other size (the metadata is wrong)",
                content(1, 11),
                VerifyOutcome::Bad(Damage::Mismatch {
                    actual: Digest([1; 32]),
                    size: 11,
                }),
            ),
            ("no blob", ContentCheck::Missing, VerifyOutcome::Missing),
            (
                "damaged encoding",
                ContentCheck::Undecodable { reason: "x".into() },
                VerifyOutcome::Bad(Damage::Undecodable { reason: "x".into() }),
            ),
            (
                "read error",
                ContentCheck::Unreadable { reason: "y".into() },
                VerifyOutcome::Bad(Damage::Unreadable { reason: "y".into() }),
            ),
        ];
        for (name, check, want) in cases {
            assert_eq!(judge(&file(1, 10), &check), want, "{name}");
        }
    }

    #[test]
    fn totals_count_by_kind_and_bytes_of_found_content() {
        let mut totals = VerifyTotals::default();
        let shelved = StoredFile {
            shelved_in: Some(ChangeNumber(5)),
            ..file(1, 7)
        };
        totals.count(&file(1, 10), &VerifyOutcome::Ok);
        totals.count(&file(2, 20), &VerifyOutcome::Missing);
        let bad = VerifyOutcome::Bad(Damage::Unreadable { reason: "y".into() });
        totals.count(&shelved, &bad);
        assert_eq!((totals.revisions, totals.shelved), (2, 1));
        assert_eq!((totals.ok, totals.bad, totals.missing), (1, 1, 1));
        assert_eq!(totals.bytes, 17);
        assert!(totals.found_problems());
        assert!(!VerifyTotals::default().found_problems());
    }
}
