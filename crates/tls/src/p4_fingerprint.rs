//! The certificate fingerprint as P4 clients pin it (`p4 trust`): SHA-1 of the certificate's
//! public key (its DER `SubjectPublicKeyInfo`), in uppercase hex pairs joined by colons. The
//! key is found by walking the certificate's DER just far enough.

/// One DER element: its tag, and where its contents and the whole element end.
struct Element {
    tag: u8,
    start: usize,
    contents: usize,
    end: usize,
}

/// The DER element at `at` in `der`.
fn element(der: &[u8], at: usize) -> Option<Element> {
    let tag = *der.get(at)?;
    let first = *der.get(at + 1)? as usize;
    let (len, contents) = if first < 0x80 {
        (first, at + 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let bytes = der.get(at + 2..at + 2 + n)?;
        let len = bytes.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
        (len, at + 2 + n)
    };
    let end = contents.checked_add(len)?;
    (end <= der.len()).then_some(Element {
        tag,
        start: at,
        contents,
        end,
    })
}

/// The DER `SubjectPublicKeyInfo` of the X.509 certificate `cert`.
pub fn subject_public_key_info(cert: &[u8]) -> Option<&[u8]> {
    const SEQUENCE: u8 = 0x30;
    const VERSION: u8 = 0xa0;
    let certificate = element(cert, 0).filter(|e| e.tag == SEQUENCE)?;
    let tbs = element(cert, certificate.contents).filter(|e| e.tag == SEQUENCE)?;
    let mut at = tbs.contents;
    // [0] version (optional), serialNumber, signature, issuer, validity, subject.
    let mut skipped = 0;
    while skipped < 5 {
        let e = element(cert, at)?;
        at = e.end;
        if e.tag != VERSION {
            skipped += 1;
        }
        if at >= tbs.end {
            return None;
        }
    }
    let spki = element(cert, at).filter(|e| e.tag == SEQUENCE)?;
    Some(&cert[spki.start..spki.end])
}

/// The fingerprint P4 clients show and pin for the certificate `cert` (DER).
pub fn p4_fingerprint(cert: &[u8]) -> Option<String> {
    let spki = subject_public_key_info(cert)?;
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, spki);
    Some(
        digest
            .as_ref()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(":"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::PublicKeyData;

    #[test]
    fn finds_the_public_key_of_a_generated_certificate() {
        let pair = rcgen::generate_simple_self_signed(vec!["keel".to_string()]).expect("cert");
        let der = pair.cert.der().to_vec();
        let spki = subject_public_key_info(&der).expect("spki");
        // rcgen's own encoding of the key pair's SubjectPublicKeyInfo.
        assert_eq!(spki, pair.signing_key.subject_public_key_info().as_slice());
        let fp = p4_fingerprint(&der).expect("fingerprint");
        assert_eq!(fp.len(), 20 * 3 - 1);
        assert!(fp.split(':').all(|p| p.len() == 2));
    }

    #[test]
    fn damaged_certificates_give_none() {
        assert!(p4_fingerprint(&[]).is_none());
        assert!(p4_fingerprint(&[0x30, 0x82, 0xff, 0xff]).is_none());
        assert!(p4_fingerprint(&[0x30, 0x03, 0x02, 0x01, 0x00]).is_none());
    }
}
