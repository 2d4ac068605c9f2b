//! What the spec commands share: sending a form (`-o`: a tagged record with `specdef`, or the
//! form text untagged) and reading one from the client (`-i`: `client-InputData`, which carries
//! the `specdef` a client needs to turn a dict into form text), and the editor round trip of a
//! spec command given neither (`client-EditData`: the client writes the form to a temporary
//! file, runs `P4EDITOR` on it and sends the edited text back).

use crate::cmd::{Cmd, CmdError, number};
use crate::conn::ConnError;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report};
use crate::wire::specdef::{SpecDef, Values};

/// Sends form `values` of `def` as the client asked (tagged or as text).
pub fn send(cmd: &mut Cmd, def: &SpecDef, values: &Values) {
    if cmd.tagged {
        cmd.stat(def.tagged(values));
    } else {
        cmd.info(def.render(values));
    }
}

/// Reads a form of `def` from the client (what `-i` reads from stdin or P4Python's input).
pub async fn receive(cmd: &mut Cmd, def: &SpecDef) -> Result<Values, CmdError> {
    const CONFIRM: &str = "dm-SpecInput";
    let m = Message::new()
        .with("specdef", def.specdef())
        .with("confirm", CONFIRM)
        .with("func", "client-InputData");
    let reply = cmd.ask(&m, CONFIRM).await?;
    let text = reply.text("data").unwrap_or_default();
    def.parse(&text).map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Usage,
            number::FORM,
            format!("Error in {} specification: {e}", def.kind),
        ))
    })
}

/// What the user did with a form the client opened in its editor.
pub enum Edited {
    /// The edited form, parsed.
    Changed(Values),
    /// The user saved the form unchanged.
    Same,
}

/// Sends form `values` of `def` to the client's editor (`client-EditData`) and reads the
/// edited form back. An editor that fails (or a form the user cannot save) ends the command
/// with nothing saved; a form that does not parse is refused naming what was wrong.
pub async fn edit(cmd: &mut Cmd, def: &SpecDef, values: &Values) -> Result<Edited, CmdError> {
    let Some(edited) = edit_text(cmd, def.kind, &def.render(values)).await? else {
        return Ok(Edited::Same);
    };
    def.parse(&edited).map(Edited::Changed).map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Usage,
            number::FORM,
            format!("Error in {} specification: {e}", def.kind),
        ))
    })
}

/// The editor round trip of form `text` (a `kind` form): the edited text, or `None` when the
/// user left it unchanged.
pub async fn edit_text(cmd: &mut Cmd, kind: &str, text: &str) -> Result<Option<String>, CmdError> {
    const CONFIRM: &str = "dm-SpecEdit";
    const DECLINE: &str = "dm-SpecEditFailed";
    let m = Message::new()
        .with("data", text)
        .with("confirm", CONFIRM)
        .with("decline", DECLINE)
        .with("compare", "yes")
        .with("func", "client-EditData");
    cmd.conn.send(&m);
    cmd.conn.flush().await?;
    let wait = cmd.server.options.reply_timeout;
    let reply = tokio::time::timeout(wait, cmd.conn.read_command())
        .await
        .map_err(|_| ConnError::NoReply {
            expected: CONFIRM.to_string(),
            waited_ms: wait.as_millis() as u64,
        })??;
    match reply.func().as_deref() {
        Some(CONFIRM) => {}
        Some(DECLINE) => {
            return Err(CmdError::Report(Report::failed(
                Generic::Usage,
                number::FORM,
                format!(
                    "The {kind} specification was not edited (the editor failed); nothing saved."
                ),
            )));
        }
        f => {
            return Err(CmdError::Conn(ConnError::Unexpected {
                func: f.unwrap_or_default().to_string(),
                expected: CONFIRM.to_string(),
            }));
        }
    }
    let edited = reply.text("data").unwrap_or_default();
    if reply.text("compare").as_deref() == Some("same") || edited == text {
        return Ok(None);
    }
    Ok(Some(edited))
}
