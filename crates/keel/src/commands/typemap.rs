//! `typemap [-o|-i]`: the typemap as a form (`TypeMap:` and one `TYPE PATTERN` line each),
//! printed (`-o`), read from stdin (`-i`) or edited in `$EDITOR`, as `p4 typemap` does.

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use keel_client::ops::{self, TypemapLine};
use keel_core::Form;

use crate::editor::edit_text;
use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct TypemapArgs {
    /// Print the typemap as a form (`--json`: one object per line of the map).
    #[arg(short = 'o', conflicts_with = "input")]
    pub output: bool,
    /// Read the typemap as a form from stdin and save it (super users).
    #[arg(short = 'i')]
    pub input: bool,
}

const HEADER: &str = "\
# The Keel typemap: the type of files added without -t, by depot path.
#   TYPE PATTERN
#  TYPE:    a file type (text, binary, symlink, utf8, utf16, with modifiers such as
#           +l +w +x +k +ko +m +S +Sn; legacy names such as ktext are accepted), or
#           modifiers alone (+l) turned on over the detected type.
#  PATTERN: a depot pattern (//depot/....png); -PATTERN excludes files from the lines
#           above it. Quote a pattern that holds spaces. The last matching line decides.
";

pub async fn typemap(s: &mut Session, args: TypemapArgs) -> Result<()> {
    if args.input {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the typemap form from stdin")?;
        return save(s, &text).await;
    }
    let table = fetch(s).await?;
    if args.output {
        if s.out.json {
            for line in &table {
                s.out.emit(
                    Record::new()
                        .s("type", &line.file_type)
                        .s("pattern", &line.pattern),
                    "",
                );
            }
        } else {
            s.out.text(render_form(&table).trim_end());
        }
        return Ok(());
    }
    let original = render_form(&table);
    let edited = edit_text(&original, "typemap")?;
    if edited == original {
        s.out.emit(
            Record::new().s("action", "unchanged"),
            "Typemap not changed.",
        );
        return Ok(());
    }
    save(s, &edited).await
}

async fn fetch(s: &Session) -> Result<Vec<TypemapLine>> {
    Ok(ops::typemap(&s.conn).await?)
}

async fn save(s: &Session, text: &str) -> Result<()> {
    let form = Form::parse(text).context("error in typemap specification")?;
    let lines = form
        .get("TypeMap")
        .or_else(|| form.get("Typemap"))
        .unwrap_or(&[])
        .to_vec();
    let saved = ops::save_typemap(&s.conn, lines).await?;
    s.out.emit(
        Record::new()
            .s("action", "saved")
            .n("lines", saved.len() as u64),
        "Typemap saved.",
    );
    Ok(())
}

fn render_form(table: &[TypemapLine]) -> String {
    let lines: String = table
        .iter()
        .map(|l| {
            if l.pattern.contains(char::is_whitespace) {
                format!("\t{} \"{}\"\n", l.file_type, l.pattern)
            } else {
                format!("\t{} {}\n", l.file_type, l.pattern)
            }
        })
        .collect();
    format!("{HEADER}\nTypeMap:\n{lines}")
}
