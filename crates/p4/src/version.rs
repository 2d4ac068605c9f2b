//! How the server names itself to P4 clients: the protocol level it speaks and the
//! `serverVersion` string tools parse (`PRODUCT/PLATFORM/YYYY.N/CHANGE (YYYY/MM/DD)`).

/// The protocol level the server advertises (`server2`): the level of the 2024.2 releases,
/// which current clients and clients ten years older both accept. At this level clients
/// digest the server's address into ticket proofs (29 and up) and send file sizes and
/// digests with file content (19 and up).
pub const PROTOCOL_LEVEL: u32 = 59;

/// The release the version string names: at least 2005.2, which P4Java requires.
pub const RELEASE: &str = "2026.1";

/// The build number the version string names: the release date as `YYYYMMDD`. Tools compare
/// this field with the change numbers of the releases that brought a feature (P4Python's own
/// suite wants at least 1398982, 2016.1's second patch), so it must read as a current build.
pub fn build() -> u32 {
    RELEASE_DATE
        .replace('/', "")
        .parse()
        .expect("RELEASE_DATE is YYYY/MM/DD")
}

/// The date the version string carries.
pub const RELEASE_DATE: &str = "2026/11/28";

/// The platform as clients name theirs (`LINUX26X86_64`).
pub fn platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "LINUX26X86_64",
        ("linux", "aarch64") => "LINUX26AARCH64",
        ("macos", "x86_64") => "DARWIN90X86_64",
        ("macos", "aarch64") => "MACOSX12ARM64",
        ("windows", _) => "NTX64",
        _ => "UNKNOWN",
    }
}

/// `Keel/LINUX26X86_64/2026.1/20261128 (2026/11/28)`.
pub fn server_version() -> String {
    format!("Keel/{}/{RELEASE}/{} ({RELEASE_DATE})", platform(), build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_has_the_shape_tools_parse() {
        let v = server_version();
        let parts: Vec<&str> = v.split('/').collect();
        assert_eq!(parts[0], "Keel");
        assert_eq!(parts[2], RELEASE);
        // P4Java turns the third field into a number and wants at least 20052.
        let year_n: u32 = parts[2].replace('.', "").parse().expect("number");
        assert!(year_n >= 20052);
        // The change number, then ` (YYYY/MM/DD)`.
        let change = parts[3].split(' ').next().expect("change");
        let change: u32 = change.parse().expect("change number");
        assert!(change >= 1_398_982, "{v}");
        assert!(v.ends_with(')') && v.contains(" ("));
    }
}
