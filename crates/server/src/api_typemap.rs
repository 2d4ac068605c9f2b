//! The typemap RPCs (`GetTypemap`, `SaveTypemap`) and its translation to the wire.

use std::sync::Arc;

use keel_core::TypemapLine;
use keel_proto::v1 as pb;
use keel_service::Service;
use tonic::{Request, Response, Status};

use crate::access::authorize;
use crate::identity::Peer;
use crate::streams::blocking;
use keel_service::command;

fn table_to_wire(table: Vec<TypemapLine>) -> pb::TypemapTable {
    pb::TypemapTable {
        lines: table
            .into_iter()
            .map(|l| pb::TypemapLine {
                r#type: l.file_type.to_string(),
                pattern: format!("{}{}", if l.exclude { "-" } else { "" }, l.pattern),
            })
            .collect(),
    }
}

pub(crate) async fn get_typemap(
    service: &Arc<Service>,
    req: Request<pb::GetTypemapRequest>,
) -> Result<Response<pb::TypemapTable>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(service, &peer, req.caller, command::GET_TYPEMAP)?;
    let svc = service.clone();
    let table = blocking(move || svc.typemap(&who)).await?;
    Ok(Response::new(table_to_wire(table)))
}

pub(crate) async fn save_typemap(
    service: &Arc<Service>,
    req: Request<pb::SaveTypemapRequest>,
) -> Result<Response<pb::TypemapTable>, Status> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(service, &peer, req.caller, command::SAVE_TYPEMAP)?;
    let svc = service.clone();
    let table = blocking(move || svc.save_typemap(&who, &req.lines)).await?;
    Ok(Response::new(table_to_wire(table)))
}
