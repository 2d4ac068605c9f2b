//! The host column of a protections line, matched against the client's network address:
//! `*` (anywhere), an address with `*` wildcards (`192.168.41.*`), or a network in CIDR
//! form (`192.168.41.0/24`, `[2001:db8:1:2::]/64`; brackets optional around IPv6).

use std::fmt;
use std::net::IpAddr;

/// A parsed host column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// `*`: every client, including one with no network address.
    Any,
    /// A network: addresses whose first `bits` bits equal the network's.
    Network { net: IpAddr, bits: u8 },
    /// An address with `*` wildcards, matched against the address's text (`10.0.*`).
    Glob(String),
}

impl HostPattern {
    /// Parses a host column; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        if text == "*" {
            return Ok(HostPattern::Any);
        }
        let (addr, bits) = match text.split_once('/') {
            Some((addr, bits)) => (addr, Some(bits)),
            None => (text, None),
        };
        let addr = addr
            .strip_prefix('[')
            .and_then(|a| a.strip_suffix(']'))
            .unwrap_or(addr);
        // Only wildcards (`[*]`, `**`): every host, the same as `*`.
        if bits.is_none() && !addr.is_empty() && addr.chars().all(|c| c == '*') {
            return Ok(HostPattern::Any);
        }
        if addr.contains('*') {
            if bits.is_some() {
                return Err("a network (/BITS) cannot also have wildcards".into());
            }
            if !addr
                .chars()
                .all(|c| c.is_ascii_hexdigit() || ":.*".contains(c))
            {
                return Err("expected an IP address, a network or *".into());
            }
            return Ok(HostPattern::Glob(addr.to_ascii_lowercase()));
        }
        let net: IpAddr = addr
            .parse()
            .map_err(|_| "expected an IP address, a network (ADDR/BITS) or *".to_string())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => match b.parse::<u8>() {
                Ok(b) if b <= max => b,
                _ => return Err(format!("the network's prefix length must be 0..={max}")),
            },
        };
        Ok(HostPattern::Network { net, bits })
    }

    /// Whether a client at `address` (`None`: not on a network) matches.
    pub fn matches(&self, address: Option<IpAddr>) -> bool {
        let address = match (self, address) {
            (HostPattern::Any, _) => return true,
            (_, None) => return false,
            (_, Some(a)) => canonical(a),
        };
        match self {
            HostPattern::Any => true,
            HostPattern::Network { net, bits } => in_network(address, canonical(*net), *bits),
            HostPattern::Glob(glob) => {
                crate::protect::name_matches(glob, &address.to_string().to_ascii_lowercase())
            }
        }
    }
}

/// An IPv4 address carried in IPv6 (`::ffff:10.0.0.1`) is the IPv4 address.
fn canonical(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(a, IpAddr::V4),
        v4 => v4,
    }
}

fn in_network(address: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, n, width) = match (address, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => (u32::from(a) as u128, u32::from(n) as u128, 32),
        (IpAddr::V6(a), IpAddr::V6(n)) => (u128::from(a), u128::from(n), 128),
        _ => return false,
    };
    if bits == 0 {
        return true;
    }
    let shift = width - u32::from(bits);
    (a >> shift) == (n >> shift)
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Any => f.write_str("*"),
            HostPattern::Network { net, bits } => {
                let max = if net.is_ipv4() { 32 } else { 128 };
                match (net, *bits == max) {
                    (_, true) => write!(f, "{net}"),
                    (IpAddr::V6(_), false) => write!(f, "[{net}]/{bits}"),
                    (IpAddr::V4(_), false) => write!(f, "{net}/{bits}"),
                }
            }
            HostPattern::Glob(glob) => f.write_str(glob),
        }
    }
}
