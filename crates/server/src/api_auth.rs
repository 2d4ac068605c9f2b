//! The access-control RPCs (login tickets, passwords, user specs, server settings) and the
//! translation of their messages to and from service values.

use crate::access::authorize;
use crate::identity::{Peer, caller_unauthenticated};
use crate::streams::{ResponseStream, Streams, blocking};
use keel_core::UserType;
use keel_proto::v1 as pb;
use keel_service::command;
use keel_service::{AuthError, Service, SettingValue, TicketInfo, UserSpec};
use std::sync::Arc;
use tonic::{Request, Response, Status};

type Reply<T> = Result<Response<T>, Status>;

fn ticket_to_wire(t: TicketInfo) -> pb::LoginReply {
    pb::LoginReply {
        ticket: t.ticket,
        user: t.user,
        host: t.host,
        issued: t.issued,
        expires: t.expires,
        address: t.address,
    }
}

fn user_to_wire(u: UserSpec) -> pb::User {
    pb::User {
        name: u.name,
        email: u.email,
        full_name: u.full_name,
        r#type: u.user_type.as_str().to_string(),
        updated: u.updated,
        accessed: u.accessed,
        has_password: u.has_password,
        reviews: u.reviews,
    }
}

fn user_from_wire(u: pb::User) -> Result<UserSpec, Status> {
    let user_type =
        UserType::parse(&u.r#type).map_err(|e| crate::convert::status(AuthError::from(e)))?;
    Ok(UserSpec {
        name: u.name,
        email: u.email,
        full_name: u.full_name,
        user_type,
        reviews: u.reviews,
        ..UserSpec::default()
    })
}

fn setting_to_wire(s: SettingValue) -> pb::Setting {
    pb::Setting {
        name: s.name,
        value: s.value,
        is_default: s.is_default,
        description: s.description,
    }
}

/// A place to check a password on a blocking thread (see `Api::login_slots`).
async fn password_slot(
    slots: &tokio::sync::Semaphore,
) -> Result<tokio::sync::SemaphorePermit<'_>, Status> {
    slots
        .acquire()
        .await
        .map_err(|_| Status::unavailable("the server is stopping"))
}

pub(crate) async fn login(
    svc: Arc<Service>,
    slots: &tokio::sync::Semaphore,
    req: Request<pb::LoginRequest>,
) -> Reply<pb::LoginReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = caller_unauthenticated(&peer, req.caller)?;
    let _slot = password_slot(slots).await?;
    let ticket = blocking(move || svc.login(&who, &req.password, req.all_hosts)).await?;
    Ok(Response::new(ticket_to_wire(ticket)))
}

pub(crate) async fn login_status(
    svc: Arc<Service>,
    req: Request<pb::LoginStatusRequest>,
) -> Reply<pb::LoginReply> {
    let peer = Peer::of(&req);
    let who = authorize(&svc, &peer, req.into_inner().caller, command::LOGIN_STATUS)?;
    let creds = peer.credentials();
    let ticket = blocking(move || svc.login_status(&who, &creds)).await?;
    Ok(Response::new(ticket_to_wire(ticket)))
}

pub(crate) async fn logout(
    svc: Arc<Service>,
    req: Request<pb::LogoutRequest>,
) -> Reply<pb::LogoutReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::LOGOUT)?;
    let creds = peer.credentials();
    let ended = blocking(move || svc.logout(&who, &creds, req.all)).await?;
    Ok(Response::new(pb::LogoutReply {
        ended: ended as u64,
    }))
}

pub(crate) async fn set_password(
    svc: Arc<Service>,
    slots: &tokio::sync::Semaphore,
    req: Request<pb::SetPasswordRequest>,
) -> Reply<pb::SetPasswordReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::SET_PASSWORD)?;
    let _slot = password_slot(slots).await?;
    blocking(move || {
        let user = (!req.user.is_empty()).then_some(req.user.as_str());
        svc.set_password(&who, user, &req.old_password, &req.new_password)
    })
    .await?;
    Ok(Response::new(pb::SetPasswordReply {}))
}

pub(crate) async fn get_user(
    svc: Arc<Service>,
    req: Request<pb::GetUserRequest>,
) -> Reply<pb::User> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::GET_USER)?;
    let user = blocking(move || svc.get_user(&who, &req.name)).await?;
    Ok(Response::new(user_to_wire(user)))
}

pub(crate) async fn save_user(
    svc: Arc<Service>,
    req: Request<pb::SaveUserRequest>,
) -> Reply<pb::User> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::SAVE_USER)?;
    let spec = user_from_wire(
        req.user
            .ok_or_else(|| Status::invalid_argument("no user spec given"))?,
    )?;
    let saved = blocking(move || svc.save_user(&who, spec, req.force)).await?;
    Ok(Response::new(user_to_wire(saved)))
}

pub(crate) async fn delete_user(
    svc: Arc<Service>,
    req: Request<pb::DeleteUserRequest>,
) -> Reply<pb::DeleteUserReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::DELETE_USER)?;
    blocking(move || svc.delete_user(&who, &req.name, req.force)).await?;
    Ok(Response::new(pb::DeleteUserReply {}))
}

pub(crate) fn list_users(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::ListUsersRequest>,
) -> Reply<ResponseStream<pb::User>> {
    let who = authorize(
        &svc,
        &Peer::of(&req),
        req.into_inner().caller,
        command::LIST_USERS,
    )?;
    Ok(Response::new(streams.spawn(move |sink| {
        svc.list_users(&who, &mut |u| sink.send(user_to_wire(u)))
    })))
}

pub(crate) async fn configure(
    svc: Arc<Service>,
    req: Request<pb::ConfigureRequest>,
) -> Reply<pb::ConfigureReply> {
    let peer = Peer::of(&req);
    let req = req.into_inner();
    let who = authorize(&svc, &peer, req.caller, command::CONFIGURE)?;
    let name = req.name.clone();
    let reply = blocking(move || {
        if req.unset {
            svc.configure_unset(&who, &req.name)
                .map(|was_set| pb::ConfigureReply {
                    name: req.name.clone(),
                    value: String::new(),
                    was_set,
                })
        } else {
            svc.configure_set(&who, &req.name, &req.value)
                .map(|value| pb::ConfigureReply {
                    name: req.name.clone(),
                    value,
                    was_set: true,
                })
        }
    })
    .await?;
    tracing::info!(setting = name, value = reply.value, "configure");
    Ok(Response::new(reply))
}

pub(crate) fn list_settings(
    svc: Arc<Service>,
    streams: &Streams,
    req: Request<pb::ListSettingsRequest>,
) -> Reply<ResponseStream<pb::Setting>> {
    let who = authorize(
        &svc,
        &Peer::of(&req),
        req.into_inner().caller,
        command::LIST_SETTINGS,
    )?;
    Ok(Response::new(streams.spawn(move |sink| {
        for s in svc.configure_show(&who)? {
            sink.send(setting_to_wire(s))?;
        }
        Ok::<_, AuthError>(())
    })))
}
