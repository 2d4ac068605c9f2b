//! The purge queue's recovery path: digests left queued by an interrupted obliterate are purged
//! on start, but only when nothing refers to them.

use keel_blob::{BlobStore, CompressionPolicy, FsBlobStore};
use keel_core::{ChangeNumber, DepotPath, Digest, FileAction, FileType};
use keel_service::{Service, ServiceConfig, ServiceError};
use keel_store::{MetaStore, ShelvedRow, SqliteHaveStore, SqliteStore, StoreConfig};
use std::sync::Arc;

fn put(blobs: &FsBlobStore, bytes: &[u8]) -> Digest {
    let mut writer = blobs.writer().expect("writer");
    writer.write(bytes).expect("write");
    let pending = writer.finish().expect("finish");
    let digest = pending.info.digest;
    blobs.publish(vec![pending]).expect("publish");
    digest
}

#[test]
fn recovery_purges_only_unreferenced_queued_content() {
    let dir = tempfile::tempdir().expect("temp dir");
    let meta: Arc<dyn MetaStore> = Arc::new(
        SqliteStore::open(&dir.path().join("metadata.db"), &StoreConfig::default()).expect("store"),
    );
    let have = SqliteHaveStore::open(&dir.path().join("have")).expect("have");
    let blobs = Arc::new(
        FsBlobStore::open(dir.path().join("content"), CompressionPolicy::default()).expect("blobs"),
    );
    let orphan = put(&blobs, b"nobody refers to this any more");
    let shelved = put(&blobs, b"still shelved");
    keel_store::write(meta.as_ref(), move |txn| {
        txn.put_shelved(&ShelvedRow {
            change: ChangeNumber(7),
            path: DepotPath::parse("//depot/kept").expect("depot path"),
            action: FileAction::Add,
            file_type: FileType::parse("text").expect("type"),
            digest: Some(shelved),
            size: 13,
            md5: String::new(),
            base_rev: 0,
            move_file: None,
            mod_time: 0,
        })?;
        txn.queue_purge(&orphan)?;
        txn.queue_purge(&shelved)?;
        Ok::<_, ServiceError>(())
    })
    .expect("queue purges");

    let service = Service::new(
        meta.clone(),
        have,
        blobs.clone(),
        Arc::new(|| 0),
        ServiceConfig::default(),
        dir.path().to_path_buf(),
    );
    let (count, bytes) = service.recover_purges().expect("recover");
    assert_eq!(count, 1);
    assert!(bytes > 0);
    assert!(!blobs.contains(&orphan).expect("contains"));
    assert!(blobs.contains(&shelved).expect("contains"));
    let left = meta
        .snapshot()
        .expect("snapshot")
        .queued_purges(10)
        .expect("queue");
    assert!(left.is_empty(), "{left:?}");
}
