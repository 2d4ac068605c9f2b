//! A trigger's command line: split into argv words (no shell) and its `%variables%`
//! substituted so that a value is always data, never code: inside an ordinary word it stays
//! in that one word; inside the script of a POSIX shell's `-c` it becomes a quoted positional
//! parameter (`"${1}"`) and the value an argv word after `$0` (see [`TriggerVars::argv`]).

/// The variables a trigger command may name, Perforce's names; empty when not known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TriggerVars {
    pub change: String,
    pub user: String,
    pub client: String,
    pub serverport: String,
    pub formfile: String,
    pub formname: String,
    pub formtype: String,
}

/// Every variable name a command may use.
pub(super) const VARIABLES: &[&str] = &[
    "change",
    "user",
    "client",
    "serverport",
    "formfile",
    "formname",
    "formtype",
];

/// Variables that only form triggers know.
pub(super) const FORM_VARIABLES: &[&str] = &["formfile", "formname", "formtype"];

impl TriggerVars {
    fn get(&self, name: &str) -> Option<&str> {
        Some(match name {
            "change" => &self.change,
            "user" => &self.user,
            "client" => &self.client,
            "serverport" => &self.serverport,
            "formfile" => &self.formfile,
            "formname" => &self.formname,
            "formtype" => &self.formtype,
            _ => return None,
        })
    }

