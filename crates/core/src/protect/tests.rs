//! The documented examples of the P4 Command Reference and the Helix Core admin guide, as
//! tables: (user, groups, address, right, path, expected).

use super::*;
use std::net::IpAddr;

type Case<'a> = (&'a str, &'a [&'a str], &'a str, Right, &'a str, bool);

fn check(table: &[&str], cases: &[Case]) {
    let lines = parse_table(table).expect("table parses");
    for (user, groups, address, right, path, expected) in cases {
        let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        let address: Option<IpAddr> = (!address.is_empty()).then(|| address.parse().unwrap());
        let got = UserProtections::compile(&lines, user, &groups, address).allows(*right, path);
        assert_eq!(
            got, *expected,
            "{user} {groups:?} from {address:?}: {right} on {path}"
        );
    }
}

/// Admin guide, "How protections are implemented": the last matching line wins, and a `list`
/// exclusion removes every right.
#[test]
fn admin_guide_maria_and_dev1() {
    let table = [
        "write group Dev1 * //depot/...",
        "list group Dev1 * -//depot/proj/...  ## exclusionary mapping",
        "write user Maria 192.168.100.0/24 //...",
        "super user Alice * //...",
    ];
    let dev1: &[&str] = &["Dev1"];
    check(
        &table,
        &[
            (
                "Maria",
                dev1,
                "10.14.10.1",
                Right::Read,
                "//depot/misc/a.c",
                true,
            ),
            (
                "Maria",
                dev1,
                "10.14.10.1",
                Right::Read,
                "//depot/proj/README",
                false,
            ),
            (
                "Maria",
                dev1,
                "10.14.10.1",
                Right::List,
                "//depot/proj/README",
                false,
            ),
            (
                "Maria",
                dev1,
                "192.168.100.1",
                Right::Read,
                "//depot/proj/README",
                true,
            ),
            (
                "Maria",
                dev1,
                "192.168.100.1",
                Right::Admin,
                "//depot/misc/a.c",
                false,
            ),
            (
                "Alice",
                &[],
                "10.0.0.1",
                Right::Super,
                "//depot/proj/README",
                true,
            ),
            (
                "Bob",
                &[],
                "10.0.0.1",
                Right::List,
                "//depot/misc/a.c",
                false,
            ),
        ],
    );
}

/// Admin guide: without an exclusion the most permissive line rules.
#[test]
fn admin_guide_most_permissive_without_exclusions() {
    let table = [
        "write group Dev2 * //depot/dev/...",
        "read group Dev1 * //depot/dev/productA/...",
        "write group Dev1 * //depot/elm_proj/...",
    ];
    let both: &[&str] = &["Dev1", "Dev2"];
    let dev1: &[&str] = &["Dev1"];
    check(
        &table,
        &[
            (
                "Maria",
                both,
                "10.0.0.1",
                Right::Open,
                "//depot/dev/productA/readme.txt",
                true,
            ),
            (
                "Maria",
                dev1,
                "10.0.0.1",
                Right::Open,
                "//depot/dev/productA/readme.txt",
                false,
            ),
            (
                "Maria",
                dev1,
                "10.0.0.1",
                Right::Read,
                "//depot/dev/productA/readme.txt",
                true,
            ),
            (
                "Maria",
                dev1,
                "10.0.0.1",
                Right::Write,
                "//depot/elm_proj/a",
                true,
            ),
        ],
    );
}

/// Command reference, `p4 protect`'s sample table: exclusions at `write` take write (and
/// above) away and leave reading; later lines re-grant; hosts by network.
#[test]
fn command_reference_sample_table() {
    let table = [
        "read user emily * //depot/elm_proj/...",
        "write group devgrp * //...",
        "write user * 192.168.41.0/24 -//...",
        "write user * [2001:db8:1:2::]/64 -//...",
        "write user joe * -//...",
        "write user lisag * -//depot/...",
        "write user lisag * //depot/doc/...",
        "super user edk * //...",
    ];
    let dev: &[&str] = &["devgrp"];
    check(
        &table,
        &[
            (
                "emily",
                &[],
                "10.0.0.1",
                Right::Read,
                "//depot/elm_proj/a",
                true,
            ),
            (
                "emily",
                &[],
                "10.0.0.1",
                Right::Open,
                "//depot/elm_proj/a",
                false,
            ),
            (
                "emily",
                &[],
                "10.0.0.1",
                Right::List,
                "//depot/other/a",
                false,
            ),
            ("ann", dev, "10.0.0.1", Right::Write, "//depot/a", true),
            ("ann", dev, "192.168.41.7", Right::Write, "//depot/a", false),
            ("ann", dev, "192.168.41.7", Right::Read, "//depot/a", true),
            ("ann", dev, "192.168.42.7", Right::Write, "//depot/a", true),
            (
                "ann",
                dev,
                "2001:db8:1:2::9",
                Right::Write,
                "//depot/a",
                false,
            ),
            (
                "ann",
                dev,
                "2001:db8:1:3::9",
                Right::Write,
                "//depot/a",
                true,
            ),
            ("joe", dev, "10.0.0.1", Right::Write, "//depot/a", false),
            ("joe", dev, "10.0.0.1", Right::Open, "//depot/a", true),
            (
                "lisag",
                dev,
                "10.0.0.1",
                Right::Write,
                "//depot/src/a",
                false,
            ),
            (
                "lisag",
                dev,
                "10.0.0.1",
                Right::Write,
                "//depot/doc/a",
                true,
            ),
            ("lisag", dev, "10.0.0.1", Right::Read, "//depot/src/a", true),
            ("edk", &[], "192.168.41.7", Right::Super, "//depot/a", true),
            ("edk", &[], "10.0.0.1", Right::Super, "//depot/a", true),
        ],
    );
}

