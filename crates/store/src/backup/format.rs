//! The checkpoint file's layout: a plain prefix, a zstd stream of tagged items (databases,
//! tables, rows), and a BLAKE3 digest of everything before it. `JOURNAL.md` documents it.

use std::io::{self, Read, Write};

/// First bytes of a checkpoint file.
pub const MAGIC: &[u8; 8] = b"KEELCKPT";
/// Version of the layout this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the compressed body: magic and version.
pub const PREFIX_LEN: u64 = 12;
/// Bytes of the trailer: magic and the digest.
pub const TRAILER_LEN: u64 = 40;
/// First bytes of the trailer.
pub const TRAILER_MAGIC: &[u8; 8] = b"KEELDIGS";

/// Item tags inside the compressed body.
pub const TAG_INFO: u8 = b'I';
pub const TAG_DATABASE: u8 = b'D';
pub const TAG_TABLE: u8 = b'T';
pub const TAG_ROW: u8 = b'R';
pub const TAG_TABLE_END: u8 = b'E';
pub const TAG_END: u8 = b'Z';

/// Value tags inside a row.
pub const VALUE_NULL: u8 = 0;
pub const VALUE_INTEGER: u8 = 1;
pub const VALUE_REAL: u8 = 2;
pub const VALUE_TEXT: u8 = 3;
pub const VALUE_BLOB: u8 = 4;

/// Longest text, blob or name the reader accepts (guards against a damaged length).
pub const MAX_VALUE_LEN: u64 = 1 << 30;

pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub fn put_signed(out: &mut Vec<u8>, value: i64) {
    put_varint(out, ((value << 1) ^ (value >> 63)) as u64);
}

pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Reads the items of a checkpoint body.
pub struct ItemReader<R> {
    inner: R,
}

impl<R: Read> ItemReader<R> {
    pub fn new(inner: R) -> Self {
        ItemReader { inner }
    }

    pub fn byte(&mut self) -> io::Result<u8> {
        let mut b = [0u8; 1];
        self.inner.read_exact(&mut b)?;
        Ok(b[0])
    }

    pub fn varint(&mut self) -> io::Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("varint longer than 64 bits"))
    }

    pub fn signed(&mut self) -> io::Result<i64> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let len = self.varint()?;
        if len > MAX_VALUE_LEN {
            return Err(bad("length beyond the limit"));
        }
        let mut out = vec![0u8; len as usize];
        self.inner.read_exact(&mut out)?;
        Ok(out)
    }

    pub fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?).map_err(|_| bad("text that is not UTF-8"))
    }

    pub fn f64(&mut self) -> io::Result<f64> {
        let mut b = [0u8; 8];
        self.inner.read_exact(&mut b)?;
        Ok(f64::from_le_bytes(b))
    }
}

pub fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Writes to `inner` while hashing what passes (the digest covers the whole file).
pub struct HashingWriter<W> {
    pub inner: W,
    pub hasher: blake3::Hasher,
    pub written: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        let values = [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN, 1 << 40];
        for v in values {
            put_signed(&mut out, v);
        }
        put_bytes(&mut out, b"text");
        let mut r = ItemReader::new(&out[..]);
        for v in values {
            assert_eq!(r.signed().unwrap(), v);
        }
        assert_eq!(r.string().unwrap(), "text");
        assert!(r.byte().is_err());
    }
}
