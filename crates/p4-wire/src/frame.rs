//! The 5-byte header every P4 RPC message starts with: a check byte (the XOR of the four length
//! bytes) and the body's length as a little-endian `u32`.

/// Bytes in a message header.
pub const HEADER_LEN: usize = 5;

/// The smallest body a client can send (one variable with a one-byte name and an empty value
/// is 7 bytes; the client's own check refuses bodies under 11 as not P4).
pub const MIN_BODY: usize = 7;

/// Why a header is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The check byte does not match the length: the peer does not speak this protocol.
    #[error("not a P4 RPC message (header check byte {found:#04x}, expected {expected:#04x})")]
    BadCheck { found: u8, expected: u8 },
    /// The body is shorter than any message can be.
    #[error("P4 RPC message body of {len} bytes is too short")]
    TooShort { len: usize },
    /// The body is longer than this server accepts.
    #[error("P4 RPC message of {len} bytes is over the limit of {max} bytes")]
    TooBig { len: usize, max: usize },
}

/// The header of a body of `len` bytes.
pub fn encode_header(len: u32) -> [u8; HEADER_LEN] {
    let b = len.to_le_bytes();
    [b[0] ^ b[1] ^ b[2] ^ b[3], b[0], b[1], b[2], b[3]]
}

/// The body length a header announces, once it is checked against `max` bytes.
pub fn decode_header(h: [u8; HEADER_LEN], max: usize) -> Result<usize, FrameError> {
    let expected = h[1] ^ h[2] ^ h[3] ^ h[4];
    if h[0] != expected {
        return Err(FrameError::BadCheck {
            found: h[0],
            expected,
        });
    }
    let len = u32::from_le_bytes([h[1], h[2], h[3], h[4]]) as usize;
    if len < MIN_BODY {
        return Err(FrameError::TooShort { len });
    }
    if len > max {
        return Err(FrameError::TooBig { len, max });
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        for len in [7u32, 176, 412, 0x01_00_00, 0x1FFF_FFFE] {
            let h = encode_header(len);
            assert_eq!(decode_header(h, usize::MAX), Ok(len as usize));
        }
    }

    #[test]
    fn header_matches_a_captured_client_message() {
        // A client's first `protocol` message: 176 bytes of body.
        assert_eq!(encode_header(176), [0xb0, 0xb0, 0, 0, 0]);
        // The second, 412 bytes.
        assert_eq!(encode_header(412), [0x9d, 0x9c, 0x01, 0, 0]);
    }

    #[test]
    fn bad_headers_are_refused_with_the_reason() {
        assert!(matches!(
            decode_header([0x00, 0xb0, 0, 0, 0], 1 << 20),
            Err(FrameError::BadCheck { .. })
        ));
        assert_eq!(
            decode_header(encode_header(3), 1 << 20),
            Err(FrameError::TooShort { len: 3 })
        );
        assert_eq!(
            decode_header(encode_header(2000), 1000),
            Err(FrameError::TooBig {
                len: 2000,
                max: 1000
            })
        );
        // An HTTP or TLS client's first bytes are refused, not read as a length.
        assert!(decode_header(*b"GET /", 1 << 20).is_err());
        assert!(decode_header([0x16, 0x03, 0x01, 0x02, 0x00], 1 << 20).is_err());
    }
}
