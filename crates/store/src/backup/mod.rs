//! Portable checkpoints (a logical dump of every table, not a copy of SQLite's files) and
//! restoring a root from a checkpoint plus the journals written after it.

pub mod checkpoint;
pub mod format;
mod paced;
pub mod restore;

pub use checkpoint::{
    CHECKPOINT_DIR, CheckpointError, CheckpointReport, Progress, write_checkpoint,
};
pub use restore::{RestoreError, RestoreProgress, RestoreReport, restore, verify_digest};
