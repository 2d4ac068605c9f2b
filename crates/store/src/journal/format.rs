//! The journal's on-disk layout: a file header, then records (header, database name, body).
//! `JOURNAL.md` in this crate documents the same layout for readers in other languages.

/// First bytes of every journal file.
pub const FILE_MAGIC: &[u8; 8] = b"KEELJRNL";
/// First bytes of every record.
pub const RECORD_MAGIC: &[u8; 4] = b"KJR1";
/// Version of the file and record layout this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes in a journal file's header.
pub const FILE_HEADER_LEN: usize = 40;
/// Bytes in a record's fixed header (the database name and the body follow).
pub const RECORD_HEADER_LEN: usize = 56;
/// Offset of the state byte inside a record header (not covered by the checksum).
pub const STATE_OFFSET: u64 = 5;
/// State byte of a record that was committed (or is being committed).
pub const STATE_LIVE: u8 = 0;
/// State byte of a record whose commit never happened (see `Journal::recover`).
pub const STATE_VOID: u8 = b'V';
/// Longest database name a record may carry (a workspace name).
pub const MAX_NAME_LEN: usize = 1024;

/// Which database a record belongs to, and what it does to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The main metadata database: the body is a changeset.
    Main,
    /// One workspace's have list: the body is a changeset of its `have` table.
    Have(String),
    /// One workspace's have list is deleted (no body).
    DropHave(String),
}

impl Target {
    fn kind(&self) -> u8 {
        match self {
            Target::Main => 1,
            Target::Have(_) => 2,
            Target::DropHave(_) => 3,
        }
    }

    /// The database name written after the header ("" for the main database).
    pub fn name(&self) -> &str {
        match self {
            Target::Main => "",
            Target::Have(ws) | Target::DropHave(ws) => ws,
        }
    }

    /// The database this record changes ("main" or "have:WORKSPACE").
    pub fn database(&self) -> String {
        match self {
            Target::Main => "main".into(),
            Target::Have(ws) | Target::DropHave(ws) => format!("have:{ws}"),
        }
    }

    fn from_parts(kind: u8, name: String) -> Option<Target> {
        match kind {
            1 if name.is_empty() => Some(Target::Main),
            2 if !name.is_empty() => Some(Target::Have(name)),
            3 if !name.is_empty() => Some(Target::DropHave(name)),
            _ => None,
        }
    }
}

/// How a record's body is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Raw,
    Zstd,
}

/// A journal file's header: which file in the sequence, and the position its first record has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// N of `journal.N`: how many checkpoints came before this file.
    pub number: u64,
    /// Position of the first record this file holds (or will hold).
    pub first_position: u64,
}

impl FileHeader {
    pub fn encode(&self) -> [u8; FILE_HEADER_LEN] {
        let mut out = [0u8; FILE_HEADER_LEN];
        out[0..8].copy_from_slice(FILE_MAGIC);
        out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out[12..20].copy_from_slice(&self.number.to_le_bytes());
        out[20..28].copy_from_slice(&self.first_position.to_le_bytes());
        let sum = checksum(&[&out[0..28]]);
        out[28..40].copy_from_slice(&sum[..12]);
        out
    }

    pub fn decode(bytes: &[u8; FILE_HEADER_LEN]) -> Result<FileHeader, HeaderError> {
        if &bytes[0..8] != FILE_MAGIC {
            return Err(HeaderError::NotAJournal);
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(HeaderError::Version(version));
        }
        if checksum(&[&bytes[0..28]])[..12] != bytes[28..40] {
            return Err(HeaderError::Checksum);
        }
        Ok(FileHeader {
            number: u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")),
            first_position: u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes")),
        })
    }
}

/// A record's fixed header, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub position: u64,
    pub void: bool,
    pub kind: u8,
    pub encoding: Encoding,
    /// Schema version of the database the changeset was taken from.
    pub schema: u16,
    pub name_len: usize,
    pub body_len: u64,
    pub raw_len: u64,
    pub checksum: [u8; 16],
}

/// Why a header could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("not a Keel journal (bad magic bytes)")]
    NotAJournal,
    #[error("journal format version {0} is not one this keel reads ({FORMAT_VERSION})")]
    Version(u32),
    #[error("header checksum mismatch")]
    Checksum,
    #[error("bad record header: {0}")]
    Bad(&'static str),
}

/// Everything needed to write one record.
pub struct NewRecord<'a> {
    pub position: u64,
    pub target: &'a Target,
    pub schema: u16,
    pub encoding: Encoding,
    pub raw_len: u64,
    pub body: &'a [u8],
}

