//! Passwords through both front ends: a stored hash of the older form (of the password as
//! typed, or of the MD5 a P4 client sent) matches only what it was made from, says so to a P4
//! client it cannot check, and is replaced by the current form (argon2id of the MD5) at the
//! next login that matches it; from then on both the typed password and its MD5 log in.

mod support;

use argon2::password_hash::{PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use keel_core::UserType;
use keel_service::{AuthError, PasswordInput, ServiceError};
use keel_store::UserRow;
use md5::{Digest, Md5};
use support::World;

fn phc(secret: &str) -> String {
    let params = Params::new(64, 1, 1, None).expect("params");
    let salt = SaltString::encode_b64(&[9u8; 16]).expect("salt");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password(secret.as_bytes(), &salt)
        .expect("hash")
        .to_string()
}

fn md5_hex(text: &str) -> String {
    hex::encode_upper(Md5::digest(text.as_bytes()))
}

/// Plants `user` with `hash` as a server before this release stored it.
fn plant(w: &World, user: &str, hash: String) {
    let user = user.to_string();
    keel_store::write(w.meta().as_ref(), move |txn| {
        txn.put_user(&UserRow {
            name: user.clone(),
            email: format!("{user}@example.com"),
            full_name: String::new(),
            user_type: UserType::Standard,
            created: 1,
            updated: 1,
            accessed: 1,
            password_hash: Some(hash),
            p4_digest: None,
            type_set_by: None,
            reviews: Vec::new(),
        })
        .map_err(ServiceError::from)
    })
    .expect("row planted");
}

fn stored(w: &World, user: &str) -> String {
    let meta = w.meta();
    let snap = meta.snapshot().expect("snapshot");
    snap.get_user(user)
        .expect("read")
        .and_then(|u| u.password_hash)
        .expect("a hash")
}

#[test]
fn a_hash_of_the_typed_password_is_replaced_at_a_native_login_then_p4_digests_match() {
    let w = World::new();
    plant(&w, "dora", phc("Secret-1"));
    let dora = support::caller("dora");
    let digest = md5_hex("Secret-1");
    let refused = w
        .service
        .login_from(&dora, PasswordInput::Md5(&digest), false)
        .expect_err("the older form cannot check a digest");
    assert!(
        matches!(refused, AuthError::PasswordPredatesDigests { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("keel login"), "{refused}");
    w.service
        .login(&dora, "Secret-1", false)
        .expect("typed login");
    assert!(stored(&w, "dora").starts_with("md5:$argon2id$"));
    w.service
        .login_from(&dora, PasswordInput::Md5(&digest), false)
        .expect("the digest now logs in");
    let wrong = w
        .service
        .login_from(&dora, PasswordInput::Md5(&md5_hex("Secret-2")), false)
        .expect_err("another password");
    assert!(
        matches!(wrong, AuthError::PasswordInvalid { .. }),
        "{wrong}"
    );
}

#[test]
fn a_hash_of_a_p4_digest_is_replaced_at_a_p4_login_then_the_typed_password_matches() {
    let w = World::new();
    let digest = md5_hex("Secret-1");
    plant(&w, "erin", phc(&digest));
    let erin = support::caller("erin");
    assert!(w.service.login(&erin, "Secret-1", false).is_err());
    w.service
        .login_from(&erin, PasswordInput::Md5(&digest), false)
        .expect("P4 login with the digest the hash was made of");
    assert!(stored(&w, "erin").starts_with("md5:"));
    w.service
        .login(&erin, "Secret-1", false)
        .expect("typed login");
}