/// `=right` lines grant or take away exactly one right.
#[test]
fn single_rights() {
    let table = [
        "write group dev * //...",
        "=write group dev * -//depot/rel/...",
        "=branch group dev * -//depot/secret/...",
        "=read user auditor * //depot/...",
    ];
    let dev: &[&str] = &["dev"];
    check(
        &table,
        &[
            ("a", dev, "", Right::Write, "//depot/rel/x", false),
            ("a", dev, "", Right::Open, "//depot/rel/x", true),
            ("a", dev, "", Right::Write, "//depot/main/x", true),
            ("a", dev, "", Right::Branch, "//depot/secret/x", false),
            ("a", dev, "", Right::Read, "//depot/secret/x", true),
            ("auditor", &[], "", Right::Read, "//depot/x", true),
            ("auditor", &[], "", Right::List, "//depot/x", false),
        ],
    );
}

/// Hosts with wildcards, names with wildcards, and a caller with no network address.
#[test]
fn hosts_and_names() {
    let table = [
        "read user * 10.1.* //...",
        "write user dev* * //depot/dev/...",
        "admin user ops ::1 //...",
    ];
    check(
        &table,
        &[
            ("x", &[], "10.1.2.3", Right::Read, "//depot/a", true),
            ("x", &[], "10.2.2.3", Right::Read, "//depot/a", false),
            ("x", &[], "", Right::Read, "//depot/a", false),
            ("x", &[], "::ffff:10.1.2.3", Right::Read, "//depot/a", true),
            ("devon", &[], "", Right::Write, "//depot/dev/a", true),
            ("adev", &[], "", Right::Write, "//depot/dev/a", false),
            ("ops", &[], "::1", Right::Admin, "//depot/a", true),
            ("ops", &[], "127.0.0.1", Right::Admin, "//depot/a", false),
        ],
    );
}

#[test]
fn levels_and_maximums() {
    let lines = parse_table(&["write user a * //depot/...", "read user a * -//depot/x/..."])
        .expect("parses");
    let p = UserProtections::compile(&lines, "a", &[], None);
    assert_eq!(p.level_at("//depot/y"), Some(Level::Write));
    assert_eq!(p.level_at("//depot/x/y"), Some(Level::List));
    assert_eq!(p.level_at("//other/y"), None);
    assert_eq!(p.max_level(), Some(Level::Write));
    assert!(!p.allows_anywhere(Right::Admin));
}

#[test]
fn bad_lines_are_refused_naming_the_line() {
    let cases = [
        ("write user a * //...", ""),
        (
            "write user a *",
            "expected 'MODE user|group NAME HOST PATH'",
        ),
        ("writ user a * //...", "unknown mode 'writ'"),
        ("=list user a * //...", "unknown mode '=list'"),
        ("write users a * //...", "expected 'user' or 'group'"),
        ("write user a 10.0.0.0/33 //...", "prefix length"),
        ("write user a 10.0.*/8 //...", "wildcards"),
        ("write user a host.example //...", "expected an IP address"),
        ("write user a * depot/...", "path 'depot/...'"),
    ];
    for (text, expected) in cases {
        let got = parse_table(&["", text]);
        match got {
            Ok(_) => assert!(expected.is_empty(), "{text} parsed"),
            Err(e) => {
                let message = e.to_string();
                assert!(message.starts_with("protections line 2:"), "{message}");
                assert!(
                    !expected.is_empty() && message.contains(expected),
                    "{message}"
                );
            }
        }
    }
}

#[test]
fn lines_render_as_they_parse() {
    for text in [
        "write group dev * -//depot/rel/...",
        "=branch user a 10.0.0.0/8 //depot/...",
        "read user * [2001:db8::]/32 //...",
        "super user edk 127.0.0.1 //...",
        "list user * 10.1.* //...",
    ] {
        let line = ProtectLine::parse(text, 1).expect("parses");
        assert_eq!(line.to_string(), text);
    }
}

/// A host of wildcards only (`[*]`, `**`) is every host, as `*` is, and shows as `*` (a fuzz
/// find: it parsed as a glob that displayed as `*`, which parses as every host).
#[test]
fn only_wildcards_is_every_host() {
    for text in ["*", "**", "[*]"] {
        let host = HostPattern::parse(text).expect("parses");
        assert_eq!(host, HostPattern::Any, "{text}");
        assert_eq!(HostPattern::parse(&host.to_string()), Ok(host));
    }
    assert!(matches!(
        HostPattern::parse("10.*"),
        Ok(HostPattern::Glob(_))
    ));
}

/// `review` lies between `write` and `admin`: it grants write and the review right (counters,
/// keys, `review`), and `admin` and `super` include it; a `review` exclusion takes it (and
/// admin, super) away but leaves write.
#[test]
fn review_sits_between_write_and_admin() {
    let table = [
        "review user rd * //...",
        "admin user ad * //...",
        "write user wr * //...",
        "admin user half * //...",
        "review user half * -//...",
    ];
    let lines = parse_table(&table).expect("parses");
    let of = |user: &str| UserProtections::compile(&lines, user, &[], None);
    assert!(of("rd").allows_anywhere(Right::Review));
    assert!(of("rd").allows(Right::Write, "//depot/a"));
    assert!(!of("rd").allows_anywhere(Right::Admin));
    assert_eq!(of("rd").max_level(), Some(Level::Review));
    assert!(of("ad").allows_anywhere(Right::Review));
    assert!(!of("wr").allows_anywhere(Right::Review));
    assert!(!of("half").allows(Right::Review, "//depot/a"));
    assert!(of("half").allows(Right::Write, "//depot/a"));
    assert_eq!(Level::parse("review"), Some(Level::Review));
}
