//! A certificate's fingerprint: the SHA-256 of its DER bytes, written as Perforce writes it
//! (upper-case hex pairs joined by colons).

use std::fmt;
use std::str::FromStr;

/// The SHA-256 of a certificate's DER encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a DER-encoded certificate.
    pub fn of_der(der: &[u8]) -> Fingerprint {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(digest.as_ref());
        Fingerprint(bytes)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, byte) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{byte:02X}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// A fingerprint that is not 32 colon-separated hex pairs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a SHA-256 fingerprint (32 hex pairs separated by colons)")]
pub struct ParseFingerprintError {
    pub text: String,
}

impl FromStr for Fingerprint {
    type Err = ParseFingerprintError;

    /// Reads `AB:CD:...` (either case); colons may be left out.
    fn from_str(text: &str) -> Result<Fingerprint, ParseFingerprintError> {
        let bad = || ParseFingerprintError {
            text: text.to_string(),
        };
        let hex: Vec<u8> = text.bytes().filter(|b| *b != b':').collect();
        if hex.len() != 64 {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in hex.chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            bytes[i] = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Fingerprint(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::Fingerprint;

    #[test]
    fn written_as_colon_hex_and_read_back() {
        // SHA-256 of the empty input.
        let fp = Fingerprint::of_der(b"");
        let text = fp.to_string();
        assert_eq!(
            text,
            "E3:B0:C4:42:98:FC:1C:14:9A:FB:F4:C8:99:6F:B9:24:27:AE:41:E4:64:9B:93:4C:A4:95:99:1B:78:52:B8:55"
        );
        assert_eq!(text.parse::<Fingerprint>(), Ok(fp));
        assert_eq!(text.to_lowercase().parse::<Fingerprint>(), Ok(fp));
        assert_eq!(text.replace(':', "").parse::<Fingerprint>(), Ok(fp));
        for bad in ["", "AB:CD", &text[3..], &text.replace('E', "G")] {
            assert!(bad.parse::<Fingerprint>().is_err(), "{bad}");
        }
    }
}
