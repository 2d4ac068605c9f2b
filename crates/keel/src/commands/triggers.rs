//! `triggers [-o|-i]`: the triggers table as a form (`Triggers:` and one line per trigger),
//! printed (`-o`), read from stdin (`-i`) or edited in `$EDITOR`, as `p4 triggers` does.

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use keel_client::ops;
use keel_core::{Form, TriggerLine};

use crate::editor::edit_text;
use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct TriggersArgs {
    /// Print the table as a form (`--json`: one object per line of the table).
    #[arg(short = 'o', conflicts_with = "input")]
    pub output: bool,
    /// Read the table as a form from stdin and save it.
    #[arg(short = 'i')]
    pub input: bool,
}

const HEADER: &str = "\
# The Keel triggers table: one line per trigger (lines sharing a NAME make one trigger).
#   NAME TYPE PATH \"COMMAND\"
#  TYPE:    change-submit (before a submit's content is sent), change-content (its
#           content is on the server: keel print //...@=%change%), change-commit (after
#           it; cannot refuse), form-save (before a spec is saved), form-out (before a
#           spec is shown; may rewrite %formfile%).
#  PATH:    change triggers: a depot pattern the change's files match (-//... excludes);
#           form triggers: workspace (or client), label or branch.
#  COMMAND: run without a shell (write sh -c '...' for one); %change% %user% %client%
#           %serverport% %formfile% %formname% %formtype% are replaced in each word.
#           Exit status 0 passes; anything else refuses, showing the output.
";

pub async fn triggers(s: &mut Session, args: TriggersArgs) -> Result<()> {
    if args.input {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the triggers form from stdin")?;
        return save(s, &text).await;
    }
    let table = fetch(s).await?;
    if args.output {
        if s.out.json {
            for line in &table {
                s.out.emit(record(line), "");
            }
        } else {
            s.out.text(render_form(&table).trim_end());
        }
        return Ok(());
    }
    let original = render_form(&table);
    let edited = edit_text(&original, "triggers")?;
    if edited == original {
        s.out.emit(
            Record::new().s("action", "unchanged"),
            "Triggers not changed.",
        );
        return Ok(());
    }
    match save(s, &edited).await {
        Ok(()) => Ok(()),
        // The table on the server is unchanged; the edits are kept for the next try.
        Err(e) => match keep_edits(&edited) {
            Ok(path) => Err(e.context(format!(
                "the triggers table was not changed; your edits are in {} (keel triggers -i < {} \
                 after fixing them)",
                path.display(),
                path.display()
            ))),
            Err(_) => Err(e),
        },
    }
}

/// Writes refused edits to a file that outlives the command.
fn keep_edits(text: &str) -> std::io::Result<std::path::PathBuf> {
    let file = tempfile::Builder::new()
        .prefix("keel-triggers-")
        .suffix(".txt")
        .tempfile()?;
    std::fs::write(file.path(), text)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

async fn fetch(s: &Session) -> Result<Vec<TriggerLine>> {
    Ok(ops::triggers(&s.conn).await?)
}

async fn save(s: &Session, text: &str) -> Result<()> {
    let form = Form::parse(text).context("error in triggers specification")?;
    let lines = form.get("Triggers").unwrap_or(&[]).to_vec();
    let saved = ops::save_triggers(&s.conn, lines).await?;
    s.out.emit(
        Record::new()
            .s("action", "saved")
            .n("lines", saved.len() as u64),
        "Triggers saved.",
    );
    Ok(())
}

fn record(line: &TriggerLine) -> Record {
    Record::new()
        .s("name", &line.name)
        .s("type", line.kind.as_str())
        .s("path", &line.path)
        .s("command", &line.command)
}

fn render_form(table: &[TriggerLine]) -> String {
    // One line per trigger under the field, even for a table of one line.
    let lines: String = keel_core::trigger::render_table(table)
        .iter()
        .map(|line| format!("\t{line}\n"))
        .collect();
    format!("{HEADER}\nTriggers:\n{lines}")
}
