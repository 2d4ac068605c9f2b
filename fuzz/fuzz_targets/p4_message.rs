//! Fuzzes the P4 RPC wire decoder: a header and body (as a client sends them) must decode or be
//! refused with an error, never panic; a decoded message must encode back to the same body.
#![no_main]

use keel_p4_wire::frame::{HEADER_LEN, decode_header};
use keel_p4_wire::message::Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() >= HEADER_LEN {
        let header = [data[0], data[1], data[2], data[3], data[4]];
        let _ = decode_header(header, 1 << 20);
    }
    if let Ok(message) = Message::decode(data) {
        assert_eq!(message.encode(), data, "a decoded body must encode back to itself");
    }
});
