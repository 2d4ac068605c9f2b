//! `configure set NAME=VALUE`, `configure unset NAME`, `configure show`: server settings,
//! stored by the server (like `p4 configure`).

use anyhow::{Result, bail};
use clap::Subcommand;
use keel_client::ops;

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ConfigureCmd {
    /// Set a server setting (super users): `configure set security=3`.
    Set {
        #[arg(value_name = "NAME=VALUE")]
        assignment: String,
    },
    /// Return a setting to its default (super users).
    Unset { name: String },
    /// List every server setting with its value.
    Show,
}

pub async fn run(s: &mut Session, cmd: ConfigureCmd) -> Result<()> {
    match cmd {
        ConfigureCmd::Set { assignment } => {
            let Some((name, value)) = assignment.split_once('=') else {
                bail!("{assignment:?}: expected NAME=VALUE (e.g. security=3)");
            };
            let reply = ops::set_setting(&s.conn, name.trim(), value.trim()).await?;
            s.out.emit(
                Record::new()
                    .s("name", &reply.name)
                    .s("value", &reply.value)
                    .s("action", "set"),
                format!("Setting {} set to {}.", reply.name, reply.value),
            );
        }
        ConfigureCmd::Unset { name } => {
            let reply = ops::unset_setting(&s.conn, &name).await?;
            let text = if reply.was_set {
                format!("Setting {name} removed; its default applies.")
            } else {
                format!("Setting {name} was not set; its default applies.")
            };
            s.out.emit(
                Record::new()
                    .s("name", &name)
                    .s("action", if reply.was_set { "unset" } else { "unchanged" }),
                text,
            );
        }
        ConfigureCmd::Show => {
            let mut settings = ops::settings(&s.conn).await?;
            while let Some(setting) = settings.next().await? {
                let source = if setting.is_default { "default" } else { "set" };
                s.out.emit(
                    Record::new()
                        .s("name", &setting.name)
                        .s("value", &setting.value)
                        .s("source", source)
                        .s("description", &setting.description),
                    format!("{}={} ({source})", setting.name, setting.value),
                );
            }
        }
    }
    Ok(())
}