    /// `word` with every `%name%` of a known variable replaced by its value.
    pub fn substitute(&self, word: &str) -> String {
        let mut out = String::with_capacity(word.len());
        let mut rest = word;
        while let Some(start) = rest.find('%') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match variable_at(after).and_then(|name| Some((name, self.get(name)?))) {
                Some((name, value)) => {
                    out.push_str(value);
                    rest = &after[name.len() + 1..];
                }
                None => {
                    out.push('%');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// What a command's program does with one of its words: a POSIX shell runs its `-c` script,
/// another interpreter runs its `-c`/`-e` code; any other word is data for the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CodeWord {
    /// `words[script]` is the script of a POSIX shell (`sh`, `bash`, `dash`, `zsh`, `ksh`,
    /// `mksh`, `ash`, `yash`, `posh`); the words after it are `$0` and the positional ones.
    Shell { script: usize },
    /// `words[code]` is code for `program` (another shell or a script interpreter), which
    /// Keel cannot pass values to safely: a `%variable%` in it is refused when saved.
    Other { code: usize, program: String },
}

/// POSIX shells: their `-c` script reads `"${N}"` as the Nth argument after `$0`.
const POSIX_SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];
/// Shells of another syntax: their `-c` script is code that `"${N}"` does not fit.
const OTHER_SHELLS: &[&str] = &["fish", "csh", "tcsh", "rc", "es", "nu", "elvish", "pwsh"];
/// Interpreters whose code comes after `-c` (python) or `-e` (the others).
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("tclsh", &[]),
];

/// The program's name without its directory and a version suffix (`/usr/bin/python3.12` is
/// `python`).
fn program_name(word: &str) -> &str {
    let base = word.rsplit('/').next().unwrap_or(word);
    base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

/// Which word of `words` (a split command line) is code, if any. `env [NAME=VALUE|-OPTION]...`
/// before the program is looked through.
pub(super) fn code_word(words: &[String]) -> Option<CodeWord> {
    let mut at = 0;
    if words.first().is_some_and(|w| program_name(w) == "env") {
        at = 1;
        while let Some(word) = words.get(at) {
            if matches!(word.as_str(), "-u" | "--unset" | "-C" | "--chdir") {
                at += 2;
            } else if word.starts_with('-') || word.contains('=') {
                at += 1;
            } else {
                break;
            }
        }
    }
    let program = program_name(words.get(at)?);
    let options = &words[at + 1..];
    if POSIX_SHELLS.contains(&program) || OTHER_SHELLS.contains(&program) {
        let script = shell_script(options)? + at + 1;
        return Some(if POSIX_SHELLS.contains(&program) {
            CodeWord::Shell { script }
        } else {
            CodeWord::Other {
                code: script,
                program: program.to_string(),
            }
        });
    }
    let (_, flags) = INTERPRETERS.iter().find(|(name, _)| *name == program)?;
    let flag = options.iter().position(|w| flags.contains(&w.as_str()))?;
    (flag + 1 < options.len()).then(|| CodeWord::Other {
        code: at + 1 + flag + 1,
        program: program.to_string(),
    })
}

/// The index in a shell's `options` (its words after the program) of the `-c` script: the
/// first operand after options, when one option cluster (`-c`, `-ec`, `-lc`) holds `c`.
fn shell_script(options: &[String]) -> Option<usize> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(word) = options.get(i) {
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        let Some(letters) = word.strip_prefix('-').or_else(|| word.strip_prefix('+')) else {
            break;
        };
        if letters.starts_with('-') {
            // A long option (`--norc`).
            i += 1;
            continue;
        }
        if word.starts_with('-') && letters.contains('c') {
            has_c = true;
        }
        // `-o NAME` takes the next word.
        i += if letters.ends_with('o') { 2 } else { 1 };
    }
    (has_c && i < options.len()).then_some(i)
}

/// Shell quoting state while reading a script.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// `script` with every `%name%` of a known variable replaced by a reference to positional
/// parameter `first + k` (k counting distinct names in order of first use), quoted for where
/// it stands: `"${N}"` outside quotes, `${N}` inside `"..."`, `'"${N}"'` inside `'...'`. The
/// names, in parameter order, come back with it. No value enters the script.
fn positional_script(script: &str, first: usize) -> (String, Vec<&str>) {
    let mut out = String::with_capacity(script.len());
    let mut names: Vec<&str> = Vec::new();
    let mut quote = Quote::None;
    let mut rest = script;
    while let Some(c) = rest.chars().next() {
        if c == '%'
            && let Some(name) = variable_at(&rest[1..]).filter(|n| VARIABLES.contains(n))
        {
            let index = match names.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            let n = first + index;
            match quote {
                Quote::None => out.push_str(&format!("\"${{{n}}}\"")),
                Quote::Double => out.push_str(&format!("${{{n}}}")),
                Quote::Single => out.push_str(&format!("'\"${{{n}}}\"'")),
            }
            rest = &rest[name.len() + 2..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
        match (quote, c) {
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::None | Quote::Double, '\\') => {
                // The escaped character is taken as it is.
                if let Some(next) = rest.chars().next() {
                    out.push(next);
                    rest = &rest[next.len_utf8()..];
                }
            }
            _ => {}
        }
    }
    (out, names)
}

/// `$0` given to a shell script whose command line named none.
const SCRIPT_NAME: &str = "keel-trigger";

impl TriggerVars {
    /// The argv a trigger runs with, from its command's `words`: a POSIX shell's `-c`
    /// script gets each `%variable%` as a quoted positional parameter, its values appended
    /// after `$0` (`keel-trigger` when the line gave none) and the line's own arguments;
    /// every other word gets values substituted inside it (still one word).
    pub fn argv(&self, words: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = words.iter().map(|w| self.substitute(w)).collect();
        let Some(CodeWord::Shell { script }) = code_word(words) else {
            return argv;
        };
        // `$0` and the line's own positional arguments come first.
        let given = words.len() - script - 1;
        let (text, names) = positional_script(&words[script], given.max(1));
        if names.is_empty() {
            return argv;
        }
        argv[script] = text;
        if given == 0 {
            argv.push(SCRIPT_NAME.to_string());
        }
        argv.extend(
            names
                .iter()
                .map(|n| self.get(n).unwrap_or_default().to_string()),
        );
        argv
    }
}

/// The name of a `%name%` reference starting right after a `%`: lowercase letters closed by
/// `%`. Anything else (`%s`, `%Y-%m`) is literal text.
fn variable_at(text: &str) -> Option<&str> {
    let end = text.find('%')?;
    let name = &text[..end];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase())).then_some(name)
}

/// The `%name%` references in a command text.
pub(super) fn variables(command: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = command;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        match variable_at(after) {
            Some(name) => {
                found.push(name);
                rest = &after[name.len() + 1..];
            }
            None => rest = after,
        }
    }
    found
}

