//! The workspace's have list as a scan needs it, keyed by client file: streamed from the
//! server into compact entries instead of holding every full `FileRecord`.

use std::collections::HashMap;

use keel_proto::v1::{FileRecord, FilesRequest};

use crate::connect::Connection;
use crate::error::Result;
use crate::workspace::WorkspaceCtx;

/// One file the workspace has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaveFile {
    pub depot_file: String,
    pub have_rev: u32,
    /// The have revision's type.
    pub file_type: String,
    /// The have revision's BLAKE3 digest; None when the server gave none it could parse.
    pub digest: Option<[u8; 32]>,
}

/// The have list by client file (relative to the root, `/`-separated).
#[derive(Debug, Default)]
pub struct HaveIndex {
    files: HashMap<String, HaveFile>,
}

impl HaveIndex {
    /// Streams the whole workspace's have list from the server.
    pub async fn fetch(ws: &WorkspaceCtx, conn: &Connection) -> Result<HaveIndex> {
        let mut stream = conn
            .client()
            .have(FilesRequest {
                caller: conn.caller(),
                files: vec![ws.all_files()],
                ..Default::default()
            })
            .await
            .map_err(|s| conn.status(s))?
            .into_inner();
        let mut index = HaveIndex::default();
        while let Some(record) = stream.message().await.map_err(|s| conn.status(s))? {
            index.insert(ws, record);
        }
        Ok(index)
    }

    /// Builds the index from records already at hand.
    pub fn from_records(ws: &WorkspaceCtx, records: impl IntoIterator<Item = FileRecord>) -> Self {
        let mut index = HaveIndex::default();
        for record in records {
            index.insert(ws, record);
        }
        index
    }

    /// Adds one have record (ignored when it maps to no client file).
    pub fn insert(&mut self, ws: &WorkspaceCtx, record: FileRecord) {
        let Some(client_file) = ws.client_file_of(&record) else {
            return;
        };
        let mut digest = [0u8; 32];
        let digest = hex::decode_to_slice(&record.head_digest, &mut digest)
            .ok()
            .map(|()| digest);
        self.files.insert(
            client_file,
            HaveFile {
                depot_file: record.depot_file,
                have_rev: record.have_rev,
                file_type: record.head_type,
                digest,
            },
        );
    }

    pub(crate) fn with_capacity(n: usize) -> HaveIndex {
        HaveIndex {
            files: HashMap::with_capacity(n),
        }
    }

    /// Adds one entry as it was cached.
    pub(crate) fn put(&mut self, client_file: String, file: HaveFile) {
        self.files.insert(client_file, file);
    }

    /// Forgets the file a have record names (ignored when it maps to no client file).
    pub fn remove(&mut self, ws: &WorkspaceCtx, record: &FileRecord) {
        if let Some(client_file) = ws.client_file_of(record) {
            self.files.remove(&client_file);
        }
    }

    pub fn get(&self, client_file: &str) -> Option<&HaveFile> {
        self.files.get(client_file)
    }

    /// The entry with its key (borrowed for as long as the index).
    pub fn get_key_value(&self, client_file: &str) -> Option<(&str, &HaveFile)> {
        self.files
            .get_key_value(client_file)
            .map(|(k, v)| (k.as_str(), v))
    }

    pub fn contains(&self, client_file: &str) -> bool {
        self.files.contains_key(client_file)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &HaveFile)> {
        self.files.iter()
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}
