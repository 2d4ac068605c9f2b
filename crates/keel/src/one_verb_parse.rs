//! Parsing the command line against the one verb it names, so a short command does not copy
//! the global flags into every other verb before its one call.
//!
//! clap copies each `global = true` argument (`--json`) into every subcommand of the root as it
//! prepares the root for parsing: with a hundred and fifty verbs that is a hundred and fifty
//! argument copies (~600 bytes each in a fresh vector), about seventy pages of heap touched at
//! every start, more than the whole rest of a small command's parsing. Here the line is first
//! parsed against a root that carries the same root arguments and only the verb the line names;
//! anything that does not parse cleanly there (an error, `--help`, `--version`, no verb, a verb
//! spelled some other way) is parsed again against the full command, which prints exactly what
//! it always did. A clean parse against the one-verb root is the parse the full root gives: the
//! root arguments and the verb's definition are the same, the verb is the same token, and the
//! other verbs could only have matched that token had it been their name.

use std::ffi::OsString;

use clap::{Command, CommandFactory, FromArgMatches, Parser};

use crate::cli::Cli;

/// Parses `std::env::args_os()`; on an error, `--help` or `--version` prints what clap prints
/// for the full command and exits, as `Cli::parse` does.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match parse_one_verb(&args) {
        Some(cli) => cli,
        None => Cli::parse_from(args),
    }
}

/// The line parsed against a root holding only the verb it names; `None` when that is not a
/// clean parse (the caller then parses against the full command).
pub fn parse_one_verb(args: &[OsString]) -> Option<Cli> {
    let full = Cli::command();
    let name = verb_token(&full, args)?;
    if name == "help" {
        return None;
    }
    let verb = full
        .get_subcommands()
        .find(|verb| verb.get_name() == name || verb.get_all_aliases().any(|alias| alias == name))?
        .clone();
    let root = Command::new("keel")
        .args(full.get_arguments().filter(|arg| !is_builtin(arg)).cloned())
        .subcommand(verb)
        .subcommand_required(true);
    let matches = root.try_get_matches_from(args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// clap's own `--help` and `--version` on the root (the one-verb root gets its own `--help`;
/// `--version` falls through to the full parse).
fn is_builtin(arg: &clap::Arg) -> bool {
    matches!(arg.get_id().as_str(), "help" | "version")
}

/// The first argument that is not a root option or a root option's value: the verb, as the
/// full parse would read it. `None` at `--`, or when the line ends first.
pub(crate) fn verb_token<'a>(full: &Command, args: &'a [OsString]) -> Option<&'a str> {
    let takes_value = |arg: &clap::Arg| arg.get_action().takes_values();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let arg = arg.to_str()?;
        if arg == "--" {
            return None;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long.contains('=') {
                continue;
            }
            let root_arg = full.get_arguments().find(|a| {
                a.get_long() == Some(long)
                    || a.get_all_aliases().is_some_and(|all| all.contains(&long))
            });
            if root_arg.is_some_and(takes_value) {
                rest.next();
            }
            continue;
        }
        if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            // A cluster of short flags; the first one that takes a value takes the rest of the
            // cluster, or the next argument when it ends the cluster.
            for (i, short) in shorts.char_indices() {
                let root_arg = full.get_arguments().find(|a| a.get_short() == Some(short));
                if root_arg.is_some_and(takes_value) {
                    if i + short.len_utf8() == shorts.len() {
                        rest.next();
                    }
                    break;
                }
            }
            continue;
        }
        return Some(arg);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    /// The verb is found past root flags and their values, in every spelling.
    #[test]
    fn verb_token_skips_root_options_and_their_values() {
        let full = Cli::command();
        for (line, verb) in [
            ("keel fstat //depot/f", Some("fstat")),
            ("keel -s host:1 -u bob fstat -m 1", Some("fstat")),
            ("keel --server host:1 --json info", Some("info")),
            ("keel --server=host:1 -qv info", Some("info")),
            ("keel -shost:1 info", Some("info")),
            ("keel -qs host:1 info", Some("info")),
            ("keel -- info", None),
            ("keel -s host:1", None),
        ] {
            assert_eq!(verb_token(&full, &args(line)), verb, "{line}");
        }
    }

    /// A clean parse against the one-verb root equals the full parse, root flags and global
    /// `--json` after the verb included.
    #[test]
    fn one_verb_parse_equals_the_full_parse() {
        for line in [
            "keel fstat //depot/f.txt",
            "keel -s 127.0.0.1:9 -u bob -w ws fstat //depot/...",
            "keel fstat --json //depot/a //depot/b",
            "keel info --json",
            "keel --json -q changes -m 2 //depot/...",
            "keel workspace list --json",
            "keel edit f.txt",
            "keel client list",
        ] {
            let one =
                parse_one_verb(&args(line)).unwrap_or_else(|| panic!("no clean parse: {line}"));
            let full = Cli::try_parse_from(args(line)).expect(line);
            assert_eq!(format!("{one:?}"), format!("{full:?}"), "{line}");
        }
    }

    /// Help, version, errors and lines without a verb go to the full parse.
    #[test]
    fn everything_else_falls_through_to_the_full_parse() {
        for line in [
            "keel",
            "keel --help",
            "keel --version",
            "keel -V",
            "keel help fstat",
            "keel fstat --help",
            "keel fstat --no-such-flag",
            "keel no-such-verb",
            "keel fsta",
            "keel -s",
        ] {
            assert!(parse_one_verb(&args(line)).is_none(), "{line}");
        }
    }
}