/// Splits a command line into words: whitespace separates words; `"..."` and `'...'` keep
/// their content (spaces included) in one word; nothing else is special. An unclosed quote
/// is an error naming it.
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("unclosed {c} in the command")),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_and_quotes() {
        let cases: &[(&str, &[&str])] = &[
            ("check %change%", &["check", "%change%"]),
            ("  a   b  ", &["a", "b"]),
            ("sh -c 'exit 1'", &["sh", "-c", "exit 1"]),
            ("say \"two words\" x", &["say", "two words", "x"]),
            ("a''b", &["ab"]),
            ("''", &[""]),
            ("", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(split_command(text).unwrap(), *want, "{text}");
        }
        assert_eq!(
            split_command("say 'open").unwrap_err(),
            "unclosed ' in the command"
        );
    }

    #[test]
    fn substitutes_inside_words_only_known_names() {
        let vars = TriggerVars {
            change: "12".into(),
            user: "a b".into(),
            ..Default::default()
        };
        let cases = [
            ("%change%", "12"),
            ("--change=%change%.", "--change=12."),
            ("%user%", "a b"),
            ("%client%", ""),
            ("100%", "100%"),
            ("+%Y-%m-%d", "+%Y-%m-%d"),
            ("%nope%", "%nope%"),
            ("%%change%%", "%12%"),
        ];
        for (word, want) in cases {
            assert_eq!(vars.substitute(word), want, "{word}");
        }
        assert_eq!(variables("x %change% %s %user%"), ["change", "user"]);
    }

    fn words(command: &str) -> Vec<String> {
        split_command(command).unwrap()
    }

    #[test]
    fn shell_scripts_get_values_as_positional_parameters() {
        let vars = TriggerVars {
            change: "7".into(),
            client: "w;id;$(id)`id`|&<>'\"".into(),
            user: "bob".into(),
            ..Default::default()
        };
        let hostile = vars.client.as_str();
        let cases: &[(&str, &[&str])] = &[
            // A shell script: references, and the values after `$0`.
            (
                "sh -c 'echo %client%'",
                &["sh", "-c", "echo \"${1}\"", "keel-trigger", hostile],
            ),
            // Inside double quotes, inside single quotes, twice, and two names.
            (
                r#"bash -c 'echo "at %client%" and '"'%user%'"' %client%'"#,
                &[
                    "bash",
                    "-c",
                    "echo \"at ${1}\" and ''\"${2}\"'' \"${1}\"",
                    "keel-trigger",
                    hostile,
                    "bob",
                ],
            ),
            // The line's own `$0` and arguments come first; theirs stay words.
            (
                "/bin/dash -ec 'x %user% $1' name %change% extra",
                &[
                    "/bin/dash",
                    "-ec",
                    "x \"${3}\" $1",
                    "name",
                    "7",
                    "extra",
                    "bob",
                ],
            ),
            // Options before -c, `-o NAME`, and `env` in front.
            (
                "env -i A=%user% zsh -o pipefail -l -c 'echo %client%'",
                &[
                    "env",
                    "-i",
                    "A=bob",
                    "zsh",
                    "-o",
                    "pipefail",
                    "-l",
                    "-c",
                    "echo \"${1}\"",
                    "keel-trigger",
                    hostile,
                ],
            ),
            // An escaped quote does not open a quoted part.
            (
                r#"sh -c 'echo \"%user%'"#,
                &["sh", "-c", "echo \\\"\"${1}\"", "keel-trigger", "bob"],
            ),
            // No variable in the script: the line as written.
            ("sh -c 'exit 1' %user%", &["sh", "-c", "exit 1", "bob"]),
            // A shell reading a script file: its arguments are words.
            ("sh /srv/t.sh %client%", &["sh", "/srv/t.sh", hostile]),
            // Not a shell: substituted inside each word, still one word.
            (
                "/srv/check --name=%client% %user%",
                &["/srv/check", &format!("--name={hostile}"), "bob"],
            ),
        ];
        for (command, want) in cases {
            assert_eq!(vars.argv(&words(command)), *want, "{command}");
        }
    }

    #[test]
    fn code_words_of_other_interpreters_are_found() {
        let cases: &[(&str, Option<CodeWord>)] = &[
            ("sh -c x", Some(CodeWord::Shell { script: 2 })),
            ("bash --norc -xc x", Some(CodeWord::Shell { script: 3 })),
            ("sh x -c y", None),
            ("sh -c", None),
            ("sh -e x", None),
            (
                "fish -c x",
                Some(CodeWord::Other {
                    code: 2,
                    program: "fish".into(),
                }),
            ),
            (
                "/usr/bin/python3.12 -u -c x",
                Some(CodeWord::Other {
                    code: 3,
                    program: "python".into(),
                }),
            ),
            (
                "env perl -e x",
                Some(CodeWord::Other {
                    code: 3,
                    program: "perl".into(),
                }),
            ),
            ("python3 script.py x", None),
            ("check x", None),
        ];
        for (command, want) in cases {
            assert_eq!(code_word(&words(command)), *want, "{command}");
        }
    }
}
