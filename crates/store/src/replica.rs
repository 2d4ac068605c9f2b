//! A read-only replica's metadata: the primary's journal records applied one at a time (each
//! with its position, atomically), and a store decorator that refuses every other write.

use crate::journal::apply::{MAIN_POSITION_SQL, apply_one};
use crate::sqlite::session::{self, ApplyError, Changed};
use crate::sqlite::{journal_position, schema_version};
use crate::{MetaStore, ReadTxn, SqliteStore, StoreError, WriteJob};
use keel_core::Digest;
use std::sync::Arc;

/// The tables and columns through which a main-database record makes content referenced
/// (lazy copies and open records refer to content one of these already holds; `purges`
/// names content being deleted).
const CONTENT_COLUMNS: [(&str, &str); 2] = [("revisions", "digest"), ("shelved", "digest")];

/// Why a replicated record did not apply.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaApplyError {
    #[error(
        "journal record {position} was taken at schema version {primary}, this replica's \
         database is at {replica}: run the same keel version on the primary and its replicas"
    )]
    Schema {
        position: u64,
        primary: u16,
        replica: u16,
    },
    #[error(
        "journal record {position} does not apply to this replica (table {table}: {kind}): \
         the replica's metadata differs from the primary's; seed it again"
    )]
    Conflict {
        position: u64,
        table: String,
        kind: &'static str,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SqliteStore {
    /// Applies a primary's main-database journal record: its changeset and its position in
    /// one transaction on the writer, so a snapshot sees all of it or none of it.
    pub fn apply_replicated(
        &self,
        position: u64,
        schema: u16,
        changeset: Vec<u8>,
    ) -> Result<(), ReplicaApplyError> {
        let outcome = Arc::new(std::sync::Mutex::new(None));
        let slot = outcome.clone();
        self.run_raw(Box::new(move |conn| {
            let replica = schema_version(conn)?;
            let result = if replica != schema {
                Err(ReplicaApplyError::Schema {
                    position,
                    primary: schema,
                    replica,
                })
            } else {
                apply_one(conn, &changeset, position, MAIN_POSITION_SQL).map_err(|e| match e {
                    ApplyError::Conflict { table, kind } => ReplicaApplyError::Conflict {
                        position,
                        table,
                        kind,
                    },
                    ApplyError::Database(e) => StoreError::from(e).into(),
                })
            };
            *slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
            Ok(())
        }))?;
        let result = outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        result.unwrap_or(Err(StoreError::JobLost.into()))
    }

    /// Records that the journal position up to `position` was passed over (records of the
    /// primary's have lists, which a replica does not apply), unless a newer one is stored, so
    /// a restarted replica does not ask for them again: the journal holding them may be gone.
    pub fn mark_replicated(&self, position: u64) -> Result<(), StoreError> {
        self.run_raw(Box::new(move |conn| {
            conn.execute(
                "INSERT INTO counters VALUES ('journal_position', ?1) \
                 ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                [position as i64],
            )?;
            Ok(())
        }))
    }

    /// The journal position of the last record applied to this database (0 when none).
    pub fn applied_position(&self) -> Result<u64, StoreError> {
        journal_position(self.raw_snapshot()?.conn())
    }

    /// Digests of the content a main-database changeset makes referenced (new revisions and
    /// shelved files), which a replica must hold before the record becomes visible.
    pub fn content_digests(&self, changeset: &[u8]) -> Result<Vec<Digest>, StoreError> {
        self.changed_digests(changeset, &CONTENT_COLUMNS, Changed::Written)
    }

    /// Digests a main-database changeset takes out of the purge queue (`purges`): the
    /// primary deleted their content unless something still refers to it, which a replica
    /// checks on its own metadata once the record is applied.
    pub fn unqueued_purges(&self, changeset: &[u8]) -> Result<Vec<Digest>, StoreError> {
        self.changed_digests(changeset, &[("purges", "digest")], Changed::Deleted)
    }

    fn changed_digests(
        &self,
        changeset: &[u8],
        wanted: &[(&str, &str)],
        which: Changed,
    ) -> Result<Vec<Digest>, StoreError> {
        let snap = self.raw_snapshot()?;
        let mut columns = Vec::new();
        for &(table, column) in wanted {
            let mut stmt = snap.conn().prepare(&format!(
                "SELECT cid FROM pragma_table_info('{table}') WHERE name = ?1"
            ))?;
            let cid: Option<i64> = stmt.query_map([column], |r| r.get(0))?.next().transpose()?;
            if let Some(cid) = cid {
                columns.push((table.to_string(), cid as usize));
            }
        }
        let mut digests: Vec<Digest> = session::changed_blobs(changeset, &columns, which)?
            .into_iter()
            .map(Digest)
            .collect();
        digests.sort();
        digests.dedup();
        Ok(digests)
    }
}

/// A replica's metadata as the service sees it: every read, no write (only the replica's
/// follower changes it, through [`SqliteStore::apply_replicated`]).
pub struct ReadOnlyStore {
    inner: Arc<SqliteStore>,
    /// The primary's address, named in the refusal.
    primary: String,
}

impl ReadOnlyStore {
    pub fn new(inner: Arc<SqliteStore>, primary: String) -> ReadOnlyStore {
        ReadOnlyStore { inner, primary }
    }
}

impl MetaStore for ReadOnlyStore {
    fn snapshot(&self) -> Result<Box<dyn ReadTxn + '_>, StoreError> {
        self.inner.snapshot()
    }

    fn run_write(&self, _job: WriteJob) -> Result<(), StoreError> {
        Err(StoreError::ReadOnly {
            primary: self.primary.clone(),
        })
    }

    fn read_only_primary(&self) -> Option<&str> {
        Some(&self.primary)
    }

    fn commit_epoch(&self) -> u64 {
        self.inner.commit_epoch()
    }
}
