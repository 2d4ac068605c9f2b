//! Depots: listing and creating.

use crate::{Caller, DepotInfo, Service, ServiceError, error::invalid};
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

    pub fn create_depot(
        &self,
        caller: &Caller,
        name: &str,
        description: &str,
    ) -> Result<DepotInfo, ServiceError> {
        self.touch_user(caller)?;
        let name = DepotName::parse(name)
            .map_err(invalid)?
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
                return Err(ServiceError::AlreadyExists(format!(
                    "depot '{}' already exists",
                    row.name
                )));
            }
            if txn.get_workspace(&row.name)?.is_some() {
                return Err(ServiceError::AlreadyExists(format!(
                    "'{}' is already the name of a workspace",
                    row.name
                )));
            }
            txn.put_depot(&row)?;
            Ok(())
        })?;
        Ok(info(saved))
    }
}