impl NewRecord<'_> {
    /// The header and the database name, ready to be written before the body.
    pub fn encode_head(&self) -> Vec<u8> {
        let name = self.target.name().as_bytes();
        let mut out = vec![0u8; RECORD_HEADER_LEN + name.len()];
        out[0..4].copy_from_slice(RECORD_MAGIC);
        out[4] = FORMAT_VERSION as u8;
        out[5] = STATE_LIVE;
        out[6] = self.target.kind();
        out[7] = match self.encoding {
            Encoding::Raw => 0,
            Encoding::Zstd => 1,
        };
        out[8..16].copy_from_slice(&self.position.to_le_bytes());
        out[16..18].copy_from_slice(&self.schema.to_le_bytes());
        out[18..20].copy_from_slice(&(name.len() as u16).to_le_bytes());
        out[24..32].copy_from_slice(&(self.body.len() as u64).to_le_bytes());
        out[32..40].copy_from_slice(&self.raw_len.to_le_bytes());
        out[RECORD_HEADER_LEN..].copy_from_slice(name);
        let sum = checksum(&[&out[0..40], name, self.body]);
        out[40..56].copy_from_slice(&sum);
        out
    }
}

impl RecordHeader {
    pub fn decode(bytes: &[u8; RECORD_HEADER_LEN]) -> Result<RecordHeader, HeaderError> {
        if &bytes[0..4] != RECORD_MAGIC {
            return Err(HeaderError::Bad("magic"));
        }
        if u32::from(bytes[4]) != FORMAT_VERSION {
            return Err(HeaderError::Version(u32::from(bytes[4])));
        }
        let void = match bytes[5] {
            STATE_LIVE => false,
            STATE_VOID => true,
            _ => return Err(HeaderError::Bad("state")),
        };
        let encoding = match bytes[7] {
            0 => Encoding::Raw,
            1 => Encoding::Zstd,
            _ => return Err(HeaderError::Bad("encoding")),
        };
        let name_len = usize::from(u16::from_le_bytes([bytes[18], bytes[19]]));
        if name_len > MAX_NAME_LEN {
            return Err(HeaderError::Bad("name length"));
        }
        Ok(RecordHeader {
            position: u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")),
            void,
            kind: bytes[6],
            encoding,
            schema: u16::from_le_bytes([bytes[16], bytes[17]]),
            name_len,
            body_len: u64::from_le_bytes(bytes[24..32].try_into().expect("8 bytes")),
            raw_len: u64::from_le_bytes(bytes[32..40].try_into().expect("8 bytes")),
            checksum: bytes[40..56].try_into().expect("16 bytes"),
        })
    }

    /// Whether `name` and `body` are what this header (`raw`, as read) was written with.
    pub fn verify(&self, raw: &[u8; RECORD_HEADER_LEN], name: &[u8], body: &[u8]) -> bool {
        let mut head = [0u8; 40];
        head.copy_from_slice(&raw[0..40]);
        head[5] = STATE_LIVE;
        checksum(&[&head, name, body]) == self.checksum
    }

    /// The record's target, from its kind and database name.
    pub fn target(&self, name: Vec<u8>) -> Result<Target, HeaderError> {
        let name = String::from_utf8(name).map_err(|_| HeaderError::Bad("database name"))?;
        Target::from_parts(self.kind, name).ok_or(HeaderError::Bad("kind"))
    }

    /// Bytes from the start of the header to the end of the body.
    pub fn total_len(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + self.name_len as u64 + self.body_len
    }
}

/// The first 16 bytes of the BLAKE3 hash of `parts`, concatenated.
fn checksum(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_checksums_catch_changes() {
        let file = FileHeader {
            number: 3,
            first_position: 77,
        };
        let mut bytes = file.encode();
        assert_eq!(FileHeader::decode(&bytes), Ok(file));
        bytes[15] ^= 1;
        assert_eq!(FileHeader::decode(&bytes), Err(HeaderError::Checksum));

        let target = Target::Have("ws".into());
        let record = NewRecord {
            position: 9,
            target: &target,
            schema: 4,
            encoding: Encoding::Zstd,
            raw_len: 100,
            body: b"body",
        };
        let head = record.encode_head();
        let raw: [u8; RECORD_HEADER_LEN] = head[..RECORD_HEADER_LEN].try_into().unwrap();
        let header = RecordHeader::decode(&raw).unwrap();
        assert_eq!(header.position, 9);
        assert_eq!(header.schema, 4);
        assert_eq!(header.body_len, 4);
        assert!(header.verify(&raw, b"ws", b"body"));
        assert!(!header.verify(&raw, b"ws", b"bodx"));
        assert_eq!(header.target(b"ws".to_vec()), Ok(target));
        // Voiding flips only the state byte, which the checksum leaves out.
        let mut voided = raw;
        voided[STATE_OFFSET as usize] = STATE_VOID;
        let header = RecordHeader::decode(&voided).unwrap();
        assert!(header.void);
        assert!(header.verify(&voided, b"ws", b"body"));
    }
}
