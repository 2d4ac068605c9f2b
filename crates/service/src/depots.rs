//! Depots: listing and creating.

use crate::{Caller, DepotError, DepotInfo, Service, ServiceError};
use keel_core::DepotName;
use keel_store::DepotRow;

fn info(row: DepotRow) -> DepotInfo {
    DepotInfo {
        name: row.name,
        kind: row.kind,
        owner: row.owner,
        description: row.description,
        created: row.created,
    }
}

impl Service {
    pub fn list_depots(&self, caller: &Caller) -> Result<Vec<DepotInfo>, ServiceError> {
        self.touch_user(caller)?;
        Ok(self
            .meta
            .snapshot()?
            .list_depots()?
            .into_iter()
            .map(info)
            .collect())
    }

    /// Creates a local depot; the name must be free among depots and workspaces.
    pub fn create_depot(
        &self,
        caller: &Caller,
        name: &str,
        description: &str,
    ) -> Result<DepotInfo, DepotError> {
        self.check_depot_form(name, description)?;
        self.touch_user(caller)?;
        let name = DepotName::parse(name)
            .map_err(|e| DepotError::BadName {
                name: name.to_string(),
                reason: e.to_string(),
            })?
            .as_str()
            .to_string();
        let row = DepotRow {
            name: name.clone(),
            kind: "local".into(),
            owner: caller.user.clone(),
            description: if description.is_empty() {
                format!("Depot {name}")
            } else {
                description.into()
            },
            created: self.now(),
        };
        let saved = row.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            if txn.get_depot(&row.name)?.is_some() {
                return Err(DepotError::Exists { name: row.name });
            }
            if txn.get_workspace(&row.name)?.is_some() {
                return Err(DepotError::NameIsWorkspace { name: row.name });
            }
            txn.put_depot(&row)?;
            Ok(())
        })?;
        Ok(info(saved))
    }
}
