//! Whether a `keel` linked with musl (the packaged one) finds the server's host and the user as
//! the system's C library would, or must hand its command line to `keel-server`, which is
//! linked with the system's library.
//!
//! musl looks host names up in `/etc/hosts` and DNS only, and users in `/etc/passwd` only. The
//! system's library follows `/etc/nsswitch.conf`, whose sources can be anything installed: mDNS,
//! systemd's resolver and users, LDAP, SSSD. A lookup musl makes is the one the system would
//! make when every source the system would ask before finding the answer is one musl reads:
//! `files` and `dns`, or an mDNS source for a name outside `.local` (the only names it answers).

use std::net::IpAddr;

/// The parts of `/etc/nsswitch.conf` a quick read depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameService {
    /// The `hosts` line's sources in order (`[...]` actions dropped).
    hosts: Vec<String>,
    /// The `passwd` line's sources in order.
    passwd: Vec<String>,
}

impl NameService {
    /// This machine's: `/etc/nsswitch.conf`, or the C library's defaults without it.
    pub(crate) fn of_this_machine() -> NameService {
        NameService::parse(&std::fs::read_to_string("/etc/nsswitch.conf").unwrap_or_default())
    }

    /// The `hosts` and `passwd` lines of an `nsswitch.conf`; a missing line is the system C
    /// library's default (`dns files` and `files`).
    pub(crate) fn parse(text: &str) -> NameService {
        let sources = |database: &str, default: &[&str]| -> Vec<String> {
            text.lines()
                .map(|line| line.split('#').next().unwrap_or_default())
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.trim() == database)
                .map(|(_, sources)| without_actions(sources))
                .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
        };
        NameService {
            hosts: sources("hosts", &["dns", "files"]),
            passwd: sources("passwd", &["files"]),
        }
    }

    /// Whether musl finds `host` as the system would. `hosts_file` is `/etc/hosts`' text, read
    /// only when the answer depends on it.
    pub(crate) fn finds_host_alike(&self, host: &str, hosts_file: &dyn Fn() -> String) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.parse::<IpAddr>().is_ok() {
            return true; // no lookup at all
        }
        if self.hosts.first().is_some_and(|s| s == "files") && listed_in(&hosts_file(), host) {
            return true; // both stop at `files`
        }
        self.hosts.iter().all(|source| match source.as_str() {
            "files" | "dns" => true,
            "mdns" | "mdns4" | "mdns6" | "mdns_minimal" | "mdns4_minimal" | "mdns6_minimal" => {
                !is_local_domain(host)
            }
            _ => false,
        })
    }

    /// Whether a user musl found in `/etc/passwd` is the one the system would find: its first
    /// source is `files`. (A user musl does not find may be in a later source: hand on.)
    pub(crate) fn finds_user_alike(&self) -> bool {
        self.passwd.first().is_some_and(|s| s == "files")
    }
}

/// A line's sources without its `[STATUS=action]` items.
fn without_actions(sources: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_action = false;
    for word in sources.split_whitespace() {
        if word.starts_with('[') {
            in_action = true;
        }
        if !in_action {
            out.push(word.to_string());
        }
        if word.ends_with(']') {
            in_action = false;
        }
    }
    out
}

/// Whether `/etc/hosts` (its text) gives `host` an address.
fn listed_in(hosts_file: &str, host: &str) -> bool {
    hosts_file.lines().any(|line| {
        let entry = line.split('#').next().unwrap_or_default();
        entry
            .split_whitespace()
            .skip(1)
            .any(|name| name.eq_ignore_ascii_case(host))
    })
}

/// A name in the `.local` domain, which the mDNS sources answer.
fn is_local_domain(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "local" || host.ends_with(".local")
}

#[cfg(test)]
mod tests {
    use super::NameService;

    const DESKTOP: &str = "passwd: files systemd\n\
        # hosts: files dns\n\
        hosts:          files mdns4_minimal [NOTFOUND=return] dns\n\
        networks: files\n";
    const HOSTS: &str = "127.0.0.1 localhost\n::1 localhost ip6-localhost # comment\n\
        10.0.0.5 build-7.lan build-7\n#10.0.0.6 commented\n";

    fn alike(service: &NameService, host: &str) -> bool {
        service.finds_host_alike(host, &|| HOSTS.to_string())
    }

    #[test]
    fn sources_are_read_without_actions_and_comments() {
        let service = NameService::parse(DESKTOP);
        assert_eq!(service.hosts, ["files", "mdns4_minimal", "dns"]);
        assert_eq!(service.passwd, ["files", "systemd"]);
        let defaults = NameService::parse("");
        assert_eq!(defaults.hosts, ["dns", "files"]);
        assert_eq!(defaults.passwd, ["files"]);
    }

    #[test]
    fn addresses_need_no_lookup() {
        let ldap = NameService::parse("hosts: ldap\n");
        for host in ["127.0.0.1", "::1", "[::1]", "10.1.2.3"] {
            assert!(alike(&ldap, host), "{host}");
        }
    }

    #[test]
    fn files_and_dns_are_what_musl_reads() {
        let plain = NameService::parse("hosts: files dns\npasswd: files\n");
        assert!(alike(&plain, "keel.example.com"));
        assert!(alike(&plain, "printer.local"));
        assert!(plain.finds_user_alike());
    }

    #[test]
    fn mdns_answers_only_the_local_domain() {
        let desktop = NameService::parse(DESKTOP);
        assert!(alike(&desktop, "keel.example.com"));
        assert!(!alike(&desktop, "keel.local"));
        assert!(!alike(&desktop, "KEEL.LOCAL."));
        assert!(
            alike(&desktop, "localhost"),
            "listed in /etc/hosts, files first"
        );
        assert!(alike(&desktop, "build-7"));
        assert!(!alike(&desktop, "commented.local"));
    }

    #[test]
    fn other_sources_hand_on_unless_files_answers_first() {
        let resolved = NameService::parse(
            "hosts: mymachines resolve [!UNAVAIL=return] files myhostname dns\n",
        );
        assert!(!alike(&resolved, "keel.example.com"));
        assert!(
            !alike(&resolved, "localhost"),
            "resolve is asked before files"
        );
        let sssd = NameService::parse("hosts: files sss dns\npasswd: sss files\n");
        assert!(!alike(&sssd, "keel.example.com"));
        assert!(alike(&sssd, "build-7.lan"));
        assert!(!sssd.finds_user_alike());
        assert!(NameService::parse(DESKTOP).finds_user_alike());
    }
}
