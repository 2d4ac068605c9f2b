//! Following the live journal from a position: the records a replica asks for, read from the
//! journal files across rotations, only up to the committed position (never a record whose
//! commit may still fail and be voided).

use super::format::{FILE_HEADER_LEN, Target};
use super::read::JournalFile;
use super::{Journal, JournalError, file_path};
use std::path::PathBuf;

/// One committed record, as a follower passes it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowedRecord {
    pub position: u64,
    pub target: Target,
    /// Schema version of the database the changeset was taken from.
    pub schema: u16,
    /// The changeset, decompressed (empty for a dropped have list).
    pub changeset: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(
        "journal position {from} is older than the oldest journal kept ({oldest} starts at \
         {first}): seed the replica from a checkpoint"
    )]
    TooOld {
        from: u64,
        oldest: PathBuf,
        first: u64,
    },
    #[error(
        "journal position {from} is past the primary's journal, which ends at {end}: the \
         replica follows another server's journal; seed it again from this primary"
    )]
    Ahead { from: u64, end: u64 },
    #[error("the server keeps no journal (store.journal is off)")]
    NoJournal,
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// A reader of the live journal that remembers where it stopped.
pub struct Follower {
    dir: PathBuf,
    /// The file being read, where its next unread record starts, and that record's position.
    number: u64,
    offset: u64,
    file_next: u64,
    /// Records before this position are skipped (the follower's start).
    from: u64,
}

impl Follower {
    /// A follower whose first record is the one at `from` (1 for the journal's start).
    pub fn start(journal: &Journal, from: u64) -> Result<Follower, FollowError> {
        let end = journal.committed_position();
        if from > end + 1 {
            return Err(FollowError::Ahead { from, end });
        }
        let dir = journal.dir().to_path_buf();
        let io = |source| JournalError::Io {
            path: dir.clone(),
            source,
        };
        let mut numbers: Vec<u64> = std::fs::read_dir(&dir)
            .map_err(io)?
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().to_string_lossy().into_owned();
                name.strip_prefix("journal.")?.parse::<u64>().ok()
            })
            .collect();
        numbers.sort_unstable();
        // The newest file that starts at or before `from` holds it (or will).
        let mut chosen = None;
        for number in &numbers {
            let first = JournalFile::open(&file_path(&dir, *number))?
                .header()
                .first_position;
            if first <= from {
                chosen = Some((*number, first));
            } else if chosen.is_none() {
                return Err(FollowError::TooOld {
                    from,
                    oldest: file_path(&dir, *number),
                    first,
                });
            }
        }
        let (number, first) = chosen.ok_or(FollowError::NoJournal)?;
        Ok(Follower {
            dir,
            number,
            offset: FILE_HEADER_LEN as u64,
            file_next: first,
            from,
        })
    }

    /// The position of the next record this follower will return.
    pub fn next_position(&self) -> u64 {
        self.file_next.max(self.from)
    }

    /// Up to `max` records after the last one returned whose position is at most `upto` (the
    /// journal's committed position); void records are skipped.
    pub fn read(&mut self, upto: u64, max: usize) -> Result<Vec<FollowedRecord>, FollowError> {
        let mut out = Vec::new();
        // Set once the next file was seen to exist: this one is then closed, and read once
        // more to its end before moving on (it may have grown since it was opened).
        let mut closed = false;
        loop {
            let path = file_path(&self.dir, self.number);
            let mut file = JournalFile::open_at(&path, self.offset, self.file_next)?;
            while out.len() < max && file.next_position() <= upto {
                let Some(record) = file.next_record()? else {
                    break;
                };
                self.offset = file.complete_len();
                self.file_next = file.next_position();
                if record.void || record.position < self.from {
                    continue;
                }
                let changeset = record.changeset(&path)?;
                out.push(FollowedRecord {
                    position: record.position,
                    target: record.target,
                    schema: record.schema,
                    changeset,
                });
            }
            if out.len() >= max || file.next_position() > upto {
                return Ok(out);
            }
            let next = file_path(&self.dir, self.number + 1);
            if !next.exists() {
                return Ok(out);
            }
            if closed {
                self.number += 1;
                self.offset = FILE_HEADER_LEN as u64;
                self.file_next = JournalFile::open(&next)?.header().first_position;
                closed = false;
            } else {
                closed = true;
            }
        }
    }
}
