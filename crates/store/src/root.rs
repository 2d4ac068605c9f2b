//! A server root's stores opened together: the journal first (recovered against the
//! databases' applied positions), then the metadata database and the have lists writing to it.

use crate::journal::{AppliedPositions, Journal, Recovery};
use crate::{SqliteHaveStore, SqliteStore, StoreConfig, StoreError, have, sqlite};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The metadata database under a root.
pub const METADATA_FILE: &str = "metadata.db";
/// The directory of the have lists under a root.
pub const HAVE_DIR: &str = "have";
/// The directory of the journal files under a root.
pub const JOURNAL_DIR: &str = "journal";

/// The stores of one root.
pub struct RootStores {
    pub meta: SqliteStore,
    pub have: SqliteHaveStore,
    /// `None` when `StoreConfig::journal` is off.
    pub journal: Option<Arc<Journal>>,
    /// What opening the journal found (a torn tail cut, records of commits that never
    /// happened removed).
    pub recovery: Recovery,
}

struct Applied {
    main: u64,
    have_dir: PathBuf,
}

impl AppliedPositions for Applied {
    fn main(&self) -> u64 {
        self.main
    }

    fn have(&self, workspace: &str) -> Result<u64, StoreError> {
        have::applied_position(&self.have_dir, workspace)
    }

    fn drop_have(&self, workspace: &str) -> Result<(), StoreError> {
        have::remove_files(&self.have_dir, workspace)
    }
}

/// Opens (creating when needed) the metadata database, the have lists and, when configured,
/// the journal under `root`.
pub fn open_root(root: &Path, config: &StoreConfig) -> Result<RootStores, StoreError> {
    std::fs::create_dir_all(root).map_err(|source| StoreError::Io {
        path: root.into(),
        source,
    })?;
    let db = root.join(METADATA_FILE);
    let have_dir = root.join(HAVE_DIR);
    let (journal, recovery) = if config.journal {
        let applied = Applied {
            main: sqlite::applied_position(&db, config)?,
            have_dir: have_dir.clone(),
        };
        let (journal, recovery) = Journal::open(
            &root.join(JOURNAL_DIR),
            config.journal_zstd_level,
            config.journal_compress_min_bytes,
            &applied,
        )?;
        (Some(Arc::new(journal)), recovery)
    } else {
        (None, Recovery::default())
    };
    let meta = SqliteStore::open_with(&db, config, journal.clone())?;
    let have = SqliteHaveStore::open_journaled(&have_dir, config, journal.clone())?;
    Ok(RootStores {
        meta,
        have,
        journal,
        recovery,
    })
}
