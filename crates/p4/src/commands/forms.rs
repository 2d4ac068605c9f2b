//! What the spec commands share: sending a form (`-o`: a tagged record with `specdef`, or the
//! form text untagged) and reading one from the client (`-i`: `client-InputData`, which carries
//! the `specdef` a client needs to turn a dict into form text).

use crate::cmd::{Cmd, CmdError, number};
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
